"""OTLP export requests as a receiver gets them: ``ExportTraceServiceRequest`` and
``ExportLogsServiceRequest`` bodies (binary protobuf or OTLP/JSON), or already parsed messages
(gRPC), decoded into ``SpanRecord``s and ``LogRecord``s with the codecs of this package and
their envelope walks (one per format: ``otlp_json.iter_records``, ``otlp_proto.iter_records``,
``otlp_logs.iter_log_records``).

A request whose envelope cannot be read raises ``ValueError`` (the receiver answers 400); a span
or log record that cannot be read (no ids, an id of the wrong length, a malformed field) is
rejected alone and counted, so the receiver answers a partial success.

>>> import json
>>> body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
...     {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "name": "ok"},
...     {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "", "name": "no id"}]}]}]}).encode()
>>> batch = decode_trace_export(body, "json")
>>> [r.name for r in batch.items], batch.rejected
(['ok'], 1)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import orjson
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord as ProtoLogRecord

from agenteval_otel.traces import otlp_json, otlp_logs, otlp_proto
from agenteval_otel.traces._json_shapes import json_type
from agenteval_otel.traces.otlp_proto import _attributes, _value
from agenteval_otel.trajectory.logs import LogRecord
from agenteval_otel.trajectory.spans import SpanRecord, normalize_span_id, normalize_trace_id

__all__ = [
    "Encoding",
    "ExportBatch",
    "decode_logs_export",
    "decode_trace_export",
    "logs_batch_from_message",
    "trace_batch_from_message",
]

Encoding = Literal["proto", "json"]
"""How a body is encoded: binary protobuf (``application/x-protobuf``) or OTLP/JSON."""

_Item = TypeVar("_Item", SpanRecord, LogRecord)
_MAX_REASONS = 3


@dataclass
class ExportBatch(Generic[_Item]):
    """What one export request held: the items read, how many were rejected, and why (the first
    few reasons, for ``partial_success.error_message``)."""

    items: list[_Item] = field(default_factory=list)
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)

    def reject(self, reason: str | ValueError) -> None:
        """Count one rejected item, keeping its reason (or its error's message) if it is among
        the first few; it is the envelope walks' ``on_bad_span`` / ``on_bad_record``."""
        self.rejected += 1
        if len(self.reasons) < _MAX_REASONS:
            self.reasons.append(str(reason))

    @property
    def error_message(self) -> str:
        """Why items were rejected, in English (empty when none was)."""
        if not self.rejected:
            return ""
        more = f" (and {self.rejected - len(self.reasons)} more)" if self.rejected > len(self.reasons) else ""
        return f"rejected {self.rejected}: " + "; ".join(self.reasons) + more


# --- protobuf ---------------------------------------------------------------------------------


def trace_batch_from_message(request: ExportTraceServiceRequest) -> ExportBatch[SpanRecord]:
    """The spans of a parsed ``ExportTraceServiceRequest``; unreadable spans are rejected."""
    batch: ExportBatch[SpanRecord] = ExportBatch()
    batch.items.extend(otlp_proto.iter_records(request, on_bad_span=batch.reject))
    return batch


def _proto_log_record(item: ProtoLogRecord) -> LogRecord:
    return LogRecord(
        trace_id=normalize_trace_id(item.trace_id),
        span_id=normalize_span_id(item.span_id),
        event_name=item.event_name,
        body=_value(item.body) if item.HasField("body") else None,
        attributes=_attributes(item.attributes),
        time_ns=item.time_unix_nano or item.observed_time_unix_nano,
    )


def logs_batch_from_message(request: ExportLogsServiceRequest) -> ExportBatch[LogRecord]:
    """The log records of a parsed ``ExportLogsServiceRequest`` (the one walk of its envelope);
    unreadable ones are rejected, named by their protobuf path."""
    batch: ExportBatch[LogRecord] = ExportBatch()
    for r, group in enumerate(request.resource_logs):
        for s, scoped in enumerate(group.scope_logs):
            for i, item in enumerate(scoped.log_records):
                try:
                    batch.items.append(_proto_log_record(item))
                except ValueError as exc:
                    batch.reject(f"resource_logs[{r}].scope_logs[{s}].log_records[{i}]: {exc}")
    return batch


def _parse(message: Any, body: bytes) -> Any:
    try:
        message.ParseFromString(body)
    except DecodeError as exc:
        raise ValueError(f"not a protobuf {type(message).__name__} ({exc})") from None
    return message


# --- OTLP/JSON --------------------------------------------------------------------------------


def _json_object(body: bytes, what: str) -> Mapping[str, Any]:
    try:
        doc = orjson.loads(body) if body.strip() else {}
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON ({exc})") from None
    if not isinstance(doc, Mapping):
        raise ValueError(f"expected an {what} object, got {json_type(doc)}")
    return doc


# --- bodies -----------------------------------------------------------------------------------


def decode_trace_export(body: bytes, encoding: Encoding) -> ExportBatch[SpanRecord]:
    """The spans of an ``ExportTraceServiceRequest`` body; ``ValueError`` when the body is not one."""
    if encoding == "proto":
        return trace_batch_from_message(_parse(ExportTraceServiceRequest(), body))
    batch: ExportBatch[SpanRecord] = ExportBatch()
    doc = _json_object(body, "ExportTraceServiceRequest")
    batch.items.extend(otlp_json.iter_records(doc, on_bad_span=batch.reject))
    return batch


def decode_logs_export(body: bytes, encoding: Encoding) -> ExportBatch[LogRecord]:
    """The log records of an ``ExportLogsServiceRequest`` body; ``ValueError`` when it is not one."""
    if encoding == "proto":
        return logs_batch_from_message(_parse(ExportLogsServiceRequest(), body))
    batch: ExportBatch[LogRecord] = ExportBatch()
    doc = _json_object(body, "ExportLogsServiceRequest")
    batch.items.extend(otlp_logs.iter_log_records(doc, on_bad_record=batch.reject))
    return batch
