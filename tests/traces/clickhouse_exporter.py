"""The OpenTelemetry Collector's ``clickhouse`` exporter, as far as the tests need it: the traces
table it creates, and the row it writes for each span.

Both follow opentelemetry-collector-contrib ``exporter/clickhouseexporter``:
``internal/sqltemplates/traces_table.sql`` at commit f92a5763be13 for the table (every column
with its type, the engine, partition and sort key; its compression codecs and skip indexes, which
change nothing a query returns, are left out), ``internal/sqltemplates/traces_insert.sql`` for
the columns written (commit 61540ced55e9), and ``exporter_traces.go`` (``pushTraceData``,
``convertEvents``, ``convertLinks``) with ``internal/util.go`` at commit 64079aac9170
(``AttributesToMap``: each value's pdata ``AsString``) for the values.
"""

from __future__ import annotations

import base64
import decimal
import json
import math
from collections.abc import Iterable
from typing import Any

from agenteval_otel.trajectory import SpanRecord

TRACES_TABLE = """
CREATE TABLE IF NOT EXISTS {table} (
    Timestamp DateTime64(9),
    TraceId String,
    SpanId String,
    ParentSpanId String,
    TraceState String,
    SpanName LowCardinality(String),
    SpanKind LowCardinality(String),
    ServiceName LowCardinality(String),
    ResourceAttributes Map(LowCardinality(String), String),
    ScopeName String,
    ScopeVersion String,
    SpanAttributes Map(LowCardinality(String), String),
    Duration UInt64,
    StatusCode LowCardinality(String),
    StatusMessage String,
    Events Nested (
        Timestamp DateTime64(9),
        Name LowCardinality(String),
        Attributes Map(LowCardinality(String), String)
    ),
    Links Nested (
        TraceId String,
        SpanId String,
        TraceState String,
        Attributes Map(LowCardinality(String), String)
    )
) ENGINE = MergeTree()
PARTITION BY toDate(Timestamp)
ORDER BY (ServiceName, SpanName, toDateTime(Timestamp))
"""
"""The exporter's traces table; ``{table}`` is its name."""

INSERT_COLUMNS = (
    "Timestamp", "TraceId", "SpanId", "ParentSpanId", "TraceState", "SpanName", "SpanKind", "ServiceName",
    "ResourceAttributes", "ScopeName", "ScopeVersion", "SpanAttributes", "Duration", "StatusCode",
    "StatusMessage", "Events.Timestamp", "Events.Name", "Events.Attributes", "Links.TraceId", "Links.SpanId",
    "Links.TraceState", "Links.Attributes",
)
"""The columns the exporter's insert names, in its order."""


def exporter_row(span: SpanRecord) -> list[Any]:
    """The row the exporter writes for ``span``: times in ns, ids in lower-case hex (empty when
    absent), kind and status code as pdata names them (``Internal``, ``Ok``), every attribute value
    as its ``AsString``."""
    return [
        span.start_ns,
        span.trace_id,
        span.span_id,
        span.parent_id or "",
        "",  # the trace state: our spans carry none
        span.name,
        span.kind.capitalize(),  # pdata's SpanKind.String(): Unspecified, Internal, Server, ...
        as_string(span.resource.get("service.name", "")),
        attributes_map(span.resource),
        span.scope_name or "",
        span.scope_version or "",
        attributes_map(span.attributes),
        span.end_ns - span.start_ns,
        span.status.code.capitalize(),  # pdata's StatusCode.String(): Unset, Ok, Error
        span.status.description or "",
        [event.time_ns for event in span.events],
        [event.name for event in span.events],
        [attributes_map(event.attributes) for event in span.events],
        [link.trace_id for link in span.links],
        [link.span_id for link in span.links],
        ["" for _ in span.links],
        [attributes_map(link.attributes) for link in span.links],
    ]


def exporter_rows(spans: Iterable[SpanRecord]) -> list[list[Any]]:
    """The rows of every span in ``spans``."""
    return [exporter_row(span) for span in spans]


def attributes_map(attributes: dict[str, Any]) -> dict[str, str]:
    """``AttributesToMap``: each value as its ``AsString``."""
    return {key: as_string(value) for key, value in attributes.items()}


def as_string(value: Any) -> str:
    """pdata's ``Value.AsString``: strings as they are, booleans ``true``/``false``, ints in
    decimal, doubles as ES6 numbers, bytes in base64, arrays and maps as Go's ``json.Marshal``."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return _go_json(value)


def _go_json(value: Any) -> str:
    """Go's ``encoding/json`` of a raw value: compact, map keys sorted, ``<``, ``>`` and ``&``
    escaped, doubles as ES6 numbers."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _es6(value)
    if isinstance(value, (bytes, bytearray)):
        return _go_json(base64.b64encode(value).decode("ascii"))
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_go_json(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_go_json(str(k))}:{_go_json(value[k])}" for k in sorted(value)) + "}"
    text = json.dumps(str(value), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _es6(number: float) -> str:
    """``float64AsString``: the shortest digits, in fixed notation from 1e-6 up to 1e21, else
    exponent notation without a padded exponent (``1e-7``, ``1e+21``)."""
    if math.isinf(number) or math.isnan(number):
        return f"json: unsupported value: {'+Inf' if number > 0 else '-Inf' if number < 0 else 'NaN'}"
    shortest = repr(number)  # the shortest digits; Python writes these magnitudes with an exponent
    magnitude = abs(number)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        mantissa, _, exponent = shortest.partition("e")
        return f"{mantissa.removesuffix('.0')}e{exponent[0]}{exponent[1:].lstrip('0') or '0'}"
    fixed = format(decimal.Decimal(shortest), "f")
    return fixed.rstrip("0").rstrip(".") if "." in fixed else fixed
