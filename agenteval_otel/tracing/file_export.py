"""``OtlpJsonFileExporter``: SDK spans appended to a file as OTLP/JSON lines.

Each export writes one OTLP/JSON ``ExportTraceServiceRequest`` (``resourceSpans`` → ``scopeSpans``
→ ``spans``) on one line: the OpenTelemetry Collector's file-exporter format, which
``agenteval_otel.traces.read_spans`` reads back. Spans are encoded straight from the SDK's
``ReadableSpan``, as the OTLP/JSON mapping requires: lower-case hex ids, int64 values (times,
``intValue``) as decimal strings, enums (``kind``, ``status.code``) as numbers. This is the
package's one OTLP/JSON encoder: ``encode_any_value`` and ``encode_attributes`` also encode the log
records of ``OtlpJsonLogFileExporter``, and ``agenteval_otel.traces`` only reads.

>>> import json, os, tempfile
>>> from opentelemetry.sdk.trace import TracerProvider
>>> from opentelemetry.sdk.trace.export import SimpleSpanProcessor
>>> path = os.path.join(tempfile.mkdtemp(), "spans.jsonl")
>>> provider = TracerProvider()
>>> provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
>>> with provider.get_tracer("demo").start_as_current_span("hello"):
...     pass
>>> provider.shutdown()
>>> request = json.loads(open(path).readline())
>>> request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"]
'hello'
"""

from __future__ import annotations

import base64
import logging
import math
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import orjson
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind

__all__ = ["OtlpJsonFileExporter", "encode_any_value", "encode_attributes"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

# OTLP's SpanKind enum has SPAN_KIND_UNSPECIFIED = 0 in front of the SDK's kinds.
_KINDS = {
    SpanKind.INTERNAL: 1,
    SpanKind.SERVER: 2,
    SpanKind.CLIENT: 3,
    SpanKind.PRODUCER: 4,
    SpanKind.CONSUMER: 5,
}
_NO_ATTRIBUTES: Mapping[str, Any] = {}

_Scopes = dict[tuple[str | None, str | None], list[dict[str, Any]]]


def encode_any_value(value: Any) -> dict[str, Any]:
    """An OTLP/JSON ``AnyValue`` for an attribute (or log body) value: exact types first (the hot
    path), then their subclasses; ``None`` is the empty value, anything else its ``str``.

    >>> encode_any_value([1, 2.5, float("nan")])
    {'arrayValue': {'values': [{'intValue': '1'}, {'doubleValue': 2.5}, {'doubleValue': 'NaN'}]}}
    """
    kind = type(value)
    if kind is str:
        return {"stringValue": value}
    if kind is bool:
        return {"boolValue": value}
    if kind is int:
        return {"intValue": str(value)}
    if kind is float and math.isfinite(value):
        return {"doubleValue": value}
    if kind is tuple or kind is list:
        return {"arrayValue": {"values": [encode_any_value(item) for item in value]}}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        if math.isfinite(value):
            return {"doubleValue": value}
        return {"doubleValue": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode("ascii")}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": encode_attributes(value)}}
    if isinstance(value, Sequence):
        return {"arrayValue": {"values": [encode_any_value(item) for item in value]}}
    if value is None:
        return {}
    return {"stringValue": str(value)}


def encode_attributes(attributes: Mapping[Any, Any] | None) -> list[dict[str, Any]]:
    """An OTLP/JSON ``KeyValue`` list (keys as strings).

    >>> encode_attributes({"gen_ai.tool.name": "get_weather", "retries": 2})
    [{'key': 'gen_ai.tool.name', 'value': {'stringValue': 'get_weather'}},
     {'key': 'retries', 'value': {'intValue': '2'}}]
    """
    if not attributes:
        return []
    try:
        # The SDK's attributes (a read-only proxy of BoundedAttributes) copy to a plain dict at C
        # speed; iterating them as a Mapping would call back into Python for every key.
        attributes = attributes.copy()  # type: ignore[attr-defined]
    except AttributeError:
        pass
    encoded = []
    for key, value in attributes.items():
        kind = type(value)
        if kind is str:
            any_value: dict[str, Any] = {"stringValue": value}
        elif kind is int:
            any_value = {"intValue": str(value)}
        else:
            any_value = encode_any_value(value)
        encoded.append({"key": key if type(key) is str else str(key), "value": any_value})
    return encoded


def _span(span: ReadableSpan) -> dict[str, Any]:
    """One OTLP/JSON ``Span``."""
    context = span.context
    if context is None:
        raise ValueError(f"span {span.name!r} has no span context")
    encoded: dict[str, Any] = {"traceId": format(context.trace_id, "032x"), "spanId": format(context.span_id, "016x")}
    parent = span.parent
    if parent is not None and parent.span_id:
        encoded["parentSpanId"] = format(parent.span_id, "016x")
        if parent.is_remote:  # span flags bits 8 and 9: the parent is known to be remote
            encoded["flags"] = 0x300 | int(context.trace_flags)
    start = span.start_time or 0
    encoded["name"] = span.name
    encoded["kind"] = _KINDS.get(span.kind, 0)
    encoded["startTimeUnixNano"] = str(start)
    encoded["endTimeUnixNano"] = str(span.end_time or start)
    attributes = span.attributes
    if attributes:
        encoded["attributes"] = encode_attributes(attributes)
    events = span.events
    if events:
        encoded["events"] = [
            {
                "timeUnixNano": str(event.timestamp or 0),
                "name": event.name,
                "attributes": encode_attributes(event.attributes),
            }
            for event in events
        ]
    links = span.links
    if links:
        encoded["links"] = [
            {
                "traceId": format(link.context.trace_id, "032x"),
                "spanId": format(link.context.span_id, "016x"),
                "attributes": encode_attributes(link.attributes),
            }
            for link in links
        ]
    status = span.status
    encoded_status: dict[str, Any] = {}
    if status.status_code.value:
        encoded_status["code"] = status.status_code.value
    if status.description:
        encoded_status["message"] = status.description
    encoded["status"] = encoded_status
    return encoded


def _request_line(spans: Sequence[ReadableSpan]) -> bytes:
    """One OTLP/JSON ``ExportTraceServiceRequest`` holding ``spans``, grouped by resource and
    instrumentation scope (name, version), in order of first appearance, as one JSON line."""
    # Spans of one provider share one Resource object: its attributes are encoded once, and
    # distinct Resource objects with equal attributes still share a group.
    by_object: dict[int, tuple[list[dict[str, Any]], _Scopes]] = {}
    by_content: dict[bytes, tuple[list[dict[str, Any]], _Scopes]] = {}
    resources = []  # keeps every Resource alive while its id() is a key
    for span in spans:
        resource = span.resource
        group = by_object.get(id(resource))
        if group is None:
            attributes = resource.attributes if resource is not None else _NO_ATTRIBUTES
            key = orjson.dumps(
                {str(k): v for k, v in attributes.items()}, option=orjson.OPT_SORT_KEYS, default=str
            )
            group = by_content.get(key)
            if group is None:
                group = by_content[key] = (encode_attributes(attributes), {})
            by_object[id(resource)] = group
            resources.append(resource)
        scope = span.instrumentation_scope
        scope_key = (scope.name, scope.version) if scope is not None else (None, None)
        group[1].setdefault(scope_key, []).append(_span(span))
    resource_spans = []
    for resource_attributes, scopes in by_content.values():
        scope_spans = []
        for (name, version), encoded in scopes.items():
            scope_fields: dict[str, Any] = {}
            if name:
                scope_fields["name"] = name
            if version:
                scope_fields["version"] = version
            scope_spans.append({"scope": scope_fields, "spans": encoded})
        resource_spans.append({"resource": {"attributes": resource_attributes}, "scopeSpans": scope_spans})
    return orjson.dumps({"resourceSpans": resource_spans}, option=orjson.OPT_APPEND_NEWLINE, default=str)


class _LineFile:
    """A file that lines are appended to, each flushed at once: thread-safe, closed once. Opened
    (for appending) when made, so a bad path fails there with ``OSError``. ``owner`` names the
    exporter in log lines."""

    def __init__(self, path: Path, owner: str) -> None:
        self.path = path
        self.owner = owner
        self._handle: IO[bytes] | None = open(path, "ab")  # noqa: SIM115 - closed by close()
        self._lock = threading.Lock()

    def append(self, line: bytes) -> bool:
        """Write ``line`` and flush it; ``False`` when the file is closed (``OSError`` propagates)."""
        with self._lock:
            if self._handle is None:
                return False
            self._handle.write(line)
            self._handle.flush()
            return True

    def flush(self) -> bool:
        """Flush once more; whether the file is open and the flush worked (a failure is logged)."""
        with self._lock:
            if self._handle is None:
                return False
            try:
                self._handle.flush()
            except OSError:
                logger.exception("%s(%s): flush failed", self.owner, self.path)
                return False
            return True

    def close(self) -> None:
        """Close the file; later appends return ``False``. Idempotent."""
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            try:
                handle.close()
            except OSError:
                logger.exception("%s(%s): close failed", self.owner, self.path)


class OtlpJsonFileExporter(SpanExporter):
    """An SDK ``SpanExporter`` appending one OTLP/JSON request per export, one per line.

    The file is the OpenTelemetry Collector file-exporter format, readable by
    ``agenteval_otel.traces.read_spans``. Thread-safe; each export is flushed; ``export`` never
    raises (a failure is logged and returns ``FAILURE``); ``shutdown`` closes the file and may be
    called more than once. The file is opened (for appending) when the exporter is created, so a
    bad path fails there with ``OSError``.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file = _LineFile(self.path, "OtlpJsonFileExporter")
        self._warned_closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Append ``spans`` as one line; ``FAILURE`` (logged) if they cannot be written."""
        try:
            if not spans:
                return SpanExportResult.SUCCESS
            if self._file.append(_request_line(spans)):
                return SpanExportResult.SUCCESS
            if not self._warned_closed:
                self._warned_closed = True
                logger.warning("OtlpJsonFileExporter(%s): export after shutdown dropped", self.path)
            return SpanExportResult.FAILURE
        except Exception:
            logger.exception("OtlpJsonFileExporter(%s): failed to write %d span(s)", self.path, len(spans))
            return SpanExportResult.FAILURE

    def force_flush(self, timeout_millis: int | None = 30000) -> bool:
        """Every export is already flushed; flush once more and report whether the file is open."""
        return self._file.flush()

    def shutdown(self) -> None:
        """Close the file; later exports fail. Idempotent."""
        self._file.close()
