"""``Spool``: the spans and log records a worker acknowledged, kept on local disk until their
verdicts are exported, so that a worker killed mid-way scores them after a restart.

One SQLite database (the standard library's ``sqlite3``, write-ahead log) in a directory of its
own: a batch is written, one row per trace it touches, before the receiver acknowledges it; a
trace's rows are deleted once its verdicts are exported (or once it needs none); a restarted
worker replays what is left, trace by trace. Rows are JSON, never code: a damaged row is skipped
and counted, never executed. The spool is bounded in bytes: past ``max_bytes`` a batch is refused,
so the sender retries, rather than written.

>>> import tempfile
>>> from agenteval_otel.trajectory.spans import SpanRecord
>>> spool = Spool(tempfile.mkdtemp())
>>> _ = spool.add_spans([SpanRecord("ab" * 16, "cd" * 8, None, "invoke_agent")])
>>> [(trace_id, len(spans)) for trace_id, spans, logs in spool.replay()]
[('abababababababababababababababab', 1)]
>>> spool.done("ab" * 16); spool.pending_traces
0
>>> spool.close()
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agenteval_otel.trajectory.logs import LogRecord
from agenteval_otel.trajectory.spans import SpanEvent, SpanLink, SpanRecord, SpanStatus

__all__ = ["Spool", "SpoolCounters"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

DEFAULT_MAX_BYTES = 1 << 30
_FILE = "spool.sqlite3"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS batches (id INTEGER PRIMARY KEY, trace_id TEXT NOT NULL, "
    "kind TEXT NOT NULL, payload BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS batches_by_trace ON batches (trace_id)",
)


@dataclass(frozen=True, slots=True)
class SpoolCounters:
    """What the spool holds and has done since it was opened."""

    pending_traces: int
    pending_bytes: int
    written_batches: int
    replayed_traces: int
    unreadable_rows: int


class Spool:
    """Acknowledged batches on local disk (see the module docs). Thread-safe.

    ``directory`` is created when missing; ``max_bytes`` bounds the payload held. ``OSError``
    or ``sqlite3.Error`` when the directory or its database cannot be opened.
    """

    def __init__(self, directory: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be at least 1, got {max_bytes}")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / _FILE
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # a killed process loses nothing committed
        for statement in _SCHEMA:
            self._db.execute(statement)
        self._traces: set[str] = {t for (t,) in self._db.execute("SELECT DISTINCT trace_id FROM batches")}
        self._bytes = int(self._db.execute("SELECT COALESCE(SUM(LENGTH(payload)), 0) FROM batches").fetchone()[0])
        self._written = 0
        self._replayed = 0
        self._unreadable = 0
        self._closed = False

    @property
    def pending_traces(self) -> int:
        """Traces with rows in the spool."""
        with self._lock:
            return len(self._traces)

    @property
    def counters(self) -> SpoolCounters:
        """A snapshot of what the spool holds and did."""
        with self._lock:
            return SpoolCounters(len(self._traces), self._bytes, self._written, self._replayed, self._unreadable)

    def add_spans(self, records: Iterable[SpanRecord]) -> list[int] | None:
        """Write ``records`` (one row per trace); the row ids, or ``None`` when the spool is
        full or closed (nothing written)."""
        by_trace: dict[str, list[SpanRecord]] = {}
        for record in records:
            by_trace.setdefault(record.trace_id, []).append(record)
        return self._add("spans", by_trace)

    def add_logs(self, logs: Iterable[LogRecord]) -> list[int] | None:
        """Write log records that belong to a trace, likewise."""
        by_trace: dict[str, list[LogRecord]] = {}
        for log in logs:
            if log.trace_id:
                by_trace.setdefault(log.trace_id, []).append(log)
        return self._add("logs", by_trace)

    def _add(self, kind: str, by_trace: dict[str, list[Any]]) -> list[int] | None:
        if not by_trace:
            return []
        rows = [(trace_id, kind, orjson.dumps(items, default=_plain)) for trace_id, items in by_trace.items()]
        size = sum(len(payload) for _, _, payload in rows)
        with self._lock:
            if self._closed or self._bytes + size > self.max_bytes:
                return None
            ids: list[int] = []
            self._db.execute("BEGIN")
            try:
                for row in rows:
                    cursor = self._db.execute("INSERT INTO batches (trace_id, kind, payload) VALUES (?, ?, ?)", row)
                    ids.append(int(cursor.lastrowid or 0))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._bytes += size
            self._written += 1
            self._traces.update(by_trace)
            return ids

    def discard(self, row_ids: Iterable[int]) -> None:
        """Delete rows written for a batch that was then refused."""
        ids = [(row_id,) for row_id in row_ids]
        with self._lock:
            if self._closed or not ids:
                return
            self._db.execute("BEGIN")
            freed, touched = 0, set()
            for (row_id,) in ids:
                row = self._db.execute("SELECT trace_id, LENGTH(payload) FROM batches WHERE id = ?",
                                       (row_id,)).fetchone()
                if row is not None:
                    touched.add(row[0])
                    freed += int(row[1])
            self._db.executemany("DELETE FROM batches WHERE id = ?", ids)
            self._db.execute("COMMIT")
            self._bytes -= freed
            for trace_id in touched:  # a trace whose only rows these were is no longer held
                if self._db.execute("SELECT 1 FROM batches WHERE trace_id = ? LIMIT 1", (trace_id,)).fetchone() is None:
                    self._traces.discard(trace_id)

    def done(self, trace_id: str) -> None:
        """Delete every row of ``trace_id``: its verdicts are exported, or it needs none."""
        with self._lock:
            if self._closed or trace_id not in self._traces:
                return
            row = self._db.execute("SELECT COALESCE(SUM(LENGTH(payload)), 0) FROM batches WHERE trace_id = ?",
                                   (trace_id,)).fetchone()
            self._db.execute("DELETE FROM batches WHERE trace_id = ?", (trace_id,))
            self._bytes -= int(row[0])
            self._traces.discard(trace_id)

    def replay(self) -> Iterator[tuple[str, list[SpanRecord], list[LogRecord]]]:
        """Every trace held, oldest first: its id, spans and log records. Unreadable rows are
        skipped, counted and logged once."""
        with self._lock:
            trace_ids = [t for (t,) in self._db.execute(
                "SELECT trace_id FROM batches GROUP BY trace_id ORDER BY MIN(id)")]
        for trace_id in trace_ids:
            with self._lock:
                rows = self._db.execute("SELECT kind, payload FROM batches WHERE trace_id = ? ORDER BY id",
                                        (trace_id,)).fetchall()
            spans: list[SpanRecord] = []
            logs: list[LogRecord] = []
            for kind, payload in rows:
                try:
                    items = orjson.loads(payload)
                    if kind == "spans":
                        spans.extend(_span(item) for item in items)
                    else:
                        logs.extend(LogRecord(**item) for item in items)
                except (orjson.JSONDecodeError, TypeError, ValueError, KeyError, AttributeError):
                    with self._lock:
                        self._unreadable += 1
                        first = self._unreadable == 1
                    if first:
                        logger.warning("spool %s: an unreadable row of trace %s was skipped", self.path, trace_id)
            with self._lock:
                self._replayed += 1
            yield trace_id, spans, logs

    def close(self) -> None:
        """Close the database; what it holds stays for the next start. Idempotent."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()


def _plain(value: object) -> object:
    """What orjson cannot write itself: bytes as text, anything else by its ``str``."""
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return str(value)


def _span(item: dict[str, Any]) -> SpanRecord:
    status = item.pop("status", None) or {}
    events = tuple(SpanEvent(**event) for event in item.pop("events", None) or ())
    links = tuple(SpanLink(**link) for link in item.pop("links", None) or ())
    return SpanRecord(**item, events=events, links=links, status=SpanStatus(**status))
