"""Run files: results kept as cases finish; an interrupted run resumes without rescoring or
losing a case."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agenteval_otel import CriterionConfig, EvalConfig, EvalSetBuilder
from agenteval_otel.errors import ConfigError
from agenteval_otel.results import EvalCaseResult
from agenteval_otel.results._run_file import RunFile, default_run_file

CONFIG = EvalConfig(criteria={"response_match": CriterionConfig.response(0.7)})


def _result(eval_id: str) -> EvalCaseResult:
    return EvalCaseResult(eval_id=eval_id, passed=True)


@pytest.mark.promise(14)
def test_results_survive_and_resume(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with RunFile(path, "set", CONFIG) as run:
        assert run.open(resume=False) == {}
        run.submit(_result("a"))
        run.submit(_result("b"))
    with path.open("a") as handle:
        handle.write('{"eval_id": "c", "pass')  # a line cut short by a kill
    with RunFile(path, "set", CONFIG) as run:
        done = run.open(resume=True)
        assert sorted(done) == ["a", "b"]
        run.submit(_result("c"))
    with RunFile(path, "set", CONFIG) as run:
        assert sorted(run.open(resume=True)) == ["a", "b", "c"]


@pytest.mark.promise(14)
def test_a_last_line_torn_inside_a_character_is_dropped_and_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "run.jsonl"
    with RunFile(path, "set", CONFIG) as run:
        run.open(resume=False)
        run.submit(_result("a"))
    torn = EvalCaseResult(eval_id="b", passed=True, error="température 12°C").model_dump_json().encode()
    cut = torn.index("°".encode()) + 1  # inside the two bytes of the degree sign
    with path.open("ab") as handle:
        handle.write(torn[:cut])
    with RunFile(path, "set", CONFIG) as run:
        assert sorted(run.open(resume=True)) == ["a"]
        run.submit(_result("b"))
    assert any("line 3" in r.getMessage() and "cut short" in r.getMessage() for r in caplog.records)
    text = path.read_text(encoding="utf-8")  # the torn bytes are gone: the file is valid UTF-8 again
    assert [json.loads(line).get("eval_id") for line in text.splitlines()] == [None, "a", "b"]
    with RunFile(path, "set", CONFIG) as run:
        assert sorted(run.open(resume=True)) == ["a", "b"]


def test_a_fresh_run_starts_over(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with RunFile(path, "set", CONFIG) as run:
        run.open(resume=False)
        run.submit(_result("a"))
    with RunFile(path, "set", CONFIG) as run:
        assert run.open(resume=False) == {}
    assert len(path.read_text().splitlines()) == 1  # the header only


def test_resume_refuses_another_set_or_config(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with RunFile(path, "set", CONFIG) as run:
        run.open(resume=False)
    with pytest.raises(ConfigError, match="belongs to eval set 'set', not 'other'"):
        RunFile(path, "other", CONFIG).open(resume=True)
    with pytest.raises(ConfigError, match="started with another config"):
        RunFile(path, "set", EvalConfig.default()).open(resume=True)
    path.write_text("not json\n")
    with pytest.raises(ConfigError, match="line 1: not an agenteval run file"):
        RunFile(path, "set", CONFIG).open(resume=True)


def test_default_path_is_safe() -> None:
    assert default_run_file("tests/integration/fixture x", "run") == Path(
        ".agenteval/tests_integration_fixture_x.run.jsonl")


AGENT = '''
import time
from pathlib import Path

def agent(query: str) -> str:
    with Path(__file__).with_name("calls.log").open("a") as log:
        log.write(query + "\\n")
    time.sleep(0.15)
    return "answer to " + query
'''


@pytest.mark.promise(14)
def test_killed_run_resumes_without_rescoring_or_losing_a_case(tmp_path: Path) -> None:
    (tmp_path / "slow_agent.py").write_text(AGENT)
    queries = [f"question {i}" for i in range(12)]
    builder = EvalSetBuilder("resume", eval_set_id="resume-set")
    for i, query in enumerate(queries):
        builder.add_case(query=query, expected=f"answer to {query}", case_id=f"c{i:02d}")
    builder.save(tmp_path / "set.evalset.json")
    command = [sys.executable, "-m", "agenteval_otel.cli", "run", "set.evalset.json", "--agent",
               "slow_agent.py:agent", "--concurrency", "1", "--quiet", "--report", "report.json"]
    run_file = tmp_path / ".agenteval" / "resume-set.run.jsonl"

    first = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if run_file.exists() and len(run_file.read_text().splitlines()) >= 5:  # header + 4 cases
            break
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    recorded = [json.loads(line)["eval_id"] for line in run_file.read_text().splitlines()[1:]
                if line.strip().endswith("}")]
    assert 4 <= len(recorded) < len(queries)
    calls_before = (tmp_path / "calls.log").read_text().splitlines()

    second = subprocess.run([*command, "--resume"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, check=False)
    assert second.returncode == 0, second.stdout + second.stderr
    calls_after = (tmp_path / "calls.log").read_text().splitlines()[len(calls_before):]
    done_queries = {f"question {int(eval_id[1:])}" for eval_id in recorded}
    assert not done_queries & set(calls_after)  # nothing scored before the kill ran again
    assert set(calls_before) | set(calls_after) == set(queries)  # nothing lost

    report = json.loads((tmp_path / "report.json").read_text())
    assert [r["eval_id"] for r in report["results"]] == [f"c{i:02d}" for i in range(12)]
    assert report["summary"]["passed_cases"] == 12
    lines = [json.loads(line)["eval_id"] for line in run_file.read_text().splitlines()[1:]
             if line.strip().startswith("{") and line.strip().endswith("}")]
    assert sorted(lines) == [f"c{i:02d}" for i in range(12)]  # each case recorded once
    os.remove(tmp_path / "calls.log")
