"""How much an OTLP export request body holds, counted before it is decoded.

Decoding amplifies: an empty span is two bytes of protobuf and more than a hundred once parsed, so
an 18 MB body of empty spans or attributes parses into gigabytes. ``proto_over_limits`` walks the
protobuf wire format of an ``ExportTraceServiceRequest`` / ``ExportLogsServiceRequest`` (the
message fields of every nested type, taken from the generated descriptors) and counts the items
(spans or log records) and every message that decoding would build, stopping as soon as either
count passes its limit: the walk costs O(min(body, limit)) and allocates nothing per field.
``json_over_limits`` bounds an OTLP/JSON body by its ``{`` and ``[`` bytes, an upper bound on the
objects and arrays a parser would build.

>>> from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
>>> request = ExportTraceServiceRequest()
>>> spans = request.resource_spans.add().scope_spans.add().spans
>>> _ = [spans.add(name="s") for _ in range(3)]
>>> proto_over_limits(request.SerializeToString(), "traces", max_items=2, max_objects=100)
'the request holds more than 2 spans, the limit per request'
>>> proto_over_limits(request.SerializeToString(), "traces", max_items=3, max_objects=100) is None
True
"""

from __future__ import annotations

from typing import Any, Literal

from google.protobuf.descriptor import Descriptor
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span

__all__ = ["json_over_limits", "proto_over_limits"]

Signal = Literal["traces", "logs"]
_Shape = dict[int, Any]
"""A message type as the walk sees it: its message-typed fields by number, each to its own shape."""


def _shape(descriptor: Descriptor, shapes: dict[str, _Shape]) -> _Shape:
    """The shape of ``descriptor`` (recursive types share one dict, so the walk can nest freely)."""
    known = shapes.get(descriptor.full_name)
    if known is not None:
        return known
    shape: _Shape = {}
    shapes[descriptor.full_name] = shape
    for field in descriptor.fields:
        if field.message_type is not None:
            shape[field.number] = _shape(field.message_type, shapes)
    return shape


def _shapes(request: Descriptor, item: Descriptor) -> tuple[_Shape, _Shape]:
    shapes: dict[str, _Shape] = {}
    return _shape(request, shapes), shapes[item.full_name]


_SHAPES: dict[Signal, tuple[_Shape, _Shape]] = {
    "traces": _shapes(ExportTraceServiceRequest.DESCRIPTOR, Span.DESCRIPTOR),
    "logs": _shapes(ExportLogsServiceRequest.DESCRIPTOR, LogRecord.DESCRIPTOR),
}
_ITEMS: dict[Signal, str] = {"traces": "spans", "logs": "log records"}
_REQUESTS: dict[Signal, str] = {"traces": "ExportTraceServiceRequest", "logs": "ExportLogsServiceRequest"}


def proto_over_limits(body: bytes | bytearray, signal: Signal, *, max_items: int, max_objects: int) -> str | None:
    """Why the protobuf request ``body`` is over its limits (more than ``max_items`` spans or log
    records, or more than ``max_objects`` messages in all), or ``None`` when it is within them.
    ``ValueError`` when the wire format is broken before a limit is reached."""
    try:
        return _walk(body, signal, max_items, max_objects)
    except ValueError as exc:
        raise ValueError(f"not a protobuf {_REQUESTS[signal]} ({exc})") from None
    except IndexError:
        raise ValueError(f"not a protobuf {_REQUESTS[signal]} (the body ends inside a field)") from None


def _walk(body: bytes | bytearray, signal: Signal, max_items: int, max_objects: int) -> str | None:
    root, item = _SHAPES[signal]
    # every message starts with a tag byte whose low three bits are 2 (length-delimited): when the
    # body has no more such bytes than max_objects, only the items need counting, not their insides
    descend = _length_delimited_tags_over(body, max_objects)
    items = objects = pos = 0
    end, shape = len(body), root
    stack: list[tuple[int, _Shape]] = []
    while True:
        if pos >= end:
            if pos > end:
                raise ValueError(f"a field runs past the end of its message at byte {end}")
            if not stack:
                return None
            end, shape = stack.pop()
            continue
        tag = body[pos]
        pos += 1
        if tag & 0x80:
            tag, pos = _varint(body, pos, tag)
        wire = tag & 7
        if wire == 2:
            length = body[pos]
            pos += 1
            if length & 0x80:
                length, pos = _varint(body, pos, length)
            child = shape.get(tag >> 3)
            if child is None:
                pos += length
                continue
            if pos + length > end:
                raise ValueError(f"a message runs past the end of its parent at byte {pos}")
            objects += 1
            if objects > max_objects:
                return (f"the request holds more than {max_objects} messages (spans, attributes, values, "
                        "events), the limit per request")
            if child is item:
                items += 1
                if items > max_items:
                    return f"the request holds more than {max_items} {_ITEMS[signal]}, the limit per request"
                if not descend:
                    pos += length
                    continue
            if length:  # an empty message has nothing inside to count
                stack.append((end, shape))
                end, shape = pos + length, child
        elif wire == 0:
            while body[pos] & 0x80:
                pos += 1
            pos += 1
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"unexpected wire type {wire} at byte {pos - 1}")


_NOT_LENGTH_DELIMITED = bytes(byte for byte in range(256) if byte & 7 != 2)
_SLICE = 1 << 20


def _length_delimited_tags_over(body: bytes | bytearray, limit: int) -> bool:
    """Whether ``body`` has more than ``limit`` bytes that could start a length-delimited field
    (counted a slice at a time, at C speed, so nothing near the body's size is allocated)."""
    seen = 0
    for start in range(0, len(body), _SLICE):
        seen += len(body[start:start + _SLICE].translate(None, _NOT_LENGTH_DELIMITED))
        if seen > limit:
            return True
    return False


def _varint(body: bytes | bytearray, pos: int, first: int) -> tuple[int, int]:
    """The rest of a varint whose first byte was ``first`` (continuation bit set), and the next position."""
    value, shift = first & 0x7F, 7
    while True:
        byte = body[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError(f"a varint longer than 10 bytes at byte {pos}")


def json_over_limits(body: bytes | bytearray, *, max_objects: int) -> str | None:
    """Why the OTLP/JSON ``body`` is over ``max_objects`` objects and arrays, or ``None``: its
    ``{`` and ``[`` bytes bound what a parser builds (those inside strings only make it stricter)."""
    containers = body.count(b"{") + body.count(b"[")
    if containers > max_objects:
        return (f"the request holds up to {containers} JSON objects and arrays, over the limit of "
                f"{max_objects} per request")
    return None
