"""The run history: every run's summary, per-criterion statistics, per-case scores and failures
in a local SQLite file (default ``.agenteval/history.db``), bounded to the last ``keep`` runs.

:class:`HistoryStore` writes a run (:meth:`~HistoryStore.record`, from an ``EvalReport`` or, for
a session that keeps no case, an ``EvalSummary``) and reads it back as plain frozen dataclasses:
:class:`RunInfo` (runs over time), :class:`CriterionSummary`, :class:`CaseScores` (every case ×
criterion score, for distributions) and :class:`FailureRecord` (with trace and span ids).
:func:`compare_runs` pairs a run's cases with a baseline's (the statistics of
``experiment compare``).

Writes are short ``BEGIN IMMEDIATE`` transactions in WAL mode with a busy timeout, retried a few
times when another process holds the lock, so two runs can record at once. Every failure is a
:class:`~agenteval_otel.errors.HistoryError`; a file that is not a history store is never
written to (nor deleted).

Schema (version 1, in ``meta``; a newer version is refused, never changed)::

    meta      key TEXT PRIMARY KEY, value TEXT                 -- schema_version
    runs      seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE, created_at TEXT (ISO 8601, UTC),
              command TEXT, source TEXT, labels TEXT (JSON object), cases, passed, failed, errored,
              pass_rate, mean_score, duration_s, failures (all failures, also those not kept),
              latency_p50, latency_p90, latency_p99 (seconds per case),
              tokens_p50, tokens_p90, tokens_p99 (model tokens per case)
    criteria  run_seq, position, name, n, passed, errors, mean, pass_rate, threshold,
              judge_latency_p50/p90/p99, judge_tokens_p50/p90/p99        PRIMARY KEY (run_seq, position)
    cases     run_seq, position, eval_id, status, trace_id, span_id, duration_s, tokens
                                                                         PRIMARY KEY (run_seq, position)
    scores    run_seq, case_position, criterion_position, score (NULL: errored),
              verdict (1 passed, 0 failed, 2 errored)     PRIMARY KEY (run_seq, case_position, criterion_position)
    failures  run_seq, position, eval_id, invocation_id, criterion, score, reason, trace_id, span_id
                                                   PRIMARY KEY (run_seq, position); the first MAX_FAILURES

Percentiles are ``NULL`` where the run had nothing to measure them on.

>>> import tempfile
>>> from agenteval_otel.results import EvalCaseResult, EvalReport
>>> store = HistoryStore(Path(tempfile.mkdtemp()) / "history.db")
>>> info = store.record(EvalReport.from_results("weather", [EvalCaseResult(eval_id="c1", passed=True)]),
...                     command="run", run_id="r1")
>>> [(run.id, run.command, run.source, run.cases, run.pass_rate) for run in store.runs()]
[('r1', 'run', 'weather', 1, 1.0)]
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from agenteval_otel.errors import HistoryError
from agenteval_otel.results._paired import (
    BaselineComparison,
    CaseChange,
    CriterionDelta,
    metric_delta,
    percentile,
)
from agenteval_otel.results._results import EvalCaseResult, EvalReport, EvalSummary, SummaryTally

__all__ = [
    "DEFAULT_HISTORY",
    "DEFAULT_KEEP",
    "HISTORY_KEEP_ENV",
    "MAX_FAILURES",
    "SCHEMA_VERSION",
    "BaselineSink",
    "CaseScores",
    "CriterionSummary",
    "FailureRecord",
    "HistoryStore",
    "Percentiles",
    "RunInfo",
    "SummarySink",
    "case_scores",
    "compare_runs",
    "history_keep",
]

SCHEMA_VERSION = 1
DEFAULT_HISTORY = Path(".agenteval") / "history.db"
DEFAULT_KEEP = 200
HISTORY_KEEP_ENV = "AGENTEVAL_HISTORY_KEEP"
"""The environment variable giving how many runs a store keeps (default ``DEFAULT_KEEP``)."""
MAX_FAILURES = 1000
"""Failures kept per run (all are counted in ``RunInfo.failures``)."""
BUSY_TIMEOUT_S = 1.0
ATTEMPTS = 3
_REASON_CHARS = 2000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL,
    command TEXT NOT NULL, source TEXT, labels TEXT NOT NULL DEFAULT '{}',
    cases INTEGER NOT NULL, passed INTEGER NOT NULL, failed INTEGER NOT NULL, errored INTEGER NOT NULL,
    pass_rate REAL NOT NULL, mean_score REAL NOT NULL, duration_s REAL NOT NULL, failures INTEGER NOT NULL,
    latency_p50 REAL, latency_p90 REAL, latency_p99 REAL, tokens_p50 REAL, tokens_p90 REAL, tokens_p99 REAL);
CREATE INDEX IF NOT EXISTS runs_by_source ON runs (source, seq);
CREATE TABLE IF NOT EXISTS criteria (
    run_seq INTEGER NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL, n INTEGER NOT NULL,
    passed INTEGER NOT NULL, errors INTEGER NOT NULL, mean REAL NOT NULL, pass_rate REAL NOT NULL, threshold REAL,
    judge_latency_p50 REAL, judge_latency_p90 REAL, judge_latency_p99 REAL,
    judge_tokens_p50 REAL, judge_tokens_p90 REAL, judge_tokens_p99 REAL,
    PRIMARY KEY (run_seq, position)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cases (
    run_seq INTEGER NOT NULL, position INTEGER NOT NULL, eval_id TEXT NOT NULL, status TEXT NOT NULL,
    trace_id TEXT, span_id TEXT, duration_s REAL, tokens REAL,
    PRIMARY KEY (run_seq, position)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS scores (
    run_seq INTEGER NOT NULL, case_position INTEGER NOT NULL, criterion_position INTEGER NOT NULL,
    score REAL, verdict INTEGER NOT NULL,
    PRIMARY KEY (run_seq, case_position, criterion_position)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS failures (
    run_seq INTEGER NOT NULL, position INTEGER NOT NULL, eval_id TEXT NOT NULL, invocation_id TEXT,
    criterion TEXT, score REAL, reason TEXT NOT NULL, trace_id TEXT, span_id TEXT,
    PRIMARY KEY (run_seq, position)) WITHOUT ROWID;
"""
_CHILDREN = ("criteria", "cases", "scores", "failures")
_VERDICTS = {1: "passed", 0: "failed", 2: "errored"}


@dataclass(frozen=True)
class Percentiles:
    """The 50th, 90th and 99th percentiles of a measure over a run."""

    p50: float
    p90: float
    p99: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Percentiles | None:
        """Of ``values``; ``None`` when there is none."""
        if not values:
            return None
        ordered = sorted(values)
        return cls(percentile(ordered, 0.5), percentile(ordered, 0.9), percentile(ordered, 0.99))


@dataclass(frozen=True)
class RunInfo:
    """One recorded run: what ran, when, and how it did (``criteria_means``: name → mean score).
    ``latency``: seconds per case; ``tokens``: model tokens per case; ``failures``: how many
    failed or errored criterion results it had (the first ``MAX_FAILURES`` are kept)."""

    id: str
    created_at: datetime
    command: str
    source: str | None
    labels: dict[str, str]
    cases: int
    passed: int
    failed: int
    errored: int
    pass_rate: float
    mean_score: float
    duration_s: float
    failures: int
    latency: Percentiles | None
    tokens: Percentiles | None
    criteria_means: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CriterionSummary:
    """One criterion over a run's cases: ``n`` results, ``passed``, ``errors``, mean score, pass
    rate, threshold (``None`` when the run kept no case), and the judge's time (seconds) and
    tokens per case when an LLM judge scored it."""

    name: str
    n: int
    passed: int
    errors: int
    mean: float
    pass_rate: float
    threshold: float | None
    judge_latency: Percentiles | None
    judge_tokens: Percentiles | None


@dataclass(frozen=True)
class CaseScores:
    """One case of a run: its status, root span, time, tokens, and each criterion's score
    (``None`` when it errored) and verdict (``passed``, ``failed``, ``errored``)."""

    eval_id: str
    status: str
    scores: dict[str, float | None]
    verdicts: dict[str, str]
    trace_id: str | None = None
    span_id: str | None = None
    duration_s: float | None = None
    tokens: float | None = None


@dataclass(frozen=True)
class FailureRecord:
    """A failed or errored criterion on a turn (``criterion`` ``None``: the case itself errored),
    with the evidence: score, reason and the turn's trace and root span."""

    eval_id: str
    invocation_id: str | None
    criterion: str | None
    score: float | None
    reason: str
    trace_id: str | None
    span_id: str | None


def history_keep(environ: Mapping[str, str] | None = None) -> int:
    """How many runs a store keeps: ``AGENTEVAL_HISTORY_KEEP`` (a positive integer), else ``DEFAULT_KEEP``."""
    text = (os.environ if environ is None else environ).get(HISTORY_KEEP_ENV, "").strip()
    if not text:
        return DEFAULT_KEEP
    try:
        keep = int(text)
    except ValueError:
        keep = 0
    if keep < 1:
        raise HistoryError(f"{HISTORY_KEEP_ENV}={text!r}: expected a positive whole number of runs to keep")
    return keep


_T = TypeVar("_T")


class HistoryStore:
    """The run history in the SQLite file ``path`` (created with its folder when first written).

    Args:
        path: the store's file (default ``.agenteval/history.db``).
        keep: how many runs :meth:`record` keeps, the oldest pruned first (default: ``history_keep()``).
    """

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_HISTORY, *, keep: int | None = None) -> None:
        self.path = Path(path)
        self.keep = history_keep() if keep is None else keep
        if self.keep < 1:
            raise HistoryError(f"keep must be at least 1, got {self.keep}")

    # --- writing ------------------------------------------------------------------------------
    def record(self, report_or_summary: EvalReport | EvalSummary, *, command: str, run_id: str | None = None,
               source: str | None = None, labels: Mapping[str, str] | None = None,
               created_at: datetime | None = None) -> RunInfo:
        """Record a run (``command``: ``run``, ``eval``, ``serve``, ``experiment``; ``source``:
        the eval set or trace source, default the report's eval set id) and prune the store to
        :attr:`keep` runs; returns the run as recorded."""
        report = report_or_summary if isinstance(report_or_summary, EvalReport) else None
        summary = report.summary if report is not None else report_or_summary
        assert isinstance(summary, EvalSummary)
        when = (created_at or (report.created_at if report is not None else None)
                or datetime.now(timezone.utc)).astimezone(timezone.utc)
        run_id = run_id or uuid.uuid4().hex[:8]
        source = source if source is not None else report.eval_set_id if report is not None else None
        names = list(summary.criterion_stats)
        rows = _Rows(names, report.results if report is not None else ())
        run_row = (run_id, when.isoformat(), command, source, json.dumps(dict(labels or {}), sort_keys=True),
                   summary.total_cases, summary.passed_cases, summary.failed_cases, summary.error_cases,
                   summary.pass_rate, summary.avg_score, report.duration_seconds if report is not None else 0.0,
                   rows.failure_count, *_flat(Percentiles.of(rows.latencies)), *_flat(Percentiles.of(rows.tokens)))

        def write(db: sqlite3.Connection) -> None:
            if db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
                raise HistoryError(f"{self.path}: a run {run_id!r} is recorded already")
            seq = db.execute(f"INSERT INTO runs (id, created_at, command, source, labels, cases, passed, failed, "
                             f"errored, pass_rate, mean_score, duration_s, failures, latency_p50, latency_p90, "
                             f"latency_p99, tokens_p50, tokens_p90, tokens_p99) VALUES ({_marks(19)})",
                             run_row).lastrowid
            db.executemany(f"INSERT INTO criteria VALUES ({_marks(15)})", [
                (seq, position, name, stats.count, stats.passed, stats.errors, stats.mean, stats.pass_rate,
                 rows.thresholds.get(name), *_flat(Percentiles.of(rows.judge_seconds[position])),
                 *_flat(Percentiles.of(rows.judge_tokens[position])))
                for position, (name, stats) in enumerate(summary.criterion_stats.items())])
            db.executemany(f"INSERT INTO cases VALUES ({_marks(8)})", [(seq, *row) for row in rows.cases])
            db.executemany(f"INSERT INTO scores VALUES ({_marks(5)})", [(seq, *row) for row in rows.scores])
            db.executemany(f"INSERT INTO failures VALUES ({_marks(9)})", [
                (seq, position, f.eval_id, f.invocation_id, f.criterion, f.score, f.reason, f.trace_id, f.span_id)
                for position, f in enumerate(rows.failures)])
            self._prune(db, self.keep)

        self._transaction(write)
        return self.run(run_id)

    def prune(self, keep: int) -> int:
        """Keep the newest ``keep`` runs (at least one); returns how many were removed."""
        if keep < 1:
            raise HistoryError(f"keep must be at least 1, got {keep}")
        return self._transaction(lambda db: self._prune(db, keep))

    @staticmethod
    def _prune(db: sqlite3.Connection, keep: int) -> int:
        old = [row[0] for row in db.execute("SELECT seq FROM runs ORDER BY seq DESC LIMIT -1 OFFSET ?", (keep,))]
        if old:
            oldest_kept = max(old) + 1
            for table in _CHILDREN:
                db.execute(f"DELETE FROM {table} WHERE run_seq < ?", (oldest_kept,))
            db.execute("DELETE FROM runs WHERE seq < ?", (oldest_kept,))
        return len(old)

    # --- reading ------------------------------------------------------------------------------
    def runs(self, limit: int | None = None, *, source: str | None = None) -> list[RunInfo]:
        """The runs, newest first (``limit`` at most; of ``source`` only, when given)."""
        where, values = ("WHERE source = ?", [source]) if source is not None else ("", [])
        return self._read(lambda db: [self._info(db, row) for row in db.execute(
            f"SELECT * FROM runs {where} ORDER BY seq DESC LIMIT ?", (*values, -1 if limit is None else limit))])

    def run(self, run_id: str) -> RunInfo:
        """The run ``run_id``; ``HistoryError`` naming the store when there is none."""
        return self._read(lambda db: self._info(db, self._row(db, run_id)))

    def latest(self, before: str | None = None, *, source: str | None = None) -> RunInfo | None:
        """The newest run (recorded before run ``before``, of ``source``, when given); ``None`` if none."""
        def read(db: sqlite3.Connection) -> RunInfo | None:
            conditions, values = [], []
            if before is not None:
                conditions.append("seq < ?")
                values.append(self._row(db, before)["seq"])
            if source is not None:
                conditions.append("source = ?")
                values.append(source)
            where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
            row = db.execute(f"SELECT * FROM runs {where} ORDER BY seq DESC LIMIT 1", values).fetchone()
            return self._info(db, row) if row is not None else None
        return self._read(read)

    def criteria(self, run_id: str) -> list[CriterionSummary]:
        """The run's per-criterion statistics, in the report's order."""
        def read(db: sqlite3.Connection) -> list[CriterionSummary]:
            seq = self._row(db, run_id)["seq"]
            return [CriterionSummary(
                name=row["name"], n=row["n"], passed=row["passed"], errors=row["errors"], mean=row["mean"],
                pass_rate=row["pass_rate"], threshold=row["threshold"],
                judge_latency=_percentiles(row, "judge_latency"), judge_tokens=_percentiles(row, "judge_tokens"))
                for row in db.execute("SELECT * FROM criteria WHERE run_seq = ? ORDER BY position", (seq,))]
        return self._read(read)

    def cases(self, run_id: str) -> list[CaseScores]:
        """The run's cases in order, each with every criterion's score and verdict."""
        def read(db: sqlite3.Connection) -> list[CaseScores]:
            seq = self._row(db, run_id)["seq"]
            names = [row[0] for row in db.execute(
                "SELECT name FROM criteria WHERE run_seq = ? ORDER BY position", (seq,))]
            scores: dict[int, dict[str, float | None]] = {}
            verdicts: dict[int, dict[str, str]] = {}
            for case, criterion, score, verdict in db.execute(
                    "SELECT case_position, criterion_position, score, verdict FROM scores WHERE run_seq = ?", (seq,)):
                scores.setdefault(case, {})[names[criterion]] = score
                verdicts.setdefault(case, {})[names[criterion]] = _VERDICTS[verdict]
            return [CaseScores(eval_id=row["eval_id"], status=row["status"], scores=scores.get(row["position"], {}),
                               verdicts=verdicts.get(row["position"], {}), trace_id=row["trace_id"],
                               span_id=row["span_id"], duration_s=row["duration_s"], tokens=row["tokens"])
                    for row in db.execute("SELECT * FROM cases WHERE run_seq = ? ORDER BY position", (seq,))]
        return self._read(read)

    def failures(self, run_id: str) -> list[FailureRecord]:
        """The run's failures kept (the first ``MAX_FAILURES``), in report order."""
        def read(db: sqlite3.Connection) -> list[FailureRecord]:
            seq = self._row(db, run_id)["seq"]
            return [FailureRecord(eval_id=row["eval_id"], invocation_id=row["invocation_id"],
                                  criterion=row["criterion"], score=row["score"], reason=row["reason"],
                                  trace_id=row["trace_id"], span_id=row["span_id"])
                    for row in db.execute("SELECT * FROM failures WHERE run_seq = ? ORDER BY position", (seq,))]
        return self._read(read)

    # --- the connection -----------------------------------------------------------------------
    def _row(self, db: sqlite3.Connection, run_id: str) -> sqlite3.Row:
        row: sqlite3.Row | None = db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise HistoryError(f"{self.path}: no run {run_id!r} in the history (agenteval history "
                               f"--history {self.path} lists them)")
        return row

    @staticmethod
    def _info(db: sqlite3.Connection, row: sqlite3.Row) -> RunInfo:
        means = dict(db.execute("SELECT name, mean FROM criteria WHERE run_seq = ? ORDER BY position",
                                (row["seq"],)).fetchall())
        return RunInfo(
            id=row["id"], created_at=datetime.fromisoformat(row["created_at"]), command=row["command"],
            source=row["source"], labels=json.loads(row["labels"]), cases=row["cases"], passed=row["passed"],
            failed=row["failed"], errored=row["errored"], pass_rate=row["pass_rate"], mean_score=row["mean_score"],
            duration_s=row["duration_s"], failures=row["failures"], latency=_percentiles(row, "latency"),
            tokens=_percentiles(row, "tokens"), criteria_means=means)

    def _read(self, read: Callable[[sqlite3.Connection], _T]) -> _T:
        if not self.path.exists():
            raise HistoryError(f"{self.path}: no run history there (runs record one unless --no-history)")
        return self._attempt(read, write=False)

    def _transaction(self, write: Callable[[sqlite3.Connection], _T]) -> _T:
        return self._attempt(write, write=True)

    def _attempt(self, work: Callable[[sqlite3.Connection], _T], *, write: bool) -> _T:
        """``work`` in one transaction, tried again (after a short random pause) while the store
        is locked by another process, ``ATTEMPTS`` times at most."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                with self._connection(write) as db:
                    db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                    try:
                        result = work(db)
                    except BaseException:
                        db.rollback()
                        raise
                    db.commit()
                    return result
            except sqlite3.OperationalError as exc:
                if _locked(exc) and attempt < ATTEMPTS:
                    time.sleep(random.uniform(0.05, 0.25) * attempt)
                    continue
                raise self._error(exc) from None
            except sqlite3.Error as exc:
                raise self._error(exc) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _error(self, exc: sqlite3.Error) -> HistoryError:
        if _locked(exc):
            return HistoryError(f"{self.path}: the run history is locked by another process ({exc})")
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
            return HistoryError(f"{self.path}: not a run history, or damaged ({exc}); left as it is: "
                                "move it away, or give another --history PATH")
        return HistoryError(f"{self.path}: cannot use the run history ({exc})")

    @contextmanager
    def _connection(self, write: bool) -> Iterator[sqlite3.Connection]:
        if write:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise HistoryError(f"{self.path}: cannot create its folder ({exc.strerror or exc})") from None
        uri = f"{self.path.resolve().as_uri()}?mode={'rwc' if write else 'rw'}"
        with closing(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)) as db:
            db.row_factory = sqlite3.Row
            version = _version(db)  # reads the header first: a file that is no database fails here, unwritten
            if write:
                if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    db.execute("PRAGMA journal_mode=WAL")
                if version is None:
                    db.execute("BEGIN IMMEDIATE")
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            db.execute(statement)
                    db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                    db.commit()
                    version = SCHEMA_VERSION
            if version is not None and version > SCHEMA_VERSION:
                raise HistoryError(f"{self.path}: run history schema version {version} is newer than this "
                                   f"agenteval reads ({SCHEMA_VERSION}): upgrade agenteval, or give another --history")
            if version is None:
                raise HistoryError(f"{self.path}: no run history there (runs record one unless --no-history)")
            yield db


def _version(db: sqlite3.Connection) -> int | None:
    """The store's schema version; ``None`` for a new, empty file. ``sqlite3.DatabaseError`` for
    a file that is not a database; ``HistoryError`` for a database that is not a history."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return None
    if "meta" not in tables:
        raise sqlite3.DatabaseError("a SQLite file with other tables")
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None or not str(row[0]).isdigit():
        raise sqlite3.DatabaseError("no schema_version in its meta table")
    return int(row[0])


def _locked(exc: sqlite3.Error) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def _flat(values: Percentiles | None) -> tuple[float | None, float | None, float | None]:
    return (values.p50, values.p90, values.p99) if values is not None else (None, None, None)


def _percentiles(row: sqlite3.Row, prefix: str) -> Percentiles | None:
    if row[f"{prefix}_p50"] is None:
        return None
    return Percentiles(row[f"{prefix}_p50"], row[f"{prefix}_p90"], row[f"{prefix}_p99"])


def _duration(case: EvalCaseResult) -> float | None:
    """The agent's time on the case, else the case's time; ``None`` when neither was measured."""
    value = case.metrics.get("duration_s") or case.duration_seconds
    return float(value) if value else None


def _tokens(case: EvalCaseResult) -> float | None:
    if "input_tokens" not in case.metrics and "output_tokens" not in case.metrics:
        return None
    return case.metrics.get("input_tokens", 0.0) + case.metrics.get("output_tokens", 0.0)


class _Rows:
    """What the history keeps of a run's ``cases`` (scores of the criteria ``names``), taken in
    one pass: each case is let go once read, so a long offline run's results, held compressed,
    are never all decoded at once."""

    def __init__(self, names: Sequence[str], cases: Iterable[EvalCaseResult]) -> None:
        index = {name: position for position, name in enumerate(names)}
        self.cases: list[tuple[Any, ...]] = []
        self.scores: list[tuple[Any, ...]] = []
        self.failures: list[FailureRecord] = []
        """The first ``MAX_FAILURES`` of them (all are counted in ``failure_count``)."""
        self.failure_count = 0
        self.latencies: list[float] = []
        self.tokens: list[float] = []
        self.thresholds: dict[str, float] = {}
        self.judge_seconds: list[list[float]] = [[] for _ in names]
        self.judge_tokens: list[list[float]] = [[] for _ in names]
        for position, case in enumerate(cases):
            duration, tokens = _duration(case), _tokens(case)
            self.cases.append((position, case.eval_id, case.status, case.trace_id, case.span_id, duration, tokens))
            if duration is not None:
                self.latencies.append(duration)
            if tokens is not None:
                self.tokens.append(tokens)
            for r in case.criterion_results:
                self.thresholds.setdefault(r.criterion, r.threshold)
                at = index.get(r.criterion)
                if at is None:
                    continue
                self.scores.append((position, at, None if r.error else r.score, 2 if r.error else int(r.passed)))
                if r.judge_usage is not None and r.judge_usage.used:
                    self.judge_seconds[at].append(float(r.judge_usage.seconds))
                    self.judge_tokens[at].append(float(r.judge_usage.input_tokens + r.judge_usage.output_tokens))
            for failure in _failures_of(case):
                self.failure_count += 1
                if len(self.failures) < MAX_FAILURES:
                    self.failures.append(failure)


def _failures_of(case: EvalCaseResult) -> Iterator[FailureRecord]:
    """The case's failed or errored results, turn by turn (the case's own when no turn has one)."""
    if case.status == "passed":
        return
    if case.error:
        yield FailureRecord(case.eval_id, None, None, None, case.error[:_REASON_CHARS], case.trace_id, case.span_id)
    found = False
    for turn in case.invocation_results:
        for r in turn.criterion_results:
            if r.error or not r.passed:
                found = True
                yield FailureRecord(case.eval_id, turn.invocation_id, r.criterion, None if r.error else r.score,
                                    (r.explanation or r.shortfall)[:_REASON_CHARS], turn.trace_id, turn.span_id)
    if not found:
        for r in case.criterion_results:
            if r.error or not r.passed:
                yield FailureRecord(case.eval_id, None, r.criterion, None if r.error else r.score,
                                    (r.explanation or r.shortfall)[:_REASON_CHARS], case.trace_id, case.span_id)


def case_scores(report: EvalReport) -> list[CaseScores]:
    """The report's cases as the history keeps them."""
    return [CaseScores(
        eval_id=case.eval_id, status=case.status,
        scores={r.criterion: None if r.error else r.score for r in case.criterion_results},
        verdicts={r.criterion: "errored" if r.error else "passed" if r.passed else "failed"
                  for r in case.criterion_results},
        trace_id=case.trace_id, span_id=case.span_id, duration_s=_duration(case), tokens=_tokens(case))
        for case in report.results]


def compare_runs(baseline: RunInfo, baseline_cases: Sequence[CaseScores], cases: Sequence[CaseScores], *,
                 resamples: int = 2000, seed: int = 0, alpha: float = 0.05) -> BaselineComparison:
    """``cases`` (run B) against ``baseline_cases`` (run A, ``baseline``), paired by ``eval_id``:
    per criterion, the mean score and the pass rate with ``experiment compare``'s paired
    statistics, and the cases whose verdict changed.

    >>> a = [CaseScores("c1", "passed", {"m": 1.0}, {"m": "passed"}), CaseScores("c2", "passed", {"m": 1.0}, {"m": "passed"})]
    >>> b = [CaseScores("c1", "failed", {"m": 0.0}, {"m": "failed"}), CaseScores("c2", "passed", {"m": 1.0}, {"m": "passed"})]
    >>> info = RunInfo("r0", datetime(2025, 1, 1, tzinfo=timezone.utc), "run", "s", {}, 2, 2, 0, 0, 1.0, 1.0, 0.0, 0,
    ...                None, None)
    >>> comparison = compare_runs(info, a, b)
    >>> comparison.criteria[0].mean.delta, [change.eval_id for change in comparison.newly_failed]
    (-0.5, ['c1'])
    """
    by_id = {case.eval_id: case for case in baseline_cases}
    current_ids = {case.eval_id for case in cases}
    pairs = [(by_id[case.eval_id], case) for case in cases if case.eval_id in by_id]
    names = list(dict.fromkeys([*(n for a, _ in pairs for n in a.scores), *(n for _, b in pairs for n in b.scores)]))
    options: dict[str, Any] = {"resamples": resamples, "seed": seed, "alpha": alpha, "unit": "cases"}
    criteria = []
    for name in names:
        means = [(sa, sb) for a, b in pairs if (sa := a.scores.get(name)) is not None
                 and (sb := b.scores.get(name)) is not None]
        verdicts = [(float(a.verdicts[name] == "passed"), float(b.verdicts[name] == "passed"))
                    for a, b in pairs if name in a.verdicts and name in b.verdicts]
        criteria.append(CriterionDelta(criterion=name, mean=metric_delta(name, means, **options),
                                       pass_rate=metric_delta(name, verdicts, **options)))
    newly_failed = [CaseChange(eval_id=b.eval_id, status_a=a.status, status_b=b.status)
                    for a, b in pairs if a.status == "passed" and b.status != "passed"]
    newly_passed = [CaseChange(eval_id=b.eval_id, status_a=a.status, status_b=b.status)
                    for a, b in pairs if b.status == "passed" and a.status != "passed"]
    return BaselineComparison(
        baseline_run_id=baseline.id, baseline_created_at=baseline.created_at.isoformat(), pairs=len(pairs),
        alpha=alpha, criteria=criteria, newly_failed=newly_failed, newly_passed=newly_passed,
        only_in_baseline=sum(1 for case in baseline_cases if case.eval_id not in current_ids),
        only_in_run=sum(1 for case in cases if case.eval_id not in by_id))



class SummarySink:
    """A sink keeping the rolling summary of the results it is given (a long-lived session's,
    such as ``agenteval serve``'s), in a few counters: no result is held."""

    def __init__(self) -> None:
        self._tally = SummaryTally()
        self._count = 0
        self._lock = threading.Lock()

    def submit(self, result: EvalCaseResult) -> None:
        """Count ``result``."""
        with self._lock:
            self._tally.add(result, self._count)
            self._count += 1

    def summary(self) -> EvalSummary:
        """The summary of the results so far."""
        with self._lock:
            return self._tally.summary()

    def force_flush(self, timeout: float | None = None) -> bool:
        """Nothing is buffered."""
        return True

    def shutdown(self, timeout: float | None = None) -> bool:
        """Nothing to release."""
        return True


class BaselineSink:
    """A sink that, when the run ends (``finish``), sets the report's ``baseline``: the run
    against ``baseline`` (its ``cases`` read from the history before the run). Put it before
    the report writers, so their files carry the comparison."""

    def __init__(self, baseline: RunInfo, cases: Sequence[CaseScores]) -> None:
        self.baseline = baseline
        self.cases = list(cases)

    def submit(self, result: EvalCaseResult) -> None:
        """Nothing to do before the end."""

    def finish(self, report: EvalReport) -> None:
        """Compare the run with the baseline, into ``report.baseline``."""
        report.baseline = compare_runs(self.baseline, self.cases, case_scores(report))

    def force_flush(self, timeout: float | None = None) -> bool:
        """Nothing is buffered."""
        return True

    def shutdown(self, timeout: float | None = None) -> bool:
        """Nothing to release."""
        return True

    @classmethod
    def resolve(cls, store: HistoryStore, baseline: str, source: str) -> BaselineSink:
        """The sink for ``--baseline``: ``last`` (the newest run of ``source`` in ``store``) or
        a run id; ``HistoryError`` naming the store and what is missing."""
        if baseline == "last":
            found = store.latest(source=source) if store.path.exists() else None
            if found is None:
                raise HistoryError(f"{store.path}: no earlier run of {source!r} in the history to compare with "
                                   "(--baseline last); run it once first, or give --baseline RUN_ID")
        else:
            if not store.path.exists():
                raise HistoryError(f"{store.path}: no run history there, so no run {baseline!r} (--baseline)")
            found = store.run(baseline)
        return cls(found, store.cases(found.id))
