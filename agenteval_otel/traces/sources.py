"""Where the traces of an offline run come from: one ``TraceSource`` interface, a kind per place.

A source gives the invocations it holds, one ``Trajectory`` each, streamed, so that an offline
run matches each to its case as it arrives (the turns of a conversation come one by one; the
run joins them by conversation id). The kinds:

- :class:`TraceFileSource`: trace files (OTLP/JSON, OTLP JSON lines, OTLP protobuf, Jaeger JSON),
  with the OTLP/JSON log files whose records carry their content;
- :class:`SpanSource`: spans you already have (``SpanRecord`` objects), with their log records;
- :class:`TrajectorySource`: trajectories already assembled;
- :class:`JaegerSource`: a query of the Jaeger query service.

Log records join spans, so log files are taken by the kinds that read spans (``with_logs``);
the others refuse them with a ``ConfigError`` naming ``logs=``. Your own source subclasses
:class:`TraceSource` and gives ``trajectories``. :func:`trace_source` turns the forms
``evaluate_traces`` takes besides a source (a path, paths, spans, trajectories) into one.

>>> from agenteval_otel.trajectory import Trajectory
>>> source = trace_source([Trajectory(trace_id="7e57", span_id="01", final_response="hi")])
>>> type(source).__name__, [t.final_response for t in source.trajectories()]
('TrajectorySource', ['hi'])
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar, Union

from agenteval_otel.errors import ConfigError
from agenteval_otel.traces.files import read_logs, spans_with_logs
from agenteval_otel.trajectory.assemble import iter_trajectories
from agenteval_otel.trajectory.conventions import Reader
from agenteval_otel.trajectory.logs import LogRecord, attach_logs
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.trajectory import Trajectory

if TYPE_CHECKING:
    from agenteval_otel.traces.jaeger_client import JaegerClient

__all__ = [
    "JaegerSource",
    "ReadProgress",
    "SpanSource",
    "TraceFileSource",
    "TraceSource",
    "TraceSourceLike",
    "TrajectorySource",
    "trace_source",
]

PathLike = Union[str, "os.PathLike[str]"]
"""A file's path: a string or a ``pathlib.Path``."""

_T = TypeVar("_T")


@dataclass(slots=True)
class ReadProgress:
    """How far a source has been read: ``done`` of ``total`` ``unit`` (``"bytes"`` of trace
    files, ``"traces"`` a backend returned); ``total`` is ``None`` while the size is not known.

    >>> progress = ReadProgress("traces", total=200)
    >>> progress.done += 50
    >>> progress.fraction
    0.25
    """

    unit: str = "traces"
    total: int | None = None
    done: int = 0

    @property
    def fraction(self) -> float | None:
        """The share read so far (``None`` while the total is not known)."""
        if not self.total:
            return None
        return min(1.0, self.done / self.total)


class TraceSource(ABC):
    """Where an offline run's traces come from: :meth:`trajectories` gives each invocation the
    source holds, and :attr:`progress` says how far it has read. Subclass it for a source of
    your own (a trace store, a queue, ...)."""

    @property
    def progress(self) -> ReadProgress:
        """How far :meth:`trajectories` has read: a source that learns the size of its work sets
        ``total`` (and ``unit``) and advances ``done`` as it reads; the rest leave it unknown."""
        found: ReadProgress | None = self.__dict__.get("_read_progress")
        if found is None:
            found = self.__dict__["_read_progress"] = ReadProgress()
        return found

    @abstractmethod
    def trajectories(self, readers: Sequence[Reader] | None = None) -> Iterator[Trajectory]:
        """Each invocation the source holds as one trajectory, streamed (a conversation's turns
        one by one). ``readers``: the convention readers that read spans (default: the
        installed ones, then ours); a source of trajectories already assembled ignores them."""

    def with_logs(self, logs: Sequence[PathLike]) -> TraceSource:
        """This source with the records of the OTLP/JSON log files ``logs`` joined to its spans
        (the GenAI events that carry messages). By default a ``ConfigError`` naming ``logs=``:
        a source that gives no spans has nothing for log records to join."""
        raise ConfigError(f"logs=: a {type(self).__name__} gives no spans for the records of log files to join; "
                          "give the trace files (TraceFileSource) or spans (SpanSource) with their logs instead")


class TraceFileSource(TraceSource):
    """Trace files, read span by span and assembled trace by trace: ``paths`` (one path or
    several; OTLP/JSON, OTLP JSON lines, OTLP protobuf, Jaeger JSON, picked by content), and
    ``logs``, OTLP/JSON log files whose records are joined to their spans (log files among
    ``paths`` are recognised too). The files are opened as :meth:`trajectories` is read; one
    that cannot be read raises ``TraceReadError`` naming it."""

    def __init__(self, paths: PathLike | Sequence[PathLike], logs: Sequence[PathLike] = ()) -> None:
        self.paths: tuple[PathLike, ...] = (paths,) if isinstance(paths, (str, os.PathLike)) else tuple(paths)
        self.logs: tuple[PathLike, ...] = tuple(logs)

    def trajectories(self, readers: Sequence[Reader] | None = None) -> Iterator[Trajectory]:
        """Each invocation in the files (see :meth:`TraceSource.trajectories`); :attr:`progress`
        counts the bytes of the trace files read."""
        files, spans = spans_with_logs(self.paths, self.logs)
        progress = self.progress
        progress.unit, progress.done = "bytes", 0
        progress.total = sum(_size(file.path) for file in files)

        def advance(size: int) -> None:
            progress.done += size

        for file in files:
            file.on_read = advance
        yield from iter_trajectories(spans, group="invocation", readers=readers)

    def with_logs(self, logs: Sequence[PathLike]) -> TraceFileSource:
        """These files with the log files ``logs`` too."""
        return TraceFileSource(self.paths, [*self.logs, *logs])

    def __repr__(self) -> str:
        return f"TraceFileSource({[os.fspath(p) for p in self.paths]!r}, logs={[os.fspath(p) for p in self.logs]!r})"


def _size(path: PathLike) -> int:
    try:
        return os.stat(path).st_size
    except OSError:  # its reading says why
        return 0


class SpanSource(TraceSource):
    """Spans you already have (``SpanRecord`` objects from any reader or a ``JaegerClient``), with
    the log records (``logs``) that carry their content joined to them; assembled trace by
    trace as they stream. An iterator of spans is read once."""

    def __init__(self, spans: Iterable[SpanRecord], logs: Iterable[LogRecord] = ()) -> None:
        self.spans = spans
        self.logs: tuple[LogRecord, ...] = tuple(logs)

    def trajectories(self, readers: Sequence[Reader] | None = None) -> Iterator[Trajectory]:
        """Each invocation in the spans (see :meth:`TraceSource.trajectories`)."""
        spans = attach_logs(self.spans, self.logs) if self.logs else self.spans
        yield from iter_trajectories(spans, group="invocation", readers=readers)

    def with_logs(self, logs: Sequence[PathLike]) -> SpanSource:
        """These spans with the records of the log files ``logs`` too (read now;
        ``TraceReadError`` naming a file that cannot be read)."""
        return SpanSource(self.spans, [*self.logs, *read_logs(logs)])

    def __repr__(self) -> str:
        return f"SpanSource({type(self.spans).__name__}, logs={len(self.logs)} record(s))"


class TrajectorySource(TraceSource):
    """Trajectories already assembled (e.g. by ``read_trajectories`` or a
    ``TrajectoryProcessor``), given as they are. An iterator of them is read once. They take no
    log files: log records join spans, and these spans are read already (pass the log files
    where they are read, e.g. ``read_trajectories(paths, logs=...)``)."""

    def __init__(self, trajectories: Iterable[Trajectory]) -> None:
        self._trajectories = trajectories

    def trajectories(self, readers: Sequence[Reader] | None = None) -> Iterator[Trajectory]:
        """The trajectories, as given (``readers`` do not apply: they are read already)."""
        yield from self._trajectories

    def with_logs(self, logs: Sequence[PathLike]) -> TraceSource:
        """``ConfigError``: log records cannot join trajectories already assembled."""
        raise ConfigError("logs=: the source holds trajectories already assembled, which log records can no longer "
                          "join; give the log files where the spans are read (trace files with logs=, "
                          "SpanSource(spans, logs), read_trajectories(paths, logs=...))")

    def __repr__(self) -> str:
        return f"TrajectorySource({type(self._trajectories).__name__})"


class JaegerSource(TraceSource):
    """The traces of ``service`` that the Jaeger query service behind ``client`` finds, queried
    when :meth:`trajectories` is read (the arguments are those of ``JaegerClient.find_traces``:
    ``operation``, ``tags``, ``start``, ``end`` or ``lookback``, at most ``limit`` traces).
    Jaeger's query API returns spans, not log records, so a Jaeger query takes no log files."""

    def __init__(
        self,
        client: JaegerClient,
        service: str,
        *,
        operation: str | None = None,
        tags: Mapping[str, Any] | None = None,
        start: datetime | int | None = None,
        end: datetime | int | None = None,
        lookback: timedelta | None = None,
        limit: int = 20,
    ) -> None:
        self.client = client
        self.service = service
        self.operation, self.tags, self.start, self.end = operation, tags, start, end
        self.lookback, self.limit = lookback, limit

    def spans(self) -> list[SpanRecord]:
        """The spans the query finds (``TraceReadError`` naming the URL when it fails)."""
        return self.client.find_traces(self.service, operation=self.operation, tags=self.tags, start=self.start,
                                       end=self.end, lookback=self.lookback, limit=self.limit)

    def trajectories(self, readers: Sequence[Reader] | None = None) -> Iterator[Trajectory]:
        """Each invocation in the traces found (see :meth:`TraceSource.trajectories`);
        :attr:`progress` counts the traces."""
        spans = self.spans()
        progress = self.progress
        progress.unit, progress.done = "traces", 0
        progress.total = len({span.trace_id for span in spans})
        seen: set[str] = set()
        for trajectory in iter_trajectories(spans, group="invocation", readers=readers):
            if trajectory.trace_id is not None and trajectory.trace_id not in seen:
                seen.add(trajectory.trace_id)
                progress.done = len(seen)
            yield trajectory

    def with_logs(self, logs: Sequence[PathLike]) -> TraceSource:
        """``ConfigError``: a Jaeger query gives spans only, and takes no log files."""
        raise ConfigError(f"logs=: {self!r} reads spans from Jaeger's query API, which returns no log records, and "
                          "takes no log files; to join log records, read the spans yourself and give "
                          "SpanSource(spans, logs)")

    def __repr__(self) -> str:
        return f"JaegerSource(service={self.service!r})"


TraceSourceLike = Union[TraceSource, PathLike, Sequence[PathLike], Iterable[Trajectory], Iterable[SpanRecord]]
"""What ``evaluate_traces`` takes as its source: a :class:`TraceSource`, or one of the forms
:func:`trace_source` turns into one."""


def trace_source(source: TraceSourceLike, logs: Sequence[PathLike] = ()) -> TraceSource:
    """``source`` as a :class:`TraceSource`, with the log files ``logs`` joined to its spans
    (:meth:`TraceSource.with_logs`: a ``ConfigError`` naming ``logs=`` for a source that takes
    none). A source stays as it is; a path or a sequence of paths is a :class:`TraceFileSource`
    (so is an empty sequence); an iterable of ``SpanRecord`` objects a :class:`SpanSource`; an
    iterable of ``Trajectory`` objects a :class:`TrajectorySource`. The kind is the first item's
    (the iterable is read from there on, not again); an item of another kind raises
    ``TypeError`` when it is reached."""
    found = _as_source(source)
    return found.with_logs(logs) if logs else found


def _as_source(source: TraceSourceLike) -> TraceSource:
    if isinstance(source, TraceSource):
        return source
    if isinstance(source, (str, os.PathLike)):
        return TraceFileSource(source)
    items: Iterator[object] = iter(source)
    first = next(items, None)
    if first is None:
        return TraceFileSource(())
    if isinstance(first, Trajectory):
        return TrajectorySource(_all_of(Trajectory, first, items))
    if isinstance(first, SpanRecord):
        return SpanSource(_all_of(SpanRecord, first, items))
    if isinstance(first, (str, os.PathLike)):
        paths: list[PathLike] = [first]
        for item in items:
            if not isinstance(item, (str, os.PathLike)):
                raise TypeError(f"source: trace file paths mixed with a {type(item).__name__}")
            paths.append(item)
        return TraceFileSource(paths)
    raise TypeError(f"source: expected a TraceSource, trace file paths, SpanRecords or Trajectory objects, "
                    f"got an iterable of {type(first).__name__}")


def _all_of(kind: type[_T], first: _T, rest: Iterator[object]) -> Iterator[_T]:
    """``first``, then each of ``rest``, checked to be a ``kind`` as it is reached."""
    yield first
    for item in rest:
        if not isinstance(item, kind):
            raise TypeError(f"source: {kind.__name__} objects mixed with a {type(item).__name__}")
        yield item
