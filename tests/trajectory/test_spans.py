"""``SpanRecord``: built from real SDK spans; ids normalised whatever their encoding."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from agenteval_otel.trajectory.spans import (
    SpanEvent,
    SpanRecord,
    SpanStatus,
    normalize_span_id,
    normalize_trace_id,
)


@pytest.fixture
def finished_spans() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_record_from_an_sdk_span_keeps_everything(finished_spans) -> None:
    provider, exporter = finished_spans
    tracer = provider.get_tracer("agent-lib", "1.2")
    with tracer.start_as_current_span("invoke_agent weather", kind=SpanKind.SERVER) as root:
        root.set_attribute("gen_ai.tool.call.arguments", '{"city": "Paris"}')
        root.set_attribute("tags", ("a", "b"))
        with tracer.start_as_current_span("execute_tool get_weather") as child:
            child.add_event("exception", {"exception.type": "ValueError", "exception.message": "no"})
            child.set_status(Status(StatusCode.ERROR))
    child_span, root_span = exporter.get_finished_spans()
    root_record = SpanRecord.from_readable_span(root_span)
    child_record = SpanRecord.from_readable_span(child_span)

    assert root_record.trace_id == format(root_span.context.trace_id, "032x")
    assert root_record.span_id == format(root_span.context.span_id, "016x")
    assert root_record.is_root and child_record.parent_id == root_record.span_id
    assert root_record.kind == "server" and child_record.kind == "internal"
    assert root_record.attributes == {"gen_ai.tool.call.arguments": '{"city": "Paris"}', "tags": ["a", "b"]}
    assert root_record.service_name == "weather"
    assert (root_record.scope_name, root_record.scope_version) == ("agent-lib", "1.2")
    assert root_record.duration_ns == root_span.end_time - root_span.start_time
    assert child_record.status.is_error and child_record.error == "ValueError: no"
    assert child_record.events[0].name == "exception"
    assert root_record.error is None


def test_records_are_immutable() -> None:
    record = SpanRecord("0" * 31 + "1", "0" * 15 + "1", None, "x")
    with pytest.raises(AttributeError):
        record.name = "y"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("5B8EFFF798038103D269B633813FC60C", "5b8efff798038103d269b633813fc60c"),
        ("W47/95gDgQPSabYzgT/GDA==", "5b8efff798038103d269b633813fc60c"),
        ("2be38093ead7a083", "00000000000000002be38093ead7a083"),
        ("1", "00000000000000000000000000000001"),
        (bytes.fromhex("5b8efff798038103d269b633813fc60c"), "5b8efff798038103d269b633813fc60c"),
        ("00000000000000000000000000000000", None),
        ("", None),
        (None, None),
    ],
)
def test_trace_ids_become_32_lower_case_hex_digits(value, expected) -> None:
    assert normalize_trace_id(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("EEE19B7EC3C1B174", "eee19b7ec3c1b174"),
        ("7uGbfsPBsXQ=", "eee19b7ec3c1b174"),
        ("7uGbfsPBsXQ", "eee19b7ec3c1b174"),
        ("0000000000000000", None),
        ("2", "0000000000000002"),
    ],
)
def test_span_ids_become_16_lower_case_hex_digits(value, expected) -> None:
    assert normalize_span_id(value) == expected


@pytest.mark.parametrize("value", ["not-an-id!", "5b8efff798038103d269b633813fc60c", b"\x01\x02"])
def test_an_invalid_span_id_raises_value_error(value) -> None:
    with pytest.raises(ValueError):
        normalize_span_id(value)


def test_error_prefers_the_status_description() -> None:
    record = SpanRecord(
        "0" * 31 + "1",
        "0" * 15 + "1",
        None,
        "tool",
        status=SpanStatus("error", "timed out"),
        events=(SpanEvent("exception", 1, {"exception.message": "boom"}),),
    )
    assert record.error == "timed out"
