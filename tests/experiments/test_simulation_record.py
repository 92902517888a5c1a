from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval_otel.errors import SimulationLoadError
from agenteval_otel.experiments import SimulationRecord


def test_records_round_trip_through_a_jsonl_file(tmp_path: Path) -> None:
    records = [
        SimulationRecord(query_index=0, query="Weather in Paris?", ground_truth="sunny", response="Sunny.",
                         duration_seconds=0.5, cpu_seconds=0.01, trace_id="ab" * 16,
                         trajectory=[{"step_type": "tool", "name": "get_weather", "args": {"city": "Paris"}}],
                         tool_calls=[{"name": "get_weather", "args": '{"city": "Paris"}'}]),
        SimulationRecord(query_index=1, query="Boom?", error="no city", error_type="ValueError"),
    ]
    file = tmp_path / "run.jsonl"
    file.write_text("".join(r.model_dump_json() + "\n" for r in records) + "\n")
    loaded = SimulationRecord.load_jsonl(file)
    assert loaded == records
    assert loaded[0].tool_calls[0].args == {"city": "Paris"}
    assert [r.failed for r in loaded] == [False, True]


@pytest.mark.parametrize(("lines", "expected"), [
    (['{"query_index": 0, "query": "a"}', '{"query_index": 1'], "line 2, column"),
    (['{"query_index": 0, "query": "a"}', "", "[1, 2]"], "line 3: expected a simulation record as a JSON object, got an array"),
    (['{"query_index": 0}'], "line 1: query: Field required"),
    (['{"query_index": 0, "query": "a", "score": 1}'], "line 1: score: unknown field"),
    (['{"query_index": -1, "query": "a"}'], "line 1: query_index"),
])
def test_a_bad_line_is_named(tmp_path: Path, lines: list[str], expected: str) -> None:
    file = tmp_path / "run.jsonl"
    file.write_text("\n".join(lines) + "\n")
    with pytest.raises(SimulationLoadError, match=str(file)) as caught:
        SimulationRecord.load_jsonl(file)
    assert expected in str(caught.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(SimulationLoadError, match="no such file"):
        SimulationRecord.load_jsonl(tmp_path / "absent.jsonl")


def test_the_record_fields_are_the_documented_ones() -> None:
    record = json.loads(SimulationRecord(query_index=0, query="q").model_dump_json())
    assert {"query_index", "query", "ground_truth", "metadata", "response", "error", "error_type",
            "duration_seconds", "cpu_seconds", "peak_memory_bytes", "trace_id", "trajectory",
            "tool_calls"} <= set(record)
