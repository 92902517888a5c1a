"""OTLP protobuf files: one request, or the Collector's length-prefixed stream."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces import read_otlp_proto, read_spans
from agenteval_otel.traces.otlp_proto import iter_records, record_from_span
from agenteval_otel.trajectory import SpanRecord


def _frame(payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + payload


def test_a_single_request_reads_like_the_sdk_spans(tmp_path: Path, sdk_spans: list[ReadableSpan]) -> None:
    path = tmp_path / "trace.pb"
    path.write_bytes(encode_spans(sdk_spans).SerializeToString())
    trace_file = read_spans(path)
    assert trace_file.format == "otlp-proto"
    assert list(trace_file) == [SpanRecord.from_readable_span(span) for span in sdk_spans]


@pytest.mark.promise(13)
def test_a_framed_stream_skips_a_corrupt_frame(tmp_path: Path, sdk_spans: list[ReadableSpan]) -> None:
    path = tmp_path / "traces.binpb"
    frames = [encode_spans([span]).SerializeToString() for span in sdk_spans]
    path.write_bytes(_frame(frames[0]) + _frame(b"\xff\xff\xff") + _frame(frames[1]) + _frame(frames[2]))
    trace_file = read_otlp_proto(path)
    assert trace_file.format == "otlp-proto-framed"
    assert [r.name for r in trace_file] == [s.name for s in sdk_spans]
    assert trace_file.skipped_lines == [2]


@pytest.mark.promise(13)
def test_a_truncated_last_frame_is_reported(tmp_path: Path, sdk_spans: list[ReadableSpan]) -> None:
    path = tmp_path / "traces.binpb"
    payload = encode_spans(sdk_spans).SerializeToString()
    path.write_bytes(_frame(payload) + _frame(payload)[:-5])
    trace_file = read_spans(path)
    assert len(list(trace_file)) == 3 and trace_file.skipped_lines == [2]


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n" + bytes(64), b"\x0a\x05\xff\xff", b"\x00\x00"])
def test_binary_that_is_not_otlp_raises(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "image.bin"
    path.write_bytes(content)
    with pytest.raises(TraceReadError, match="OTLP protobuf"):
        list(read_spans(path))


def test_one_protobuf_span(sdk_spans: list[ReadableSpan]) -> None:
    request = encode_spans(sdk_spans)
    scoped = request.resource_spans[0].scope_spans[0]
    record = record_from_span(scoped.spans[0], resource={"service.name": "x"}, scope_name=scoped.scope.name)
    expected = SpanRecord.from_readable_span(sdk_spans[0])
    assert (record.trace_id, record.span_id, record.name, record.attributes) == (
        expected.trace_id,
        expected.span_id,
        expected.name,
        expected.attributes,
    )
    assert record.resource == {"service.name": "x"} and record.scope_name == "agent-lib"


@pytest.mark.promise(13)
def test_a_malformed_span_is_named_by_its_path(tmp_path: Path, sdk_spans: list[ReadableSpan]) -> None:
    request = encode_spans(sdk_spans)
    request.resource_spans[0].scope_spans[0].spans[1].span_id = b"\x01\x02\x03"
    path = tmp_path / "spans.pb"
    path.write_bytes(request.SerializeToString())
    with pytest.raises(TraceReadError, match=r"resource_spans\[0\]\.scope_spans\[0\]\.spans\[1\]: .*8-byte id"):
        list(read_otlp_proto(path))


def test_the_walk_hands_bad_spans_to_its_hook_and_reads_the_others(sdk_spans: list[ReadableSpan]) -> None:
    request = encode_spans(sdk_spans)
    request.resource_spans[0].scope_spans[0].spans[1].span_id = b"\x01\x02\x03"
    errors: list[ValueError] = []
    records = list(iter_records(request, on_bad_span=errors.append))
    assert [r.name for r in records] == [sdk_spans[0].name, sdk_spans[2].name]
    (error,) = errors
    assert str(error).startswith("resource_spans[0].scope_spans[0].spans[1]: ") and "8-byte id" in str(error)
    with pytest.raises(ValueError, match=r"resource_spans\[0\]\.scope_spans\[0\]\.spans\[1\]"):
        list(iter_records(request))
