"""OTLP/JSON: the SDK file exporter, the writer and the streaming reader."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces import OtlpJsonFileExporter, read_otlp_json, write_otlp_json_lines
from agenteval_otel.traces.otlp_json import (
    decode_any_value,
    encode_any_value,
    record_from_span,
    records_from_request,
)
from agenteval_otel.trajectory import SpanRecord


def test_exporter_writes_collector_file_exporter_lines(tmp_path: Path, sdk_spans: list[ReadableSpan]) -> None:
    path = tmp_path / "spans.jsonl"
    exporter = OtlpJsonFileExporter(path)
    assert exporter.export(sdk_spans[:1]) is SpanExportResult.SUCCESS
    assert exporter.export(sdk_spans[1:]) is SpanExportResult.SUCCESS
    lines = path.read_text().splitlines()
    assert len(lines) == 2
    request = json.loads(lines[1])
    (resource_spans,) = request["resourceSpans"]
    assert {"key": "service.name", "value": {"stringValue": "weather-agent"}} in resource_spans["resource"][
        "attributes"
    ]
    (scope_spans,) = resource_spans["scopeSpans"]
    assert scope_spans["scope"] == {"name": "agent-lib", "version": "0.3"}
    root = next(s for s in scope_spans["spans"] if "parentSpanId" not in s)
    assert root["traceId"] == format(sdk_spans[-1].context.trace_id, "032x")
    assert root["spanId"] == format(sdk_spans[-1].context.span_id, "016x")
    assert root["kind"] == 2 and isinstance(root["startTimeUnixNano"], str)
    first = json.loads(lines[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    values = {a["key"]: a["value"] for a in first["attributes"]}
    assert values["retries"] == {"intValue": "2"} and values["ratio"] == {"doubleValue": 0.5}
    assert values["flags"] == {"arrayValue": {"values": [{"boolValue": True}, {"boolValue": False}]}}
    assert first["status"] == {"code": 2, "message": "no data"}
    exporter.shutdown()


def test_exported_spans_read_back_unchanged(tmp_path: Path, sdk_spans: list[ReadableSpan]) -> None:
    path = tmp_path / "spans.jsonl"
    exporter = OtlpJsonFileExporter(path)
    exporter.export(sdk_spans)
    exporter.shutdown()
    trace_file = read_otlp_json(path)
    assert list(trace_file) == [SpanRecord.from_readable_span(span) for span in sdk_spans]
    assert trace_file.format == "otlp-jsonl" and trace_file.skipped == ()


def test_exporter_under_a_real_provider_from_many_threads(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OtlpJsonFileExporter(path), max_export_batch_size=7))
    tracer = provider.get_tracer("test")

    def work(index: int) -> None:
        for step in range(25):
            with tracer.start_as_current_span(f"span-{index}-{step}"):
                pass

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    provider.shutdown()
    names = [record.name for record in read_otlp_json(path)]
    assert len(names) == 200 and len(set(names)) == 200


def test_exporter_never_raises_and_shutdown_is_idempotent(tmp_path: Path, sdk_spans, caplog) -> None:
    exporter = OtlpJsonFileExporter(tmp_path / "spans.jsonl")
    with caplog.at_level(logging.WARNING, logger="agenteval_otel.traces.otlp_json"):
        assert exporter.export([object()]) is SpanExportResult.FAILURE  # type: ignore[list-item]
        exporter.shutdown()
        exporter.shutdown()
        assert exporter.export(sdk_spans) is SpanExportResult.FAILURE
        assert exporter.export(sdk_spans) is SpanExportResult.FAILURE
    assert "failed to write" in caplog.text
    assert caplog.text.count("after shutdown") == 1
    assert exporter.force_flush() is False


def test_exporter_fails_fast_on_a_bad_path(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        OtlpJsonFileExporter(tmp_path / "missing-dir" / "spans.jsonl")


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
    assert write_otlp_json_lines(records, path, spans_per_line=2) == 3
    assert len(path.read_text().splitlines()) == 2
    assert list(read_otlp_json(path)) == records


def test_corrupt_lines_are_skipped_and_counted(tmp_path: Path, sdk_spans) -> None:
    records = [SpanRecord.from_readable_span(span) for span in sdk_spans]
    path = tmp_path / "spans.jsonl"
    write_otlp_json_lines(records, path, spans_per_line=1)
    good = path.read_text().splitlines()
    bad_id = good[0].replace(records[0].span_id, "not-an-id")
    path.write_text(
        "\n".join([good[0], '{"resourceSpans": [', good[1], "", bad_id, '{"other": 1}', good[2]]) + "\n"
    )
    trace_file = read_otlp_json(path)
    assert [r.span_id for r in trace_file] == [r.span_id for r in records]
    assert trace_file.skipped_lines == [2, 5, 6]
    assert "spanId" in trace_file.skipped[1].reason


def test_a_corrupt_first_line_still_reads_as_lines(tmp_path: Path, sdk_spans) -> None:
    path = tmp_path / "spans.jsonl"
    write_otlp_json_lines([SpanRecord.from_readable_span(s) for s in sdk_spans], path, spans_per_line=1)
    path.write_text('{"resourceSpans": [{"trunc\n' + path.read_text())
    trace_file = read_otlp_json(path)
    assert len(list(trace_file)) == 3 and trace_file.skipped_lines == [1]


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
    write_otlp_json_lines(records[:1], path)
    iterator = iter(read_otlp_json(path))
    assert next(iterator) == records[0]
    with path.open("ab") as handle:  # lines written after reading began are still read
        write_otlp_json_lines(records[1:], handle)
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
