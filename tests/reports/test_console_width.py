"""The console report stays legible in a CI log at 80 columns and uses the room at 120: names are
never split mid-word, no line is wider than the terminal, narrow terminals drop or fold columns.

Golden files: ``tests/reports/golden/report_{80,120}.txt`` (the run's duration masked). After an
intended change of the layout, rewrite them with ``AGENTEVAL_REGENERATE_GOLDEN=1 pytest
tests/reports/test_console_width.py`` and review the diff.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

GOLDEN = Path(__file__).parent / "golden"
NAMES = ("tool_trajectory_avg_score", "response_match_score", "final_response_present", "max_tool_calls")


def _report_at(columns: int, workdir: Path) -> str:
    env = {**os.environ, "COLUMNS": str(columns), "OTEL_TRACES_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none",
           "TERM": "dumb"}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    done = subprocess.run(
        [sys.executable, "-m", "agenteval_otel.cli", "run", str(REPO_ROOT / "examples" / "weather_agent.evalset.json"),
         "--agent", f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent",
         "--config", str(GOLDEN / "criteria.json")],
        capture_output=True, text=True, cwd=workdir, env=env, timeout=120)
    assert done.returncode == 1, done.stderr  # one case fails max_tool_calls on purpose
    return re.sub(r"· \d+\.\d s", "· N.N s", done.stdout)


@pytest.mark.parametrize("columns", [80, 120])
def test_the_report_matches_its_golden_file(columns: int, tmp_path: Path) -> None:
    shown = _report_at(columns, tmp_path)
    golden = GOLDEN / f"report_{columns}.txt"
    if os.environ.get("AGENTEVAL_REGENERATE_GOLDEN"):
        golden.write_text(shown, encoding="utf-8")
    assert shown == golden.read_text(encoding="utf-8")
    # the plain failure lines at the end are one line each on purpose, so a CI log can be grepped
    drawn = [line for line in shown.splitlines() if not line.startswith("  ")]
    assert max(len(line) for line in drawn) <= columns
    for name in NAMES:
        assert name in shown, f"{name} is split or missing at {columns} columns"
