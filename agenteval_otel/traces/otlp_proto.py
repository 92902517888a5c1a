"""OTLP protobuf trace files: one ``ExportTraceServiceRequest`` (or ``TracesData``), or the
OpenTelemetry Collector file exporter's ``format: proto`` stream, where every request is
preceded by its size as a 4-byte big-endian integer. Framed files are read frame by frame.
``iter_records`` is the one walk of a parsed request's envelope, for these files and for the
OTLP receiver.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces.trace_file import OnBadItem, ReadFunction, SkipFunction, TraceFile
from agenteval_otel.trajectory.spans import (
    REMOTE_PARENT_FLAGS,
    SPAN_KINDS,
    SpanEvent,
    SpanLink,
    SpanRecord,
    SpanStatus,
    normalize_span_id,
    normalize_trace_id,
)

__all__ = ["iter_records", "read_otlp_proto", "record_from_span", "records_from_proto"]

EXPECTED = "OTLP protobuf (an ExportTraceServiceRequest, or 4-byte-length-prefixed requests)"
_FIELD_1_LEN = 0x0A  # the first byte of a request: resource_spans, length-delimited
_STATUS = ("unset", "ok", "error")
_FRAME = struct.Struct(">I")


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    return getattr(value, kind)


def _attributes(items: Any) -> dict[str, Any]:
    pairs: list[KeyValue] = list(items)
    return {item.key: _value(item.value) for item in pairs}


def record_from_span(
    span: Span,
    *,
    resource: dict[str, Any] | None = None,
    scope_name: str | None = None,
    scope_version: str | None = None,
) -> SpanRecord:
    """One OTLP protobuf ``Span`` as a record; ``ValueError`` when it has no ids."""
    trace_id = normalize_trace_id(span.trace_id)
    span_id = normalize_span_id(span.span_id)
    if trace_id is None or span_id is None:
        raise ValueError(f"span {span.name!r} has no trace or span id")
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=normalize_span_id(span.parent_span_id),
        parent_is_remote=span.flags & REMOTE_PARENT_FLAGS == REMOTE_PARENT_FLAGS,
        name=span.name,
        kind=SPAN_KINDS[span.kind] if 0 <= span.kind < len(SPAN_KINDS) else "unspecified",
        start_ns=span.start_time_unix_nano,
        end_ns=span.end_time_unix_nano or span.start_time_unix_nano,
        attributes=_attributes(span.attributes),
        events=tuple(SpanEvent(e.name, e.time_unix_nano, _attributes(e.attributes)) for e in span.events),
        status=SpanStatus(
            _STATUS[span.status.code] if 0 <= span.status.code < len(_STATUS) else "unset",
            span.status.message or None,
        ),
        resource=resource if resource is not None else {},  # shared by the spans of one resource
        scope_name=scope_name or None,
        scope_version=scope_version or None,
        links=tuple(
            SpanLink(
                normalize_trace_id(link.trace_id) or "",
                normalize_span_id(link.span_id) or "",
                _attributes(link.attributes),
            )
            for link in span.links
        ),
    )


def iter_records(
    request: ExportTraceServiceRequest, *, on_bad_span: OnBadItem | None = None
) -> Iterator[SpanRecord]:
    """The spans of a parsed ``ExportTraceServiceRequest``, in order: the one walk of its envelope
    (``resource_spans`` → ``scope_spans`` → ``spans``).

    A span that cannot be read (no ids, an id of the wrong length) raises ``ValueError`` naming
    its path, or, given ``on_bad_span``, is handed to it as that error and left out.
    """
    for r_index, group in enumerate(request.resource_spans):
        resource = _attributes(group.resource.attributes)
        for s_index, scoped in enumerate(group.scope_spans):
            scope = scoped.scope
            for index, span in enumerate(scoped.spans):
                try:
                    record = record_from_span(
                        span, resource=resource, scope_name=scope.name, scope_version=scope.version)
                except ValueError as exc:
                    error = ValueError(f"resource_spans[{r_index}].scope_spans[{s_index}].spans[{index}]: {exc}")
                    if on_bad_span is None:
                        raise error from None
                    on_bad_span(error)
                    continue
                yield record


def records_from_proto(data: bytes) -> list[SpanRecord]:
    """The spans of one serialised ``ExportTraceServiceRequest``; ``ValueError`` if it is not one."""
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except DecodeError as exc:
        raise ValueError(f"not an ExportTraceServiceRequest ({exc})") from None
    return list(iter_records(request))


def _frames(handle: IO[bytes], size: int, skip: SkipFunction, path: Path, read: ReadFunction) -> Iterator[SpanRecord]:
    number = 0
    good = 0
    while True:
        header = handle.read(_FRAME.size)
        if not header:
            break
        read(len(header))
        number += 1
        if len(header) < _FRAME.size:
            skip(number, "truncated frame header")
            break
        (length,) = _FRAME.unpack(header)
        if length > size - handle.tell():
            skip(number, f"frame length {length} runs past the end of the file")
            break
        frame = handle.read(length)
        read(len(frame))
        try:
            records = records_from_proto(frame)
        except ValueError as exc:
            skip(number, str(exc))
            continue
        good += 1
        yield from records
    if number and not good:
        raise TraceReadError(f"{path}: no readable frame; expected {EXPECTED}")


def read_otlp_proto(path: str | os.PathLike[str]) -> TraceFile:
    """The spans of an OTLP protobuf file; framed files are streamed frame by frame (a corrupt
    frame is skipped and reported as line = frame number).

    Raises ``TraceReadError`` when the file is empty or not OTLP protobuf.
    """
    file = Path(path)
    size = file.stat().st_size
    if size == 0:
        raise TraceReadError(f"{file}: the file is empty; expected {EXPECTED}")
    with file.open("rb") as handle:
        head = handle.read(_FRAME.size)
    if head[0] == _FIELD_1_LEN:
        try:
            records = records_from_proto(file.read_bytes())
        except ValueError as exc:
            raise TraceReadError(f"{file}: {exc}; expected {EXPECTED}") from exc
        if not records:
            raise TraceReadError(f"{file}: no spans found; expected {EXPECTED}")
        return TraceFile(file, "otlp-proto", lambda skip, read: iter(records))
    if len(head) < _FRAME.size or _FRAME.unpack(head)[0] > size - _FRAME.size:
        raise TraceReadError(f"{file}: not an OTLP protobuf file; expected {EXPECTED}")

    def produce(skip: SkipFunction, read: ReadFunction) -> Iterator[SpanRecord]:
        with file.open("rb") as handle:
            yield from _frames(handle, size, skip, file, read)

    return TraceFile(file, "otlp-proto-framed", produce)
