"""``agenteval trajectory --explain`` ends each trace with its coverage (spans read by each
convention, by the span-name fallback, unread) and warns when a producer was plainly not
understood: a model's requested tool calls with no tool span, a root span's output with no final
answer. Real third-party traces, and real ones with parts taken away."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel.cli import main
from agenteval_otel.trajectory import build_trajectories
from agenteval_otel.trajectory.explain import CoverageTally, counting_coverage
from agenteval_otel.trajectory.spans import SpanRecord
from tests.shared_data import SHARED_DATA

pytestmark = pytest.mark.needs_shared_data

JAEGER_GENAI = SHARED_DATA / "traces" / "jaeger" / "jaeger-ui__components__TracePage__TraceTimelineViewer__genaiTestTrace.json"
PYDANTIC_AI = SHARED_DATA / "traces" / "generated" / "pydantic_ai" / "run1_sequential_two_tools.otlp.json"


def _explained(path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["trajectory", "--explain", str(path)]) == 0
    return capsys.readouterr().out.splitlines()


def _altered(tmp_path: Path, keep_span: Any = lambda span: True, keep_key: Any = lambda key: True) -> Path:
    """The pydantic-ai trace with some spans, or some attribute keys, taken away."""
    data = json.loads(PYDANTIC_AI.read_text(encoding="utf-8"))
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [span for span in scope["spans"] if keep_span(span)]
            for span in scope["spans"]:
                span["attributes"] = [a for a in span.get("attributes", []) if keep_key(a["key"])]
    path = tmp_path / "altered.otlp.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_jaeger_genai_trace_ends_with_its_coverage(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _explained(JAEGER_GENAI, capsys)
    assert lines[-1] == "  coverage: 57 spans: 17 read (genai 17), 0 by fallback, 40 unread"
    assert not any(line.startswith("  warning:") for line in lines)


def test_requested_tool_calls_without_tool_spans_are_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    no_tools = _altered(tmp_path, keep_span=lambda span: not span["name"].startswith("execute_tool"))
    lines = _explained(no_tools, capsys)
    assert lines[-2:] == [
        "  coverage: 4 spans: 4 read (genai 4), 0 by fallback, 0 unread",
        "  warning: weather_agent (span a39f7422a6a8bfb6): the model requested tool calls (get_weather, "
        "celsius_to_fahrenheit) but no tool span was read: the trajectory's tool calls are the requests alone",
    ]


def test_a_root_output_no_reader_understood_is_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    by_name_only = _altered(tmp_path, keep_key=lambda key: not key.startswith("gen_ai."))
    lines = _explained(by_name_only, capsys)
    assert lines[-2:] == [
        "  coverage: 6 spans: 0 read, 6 by fallback (span-name 6), 0 unread",
        "  warning: weather_agent (span a39f7422a6a8bfb6): the root span 'invoke_agent weather_agent' has output "
        "but the trajectory has no final answer",
    ]


def test_a_model_call_traced_alone_that_only_asks_for_tools_has_no_answer_to_miss(
    capsys: pytest.CaptureFixture[str],
) -> None:
    litellm = Path(__file__).resolve().parents[1] / "data" / "corpus" / "litellm_otel" / "run1_sequential.otlp.json"
    lines = _explained(litellm, capsys)
    assert [line for line in lines if line.startswith("  coverage:")] == [
        "  coverage: 2 spans: 2 read (litellm 2), 0 by fallback, 0 unread"] * 3
    warnings = [line for line in lines if line.startswith("  warning:")]
    assert len(warnings) == 2 and all("no tool span was read" in line for line in warnings)


def test_coverage_is_counted_only_where_asked() -> None:
    root = SpanRecord("a" * 32, "b" * 16, None, "MyAgent.run", attributes={"acme.output": "Sunny."})
    with counting_coverage() as tally:
        (trajectory,) = build_trajectories([root])
    assert trajectory.final_response is None
    assert (tally.traces, tally.spans, tally.unread, dict(tally.warnings)) == (1, 1, 1, {"final_answer_not_read": 1})
    build_trajectories([root])  # after the context: not counted
    assert tally.traces == 1
    again = CoverageTally()
    with counting_coverage(again):
        build_trajectories([root, SpanRecord("c" * 32, "d" * 16, None, "execute_tool search")])
    assert (again.traces, again.spans, dict(again.fallback), again.unread) == (2, 2, {"span-name": 1}, 1)
