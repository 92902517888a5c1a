"""OTLP/JSON: the codec and the streaming reader, over files as capture's encoder writes them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces import read_otlp_json
from agenteval_otel.traces.otlp_json import (
    decode_any_value,
    iter_records,
    record_from_span,
    records_from_request,
)
from agenteval_otel.tracing import OtlpJsonFileExporter
from agenteval_otel.tracing.file_export import encode_any_value
from agenteval_otel.trajectory import SpanRecord
from tests.traces.wrong_types import wrong_type_variants


def export_lines(spans: Sequence[ReadableSpan], path: Path, *, spans_per_line: int = 512) -> int:
    """Append ``spans`` to ``path`` as OTLP/JSON lines, ``spans_per_line`` to a line, with the
    package's one encoder (capture's file exporter); returns the spans written."""
    exporter = OtlpJsonFileExporter(path)
    written = 0
    try:
        for start in range(0, len(spans), spans_per_line):
            batch = spans[start:start + spans_per_line]
            assert exporter.export(batch) is SpanExportResult.SUCCESS
            written += len(batch)
    finally:
        exporter.shutdown()
    return written


def test_upper_case_hex_ids_and_string_timestamps_read_lower_case(own_traces: Path) -> None:
    agent, tool = read_otlp_json(own_traces / "otlp" / "weather.otlp.json")
    assert agent.trace_id == tool.trace_id == "5b8efff798038103d269b633813fc60c"
    assert (agent.span_id, tool.parent_id) == ("eee19b7ec3c1b174", "eee19b7ec3c1b174")
    assert (agent.kind, tool.kind) == ("server", "internal") and agent.start_ns == 1544712660000000000
    assert tool.attributes["retries"] == 2 and tool.attributes["gen_ai.tool.name"] == "get_weather"
    assert agent.resource == {"service.name": "weather-agent"}
    assert (agent.scope_name, agent.scope_version) == ("weather-lib", "1.0.0")


def test_the_otlp_protocol_example_reads_with_lower_case_ids(traces_dir: Path) -> None:
    (record,) = read_otlp_json(traces_dir / "otlp" / "otel-proto_examples_trace.json")
    assert record.trace_id == "5b8efff798038103d269b633813fc60c"
    assert (record.span_id, record.parent_id) == ("eee19b7ec3c1b174", "eee19b7ec3c1b173")
    assert record.kind == "server" and record.start_ns == 1544712660000000000
    assert record.attributes == {"my.span.attr": "some value"}
    assert record.resource == {"service.name": "my.service"} and record.scope_name == "my.library"


def test_base64_ids_snake_case_fields_and_numeric_int64s() -> None:
    request = {
        "resource_spans": [
            {
                "scope_spans": [
                    {
                        "spans": [
                            {
                                "trace_id": "W47/95gDgQPSabYzgT/GDA==",
                                "span_id": "7uGbfsPBsXQ=",
                                "name": "x",
                                "kind": "SPAN_KIND_CLIENT",
                                "start_time_unix_nano": 5,
                                "end_time_unix_nano": "9",
                                "status": {"code": "STATUS_CODE_ERROR"},
                                "attributes": [{"key": "n", "value": {"int_value": 7}}],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    (record,) = records_from_request(request)
    assert (record.trace_id, record.span_id) == ("5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174")
    assert (record.kind, record.start_ns, record.end_ns, record.status.code) == ("client", 5, 9, "error")
    assert record.attributes == {"n": 7}


@pytest.mark.parametrize(
    "value",
    ["text", True, 3, 2.5, b"\x00\x01", [1, "a", [True]], {"k": {"nested": [1.5]}}, None, float("inf")],
)
def test_any_value_round_trip(value) -> None:
    assert decode_any_value(encode_any_value(value)) == value


def test_write_then_read_lines(tmp_path: Path, sdk_spans) -> None:
    records = [SpanRecord.from_readable_span(span) for span in sdk_spans]
    path = tmp_path / "out.jsonl"
    assert export_lines(sdk_spans, path, spans_per_line=2) == 3
    assert len(path.read_text().splitlines()) == 2
    assert list(read_otlp_json(path)) == records


@pytest.mark.promise(13)
def test_corrupt_lines_are_skipped_and_counted(tmp_path: Path, sdk_spans) -> None:
    records = [SpanRecord.from_readable_span(span) for span in sdk_spans]
    path = tmp_path / "spans.jsonl"
    export_lines(sdk_spans, path, spans_per_line=1)
    good = path.read_text().splitlines()
    bad_id = good[0].replace(records[0].span_id, "not-an-id")
    path.write_text(
        "\n".join([good[0], '{"resourceSpans": [', good[1], "", bad_id, '{"other": 1}', good[2]]) + "\n"
    )
    trace_file = read_otlp_json(path)
    assert [r.span_id for r in trace_file] == [r.span_id for r in records]
    assert trace_file.skipped_lines == [2, 5, 6]
    assert "spanId" in trace_file.skipped[1].reason


@pytest.mark.promise(13)
def test_a_corrupt_first_line_still_reads_as_lines(tmp_path: Path, sdk_spans) -> None:
    path = tmp_path / "spans.jsonl"
    export_lines(sdk_spans, path, spans_per_line=1)
    path.write_text('{"resourceSpans": [{"trunc\n' + path.read_text())
    trace_file = read_otlp_json(path)
    assert len(list(trace_file)) == 3 and trace_file.skipped_lines == [1]


@pytest.mark.promise(13)
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty"),
        ("hello world\n", "not a JSON file"),
        ('{"eval_set_id": "x", "eval_cases": []}', "not a trace document"),
        ('{\n  "resourceSpans": [\n', "invalid JSON"),
        ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "zz", "traceId": "1"}]}]}]}', "spanId"),
    ],
)
def test_not_a_trace_file_names_the_file_and_what_was_expected(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(TraceReadError) as caught:
        list(read_otlp_json(path))
    assert str(path) in str(caught.value) and message in str(caught.value)
    assert "OTLP/JSON" in str(caught.value) or message == "spanId"


def test_a_jsonl_file_is_streamed_line_by_line(tmp_path: Path, sdk_spans) -> None:
    records = [SpanRecord.from_readable_span(span) for span in sdk_spans]
    path = tmp_path / "growing.jsonl"
    export_lines(sdk_spans[:1], path)
    iterator = iter(read_otlp_json(path))
    assert next(iterator) == records[0]
    export_lines(sdk_spans[1:], path)  # lines written after reading began are still read
    assert list(iterator) == records[1:]


def test_one_span_with_its_resource_and_scope() -> None:
    record = record_from_span(
        {"traceId": "5B8EFFF798038103D269B633813FC60C", "spanId": "EEE19B7EC3C1B174", "name": "x", "kind": 3},
        resource={"service.name": "svc"},
        scope={"name": "lib", "version": "2"},
    )
    assert (record.trace_id, record.kind, record.service_name) == (
        "5b8efff798038103d269b633813fc60c",
        "client",
        "svc",
    )
    assert (record.scope_name, record.scope_version, record.parent_id) == ("lib", "2", None)


def _full_request() -> dict[str, Any]:
    """An OTLP/JSON request using every field the reader reads."""
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
        "scopeSpans": [{
            "scope": {"name": "lib", "version": "1"},
            "spans": [{
                "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
                "parentSpanId": "eee19b7ec3c1b175", "name": "execute_tool get_weather", "kind": 1,
                "startTimeUnixNano": "1", "endTimeUnixNano": "5",
                "attributes": [
                    {"key": "list", "value": {"arrayValue": {"values": [{"intValue": "3"}, {"boolValue": True}]}}},
                    {"key": "map", "value": {"kvlistValue": {"values": [
                        {"key": "k", "value": {"doubleValue": 1.5}}]}}},
                    {"key": "bytes", "value": {"bytesValue": "aGk="}},
                ],
                "events": [{"name": "exception", "timeUnixNano": "2",
                            "attributes": [{"key": "exception.type", "value": {"stringValue": "E"}}]}],
                "links": [{"traceId": "5b8efff798038103d269b633813fc60d", "spanId": "eee19b7ec3c1b176",
                           "attributes": []}],
                "status": {"code": 2, "message": "failed"},
            }],
        }],
    }]}


@pytest.mark.promise(13)
def test_every_field_of_a_wrong_type_is_a_trace_read_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    for where, variant in wrong_type_variants(_full_request()):
        path.write_bytes(orjson.dumps(variant))
        try:
            list(read_otlp_json(path))
        except TraceReadError as exc:
            assert str(exc).startswith(f"{path}: "), where
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{where}: {type(exc).__name__}: {exc}")


@pytest.mark.promise(13)
def test_a_line_with_a_field_of_a_wrong_type_is_skipped_and_the_others_read(tmp_path: Path) -> None:
    good = orjson.dumps(_full_request())
    path = tmp_path / "lines.jsonl"
    for where, variant in wrong_type_variants(_full_request()):
        path.write_bytes(b"\n".join([good, orjson.dumps(variant), good]) + b"\n")
        trace_file = read_otlp_json(path)
        try:
            spans = list(trace_file)
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{where}: {type(exc).__name__}: {exc}")
        assert trace_file.format == "otlp-jsonl", where
        assert trace_file.skipped_lines in ([], [2]), where
        assert len(spans) == 2 if trace_file.skipped_lines else len(spans) in (2, 3), where


@pytest.mark.promise(13)
@pytest.mark.parametrize(
    ("change", "json_path"),
    [
        (lambda r: r["resourceSpans"][0].update(resource=["svc"]), "resourceSpans[0].resource"),
        (lambda r: r["resourceSpans"][0]["scopeSpans"][0].update(scope="lib"), "resourceSpans[0].scopeSpans[0].scope"),
        (lambda r: r["resourceSpans"][0]["scopeSpans"][0]["spans"][0].update(events=["boom"]),
         "resourceSpans[0].scopeSpans[0].spans[0].events[0]"),
        (lambda r: r["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][0].update(
            value={"arrayValue": [{"intValue": "3"}]}),
         "resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value.arrayValue"),
        (lambda r: r["resourceSpans"][0]["scopeSpans"][0]["spans"][0].update(traceId=12),
         "resourceSpans[0].scopeSpans[0].spans[0].traceId"),
    ],
)
def test_a_whole_file_defect_names_the_file_and_the_json_path(tmp_path: Path, change: Any, json_path: str) -> None:
    request = _full_request()
    change(request)
    path = tmp_path / "one.json"
    path.write_bytes(orjson.dumps(request, option=orjson.OPT_INDENT_2))
    with pytest.raises(TraceReadError) as caught:
        list(read_otlp_json(path))
    assert str(caught.value).startswith(f"{path}: {json_path}"), str(caught.value)
    lines = tmp_path / "lines.jsonl"
    lines.write_bytes(orjson.dumps(request) + b"\n" + orjson.dumps(_full_request()) + b"\n")
    trace_file = read_otlp_json(lines)
    assert len(list(trace_file)) == 1 and trace_file.skipped_lines == [1]
    assert json_path in trace_file.skipped[0].reason


@pytest.mark.promise(13)
def test_a_jsonl_file_whose_first_lines_are_corrupt_still_reads_as_lines(tmp_path: Path) -> None:
    good = orjson.dumps(_full_request())
    corrupt = [b'{"other": 1}', b'"text"', b"null", b'{"resourceSpans": [{"trunc', b"[1, 2", b"{",
               b'{"resourceSpans": [{"resource": ["svc"]}]}', b'{"resourceSpans": 5}']
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"\n".join([*corrupt, good, good]) + b"\n")
    trace_file = read_otlp_json(path)
    assert len(list(trace_file)) == 2
    assert trace_file.format == "otlp-jsonl"
    assert trace_file.skipped_lines == list(range(1, len(corrupt) + 1))


def test_a_line_nested_too_deeply_is_skipped_with_the_depth_limit(tmp_path: Path) -> None:
    good = orjson.dumps(_full_request())
    deep = b'{"resourceSpans": ' + b"[" * 2000 + b"]" * 2000 + b"}"
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"\n".join([good, deep, good]) + b"\n")
    trace_file = read_otlp_json(path)
    assert len(list(trace_file)) == 2 and trace_file.skipped_lines == [2]
    assert "nested more than 1024 levels deep" in trace_file.skipped[0].reason


def _spans_request(*spans: Any) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
                               "scopeSpans": [{"scope": {"name": "lib"}, "spans": list(spans)}]}]}


def _otlp_span(number: int, **fields: Any) -> dict[str, Any]:
    return {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": f"{number + 1:016x}", "name": f"s{number}",
            "startTimeUnixNano": "1", "endTimeUnixNano": "2", **fields}


def test_the_walk_hands_bad_spans_to_its_hook_and_reads_the_others() -> None:
    request = _spans_request(_otlp_span(0), _otlp_span(1, spanId=""), "not a span", _otlp_span(3, traceId=7),
                             _otlp_span(4))
    errors: list[ValueError] = []
    records = list(iter_records(request, path="result", on_bad_span=errors.append))
    assert [r.name for r in records] == ["s0", "s4"]
    assert [str(e).split(":")[0] for e in errors] == [
        "result.resourceSpans[0].scopeSpans[0].spans[1]",
        "result.resourceSpans[0].scopeSpans[0].spans[2]",
        "result.resourceSpans[0].scopeSpans[0].spans[3].traceId",
    ]
    with pytest.raises(ValueError, match=r"^resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[1\]"):
        list(iter_records(request))


@pytest.mark.parametrize(("envelope", "where"), [
    ({"resourceSpans": {"no": "list"}}, "resourceSpans: expected a list"),
    ({"resourceSpans": [None]}, "resourceSpans[0]: expected an object"),
    ({"resourceSpans": [{"scopeSpans": ["x"]}]}, "resourceSpans[0].scopeSpans[0]: expected an object"),
    ({"resourceSpans": [{"scopeSpans": [{"spans": {}}]}]}, "resourceSpans[0].scopeSpans[0].spans: expected a list"),
])
def test_a_bad_envelope_raises_even_with_a_hook(envelope: dict[str, Any], where: str) -> None:
    with pytest.raises(ValueError, match=where.replace("[", r"\[").replace("]", r"\]")):
        list(iter_records(envelope, on_bad_span=lambda error: None))


def test_spans_off_the_common_shape_read_as_the_checked_path_reads_them_among_the_others() -> None:
    upper = [_otlp_span(n, spanId=f"{n + 1:016X}", traceId="5B8EFFF798038103D269B633813FC60C") for n in range(20)]
    plain = [_otlp_span(n) for n in range(20, 40)]
    linked = _otlp_span(40, links=[{"traceId": "5b8efff798038103d269b633813fc60d", "spanId": "eee19b7ec3c1b176"}])
    for spans in ([*upper, *plain, linked], [*plain, *upper, linked], [linked, *plain, *upper]):
        request = _spans_request(*spans)
        records = records_from_request(request) or []
        assert records == records_from_request(orjson.loads(orjson.dumps(request).replace(b"Id", b"_id")))
        assert [r.name for r in records] == [s["name"] for s in spans]
        assert {r.trace_id for r in records} == {"5b8efff798038103d269b633813fc60c"}
        assert all(r.resource == {"service.name": "svc"} and r.scope_name == "lib" for r in records)
        assert next(r for r in records if r.name == "s40").links[0].span_id == "eee19b7ec3c1b176"
