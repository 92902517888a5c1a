"""The run history from the command line: the quickstart run twice then scored offline against
the last run (``--baseline last``), ``agenteval history``, and a store that is damaged or locked,
which never changes a run's reports or exit code."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"
QUICKSTART = (str(EXAMPLES / "weather_agent.evalset.json"), "--agent", f"{EXAMPLES / 'weather_agent.py'}:weather_agent",
              "--config", str(EXAMPLES / "weather_agent.config.json"))
OFFLINE = (str(EXAMPLES / "weather_agent.evalset.json"), "--traces", "agenteval-traces.jsonl",
           "--config", str(EXAMPLES / "weather_agent.config.json"))


def _agenteval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(REPO_ROOT)}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    env.pop("AGENTEVAL_HISTORY_KEEP", None)
    return subprocess.run([sys.executable, "-m", "agenteval_otel.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_two_quickstart_runs_then_eval_baseline_last_prints_and_reports_the_deltas(tmp_path: Path) -> None:
    for _ in range(2):
        ran = _agenteval("run", *QUICKSTART, cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
    listed = _agenteval("history", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    second, first = json.loads(listed.stdout)
    assert (second["command"], second["source"], second["cases"], second["pass_rate"]) == (
        "run", "weather-agent-v1", 4, 1.0)
    assert set(second["criteria_means"]) == {"trajectory_match", "response_match", "node_order"}

    scored = _agenteval("eval", *OFFLINE, "--baseline", "last", "--report", "report.json", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    assert f"against run {second['id']} of" in scored.stdout
    assert "4 paired cases" in scored.stdout
    for criterion in ("trajectory_match", "response_match", "node_order"):  # the same agent, the same scores
        assert re.search(rf"{criterion} +(\d\.\d\d) → \1 +\+0\.00 +\[\+0\.00, \+0\.00\] +1\.000 +100% → 100%",
                         scored.stdout), scored.stdout
    baseline = json.loads((tmp_path / "report.json").read_text())["baseline"]
    assert (baseline["baseline_run_id"], baseline["pairs"]) == (second["id"], 4)
    assert [d["criterion"] for d in baseline["criteria"]] == ["trajectory_match", "response_match", "node_order"]
    assert baseline["criteria"][0]["mean"]["test"] == "sign-flip permutation (exact)"
    assert baseline["newly_failed"] == [] and baseline["newly_passed"] == []

    table = _agenteval("history", cwd=tmp_path)
    assert table.returncode == 0 and "3 shown" in table.stdout and first["id"] in table.stdout


def test_a_changed_verdict_against_a_run_id_is_listed(tmp_path: Path) -> None:
    ran = _agenteval("run", *QUICKSTART, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    [run] = json.loads(_agenteval("history", "--json", cwd=tmp_path).stdout)
    changed = json.loads((EXAMPLES / "weather_agent.evalset.json").read_text())
    changed["eval_cases"][0]["conversation"][0]["expected_tool_trajectory"][0]["args"] = {"city": "Lyon"}
    (tmp_path / "changed.evalset.json").write_text(json.dumps(changed))  # the first case now expects another call
    scored = _agenteval("eval", "changed.evalset.json", *OFFLINE[1:], "--baseline", run["id"], "--report",
                        "report.json", cwd=tmp_path)
    assert scored.returncode == 1, scored.stderr
    assert "passed in the baseline, not now (1):\n  paris_weather: passed → failed" in scored.stdout
    baseline = json.loads((tmp_path / "report.json").read_text())["baseline"]
    assert baseline["newly_failed"] == [{"eval_id": "paris_weather", "status_a": "passed", "status_b": "failed"}]
    trajectory = baseline["criteria"][0]
    assert (trajectory["criterion"], trajectory["pass_rate"]["mean_a"], trajectory["pass_rate"]["mean_b"]) == (
        "trajectory_match", 1.0, 0.75)


def test_a_missing_baseline_is_exit_2_naming_the_store_and_the_id(tmp_path: Path) -> None:
    none = _agenteval("eval", *OFFLINE, "--baseline", "last", cwd=tmp_path)
    assert none.returncode == 2
    assert none.stderr.strip().splitlines() == [
        f"agenteval: error: {Path('.agenteval') / 'history.db'}: no earlier run of 'weather-agent-v1' in the history "
        "to compare with (--baseline last); run it once first, or give --baseline RUN_ID"]
    ran = _agenteval("run", *QUICKSTART, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    unknown = _agenteval("run", *QUICKSTART, "--baseline", "0123abcd", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "history.db: no run '0123abcd' in the history" in unknown.stderr
    assert "Traceback" not in unknown.stderr


@pytest.mark.promise(1)
def test_a_damaged_store_is_one_warning_and_the_run_and_its_reports_are_untouched(tmp_path: Path) -> None:
    damaged = tmp_path / "history.db"
    damaged.write_bytes(b"\x00garbage, not SQLite\n" * 64)
    before = damaged.read_bytes()
    ran = _agenteval("run", *QUICKSTART, "--history", str(damaged), "--report", "report.json", "--junit",
                     "junit.xml", cwd=tmp_path)
    assert ran.returncode == 0
    warnings = [line for line in ran.stderr.splitlines() if "history" in line]
    assert warnings == [f"agenteval: warning: the run was not recorded in the history: {damaged}: not a run "
                        "history, or damaged (file is not a database); left as it is: move it away, or give "
                        "another --history PATH"]
    assert json.loads((tmp_path / "report.json").read_text())["summary"]["passed_cases"] == 4
    assert "baseline" not in json.loads((tmp_path / "report.json").read_text())
    assert (tmp_path / "junit.xml").is_file() and "4/4 passed" in ran.stdout
    assert damaged.read_bytes() == before
    assert not (tmp_path / ".agenteval" / "history.db").exists()


@pytest.mark.promise(1)
def test_a_locked_store_is_one_warning_and_the_exit_code_stays(tmp_path: Path) -> None:
    path = tmp_path / ".agenteval" / "history.db"
    ran = _agenteval("run", *QUICKSTART, cwd=tmp_path)
    assert ran.returncode == 0 and path.is_file()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, for longer than the run waits
    try:
        again = _agenteval("run", *QUICKSTART, "--report", "report.json", cwd=tmp_path)
    finally:
        holder.rollback()
        holder.close()
    assert again.returncode == 0
    assert [line for line in again.stderr.splitlines() if "history" in line] == [
        f"agenteval: warning: the run was not recorded in the history: {Path('.agenteval') / 'history.db'}: "
        "the run history is locked by another process (database is locked)"]
    assert json.loads((tmp_path / "report.json").read_text())["summary"]["total_cases"] == 4


def test_no_history_records_nothing(tmp_path: Path) -> None:
    ran = _agenteval("run", *QUICKSTART, "--no-history", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert not (tmp_path / ".agenteval" / "history.db").exists()
    listed = _agenteval("history", cwd=tmp_path)
    assert listed.returncode == 2 and "no run history there" in listed.stderr
