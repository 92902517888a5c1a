"""``agenteval trajectory``: JSON for programs, tables for people, exit code 2 for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agenteval_otel.cli import EXIT_BAD_INPUT, EXIT_OK, main


def test_json_output_has_the_documented_shape(weather_runs: Path, capsys) -> None:
    path = weather_runs / "run5_fanout_two_parallel_nodes.otlp.json"
    assert main(["trajectory", str(path), "--format", "json"]) == EXIT_OK
    (trajectory,) = json.loads(capsys.readouterr().out)
    assert set(trajectory) == {
        "trace_ids",
        "conversation_id",
        "steps",
        "tool_calls",
        "node_order",
        "user_input",
        "final_response",
    }
    assert all(
        set(step) == {"step_type", "name", "args", "result", "error", "timestamp"} for step in trajectory["steps"]
    )
    conditional = next(s for s in trajectory["steps"] if s["step_type"] == "conditional")
    assert (conditional["name"], conditional["result"]) == (
        "pick_sources",
        ["fetch_current", "fetch_forecast"],
    )
    assert set(trajectory["tool_calls"][0]) == {"name", "args", "result", "call_id"}
    assert trajectory["node_order"] == ["plan", "fetch_current", "fetch_forecast", "merge"]
    assert trajectory["final_response"] == "Paris: Now: 18.0 C; Tomorrow: sunny"


def test_group_conversation_joins_the_turns(weather_runs: Path, capsys) -> None:
    path = weather_runs / "run4_multi_turn.otlp.json"
    assert main(["trajectory", str(path), "--format", "json", "--group", "conversation"]) == EXIT_OK
    (conversation,) = json.loads(capsys.readouterr().out)
    assert len(conversation["trace_ids"]) == 2 and conversation["conversation_id"]
    assert main(["trajectory", str(path), "--format", "json", "--group", "trace"]) == EXIT_OK
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_table_output_is_for_people(weather_runs: Path, capsys) -> None:
    path = weather_runs / "run2_parallel_calls.otlp.json"
    assert main(["trajectory", str(path)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "get_weather" in out and "London is 12.5 C and Tokyo is 22.0 C." in out


def test_corrupt_lines_are_reported_on_stderr(weather_runs: Path, tmp_path: Path) -> None:
    lines = (weather_runs / "run1_sequential_two_tools.otlp.json").read_text().splitlines()
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join([*lines, "{broken", ""]))
    proc = subprocess.run([sys.executable, "-m", "agenteval_otel.cli", "trajectory", str(path),
                           "--format", "json"], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == EXIT_OK, proc.stderr
    assert len(json.loads(proc.stdout)) == 1
    assert f"agenteval: WARNING: {path}: skipped 1 unreadable line(s) ({len(lines) + 1}); first:" in proc.stderr


def test_a_file_that_is_not_a_trace_exits_2(weather_runs: Path, capsys) -> None:
    path = weather_runs / "run1_sequential_two_tools.ground_truth.json"
    assert main(["trajectory", str(path)]) == EXIT_BAD_INPUT
    assert str(path) in capsys.readouterr().err
