"""Jaeger JSON: the codec from Jaeger's JSON trace shapes to ``SpanRecord``s, and the file reader.

Reads every JSON shape Jaeger produces: the HTTP query API response ``{"data": [trace, ...]}``,
a single UI-model trace ``{"traceID", "spans", "processes"}``, a list of spans with inline
``process``, the api_v2 protobuf-JSON model (``traceId``/``spanId``, ``vType`` tags), and API v3
responses ``{"result": {"resourceSpans": ...}}`` (OTLP/JSON). Times are microseconds; 64-bit
trace ids are widened to 128 bits. Jaeger's own tags (``span.kind``, ``otel.status_code``,
``otel.scope.name``, ``error``) become the span's kind, status and scope again. The query
API's client is ``agenteval_otel.traces.jaeger_client.JaegerClient``.

>>> span = {"traceID": "2be38093ead7a083", "spanID": "7c1c7c1c7c1c7c1c", "operationName": "invoke_agent",
...         "startTime": 1700000000000000, "duration": 1500, "tags": [{"key": "span.kind", "value": "server"}]}
>>> (record,) = records_from_jaeger({"data": [{"traceID": "2be38093ead7a083", "spans": [span]}]})
>>> record.trace_id, record.kind, record.duration_ns
('00000000000000002be38093ead7a083', 'server', 1500000)
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from agenteval_otel.traces._json_shapes import json_type, list_at, object_at, text_at
from agenteval_otel.traces._jsonfile import JsonFormat, read_json_trace_file
from agenteval_otel.traces.otlp_json import records_from_request
from agenteval_otel.traces.trace_file import TraceFile
from agenteval_otel.trajectory.spans import (
    SPAN_KINDS,
    SpanEvent,
    SpanLink,
    SpanRecord,
    SpanStatus,
    normalize_span_id,
    normalize_trace_id,
)

__all__ = ["read_jaeger_json", "record_from_span", "records_from_jaeger"]

EXPECTED = (
    "Jaeger JSON (a query-API response with 'data', a trace with 'traceID' and 'spans', a list "
    "of spans, or an API v3 response with 'result')"
)
_SCOPE_TAGS = {
    "otel.scope.name": 0,
    "otel.library.name": 0,
    "otel.scope.version": 1,
    "otel.library.version": 1,
}
_GO_DURATION = re.compile(r"([0-9.]+)(ns|us|µs|ms|s|m|h)")
_UNIT_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}


def _first(obj: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if obj.get(key) is not None:
            return obj[key]
    return None


def _tag_value(tag: Mapping[str, Any], path: str) -> Any:
    kind = str(tag.get("type") or tag.get("vType") or "string").lower()
    # api_v2 protobuf JSON carries the value under vStr, vInt64, ... instead of value
    value = tag["value"] if "value" in tag else _first(tag, "vStr", "vBool", "vInt64", "vFloat64", "vBinary")
    try:
        if kind in ("int64", "int") and isinstance(value, str):
            return int(value)
        if kind in ("float64", "float") and isinstance(value, str):
            return float(value)
    except ValueError:
        raise ValueError(f"{path}: expected an {kind} value, got {value!r}") from None
    if kind == "bool" and isinstance(value, str):
        return value.lower() == "true"
    if kind == "binary" and isinstance(value, str):
        try:
            return base64.b64decode(value)
        except ValueError:
            return value
    return value


def _tags(tags: Any, path: str) -> dict[str, Any]:
    if not tags:
        return {}
    if isinstance(tags, Mapping):  # some exports write tags as a plain map
        return dict(tags)
    if not isinstance(tags, list):
        raise ValueError(f"{path}: expected a list of tags, got {json_type(tags)}")
    decoded = {}
    for index, tag in enumerate(tags):
        if not isinstance(tag, Mapping) or "key" not in tag:
            raise ValueError(f"{path}[{index}]: expected an object with 'key' and 'value'")
        decoded[str(tag["key"])] = _tag_value(tag, f"{path}[{index}]")
    return decoded


def _micros_to_ns(value: Any, path: str) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.isdigit()):
        return int(value) * 1000
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"{path}: expected microseconds or an RFC 3339 time, got {value!r}") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
        return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000
    raise ValueError(f"{path}: expected a time, got {value!r}")


def _duration_ns(value: Any, path: str) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.isdigit()):
        return int(value) * 1000
    if isinstance(value, str):
        parts = _GO_DURATION.findall(value)
        if parts and "".join(f"{n}{u}" for n, u in parts) == value:
            return int(sum(float(n) * _UNIT_NS[u] for n, u in parts))
    raise ValueError(f"{path}: expected a duration in microseconds, got {value!r}")


def _resource(process: Any, path: str) -> dict[str, Any]:
    """The resource attributes of a Jaeger process (its tags and service name)."""
    process = object_at(process, path)
    resource = _tags(process.get("tags"), f"{path}.tags")
    service = text_at(process.get("serviceName"), f"{path}.serviceName")
    if service is not None:
        resource["service.name"] = service
    return resource


def _resources(processes: Any, path: str) -> dict[str, dict[str, Any]]:
    """A trace's ``processes`` map as resources by process id."""
    return {str(key): _resource(process, f"{path}.{key}") for key, process in object_at(processes, path).items()}


def _span_resource(span: Mapping[str, Any], resources: Mapping[str, dict[str, Any]], path: str) -> dict[str, Any]:
    if span.get("process") is not None:
        return _resource(span["process"], f"{path}.process")
    return dict(resources.get(str(_first(span, "processID", "processId") or ""), {}))


def _id(value: Any, path: str, *, trace: bool) -> str | None:
    try:
        return normalize_trace_id(value) if trace else normalize_span_id(value)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _references(span: Mapping[str, Any], trace_id: str, path: str) -> tuple[str | None, tuple[SpanLink, ...]]:
    explicit = _id(_first(span, "parentSpanID", "parentSpanId"), f"{path}.parentSpanID", trace=False)
    parent: str | None = explicit
    links: list[SpanLink] = []
    references = [(index, object_at(reference, f"{path}.references[{index}]")) for index, reference
                  in enumerate(list_at(span.get("references"), f"{path}.references"))]
    ranked = sorted(
        references, key=lambda r: 0 if str(r[1].get("refType", "CHILD_OF")).upper() == "CHILD_OF" else 1
    )
    for index, reference in ranked:
        where = f"{path}.references[{index}]"
        ref_trace = _id(_first(reference, "traceID", "traceId"), f"{where}.traceID", trace=True) or trace_id
        ref_span = _id(_first(reference, "spanID", "spanId"), f"{where}.spanID", trace=False)
        if ref_span is None:
            raise ValueError(f"{where}: missing spanID")
        if parent is None and ref_trace == trace_id:
            parent = ref_span
        elif ref_span != parent:
            links.append(SpanLink(ref_trace, ref_span))
    return parent, tuple(links)


def _status(tags: dict[str, Any]) -> SpanStatus:
    code = tags.pop("otel.status_code", None)
    description = tags.pop("otel.status_description", None)
    error = tags.get("error")
    if isinstance(error, bool) or error in ("true", "false"):
        del tags["error"]
    if code is not None:
        name = str(code).lower()
        return SpanStatus(name if name in ("ok", "error") else "unset", description)
    return SpanStatus("error", description) if error in (True, "true") else SpanStatus()


def _events(logs: Any, path: str) -> tuple[SpanEvent, ...]:
    events = []
    for index, log in enumerate(list_at(logs, f"{path}.logs")):
        if not isinstance(log, Mapping):
            raise ValueError(f"{path}.logs[{index}]: expected an object")
        fields = _tags(log.get("fields"), f"{path}.logs[{index}].fields")
        name = fields.pop("event", "log")
        events.append(
            SpanEvent(str(name), _micros_to_ns(log.get("timestamp"), f"{path}.logs[{index}]"), fields)
        )
    return tuple(events)


def _span(span: Any, resources: Mapping[str, dict[str, Any]], path: str) -> SpanRecord:
    if not isinstance(span, Mapping):
        raise ValueError(f"{path}: expected an object (a span), got {json_type(span)}")
    try:
        trace_id = normalize_trace_id(_first(span, "traceID", "traceId"))
        span_id = normalize_span_id(_first(span, "spanID", "spanId"))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if trace_id is None or span_id is None:
        raise ValueError(f"{path}: a span needs a traceID and a spanID")
    parent, links = _references(span, trace_id, path)
    tags = _tags(span.get("tags"), f"{path}.tags")
    kind = str(tags.pop("span.kind", "internal")).lower()
    status = _status(tags)
    scope: list[str | None] = [None, None]
    for key, slot in _SCOPE_TAGS.items():
        if key in tags:
            scope[slot] = str(tags.pop(key))
    tags.pop("internal.span.format", None)
    start = _micros_to_ns(span.get("startTime"), f"{path}.startTime")
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=parent,
        name=str(_first(span, "operationName", "name") or ""),
        kind=kind if kind in SPAN_KINDS else "internal",
        start_ns=start,
        end_ns=start + _duration_ns(span.get("duration"), f"{path}.duration"),
        attributes=tags,
        events=_events(span.get("logs"), path),
        status=status,
        resource=_span_resource(span, resources, path),
        scope_name=scope[0],
        scope_version=scope[1],
        links=links,
    )


def record_from_span(span: Mapping[str, Any], *, processes: Mapping[str, Any] | None = None) -> SpanRecord:
    """One Jaeger span (UI model or api_v2 JSON) as a record; ``processes`` is its trace's
    ``processes`` map when the span refers to one by ``processID``. Raises ``ValueError``
    naming a malformed field."""
    return _span(span, _resources(processes, "processes"), "span")


def _trace(trace: Mapping[str, Any], path: str) -> list[SpanRecord]:
    spans = trace.get("spans")
    if not isinstance(spans, list):
        raise ValueError(f"{path}.spans: expected a list")
    resources = _resources(trace.get("processes"), f"{path}.processes")
    return [_span(span, resources, f"{path}.spans[{i}]") for i, span in enumerate(spans)]


def _is_span(obj: Any) -> bool:
    return isinstance(obj, Mapping) and _first(obj, "spanID", "spanId") is not None


def records_from_jaeger(doc: Any) -> list[SpanRecord] | None:
    """The spans of a Jaeger JSON document; ``None`` when it is not one. Raises ``ValueError``
    naming the JSON path of a malformed field."""
    if isinstance(doc, Mapping):
        if isinstance(doc.get("result"), Mapping):
            return records_from_request(doc["result"], "result")
        if isinstance(doc.get("data"), list):
            return [r for i, trace in enumerate(doc["data"]) for r in _jaeger_item(trace, f"data[{i}]")]
        spans = doc.get("spans")
        if isinstance(spans, list) and ("traceID" in doc or "traceId" in doc or all(map(_is_span, spans))):
            return _trace(doc, "$")
        return None
    is_list = isinstance(doc, list) and doc and all(isinstance(item, Mapping) for item in doc)
    if is_list and (_is_span(doc[0]) or isinstance(doc[0].get("spans"), list)):
        return [r for i, item in enumerate(doc) for r in _jaeger_item(item, f"[{i}]")]
    return None


def _jaeger_item(item: Any, path: str) -> list[SpanRecord]:
    if _is_span(item):
        return [_span(item, {}, path)]
    if isinstance(item, Mapping) and isinstance(item.get("spans"), list):
        return _trace(item, path)
    raise ValueError(f"{path}: expected a Jaeger trace or span")


JAEGER_JSON = JsonFormat("jaeger-json", "jaeger-jsonl", records_from_jaeger)


def read_jaeger_json(path: str | os.PathLike[str]) -> TraceFile:
    """The spans of a Jaeger JSON file (one document, or one per line).

    Raises ``agenteval_otel.errors.TraceReadError`` when the file is not Jaeger JSON.
    """
    return read_json_trace_file(Path(path), (JAEGER_JSON,), expected=EXPECTED)
