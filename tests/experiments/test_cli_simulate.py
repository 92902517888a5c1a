from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval_otel.cli import main
from agenteval_otel.experiments import QuerySet, SimulationRecord
from tests.judge.judge_server import Reply, serve

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("agent", ["examples/weather_agent.py:weather_agent", "examples/weather_agent.yaml"])
def test_the_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "run.jsonl"
    assert main(["simulate", "examples/weather_queries.jsonl", "--agent", agent, "--out", str(out)]) == 0
    records = SimulationRecord.load_jsonl(out)
    assert sorted(r.query_index for r in records) == [0, 1, 2, 3, 4]
    by_index = {r.query_index: r for r in records}
    assert by_index[0].response == by_index[0].ground_truth
    assert [c.name for c in by_index[1].tool_calls] == ["get_weather", "celsius_to_fahrenheit"]


@pytest.mark.parametrize(("argv", "expected"), [
    (["QUERIES", "--agent", "examples/weather_agent.py:nope"], "has no attribute 'nope'"),
    (["BAD", "--agent", "examples/weather_agent.py:weather_agent"], "bad.jsonl: line 2"),
    (["QUERIES", "--agent", "examples/weather_agent.py:weather_agent", "--concurrency", "0"],
     "--concurrency 0: expected a whole number of at least 1"),
    (["QUERIES", "--agent", "examples/weather_agent.py:weather_agent", "--timeout", "-1"],
     "--timeout -1: expected a positive number"),
])
def test_bad_input_exits_2_with_a_message_and_no_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        argv: list[str], expected: str) -> None:
    monkeypatch.chdir(ROOT)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"content": "ok"}\n{"query": "no content"}\n')
    argv = [str(bad) if a == "BAD" else "examples/weather_queries.jsonl" if a == "QUERIES" else a for a in argv]
    assert main(["simulate", *argv, "--out", str(tmp_path / "run.jsonl")]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err


def test_expand_adds_queries_through_the_judge_then_simulates_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    written = {"queries": ["Is it sunny in Tokyo?", "What is the weather in Paris?", "Weather in London?"]}
    with serve(lambda r: Reply(json.dumps(written))) as server:
        monkeypatch.setenv("AGENTEVAL_JUDGE_BASE_URL", server.url)
        monkeypatch.setenv("AGENTEVAL_JUDGE_API_KEY", "test-key")
        expanded = tmp_path / "more.jsonl"
        code = main(["simulate", "examples/weather_queries.jsonl", "--agent", "examples/weather_agent.py:weather_agent",
                     "--out", str(tmp_path / "run.jsonl"), "--expand", "2", "--judge-model", "writer",
                     "--expanded", str(expanded)])
    assert code == 0
    assert server.requests[0].body["model"] == "writer"
    assert [q.content for q in QuerySet.load(expanded)][5:] == ["Is it sunny in Tokyo?", "Weather in London?"]
    records = SimulationRecord.load_jsonl(tmp_path / "run.jsonl")
    assert len(records) == 7
    assert {r.query: r.response for r in records}["Weather in London?"] == "It is 12°C and raining in London."


def test_yaml_queries_expand_into_a_yaml_query_set_beside_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    queries = QuerySet.load("examples/weather_queries.jsonl").save(tmp_path / "weather.yaml")
    with serve(lambda r: Reply(json.dumps({"queries": ["Weather in London?"]}))) as server:
        monkeypatch.setenv("AGENTEVAL_JUDGE_BASE_URL", server.url)
        monkeypatch.setenv("AGENTEVAL_JUDGE_API_KEY", "test-key")
        assert main(["simulate", str(queries), "--agent", "examples/weather_agent.py:weather_agent",
                     "--out", str(tmp_path / "run.jsonl"), "--expand", "1", "--quiet"]) == 0
    expanded = tmp_path / "weather.expanded.yaml"
    assert expanded.read_text().startswith("# yaml-language-server: $schema=./queryset.schema.json\n")
    assert [q.content for q in QuerySet.load(expanded)][5:] == ["Weather in London?"]


def test_a_failed_query_gives_exit_1_and_is_recorded(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text("def agent(query):\n    raise RuntimeError('down')\n")
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"content": "hi"}\n')
    out = tmp_path / "run.jsonl"
    assert main(["simulate", str(queries), "--agent", f"{agent}:agent", "--out", str(out), "--quiet"]) == 1
    (record,) = SimulationRecord.load_jsonl(out)
    assert (record.error_type, record.error) == ("RuntimeError", "down")
