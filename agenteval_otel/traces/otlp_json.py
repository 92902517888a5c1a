"""OTLP/JSON trace files: the codec from OTLP/JSON to ``SpanRecord``s, the one walk of its
envelope, and the file reader.

The format is the OTLP/JSON encoding of ``ExportTraceServiceRequest`` (``resourceSpans`` →
``scopeSpans`` → ``spans``), one request per file or, as the OpenTelemetry Collector's file
exporter writes it, one request per line. Reading accepts what producers really write: hex ids of
either case or base64 ids, int64 values as strings or numbers, enums as numbers or names,
camelCase or snake_case field names, and ``batches`` for ``resourceSpans`` (Grafana Tempo's
trace-by-id API v1 answers so). ``iter_records`` is the one walk of that envelope: the file
reader, the Jaeger API v3 reader, the Tempo source and the OTLP receiver all go through it. The one encoder is
capture's: ``agenteval_otel.tracing.OtlpJsonFileExporter`` writes SDK spans as the Collector
does (lower-case hex ids, int64 as strings, enums as numbers).

>>> request = {"resourceSpans": [{"scopeSpans": [{"spans": [
...     {"traceId": "5B8EFFF798038103D269B633813FC60C", "spanId": "eee19b7ec3c1b174",
...      "name": "invoke_agent weather", "startTimeUnixNano": "1", "endTimeUnixNano": 5}]}]}]}
>>> (record,) = records_from_request(request)
>>> record.trace_id, record.start_ns, record.end_ns
('5b8efff798038103d269b633813fc60c', 1, 5)
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from sys import intern
from typing import Any

from agenteval_otel.traces._json_shapes import item_at, json_type, list_at, object_at, text_at
from agenteval_otel.traces._jsonfile import JsonFormat, read_json_trace_file
from agenteval_otel.traces.trace_file import OnBadItem, TraceFile
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

__all__ = [
    "decode_any_value",
    "iter_records",
    "read_otlp_json",
    "record_from_span",
    "records_from_request",
]

EXPECTED = "OTLP/JSON (an ExportTraceServiceRequest with resourceSpans, or one per line)"
_STATUS_CODES = ("unset", "ok", "error")


# --- reading ----------------------------------------------------------------------------------


def _get(obj: Mapping[str, Any], camel: str, snake: str, default: Any = None) -> Any:
    value = obj.get(camel)
    if value is None:
        value = obj.get(snake, default)
    return default if value is None else value


def _int64(value: Any, path: str) -> int:
    if value is None or value == "":
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{path}: expected an int64 (number or decimal string), got {value!r}") from None


def _double(value: Any, path: str) -> float:
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        try:
            return float(value)  # also "NaN", "Infinity", "-Infinity" and decimal strings
        except ValueError:
            pass
    raise ValueError(f"{path}: expected a double (number or decimal string), got {value!r}")


def _bytes(value: Any, path: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (TypeError, ValueError):  # binascii.Error is a ValueError
        raise ValueError(f"{path}: expected base64 text, got {value!r}") from None


def decode_any_value(value: Any, path: str = "value") -> Any:
    """A plain Python value from an OTLP/JSON ``AnyValue`` (``{"stringValue": "x"}`` → ``"x"``)."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{path}: expected an AnyValue object, got {json_type(value)}")
    for key, item in value.items():
        if item is None:
            continue
        if key in ("stringValue", "string_value"):
            return str(item)
        if key in ("boolValue", "bool_value"):
            return bool(item)
        if key in ("intValue", "int_value"):
            return _int64(item, f"{path}.{key}")
        if key in ("doubleValue", "double_value"):
            return _double(item, f"{path}.{key}")
        if key in ("bytesValue", "bytes_value"):
            return _bytes(item, f"{path}.{key}")
        if key in ("arrayValue", "array_value"):
            values = list_at(object_at(item, f"{path}.{key}").get("values"), f"{path}.{key}.values")
            return [decode_any_value(v, f"{path}.{key}.values[{i}]") for i, v in enumerate(values)]
        if key in ("kvlistValue", "kvlist_value"):
            return decode_attributes(object_at(item, f"{path}.{key}").get("values"), f"{path}.{key}.values")
    return None


def decode_attributes(attributes: Any, path: str) -> dict[str, Any]:
    """A plain dict from an OTLP/JSON ``KeyValue`` list."""
    if not attributes:
        return {}
    if not isinstance(attributes, list):
        raise ValueError(f"{path}: expected a list of key/value objects")
    decoded: dict[str, Any] = {}
    for index, item in enumerate(attributes):
        if not isinstance(item, Mapping) or "key" not in item:
            raise ValueError(f"{path}[{index}]: expected an object with 'key' and 'value'")
        decoded[str(item["key"])] = decode_any_value(item.get("value") or {}, f"{path}[{index}].value")
    return decoded


def _kind(value: Any, path: str) -> str:
    if value is None or value == "":
        return "unspecified"
    if isinstance(value, int) and 0 <= value < len(SPAN_KINDS):
        return SPAN_KINDS[value]
    if isinstance(value, str):
        name = value.lower().removeprefix("span_kind_")
        if name in SPAN_KINDS:
            return name
    raise ValueError(f"{path}: unknown span kind {value!r}")


def _status(value: Any) -> SpanStatus:
    if not isinstance(value, Mapping):
        return SpanStatus()
    code = value.get("code", 0)
    if isinstance(code, int) and 0 <= code < len(_STATUS_CODES):
        name = _STATUS_CODES[code]
    else:
        name = str(code).lower().removeprefix("status_code_")
        name = name if name in _STATUS_CODES else "unset"
    message = value.get("message")
    return SpanStatus(name, str(message) if message else None)


def _required_id(value: Any, path: str, *, trace: bool) -> str:
    normalized = _id(value, path, trace=trace)
    if normalized is None:
        raise ValueError(f"{path}: missing or all-zero {'trace' if trace else 'span'} id")
    return normalized


def _id(value: Any, path: str, *, trace: bool) -> str | None:
    try:
        return normalize_trace_id(value) if trace else normalize_span_id(value)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _span(
    span: Any,
    path: str,
    resource: dict[str, Any],
    scope_name: str | None,
    scope_version: str | None,
) -> SpanRecord:
    """One span, every field checked; ``ValueError`` naming the JSON path of what is wrong."""
    if not isinstance(span, Mapping):
        raise ValueError(f"{path}: expected an object, got {json_type(span)}")
    trace_id = _id(_get(span, "traceId", "trace_id"), f"{path}.traceId", trace=True)
    span_id = _id(_get(span, "spanId", "span_id"), f"{path}.spanId", trace=False)
    if trace_id is None or span_id is None:
        raise ValueError(f"{path}: a span needs a traceId and a spanId")
    events = tuple(
        _event(object_at(event, f"{path}.events[{i}]"), f"{path}.events[{i}]")
        for i, event in enumerate(list_at(span.get("events"), f"{path}.events"))
    )
    links = tuple(
        _link(object_at(link, f"{path}.links[{i}]"), f"{path}.links[{i}]")
        for i, link in enumerate(list_at(span.get("links"), f"{path}.links"))
    )
    start = _int64(_get(span, "startTimeUnixNano", "start_time_unix_nano"), f"{path}.start")
    end = _int64(_get(span, "endTimeUnixNano", "end_time_unix_nano"), f"{path}.end")
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_id(_get(span, "parentSpanId", "parent_span_id"), f"{path}.parentSpanId", trace=False),
        parent_is_remote=_remote_parent(span.get("flags")),
        name=str(span.get("name", "")),
        kind=_kind(span.get("kind"), f"{path}.kind"),
        start_ns=start,
        end_ns=end or start,
        attributes=decode_attributes(span.get("attributes"), f"{path}.attributes"),
        events=events,
        status=_status(span.get("status")),
        resource=resource,
        scope_name=scope_name,
        scope_version=scope_version,
        links=links,
    )


def _remote_parent(flags: Any) -> bool:
    """Whether OTLP span ``flags`` say the parent is remote (both bits 8 and 9 set)."""
    return type(flags) is int and flags & REMOTE_PARENT_FLAGS == REMOTE_PARENT_FLAGS


def _event(event: Mapping[str, Any], path: str) -> SpanEvent:
    return SpanEvent(
        str(event.get("name", "")),
        _int64(_get(event, "timeUnixNano", "time_unix_nano"), f"{path}.timeUnixNano"),
        decode_attributes(event.get("attributes"), f"{path}.attributes"),
    )


def _link(link: Mapping[str, Any], path: str) -> SpanLink:
    return SpanLink(
        _required_id(_get(link, "traceId", "trace_id"), f"{path}.traceId", trace=True),
        _required_id(_get(link, "spanId", "span_id"), f"{path}.spanId", trace=False),
        decode_attributes(link.get("attributes"), f"{path}.attributes"),
    )


def record_from_span(
    span: Mapping[str, Any],
    *,
    resource: Mapping[str, Any] | None = None,
    scope: Mapping[str, Any] | None = None,
) -> SpanRecord:
    """One OTLP/JSON span as a record; ``resource`` holds plain attribute values, ``scope`` its
    ``name`` and ``version``. Raises ``ValueError`` naming a malformed field."""
    scope = scope or {}
    return _span(span, "span", dict(resource or {}), text_at(scope.get("name"), "scope.name"),
                 text_at(scope.get("version"), "scope.version"))


# --- the fast path ----------------------------------------------------------------------------
# What producers write almost always: camelCase fields, lower-case hex ids, one-key AnyValues.
# The fast path reads such a span with no error bookkeeping and gives up (``_OffFastPath``, or
# whatever a wrong shape raises) on anything else; the walk then reads that span again with the
# checked path above, which accepts every variant and names the JSON path of what is wrong.


class _OffFastPath(Exception):
    """The span is not in the common shape: read it with the checked path."""


_KINDS_BY_NUMBER: dict[Any, str] = {None: "unspecified", **dict(enumerate(SPAN_KINDS))}
_UNSET = SpanStatus()
_STATUS_BY_CODE: dict[Any, SpanStatus] = {0: _UNSET, 1: SpanStatus("ok"), 2: SpanStatus("error")}
"""The statuses that carry a code and no message, shared."""


def _fast_value(value: Any) -> Any:
    if type(value) is not dict or len(value) != 1:
        raise _OffFastPath
    ((tag, item),) = value.items()
    if tag == "stringValue" and type(item) is str:
        return item
    if tag == "intValue" and (type(item) is str or type(item) is int):
        return int(item)
    if tag == "boolValue" and type(item) is bool:
        return item
    if tag == "doubleValue" and (type(item) is float or type(item) is int):
        return float(item)
    if tag == "arrayValue":
        return [_fast_value(v) for v in item["values"]]
    if tag == "kvlistValue":
        return _fast_attributes(item["values"])
    raise _OffFastPath


_SHORT = 32
"""Attribute keys, span names and string values up to this length are interned: one string for
all the spans that repeat them (``gen_ai.operation.name``, ``chat``, a tool's name ...)."""


def _fast_attributes(items: Any) -> dict[str, Any]:
    if not items:
        return {}
    if type(items) is not list:
        raise _OffFastPath
    decoded: dict[str, Any] = {}
    for item in items:
        value = item["value"]
        text = value.get("stringValue")  # the common case first: one string
        if type(text) is str and len(value) == 1:
            decoded[intern(item["key"])] = intern(text) if len(text) <= _SHORT else text
            continue
        key = item["key"]
        if type(key) is not str:
            raise _OffFastPath
        decoded[intern(key)] = _fast_value(value)
    return decoded


_LOWER_HEX = "0123456789abcdef"


def _fast_id(value: Any, width: int, seen: dict[str, str]) -> str | None:
    """A lower-case hex id as it is (one shared string per id), ``None`` for all zeros."""
    known = seen.get(value)
    if known is not None:
        return known
    if type(value) is not str or len(value) != width or value.strip(_LOWER_HEX):
        raise _OffFastPath
    if not value.strip("0"):
        return None
    seen[value] = value
    return value


def _fast_status(status: Any) -> SpanStatus:
    if not status:
        return _UNSET
    if type(status) is dict and len(status) == 1:
        shared = _STATUS_BY_CODE.get(status.get("code"))
        if shared is not None:
            return shared
    return _status(status)


def _fast_events(events: Any) -> tuple[SpanEvent, ...]:
    if type(events) is not list:
        raise _OffFastPath
    found = []
    for event in events:
        name = event["name"]
        if type(name) is not str:
            raise _OffFastPath
        found.append(SpanEvent(name, int(event["timeUnixNano"]), _fast_attributes(event.get("attributes"))))
    return tuple(found)


def _fast_span(
    span: Any,
    resource: dict[str, Any],
    scope_name: str | None,
    scope_version: str | None,
    trace_ids: dict[str, str],
    span_ids: dict[str, str],
) -> SpanRecord:
    """One span in the common shape; ids seen before (``trace_ids``, ``span_ids``) are shared."""
    if span.get("links"):
        raise _OffFastPath
    raw = span["traceId"]
    trace_id = trace_ids.get(raw) or _fast_id(raw, 32, trace_ids)  # seen: the span's siblings
    span_id = _fast_id(span["spanId"], 16, span_ids)
    raw = span.get("parentSpanId")
    parent = (span_ids.get(raw) or _fast_id(raw, 16, span_ids)) if raw else None
    name = span.get("name", "")
    kind_number = span.get("kind")
    kind = _KINDS_BY_NUMBER.get(kind_number) if type(kind_number) is int or kind_number is None else None
    if trace_id is None or span_id is None or type(name) is not str or kind is None:
        raise _OffFastPath
    start = int(span["startTimeUnixNano"])
    end = int(span["endTimeUnixNano"])
    events = span.get("events")
    return SpanRecord(
        trace_id,
        span_id,
        parent,
        intern(name) if len(name) <= _SHORT else name,
        kind,
        start,
        end or start,
        _fast_attributes(span.get("attributes")),
        _fast_events(events) if events else (),
        _fast_status(span.get("status")),
        resource,
        scope_name,
        scope_version,
        (),
        _remote_parent(span.get("flags")) if raw else False,
    )


# --- the walk ---------------------------------------------------------------------------------


def _resource(group: Mapping[str, Any], path: str) -> dict[str, Any]:
    attributes = object_at(group.get("resource"), f"{path}.resource").get("attributes")
    try:
        return _fast_attributes(attributes)
    except Exception:  # noqa: BLE001 - any other shape is read, or rejected, by the checked path
        return decode_attributes(attributes, f"{path}.resource.attributes")


_FAST_TRIES = 8
"""Spans the fast path may fail on before the walk stops trying it for the rest of a request
(unless it read as many): a producer that writes every span in another spelling pays for the
failed attempt a few times, not once per span."""


def iter_records(
    doc: Mapping[str, Any], *, path: str = "", on_bad_span: OnBadItem | None = None
) -> Iterator[SpanRecord]:
    """The spans of one OTLP/JSON ``ExportTraceServiceRequest`` (or ``TracesData``), in order:
    the one walk of its envelope, ``resourceSpans`` → ``scopeSpans`` (or, before OTLP 0.15,
    ``instrumentationLibrarySpans``) → ``spans``; ``batches`` (Tempo's API v1) stands for
    ``resourceSpans``. ``path`` prefixes the JSON paths in errors.

    A span that cannot be read raises ``ValueError`` naming its JSON path, or, given
    ``on_bad_span``, is handed to it as that error and left out (the receiver counts it as a
    rejected span). An envelope that cannot be read (a list or object of the wrong type) always
    raises ``ValueError`` naming where. A document without ``resourceSpans`` holds no spans.
    """
    prefix = f"{path}." if path else ""
    trace_ids: dict[str, str] = {}
    span_ids: dict[str, str] = {}
    fast_read = fast_failed = 0
    resource_key = _resource_spans_key(doc)
    groups = list_at(doc.get(resource_key), f"{prefix}{resource_key}")
    for r_index, group in enumerate(groups):
        r_path = f"{prefix}{resource_key}[{r_index}]"
        group = item_at(group, r_path)
        resource = _resource(group, r_path)
        scope_groups, groups_key, scope_key = _get(group, "scopeSpans", "scope_spans"), "scopeSpans", "scope"
        if scope_groups is None:  # OTLP before 0.15
            scope_groups = _get(group, "instrumentationLibrarySpans", "instrumentation_library_spans")
            groups_key, scope_key = "instrumentationLibrarySpans", "instrumentationLibrary"
        for s_index, scoped in enumerate(list_at(scope_groups, f"{r_path}.{groups_key}")):
            s_path = f"{r_path}.{groups_key}[{s_index}]"
            scoped = item_at(scoped, s_path)
            scope = object_at(scoped.get(scope_key), f"{s_path}.{scope_key}")
            scope_name = text_at(scope.get("name"), f"{s_path}.{scope_key}.name")
            scope_version = text_at(scope.get("version"), f"{s_path}.{scope_key}.version")
            for index, span in enumerate(list_at(scoped.get("spans"), f"{s_path}.spans")):
                record: SpanRecord | None = None
                if fast_failed < _FAST_TRIES or fast_read >= fast_failed:
                    try:
                        record = _fast_span(span, resource, scope_name, scope_version, trace_ids, span_ids)
                        fast_read += 1
                    except Exception:  # noqa: BLE001 - any other shape is read, or rejected, below
                        fast_failed += 1
                if record is None:
                    try:
                        record = _span(span, f"{s_path}.spans[{index}]", resource, scope_name, scope_version)
                    except ValueError as error:
                        if on_bad_span is None:
                            raise
                        on_bad_span(error)
                        continue
                yield record


def _resource_spans_key(doc: Mapping[str, Any]) -> str:
    """The key of ``doc``'s list of resource spans: ``resourceSpans``, ``resource_spans``, or
    ``batches``, the name Tempo's trace-by-id API v1 gives it."""
    for key in ("resourceSpans", "resource_spans", "batches"):
        if doc.get(key) is not None:
            return key
    return "resourceSpans"


def records_from_request(doc: Any, path: str = "") -> list[SpanRecord] | None:
    """The spans of one OTLP/JSON ``ExportTraceServiceRequest`` (or ``TracesData``, or the
    ``tempopb.Trace`` Tempo's API v1 answers, ``{"batches": [...]}``).

    Returns ``None`` when ``doc`` is not such a request; raises ``ValueError`` naming the JSON
    path of a malformed field.
    """
    if not isinstance(doc, Mapping) or doc.get(_resource_spans_key(doc)) is None:
        return None
    return list(iter_records(doc, path=path))


OTLP_JSON = JsonFormat("otlp-json", "otlp-jsonl", records_from_request)


def read_otlp_json(path: str | os.PathLike[str]) -> TraceFile:
    """The spans of an OTLP/JSON file: one request, or one request per line (streamed).

    Raises ``agenteval_otel.errors.TraceReadError`` when the file is not OTLP/JSON.
    """
    return read_json_trace_file(Path(path), (OTLP_JSON,), expected=EXPECTED)
