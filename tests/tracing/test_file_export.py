"""``OtlpJsonFileExporter``: SDK spans written as OTLP/JSON lines, straight from ``ReadableSpan``."""

from __future__ import annotations

import ast
import dataclasses
import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    set_span_in_context,
)

from agenteval_otel.traces import read_otlp_json
from agenteval_otel.tracing import OtlpJsonFileExporter
from agenteval_otel.trajectory import SpanRecord

TRACING = Path(__file__).resolve().parents[2] / "agenteval_otel" / "tracing"


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


@pytest.mark.promise(1)
def test_exporter_never_raises_and_shutdown_is_idempotent(tmp_path: Path, sdk_spans, caplog) -> None:
    exporter = OtlpJsonFileExporter(tmp_path / "spans.jsonl")
    with caplog.at_level(logging.WARNING, logger="agenteval_otel.tracing.file_export"):
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


def test_every_export_is_flushed_and_appended(tmp_path: Path, sdk_spans: list[ReadableSpan]) -> None:
    path = tmp_path / "spans.jsonl"
    path.write_text("")
    exporter = OtlpJsonFileExporter(path)
    exporter.export(sdk_spans[:1])
    assert len(path.read_text().splitlines()) == 1  # on disk before shutdown
    assert exporter.export([]) is SpanExportResult.SUCCESS and exporter.force_flush() is True
    exporter.shutdown()
    again = OtlpJsonFileExporter(path)
    again.export(sdk_spans[1:])
    again.shutdown()
    assert [r.name for r in read_otlp_json(path)] == [s.name for s in sdk_spans]


# --- read back as the SDK's own records -------------------------------------------------------


def _context(trace_id: int, span_id: int, *, remote: bool = False) -> SpanContext:
    return SpanContext(trace_id, span_id, is_remote=remote, trace_flags=TraceFlags(TraceFlags.SAMPLED))


@pytest.fixture
def varied_spans() -> Iterator[list[ReadableSpan]]:
    """Spans that exercise every field: two resources (one of them as two equal Resource objects),
    several scopes, every kind and status, events, links, remote parents and every value type."""
    exporter = InMemorySpanExporter()
    providers = [
        TracerProvider(resource=Resource.create({"service.name": "agent", "deployment": "test"})),
        TracerProvider(resource=Resource.create({"service.name": "other", "replicas": 3})),
        TracerProvider(resource=Resource.create({"deployment": "test", "service.name": "agent"})),
    ]
    for provider in providers:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracers = [
        providers[0].get_tracer("lib-a", "1.0"),
        providers[0].get_tracer("lib-b"),
        providers[1].get_tracer("lib-a", "1.0"),
        providers[2].get_tracer("lib-a", "1.0"),
        providers[0].get_tracer(""),
    ]
    attributes: dict[str, Any] = {
        "text": "héllo \"quoted\" \n",
        "flag": False,
        "count": -(2**62),
        "ratio": 1e-300,
        "nan": float("nan"),
        "inf": float("inf"),
        "minus_inf": float("-inf"),
        "words": ("a", "b"),
        "numbers": [1, 2, 3],
        "doubles": (0.25, float("inf")),
        "empty": (),
    }
    remote_parent = _context(0xABC, 0xDEF, remote=True)
    kinds = list(SpanKind)
    statuses = [Status(StatusCode.UNSET), Status(StatusCode.OK), Status(StatusCode.ERROR, "boom"), Status(StatusCode.ERROR)]
    for index, tracer in enumerate(tracers):
        with tracer.start_as_current_span(
            f"root-{index}",
            kind=kinds[index % len(kinds)],
            attributes=attributes if index % 2 == 0 else None,
            links=[Link(_context(0x1234, 0x5678), {"why": "retry"}), Link(_context(0x99, 0x98))],
        ) as root:
            root.add_event("started")
            root.add_event("exception", {"exception.type": "ValueError", "n": 3}, timestamp=1_700_000_000_000_000_001)
            root.set_status(statuses[index % len(statuses)])
            with tracer.start_as_current_span(f"child-{index}", kind=kinds[(index + 1) % len(kinds)]):
                pass
        with tracer.start_span(f"remote-child-{index}", context=_trace_context(remote_parent)) as span:
            span.set_attribute("only", index)
    spans = list(exporter.get_finished_spans())
    # Spans built by hand, as other SDK pipelines may hand over: values the SDK would not keep,
    # no scope, no end time, no attributes object at all.
    hand_made: dict[str, Any] = {
        "nested": {"k": [1, {"deep": b"\x00\xff"}], 7: "seven"},
        "blob": b"\x01\x02",
        "none": None,
        "obj": 1j,
    }
    spans.append(
        ReadableSpan(
            "hand-made",
            context=_context(0xFFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF_FFFF, 0x1),
            parent=_context(0x1, 0x0),
            resource=Resource({"service.name": "hand", "nested": "x"}),
            attributes=hand_made,
            events=[Event("plain", {"x": (True,)}, timestamp=5)],
            kind=SpanKind.CONSUMER,
            status=Status(StatusCode.ERROR, "bad input"),
            start_time=10,
        )
    )
    spans.append(ReadableSpan("bare", context=_context(0x2, 0x3), resource=Resource({}), start_time=None))
    yield spans
    for provider in providers:
        provider.shutdown()


def _trace_context(parent: SpanContext) -> Context:
    """The context the SDK takes for a (remote) parent span."""
    return set_span_in_context(NonRecordingSpan(parent))


def _comparable(record: SpanRecord) -> bytes:
    """``record`` as far as OTLP/JSON can tell it: keys sorted, an empty scope name or version
    as none, values JSON has no word for (NaN, infinities, ``1j``) as JSON writes them."""
    record = dataclasses.replace(
        record, scope_name=record.scope_name or None, scope_version=record.scope_version or None
    )
    return orjson.dumps(dataclasses.asdict(record), option=orjson.OPT_SORT_KEYS, default=str)


def _read_back(path: Path) -> dict[str, bytes]:
    """The records the reader makes of the exporter's file, by span id."""
    records = list(read_otlp_json(path))
    read = {record.span_id: _comparable(record) for record in records}
    assert len(read) == len(records)
    return read


def _via_span_records(spans: list[ReadableSpan]) -> dict[str, bytes]:
    """The records ``SpanRecord.from_readable_span`` makes of the SDK's spans, by span id."""
    return {record.span_id: _comparable(record) for record in map(SpanRecord.from_readable_span, spans)}


def _via_exporter(spans: list[ReadableSpan], path: Path) -> list[Any]:
    exporter = OtlpJsonFileExporter(path)
    assert exporter.export(spans) is SpanExportResult.SUCCESS
    exporter.shutdown()
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_json_reads_back_as_the_span_record_path(tmp_path: Path, varied_spans: list[ReadableSpan]) -> None:
    path = tmp_path / "direct.jsonl"
    (request,) = _via_exporter(varied_spans, path)
    assert _read_back(path) == _via_span_records(varied_spans)
    assert len(request["resourceSpans"]) == 4  # agent (two equal Resource objects), other, hand, bare


def test_the_json_reads_back_as_the_span_record_path_for_the_sdk_trace(
    tmp_path: Path, sdk_spans: list[ReadableSpan]
) -> None:
    for index, span in enumerate(sdk_spans):
        path = tmp_path / f"{index}.jsonl"
        _via_exporter([span], path)
        assert _read_back(path) == _via_span_records([span])
    path = tmp_path / "all.jsonl"
    _via_exporter(sdk_spans, path)
    assert _read_back(path) == _via_span_records(sdk_spans)


def test_otlp_json_encoding_rules(tmp_path: Path, varied_spans: list[ReadableSpan]) -> None:
    (request,) = _via_exporter(varied_spans, tmp_path / "spans.jsonl")
    spans = {s["name"]: s for r in request["resourceSpans"] for g in r["scopeSpans"] for s in g["spans"]}
    hand = spans["hand-made"]
    assert hand["traceId"] == "f" * 32 and hand["spanId"] == "0" * 15 + "1"
    assert "parentSpanId" not in hand  # an all-zero parent span id is no parent
    assert (hand["kind"], hand["startTimeUnixNano"], hand["endTimeUnixNano"]) == (5, "10", "10")
    assert hand["status"] == {"code": 2, "message": "bad input"}
    values = {a["key"]: a["value"] for a in hand["attributes"]}
    assert values["blob"] == {"bytesValue": "AQI="} and values["none"] == {} and values["obj"] == {"stringValue": "1j"}
    assert values["nested"] == {
        "kvlistValue": {
            "values": [
                {
                    "key": "k",
                    "value": {
                        "arrayValue": {
                            "values": [
                                {"intValue": "1"},
                                {"kvlistValue": {"values": [{"key": "deep", "value": {"bytesValue": "AP8="}}]}},
                            ]
                        }
                    },
                },
                {"key": "7", "value": {"stringValue": "seven"}},
            ]
        }
    }
    root = spans["root-0"]
    values = {a["key"]: a["value"] for a in root["attributes"]}
    assert values["nan"] == {"doubleValue": "NaN"} and values["minus_inf"] == {"doubleValue": "-Infinity"}
    assert values["count"] == {"intValue": str(-(2**62))} and values["empty"] == {"arrayValue": {"values": []}}
    assert root["links"][0] == {
        "traceId": format(0x1234, "032x"),
        "spanId": format(0x5678, "016x"),
        "attributes": [{"key": "why", "value": {"stringValue": "retry"}}],
    }
    assert root["events"][1]["timeUnixNano"] == "1700000000000000001"
    assert spans["remote-child-0"]["parentSpanId"] == format(0xDEF, "016x")
    assert spans["bare"]["startTimeUnixNano"] == "0" and spans["bare"]["status"] == {}


def test_the_tracing_package_imports_neither_traces_nor_trajectory() -> None:
    allowed = ("agenteval_otel.tracing", "agenteval_otel.semconv", "agenteval_otel.errors")
    for module in TRACING.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "agenteval_otel":
                names = [f"agenteval_otel.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("agenteval_otel"):
                    assert name.startswith(allowed), f"{module.name} imports {name}"
