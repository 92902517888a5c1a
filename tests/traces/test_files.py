"""``read_spans`` picks the reader from the content; every trace file, ours and the shared ones,
reads whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces import read_spans, read_trajectories
from tests.shared_data import SHARED_DATA, shared_params
from tests.traces.conftest import OWN_TRACES

SHARED = SHARED_DATA / "traces"


def _raw_span_count(doc: Any) -> int:
    """Spans in a document, counted straight from the JSON."""
    if isinstance(doc, list):
        return len(doc)
    if "result" in doc:
        return _raw_span_count(doc["result"])
    if "data" in doc:
        return sum(len(trace["spans"]) for trace in doc["data"])
    if "resourceSpans" in doc:
        return sum(len(s.get("spans", [])) for r in doc["resourceSpans"] for s in r.get("scopeSpans", []))
    return len(doc["spans"])


def _shared_files() -> list[Any]:
    files = sorted(
        [*SHARED.glob("jaeger/*.json"), *SHARED.glob("otlp/*.json"), *SHARED.glob("generated/*/*.otlp.json")]
    )
    return shared_params(pytest.param(p.relative_to(SHARED), id=str(p.relative_to(SHARED))) for p in files)


def _assert_reads_whole(path: Path) -> None:
    trace_file = read_spans(path)
    records = list(trace_file)
    assert len(records) == _raw_span_count(json.loads(path.read_text()))
    assert trace_file.skipped == ()
    assert all(
        len(r.trace_id) == 32 and len(r.span_id) == 16 and r.trace_id == r.trace_id.lower() for r in records
    )


@pytest.mark.parametrize("name", sorted(str(p.relative_to(OWN_TRACES)) for p in OWN_TRACES.glob("*/*.json")))
def test_every_own_trace_file_reads_with_the_right_span_count(own_traces: Path, name: str) -> None:
    _assert_reads_whole(own_traces / name)


def test_own_runs_in_json_lines_read_whole(weather_runs: Path) -> None:
    for path in sorted(weather_runs.glob("*.otlp.json")):
        lines = path.read_text().splitlines()
        trace_file = read_spans(path)
        assert len(list(trace_file)) == sum(_raw_span_count(json.loads(line)) for line in lines)
        assert trace_file.format == "otlp-jsonl" and trace_file.skipped == ()


@pytest.mark.parametrize("relative", _shared_files())
def test_every_shared_trace_file_reads_with_the_right_span_count(traces_dir: Path, relative: Path) -> None:
    _assert_reads_whole(traces_dir / relative)


@pytest.mark.parametrize(
    ("name", "expected"),
    [("otlp/weather.otlp.json", "otlp-json"), ("jaeger/query_response.json", "jaeger-json"),
     ("jaeger/span_list.json", "jaeger-json"), ("jaeger/api_v3.json", "jaeger-json")],
)
def test_the_format_of_our_files_is_recognised_from_the_content(own_traces: Path, name: str, expected: str) -> None:
    assert read_spans(own_traces / name).format == expected


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("otlp/otel-proto_examples_trace.json", "otlp-json"),
        ("jaeger/jaeger__internal__uimodel__converter__v1__json__fixtures__ui_01.json", "jaeger-json"),
        (
            "jaeger/jaeger__cmd__jaeger__internal__extension__jaegerquery__internal__apiv3__snapshots__FindTraces.json",
            "jaeger-json",
        ),
    ],
)
def test_the_format_is_recognised_from_the_content(traces_dir: Path, relative: str, expected: str) -> None:
    assert read_spans(traces_dir / relative).format == expected


@pytest.mark.promise(13)
def test_files_that_are_not_traces_are_refused_by_name(tmp_path: Path, weather_runs: Path) -> None:
    from tests.conftest import REPO_ROOT

    not_traces = [
        REPO_ROOT / "examples" / "weather_agent.evalset.json",
        weather_runs / "run1_sequential_two_tools.ground_truth.json",
        REPO_ROOT / "README.md",
        tmp_path / "missing.json",
    ]
    for path in not_traces:
        with pytest.raises(TraceReadError) as caught:
            list(read_spans(path))
        assert str(path) in str(caught.value) and "expected a trace file" in str(caught.value)


def test_shared_files_that_are_not_traces_are_refused_by_name(traces_dir: Path, tmp_path: Path) -> None:
    not_traces = [
        traces_dir / "generated" / "google_adk_semconv_content" / "adk_weather_generated.evalset.json",
        traces_dir
        / "openllmetry-recording"
        / "openllmetry__openai-agents__recordings__mocked_recording_1758114802.json",
        traces_dir / "otlp" / "README.md",
        tmp_path / "missing.json",
    ]
    for path in not_traces:
        with pytest.raises(TraceReadError) as caught:
            list(read_spans(path))
        assert str(path) in str(caught.value) and "expected a trace file" in str(caught.value)


def test_read_trajectories_reads_our_runs_across_files(weather_runs: Path) -> None:
    paths = [weather_runs / "run1_sequential_two_tools.otlp.json", weather_runs / "run4_multi_turn.otlp.json"]
    found = read_trajectories(paths, group="conversation")
    assert [t.final_response for t in found.trajectories] == ["It is 64.4 F in Paris.", "That is 54.5 F."]
    assert [len(t.trace_ids) for t in found.trajectories] == [1, 2]
    assert [f.path for f in found.files] == paths and found.skipped == {}


def test_read_trajectories_joins_conversations_across_files(traces_dir: Path) -> None:
    folder = traces_dir / "generated" / "pydantic_ai"
    paths = [folder / "run1_sequential_two_tools.otlp.json", folder / "run2_parallel_calls.otlp.json"]
    found = read_trajectories(paths, group="conversation")
    assert [t.final_response for t in found.trajectories] == [
        "It is 64.4 F in Paris.",
        "London is 12.5 C and Tokyo is 22.0 C.",
    ]
    assert [f.path for f in found.files] == paths and found.skipped == {}
