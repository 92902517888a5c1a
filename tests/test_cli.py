"""The ``agenteval`` command: exit codes and messages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agenteval_otel.cli import main
from tests.conftest import REPO_ROOT


def test_show_prints_the_cases(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["show", str(REPO_ROOT / "examples" / "weather_agent.evalset.json")]) == 0
    out = capsys.readouterr().out
    assert "weather-agent" in out and "Follow-up question" in out and "get_weather" in out


def test_bad_input_exits_2_with_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.evalset.json"
    assert main(["show", str(missing)]) == 2
    assert f"agenteval: error: {missing}: no such file" in capsys.readouterr().err


def test_console_script_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agenteval_otel.cli", "show",
         str(REPO_ROOT / "examples" / "weather_agent.evalset.json")],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 case(s)" in proc.stdout


def test_deeply_nested_input_exits_2_without_a_traceback(tmp_path: Path) -> None:
    eval_set = tmp_path / "deep.evalset.json"
    eval_set.write_text('{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "tags": %s}]}'
                        % ("[" * 3000 + "]" * 3000))
    trace = tmp_path / "deep.otlp.json"
    trace.write_text('{"resourceSpans": %s}' % ("[" * 3000 + "]" * 3000))
    for args in (["show", str(eval_set)], ["trajectory", str(trace)]):
        proc = subprocess.run([sys.executable, "-m", "agenteval_otel.cli", *args],
                              capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        assert proc.stderr.startswith(f"agenteval: error: {args[1]}: ") and "nested more than" in proc.stderr
