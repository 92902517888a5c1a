"""``ClickHouseSource``: the traces the OpenTelemetry Collector's ``clickhouse`` exporter wrote to
its ``otel_traces`` table, read with ``clickhouse-connect`` (``pip install 'agenteval-otel[clickhouse]'``).

Three parts, each usable alone: :class:`TraceQuery` writes the SQL (a time window, an optional
service, an optional raw condition; whole traces: the ids of the traces in the window first, then
their spans, a batch of traces per query, oldest first), :func:`record_from_row` turns one
row of that SQL, as a driver returns it (a tuple in :data:`SPAN_COLUMNS` order or a mapping by
those names), into a ``SpanRecord``, and :class:`ClickHouseSource` runs the queries through a
client and assembles the spans into trajectories.

The exporter's table stores every attribute value as a string (pdata's ``AsString``: ints as
``"42"``, booleans as ``"true"``, doubles in their shortest form, arrays and maps as JSON, bytes
as base64). The records keep these strings as they are: the convention readers take JSON strings,
and token counts written as digits. The one value whose type a trajectory keeps, a conditional
edge's value (``agenteval.conditional.value``), is read back from a JSON scalar (``"true"`` →
``True``, ``"3"`` → ``3``; other text stays text). The table keeps no span flags, so no parent is
known to be remote. Both spellings of kinds and status codes are read: ``Server`` / ``Ok`` (current exporter)
and ``SPAN_KIND_SERVER`` / ``STATUS_CODE_OK`` (older ones).

>>> query = TraceQuery("otel_traces", start_ns=0, end_ns=10**18, service="weather-agent", limit=5)
>>> sql, parameters = query.trace_ids()
>>> print(sql)
SELECT TraceId FROM `otel_traces` WHERE Timestamp >= fromUnixTimestamp64Nano({start:Int64}) AND
Timestamp < fromUnixTimestamp64Nano({end:Int64}) AND TraceId != '' AND ServiceName = {service:String}
GROUP BY TraceId ORDER BY min(Timestamp) DESC LIMIT {limit:UInt64}
>>> record = record_from_row({"TraceId": "5b8efff798038103d269b633813fc60c", "SpanId": "eee19b7ec3c1b174",
...                           "SpanName": "invoke_agent weather", "SpanKind": "Internal", "StartNs": 10,
...                           "Duration": 5, "StatusCode": "Error",
...                           "SpanAttributes": {"gen_ai.usage.input_tokens": "12"}})
>>> record.parent_id, record.end_ns, record.status.code, record.attributes
(None, 15, 'error', {'gen_ai.usage.input_tokens': '12'})
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from agenteval_otel import semconv
from agenteval_otel.errors import ConfigError, TraceReadError, mask_url, mask_url_in, redact_secrets
from agenteval_otel.traces.sources import PathLike, TraceSource
from agenteval_otel.trajectory.assemble import iter_trajectories
from agenteval_otel.trajectory.conventions import Reader
from agenteval_otel.trajectory.spans import (
    SPAN_KINDS,
    SpanEvent,
    SpanLink,
    SpanRecord,
    SpanStatus,
    normalize_span_id,
    normalize_trace_id,
)
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = [
    "CLICKHOUSE_EXTRA_HINT",
    "SPAN_COLUMNS",
    "ClickHouseSource",
    "TraceQuery",
    "record_from_row",
]

CLICKHOUSE_EXTRA_HINT = "reading ClickHouse needs the 'clickhouse' extra: pip install 'agenteval-otel[clickhouse]'"
EXPECTED_SCHEMA = ("the table the OpenTelemetry Collector's clickhouse exporter writes spans to "
                   "(its otel_traces schema)")

_SELECTED = (
    ("TraceId", "TraceId"),
    ("SpanId", "SpanId"),
    ("ParentSpanId", "ParentSpanId"),
    ("SpanName", "SpanName"),
    ("SpanKind", "SpanKind"),
    ("StartNs", "toUnixTimestamp64Nano(Timestamp)"),
    ("Duration", "Duration"),
    ("StatusCode", "StatusCode"),
    ("StatusMessage", "StatusMessage"),
    ("SpanAttributes", "SpanAttributes"),
    ("ResourceAttributes", "ResourceAttributes"),
    ("ScopeName", "ScopeName"),
    ("ScopeVersion", "ScopeVersion"),
    ("EventTimes", "arrayMap(t -> toUnixTimestamp64Nano(t), `Events.Timestamp`)"),
    ("Events.Name", "`Events.Name`"),
    ("Events.Attributes", "`Events.Attributes`"),
    ("Links.TraceId", "`Links.TraceId`"),
    ("Links.SpanId", "`Links.SpanId`"),
    ("Links.Attributes", "`Links.Attributes`"),
)
SPAN_COLUMNS: tuple[str, ...] = tuple(name for name, _ in _SELECTED)
"""The columns of a span row, in the order :meth:`TraceQuery.spans` selects them (times in ns)."""

_TYPED = (semconv.CONDITION_VALUE,)
"""The attributes whose type a trajectory keeps: a JSON scalar is read back as one."""
_SCALAR = re.compile(r"true|false|null|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STATUS_CODES = ("unset", "ok", "error")


@dataclass(frozen=True, slots=True)
class TraceQuery:
    """The SQL that reads whole traces from an exporter table: ``table`` (``name`` or
    ``database.name``), the window ``start_ns`` ≤ span start < ``end_ns`` (ns since the epoch),
    ``service`` (traces with a span of that ``ServiceName``), ``where`` (a raw SQL condition on the
    table's columns, e.g. ``SpanAttributes['gen_ai.agent.name'] = 'weather'``: pasted into the
    query as it is, so it must come from a trusted hand), and at most ``limit`` traces, the most
    recent. Each method gives the SQL and its server-side parameters; ``ValueError`` names a bad
    argument."""

    table: str
    start_ns: int
    end_ns: int
    service: str | None = None
    where: str | None = None
    limit: int = 1000

    def __post_init__(self) -> None:
        parts = self.table.split(".")
        if len(parts) > 2 or not all(_IDENTIFIER.fullmatch(part) for part in parts):
            raise ValueError(f"table: expected a table name such as otel_traces or otel.otel_traces, "
                             f"got {self.table!r}")
        if self.start_ns >= self.end_ns:
            raise ValueError(f"the window is empty: start {self.start_ns} ns is not before end {self.end_ns} ns")
        if self.limit < 1:
            raise ValueError(f"limit: expected at least 1 trace, got {self.limit}")
        if self.where is not None and not self.where.strip():
            raise ValueError("where: expected an SQL condition, got an empty text")

    @property
    def quoted_table(self) -> str:
        """The table's name as SQL: each part in backquotes."""
        return ".".join(f"`{part}`" for part in self.table.split("."))

    def count(self) -> tuple[str, dict[str, Any]]:
        """How many traces the window holds: one row, one number."""
        where, parameters = self._window()
        return f"SELECT count(DISTINCT TraceId) FROM {self.quoted_table} WHERE {where}", parameters

    def trace_ids(self) -> tuple[str, dict[str, Any]]:
        """The ids of the ``limit`` most recent traces of the window (by their first span)."""
        where, parameters = self._window()
        return (f"SELECT TraceId FROM {self.quoted_table} WHERE {where}\nGROUP BY TraceId "
                "ORDER BY min(Timestamp) DESC LIMIT {limit:UInt64}", {**parameters, "limit": self.limit})

    def spans(self, trace_ids: Sequence[str]) -> tuple[str, dict[str, Any]]:
        """Every span of the traces ``trace_ids`` (inside the window or not: whole traces), in
        :data:`SPAN_COLUMNS` order, trace by trace in the order of ``trace_ids``, each by start."""
        columns = ", ".join(expression if name == expression.strip("`") else f"{expression} AS `{name}`"
                            for name, expression in _SELECTED)
        return (f"SELECT {columns} FROM {self.quoted_table} WHERE TraceId IN {{trace_ids:Array(String)}} "
                "ORDER BY indexOf({trace_ids:Array(String)}, TraceId), Timestamp", {"trace_ids": list(trace_ids)})

    def _window(self) -> tuple[str, dict[str, Any]]:
        conditions = ["Timestamp >= fromUnixTimestamp64Nano({start:Int64}) AND\n"
                      "Timestamp < fromUnixTimestamp64Nano({end:Int64})", "TraceId != ''"]
        parameters: dict[str, Any] = {"start": self.start_ns, "end": self.end_ns}
        if self.service is not None:
            conditions.append("ServiceName = {service:String}")
            parameters["service"] = self.service
        if self.where is not None:
            conditions.append(f"({self.where})")
        return " AND ".join(conditions), parameters


def record_from_row(row: Sequence[Any] | Mapping[str, Any]) -> SpanRecord:
    """One span row of :meth:`TraceQuery.spans` as a record: a tuple in :data:`SPAN_COLUMNS`
    order, or a mapping by those names (a missing column is empty). Maps may be dicts or
    sequences of pairs; times ints (ns) or datetimes (naive ones are UTC). ``ValueError`` names
    the column that cannot be read."""
    if isinstance(row, Mapping):
        get = row.get
    else:
        if len(row) != len(SPAN_COLUMNS):
            raise ValueError(f"expected a row of {len(SPAN_COLUMNS)} columns ({', '.join(SPAN_COLUMNS)}), "
                             f"got {len(row)}")
        values = dict(zip(SPAN_COLUMNS, row))
        get = values.get
    trace_id = _id(get("TraceId"), "TraceId", trace=True)
    span_id = _id(get("SpanId"), "SpanId", trace=False)
    if trace_id is None or span_id is None:
        raise ValueError(f"a span needs a TraceId and a SpanId, got {get('TraceId')!r} and {get('SpanId')!r}")
    start = _ns(get("StartNs"), "StartNs")
    duration = _ns(get("Duration"), "Duration")
    event_times = list(get("EventTimes") or ())
    event_names = list(get("Events.Name") or ())
    event_attributes = list(get("Events.Attributes") or ())
    events = tuple(
        SpanEvent(str(name), _ns(event_times[i] if i < len(event_times) else 0, f"EventTimes[{i}]"),
                  _attributes(event_attributes[i] if i < len(event_attributes) else None,
                              f"Events.Attributes[{i}]"))
        for i, name in enumerate(event_names))
    link_attributes = list(get("Links.Attributes") or ())
    links = []
    for i, (link_trace, link_span) in enumerate(zip(get("Links.TraceId") or (), get("Links.SpanId") or ())):
        linked_trace = _id(link_trace, f"Links.TraceId[{i}]", trace=True)
        linked_span = _id(link_span, f"Links.SpanId[{i}]", trace=False)
        if linked_trace and linked_span:
            links.append(SpanLink(linked_trace, linked_span, _attributes(
                link_attributes[i] if i < len(link_attributes) else None, f"Links.Attributes[{i}]")))
    message = get("StatusMessage")
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_id(get("ParentSpanId"), "ParentSpanId", trace=False),
        name=str(get("SpanName") or ""),
        kind=_named(get("SpanKind"), "span_kind_", SPAN_KINDS, "unspecified"),
        start_ns=start,
        end_ns=start + duration,
        attributes=_typed(_attributes(get("SpanAttributes"), "SpanAttributes")),
        events=events,
        status=SpanStatus(_named(get("StatusCode"), "status_code_", _STATUS_CODES, "unset"),
                          str(message) if message else None),
        resource=_attributes(get("ResourceAttributes"), "ResourceAttributes"),
        scope_name=str(get("ScopeName")) if get("ScopeName") else None,
        scope_version=str(get("ScopeVersion")) if get("ScopeVersion") else None,
        links=tuple(links),
    )


def _id(value: Any, column: str, *, trace: bool) -> str | None:
    if value is None or value == "":
        return None
    try:
        return normalize_trace_id(value) if trace else normalize_span_id(value)
    except ValueError as exc:
        raise ValueError(f"{column}: {exc}") from None


def _ns(value: Any, column: str) -> int:
    if value is None:
        return 0
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
        return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ValueError(f"{column}: expected nanoseconds (an integer) or a datetime, got {value!r}")


def _attributes(value: Any, column: str) -> dict[str, Any]:
    if not value:
        return {}
    try:
        return {str(key): item for key, item in (value.items() if isinstance(value, Mapping) else value)}
    except (TypeError, ValueError):
        raise ValueError(f"{column}: expected a map of attributes, got {type(value).__name__}") from None


def _typed(attributes: dict[str, Any]) -> dict[str, Any]:
    """``attributes`` with the values of :data:`_TYPED` keys that hold a JSON scalar read back."""
    for key in _TYPED:
        value = attributes.get(key)
        if isinstance(value, str) and _SCALAR.fullmatch(value):
            attributes[key] = json.loads(value)
    return attributes


def _named(value: Any, prefix: str, names: tuple[str, ...], default: str) -> str:
    """A kind or status code as we name it: ``Server`` and ``SPAN_KIND_SERVER`` are ``server``."""
    name = str(value or "").lower().removeprefix(prefix)
    return name if name in names else default


# --- the source -------------------------------------------------------------------------------

_SCHEMES = ("http", "https", "chdb")
# UNKNOWN_USER, WRONG_PASSWORD, REQUIRED_PASSWORD, AUTHENTICATION_FAILED
_AUTH_CODES = frozenset({192, 193, 194, 516})
_NO_TABLE_CODES = frozenset({60, 81})  # UNKNOWN_TABLE, UNKNOWN_DATABASE
_NO_COLUMN_CODES = frozenset({16, 47})  # NO_SUCH_COLUMN_IN_TABLE, UNKNOWN_IDENTIFIER
_TIMEOUT_CODES = frozenset({159})  # TIMEOUT_EXCEEDED
_READONLY_CODE = 164  # READONLY: the user may not change settings
_CODE = re.compile(r"\bcode: (\d+)", re.IGNORECASE)
_SERVER_TEXT = re.compile(r"Code: \d+\. DB::Exception: .*")
_OS_ERROR = re.compile(r"\[Errno -?\d+\] [^\"'()]+|Read timed out")
_MESSAGE_CHARS = 300


class ClickHouseSource(TraceSource):
    """The traces in a table the OpenTelemetry Collector's ``clickhouse`` exporter writes
    (``otel_traces``), queried when :meth:`trajectories` is read: whole traces with a span in the
    window (``start`` to ``end``, or ``lookback`` before now; the last hour by default; naive
    datetimes are UTC), of
    ``service`` when given, matching ``where`` (a raw SQL condition: trusted input only), at most
    ``limit``, the most recent. :attr:`progress` counts them: ``total`` from one count query,
    ``done`` as each trace is read.

    Args:
        client: the server's URL, ``http(s)://[USER[:PASSWORD]@]HOST[:PORT][/DATABASE]`` (or
            ``chdb:PATH``, a local chDB database, with the ``chdb`` package), or a
            ``clickhouse-connect`` client (its ``query`` is used; it stays open). Credentials
            missing from the URL come from ``CLICKHOUSE_USER`` and ``CLICKHOUSE_PASSWORD``.
        table: the exporter's traces table, ``otel_traces`` by default (``database.table`` too).
        timeout: the deadline in seconds of each query: the longest wait for the server's next
            bytes, and the server's own ``max_execution_time``.
        batch: how many traces one query of spans reads, whole, before they are given (memory
            holds one batch).

    Failures raise ``TraceReadError`` naming the URL (without its credentials) and the table,
    and saying what ClickHouse answered; a URL without the ``clickhouse`` extra installed is a
    ``ConfigError`` naming the command that installs it. A query takes no log files.
    """

    def __init__(
        self,
        client: str | Any,
        table: str = "otel_traces",
        *,
        service: str | None = None,
        where: str | None = None,
        start: datetime | None = None,
        end: datetime | None = None,
        lookback: timedelta | None = None,
        limit: int = 1000,
        timeout: float = 30.0,
        batch: int = 50,
    ) -> None:
        if not 0 < timeout < math.inf:
            raise ValueError(f"timeout: expected a positive number of seconds, got {timeout!r}")
        if batch < 1:
            raise ValueError(f"batch: expected at least 1 trace per query, got {batch}")
        self.table, self.service, self.where, self.limit = table, service, where, limit
        self.start, self.end, self.lookback = start, end, lookback
        self.timeout, self.batch = timeout, batch
        self._query(datetime.now(timezone.utc))  # a bad table, window or limit fails here, not later
        self.url: str | None = client if isinstance(client, str) else None
        self._client: Any = None if isinstance(client, str) else client
        self._connection: dict[str, Any] = _connection(client) if isinstance(client, str) else {}
        self._secrets: list[str | None] = [self._connection.get("password")]
        self._server_deadline = True

    def _query(self, now: datetime) -> TraceQuery:
        """The query of the window ending ``now`` (or at ``end``)."""
        end = self.end or now
        start = self.start or end - (self.lookback if self.lookback is not None else timedelta(hours=1))
        return TraceQuery(self.table, _ns(start, "start"), _ns(end, "end"), self.service, self.where, self.limit)

    def __repr__(self) -> str:
        where = mask_url(self.url) if self.url else type(self._client).__name__
        return f"ClickHouseSource({where!r}, table={self.table!r})"

    def with_logs(self, logs: Sequence[PathLike]) -> TraceSource:
        """``ConfigError``: the exporter's traces table holds spans, and a query of it takes no log files."""
        raise ConfigError(f"logs=: {self!r} reads spans from a ClickHouse table and takes no log files; to join "
                          "log records, read the spans yourself and give SpanSource(spans, logs)")

    def spans(self) -> Iterator[SpanRecord]:
        """The spans of the traces the query finds, trace by trace, a batch read at a time."""
        query = self._query(datetime.now(timezone.utc))
        client, owned = (self._client, False) if self._client is not None else (self._connect(), True)
        try:
            sql, parameters = query.count()
            found = self._rows(client.query, sql, parameters, "counting the traces of the window")
            total = int(found[0][0]) if found else 0
            self.progress.unit, self.progress.total, self.progress.done = "traces", min(total, query.limit), 0
            sql, parameters = query.trace_ids()
            ids = [str(row[0]) for row in self._rows(client.query, sql, parameters, "finding the traces")]
            ids.reverse()  # oldest first
            for first in range(0, len(ids), self.batch):
                yield from self._batch(client, query, ids[first:first + self.batch])
        finally:
            if owned:
                client.close()

    def trajectories(self, readers: Sequence[Reader] | None = None) -> Iterator[Trajectory]:
        """Each invocation in the traces found (see :meth:`TraceSource.trajectories`)."""
        yield from iter_trajectories(self.spans(), group="invocation", readers=readers)

    def _batch(self, client: Any, query: TraceQuery, trace_ids: Sequence[str]) -> Iterator[SpanRecord]:
        """The spans of ``trace_ids``, read whole before the first is given: the connection is
        never left waiting on a slow consumer (a run scoring as it reads)."""
        rows = self._rows(client.query, *query.spans(trace_ids), "reading the spans")
        current: str | None = None
        for row in rows:
            try:
                record = record_from_row(row)
            except ValueError as exc:
                trace = row.get("TraceId") if isinstance(row, Mapping) else row[0] if row else None
                raise TraceReadError(f"{self._name()}: a span of trace {trace!r} cannot be read: {exc}; "
                                     f"expected {EXPECTED_SCHEMA}") from None
            if record.trace_id != current:
                if current is not None:
                    self.progress.done += 1
                current = record.trace_id
            yield record
        if current is not None:
            self.progress.done += 1

    def _rows(self, run: Any, sql: str, parameters: Mapping[str, Any], doing: str) -> list[Sequence[Any]]:
        try:
            return list(self._call(run, sql, parameters).result_rows)
        except Exception as exc:  # the driver's errors: clickhouse-connect's, or the transport's
            raise self._error(exc, doing) from None

    def _call(self, run: Any, sql: str, parameters: Mapping[str, Any]) -> Any:
        """``run`` (a client's query method) with the server's deadline, ``max_execution_time``;
        without it from then on when the user may not change settings (a read-only user)."""
        if self._server_deadline:
            try:
                deadline = {"max_execution_time": max(1, math.ceil(self.timeout))}
                return run(sql, parameters=parameters, settings=deadline)
            except Exception as exc:  # the driver's errors: clickhouse-connect's, or the transport's
                if _code(str(exc)) != _READONLY_CODE:
                    raise
                self._server_deadline = False
        return run(sql, parameters=parameters)

    def _connect(self) -> Any:
        """A clickhouse-connect client for the URL (``TraceReadError`` when it cannot connect)."""
        import clickhouse_connect

        options = dict(self._connection)
        try:
            if options.pop("scheme") == "chdb":
                return clickhouse_connect.get_client(dsn=self.url)
            return clickhouse_connect.get_client(
                **options, connect_timeout=self.timeout, send_receive_timeout=self.timeout, query_retries=0)
        except Exception as exc:  # the driver's errors: clickhouse-connect's, or the transport's
            raise self._error(exc, "connecting") from None

    def _name(self) -> str:
        where = f"ClickHouse {mask_url(self.url)}" if self.url else "ClickHouse"
        return f"{where}, table {self.table}"

    def _error(self, exc: BaseException, doing: str) -> TraceReadError:
        """What went wrong, in one line naming the source and what ClickHouse answered."""
        text = " ".join(str(exc).split()) or type(exc).__name__
        if self.url:
            text = mask_url_in(text, self.url)
        text = redact_secrets(text, self._secrets)
        server = _SERVER_TEXT.search(text) or _OS_ERROR.search(text)
        answer = server.group(0) if server else text
        answer = re.sub(r" \(for url [^)]*\)$", "", answer).split(" In scope ")[0]  # not the query again
        if len(answer) > _MESSAGE_CHARS:
            answer = answer[:_MESSAGE_CHARS] + "..."
        number = _code(text)
        name = self._name()
        if number in _AUTH_CODES:
            user = self._connection.get("username")
            whose = f" of user {user}" if user else ""
            return TraceReadError(f"{name}: ClickHouse refused the credentials{whose} ({answer}); give them in the "
                                  "URL (http://USER:PASSWORD@HOST:8123) or in CLICKHOUSE_USER and CLICKHOUSE_PASSWORD")
        if number in _NO_TABLE_CODES:
            return TraceReadError(f"{name}: no such table ({answer}); expected {EXPECTED_SCHEMA}")
        if number in _NO_COLUMN_CODES:
            return TraceReadError(f"{name}: the table lacks a column of the exporter's schema ({answer}); "
                                  f"expected {EXPECTED_SCHEMA}")
        if number in _TIMEOUT_CODES or "timed out" in text.lower():
            return TraceReadError(f"{name}: no answer within the deadline of {self.timeout:g} s while {doing} "
                                  f"({answer})")
        if number is not None:
            return TraceReadError(f"{name}: ClickHouse answered, while {doing}: {answer}")
        if isinstance(exc, OSError) or type(exc).__name__ == "OperationalError" or _OS_ERROR.search(text):
            return TraceReadError(f"{name}: cannot reach ClickHouse while {doing} ({answer})")
        return TraceReadError(f"{name}: failed while {doing}: {answer}")


def _code(text: str) -> int | None:
    """The ClickHouse error code an error's text gives, if any."""
    found = _CODE.search(text)
    return int(found.group(1)) if found else None


def _connection(url: str) -> dict[str, Any]:
    """The connection arguments of a URL, credentials from the environment where it has none;
    ``ValueError`` naming the URL (masked) when it is not one we read, ``ConfigError`` when the
    packages it needs are not installed."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        raise ValueError(f"client: expected a URL such as http://localhost:8123, got {mask_url(url)!r}") from None
    if parts.scheme not in _SCHEMES or (parts.scheme != "chdb" and not parts.hostname):
        raise ValueError(f"client: expected an http(s) URL such as http://localhost:8123 (or chdb:PATH), "
                         f"got {mask_url(url)!r}")
    if importlib.util.find_spec("clickhouse_connect") is None:
        raise ConfigError(CLICKHOUSE_EXTRA_HINT)
    if parts.scheme == "chdb":
        if importlib.util.find_spec("chdb") is None:
            raise ConfigError("a chdb: URL needs the chdb package: pip install chdb")
        return {"scheme": "chdb"}
    database = urllib.parse.unquote(parts.path.strip("/"))
    options: dict[str, Any] = {
        "scheme": parts.scheme,
        "interface": parts.scheme,
        "host": parts.hostname,
        "username": urllib.parse.unquote(parts.username) if parts.username else os.environ.get("CLICKHOUSE_USER"),
        "password": (urllib.parse.unquote(parts.password) if parts.password is not None
                     else os.environ.get("CLICKHOUSE_PASSWORD", "")),
    }
    if port is not None:
        options["port"] = port
    if database:
        options["database"] = database
    return options
