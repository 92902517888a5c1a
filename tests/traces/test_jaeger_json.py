"""Jaeger JSON: every shape Jaeger writes, read from our own small files and from the real Jaeger
files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces import read_jaeger_json, read_spans
from agenteval_otel.traces.jaeger_json import record_from_span
from agenteval_otel.trajectory import build_trajectories
from tests.traces.wrong_types import wrong_type_variants

UI_TRACE = "jaeger__internal__uimodel__converter__v1__json__fixtures__ui_01.json"
QUERY_RESPONSE = (
    "jaeger__cmd__jaeger__internal__extension__jaegerquery__internal__fixture__otlp2jaeger-out.json"
)
ANONYMIZED = "jaeger__cmd__anonymizer__app__uiconv__fixtures__trace_success.json"
GENAI = "jaeger-ui__components__TracePage__TraceTimelineViewer__genaiTestTrace.json"
API_V3 = "jaeger__cmd__jaeger__internal__extension__jaegerquery__internal__apiv3__snapshots__GetTrace.json"


# --- our own files ----------------------------------------------------------------------------


def test_query_api_response_with_processes_tags_logs_and_references(own_traces: Path) -> None:
    records = list(read_jaeger_json(own_traces / "jaeger" / "query_response.json"))
    assert len(records) == 7
    agent, chat, weather, clock = records[:4]
    assert agent.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736" and agent.parent_id is None
    assert (agent.kind, agent.scope_name, agent.service_name) == ("server", "weather-lib", "weather-agent")
    assert "span.kind" not in agent.attributes and "otel.scope.name" not in agent.attributes
    assert agent.start_ns == 1706700000000000000 and agent.duration_ns == 1_500_000_000
    assert (chat.kind, chat.service_name, chat.parent_id) == ("client", "llm-gateway", agent.span_id)
    assert weather.attributes["retries"] == 2 and weather.attributes["ratio"] == 0.5
    assert weather.attributes["cached"] is False and weather.attributes["big"] == 9223372036854775222
    assert weather.attributes["blob"] == b"\x00\x0009"
    assert [(e.name, e.attributes) for e in weather.events] == [("cache-miss", {"city": "Paris"})]
    assert (clock.status.code, clock.status.description) == ("error", "clock unreachable")
    assert clock.events[0].attributes["exception.type"] == "TimeoutError"
    checkout, charge, receipt = records[4:]
    assert checkout.trace_id == "0" * 30 + "a1" and charge.parent_id == checkout.span_id
    assert receipt.parent_id == charge.span_id and receipt.links[0].trace_id == "0" * 30 + "ff"


def test_genai_trajectory_from_our_jaeger_trace(own_traces: Path) -> None:
    weather, _ = build_trajectories(read_spans(own_traces / "jaeger" / "query_response.json"))
    assert (weather.agent_name, weather.conversation_id) == ("weather-agent", "thread-7")
    assert weather.user_input == "What's the weather in Paris?"
    assert weather.final_response == "It is 18 C in Paris."
    assert [(c.name, c.args) for c in weather.tool_calls()] == [
        ("get_weather", {"city": "Paris"}), ("get_time", {"city": "Paris"})]
    assert weather.tool_calls()[0].result == {"temp_c": 18.0}
    assert (weather.usage.input_tokens, weather.usage.output_tokens) == (120, 30)


def test_one_ui_trace_and_a_span_list_with_inline_processes(own_traces: Path) -> None:
    ui = list(read_spans(own_traces / "jaeger" / "ui_trace.json"))
    assert [r.service_name for r in ui] == ["shop", "payments", "shop"]
    spans = json.loads((own_traces / "jaeger" / "ui_trace.json").read_text())
    record = record_from_span(spans["spans"][1], processes=spans["processes"])
    assert (record.span_id, record.parent_id, record.service_name) == (
        "0" * 14 + "b2", "0" * 14 + "b1", "payments")
    listed = list(read_spans(own_traces / "jaeger" / "span_list.json"))
    assert [r.trace_id for r in listed] == ["0" * 16 + "2f4e6a8c0b1d3f57"] * 2
    assert listed[0].parent_id == "9f8e7d6c5b4a3921"  # a parent outside the file is kept
    assert [r.service_name for r in listed] == ["forecast-api", "forecast-db"]
    assert listed[0].kind == "server" and listed[1].status.code == "error"
    (trajectory,) = build_trajectories(listed, group="trace")
    assert trajectory.trace_ids == [listed[0].trace_id]


def test_our_api_v3_response_is_otlp_inside_result(own_traces: Path) -> None:
    (record,) = read_spans(own_traces / "jaeger" / "api_v3.json")
    assert (record.name, record.kind, record.status.code) == ("invoke_agent weather-agent", "server", "error")
    assert (record.status.description, record.service_name) == ("model timed out", "weather-agent")


# --- the real Jaeger files ----------------------------------------------------------------------


def test_ui_model_trace(traces_dir: Path) -> None:
    records = list(read_jaeger_json(traces_dir / "jaeger" / UI_TRACE))
    assert len(records) == 5
    first, error_span, child, linked, deep = records
    assert first.trace_id == "0" * 31 + "1" and first.span_id == "0" * 15 + "2"
    assert first.start_ns == 1485467191639875000 and first.duration_ns == 5000
    assert [e.name for e in first.events] == ["some-event", "log"] and first.events[1].attributes == {
        "x": "y"
    }
    assert first.resource == {"service.name": "service-x"}
    assert error_span.status.code == "error" and error_span.attributes["temperature"] == 72.5
    assert error_span.attributes["blob"] == b"\x00\x0009"
    assert child.parent_id == first.span_id
    assert linked.parent_id == first.span_id and linked.links[0].trace_id == "0" * 30 + "ff"
    assert deep.parent_id == linked.span_id


def test_query_api_response_restores_kind_status_and_scope(traces_dir: Path) -> None:
    records = list(read_jaeger_json(traces_dir / "jaeger" / QUERY_RESPONSE))
    original = list(read_spans(traces_dir / "jaeger" / QUERY_RESPONSE.replace("-out", "-in")))
    assert {(r.trace_id, r.span_id, r.parent_id, r.name, r.kind) for r in records} == {
        (r.trace_id, r.span_id, r.parent_id, r.name, r.kind) for r in original
    }
    assert {r.scope_name for r in records} == {r.scope_name for r in original}
    assert all("span.kind" not in r.attributes and "otel.scope.name" not in r.attributes for r in records)


def test_span_list_with_64_bit_ids_inline_process_and_a_missing_parent(traces_dir: Path) -> None:
    records = list(read_spans(traces_dir / "jaeger" / ANONYMIZED))
    assert [r.trace_id for r in records] == ["0000000000000000" + "2be38093ead7a083"] * 2
    assert records[0].kind == "server" and records[1].status.code == "error"
    (trajectory,) = build_trajectories(records, group="trace")
    assert trajectory.trace_ids == [records[0].trace_id]


def test_api_v3_response_is_otlp_inside_result(traces_dir: Path) -> None:
    (record,) = read_spans(traces_dir / "jaeger" / API_V3)
    assert (record.name, record.kind, record.status.code) == ("foobar", "server", "error")


def test_genai_trace_from_jaeger(traces_dir: Path) -> None:
    (trajectory,) = build_trajectories(read_spans(traces_dir / "jaeger" / GENAI))
    assert trajectory.agent_name == "triage-agent"
    assert [c.name for c in trajectory.tool_calls()] == ["list_dashboards", "search_traces"] * 3 + [
        "summarize_findings"
    ]
    assert trajectory.tool_calls()[0].args == {"window": "1h"}
    assert trajectory.user_input == "Why did the checkout latency regress this afternoon?"
    assert trajectory.usage.input_tokens == 4 * 1840 + 920


def test_one_jaeger_span_with_its_process(traces_dir: Path) -> None:
    spans = json.loads((traces_dir / "jaeger" / UI_TRACE).read_text())
    record = record_from_span(spans["spans"][2], processes=spans["processes"])
    assert (record.span_id, record.parent_id, record.service_name) == (
        "0" * 15 + "3",
        "0" * 15 + "2",
        "service-y",
    )


def _query_response() -> dict[str, Any]:
    """A Jaeger query-API response using every field the reader reads."""
    return {"data": [{
        "traceID": "2be38093ead7a083",
        "spans": [{
            "traceID": "2be38093ead7a083", "spanID": "7c1c7c1c7c1c7c1c", "operationName": "execute_tool x",
            "references": [{"refType": "CHILD_OF", "traceID": "2be38093ead7a083", "spanID": "7c1c7c1c7c1c7c1d"}],
            "startTime": 1700000000000000, "duration": 1500, "processID": "p1",
            "tags": [{"key": "span.kind", "type": "string", "value": "client"},
                     {"key": "retries", "type": "int64", "value": "2"},
                     {"key": "ratio", "vType": "FLOAT64", "vFloat64": "0.5"},
                     {"key": "otel.status_code", "value": "ERROR"},
                     {"key": "otel.scope.name", "value": "lib"}],
            "logs": [{"timestamp": 1700000000000100,
                      "fields": [{"key": "event", "value": "exception"}, {"key": "message", "value": "m"}]}],
        }],
        "processes": {"p1": {"serviceName": "svc", "tags": [{"key": "host", "value": "h"}]}},
    }]}


@pytest.mark.promise(13)
def test_every_field_of_a_wrong_type_is_a_trace_read_error_or_a_skipped_line(tmp_path: Path) -> None:
    whole, lines = tmp_path / "one.json", tmp_path / "lines.jsonl"
    good = orjson.dumps(_query_response())
    for where, variant in wrong_type_variants(_query_response()):
        whole.write_bytes(orjson.dumps(variant))
        lines.write_bytes(b"\n".join([good, orjson.dumps(variant), good]) + b"\n")
        try:
            list(read_jaeger_json(whole))
        except TraceReadError as exc:
            assert str(exc).startswith(f"{whole}: "), where
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{where}: {type(exc).__name__}: {exc}")
        trace_file = read_jaeger_json(lines)
        try:
            spans = list(trace_file)
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"lines, {where}: {type(exc).__name__}: {exc}")
        assert trace_file.skipped_lines in ([], [2]), where
        assert len(spans) == 2 if trace_file.skipped_lines else len(spans) in (2, 3), where


@pytest.mark.promise(13)
@pytest.mark.parametrize(
    ("change", "json_path"),
    [
        (lambda d: d["data"][0].update(spans=["not a span"]), "data[0].spans[0]"),
        (lambda d: d["data"][0]["spans"][0].update(references="parent"), "data[0].spans[0].references"),
        (lambda d: d["data"][0]["spans"][0]["tags"][1].update(value="two"), "data[0].spans[0].tags[1]"),
        (lambda d: d["data"][0]["spans"][0].update(traceID=12), "data[0].spans[0]"),
        (lambda d: d["data"][0]["processes"].update(p1=["svc"]), "data[0].processes.p1"),
    ],
)
def test_a_whole_file_defect_names_the_file_and_the_json_path(tmp_path: Path, change: Any, json_path: str) -> None:
    response = _query_response()
    change(response)
    path = tmp_path / "one.json"
    path.write_bytes(orjson.dumps(response, option=orjson.OPT_INDENT_2))
    with pytest.raises(TraceReadError) as caught:
        list(read_jaeger_json(path))
    assert str(caught.value).startswith(f"{path}: {json_path}"), str(caught.value)
