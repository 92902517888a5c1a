"""``TraceBuffer``: groups a stream of spans, in any order, into whole traces.

One buffer serves every path that turns spans into traces: the live ``TrajectoryProcessor``
(SDK ``ReadableSpan``s, ``linger=0``, a time-to-live), trace files (``SpanRecord``s, read span by
span) and an OTLP receiver (batches from many services). The caller gives each span's trace id
and whether it is the trace's (local) root; the buffer never looks inside a span.

A trace is handed out as a ``BufferedTrace``:

- ``"complete"``: its root has arrived, ``linger`` further spans of other traces have passed
  without one of its own (``linger=0``: as soon as the root arrives) and, with ``settle_s``, no
  span of it has arrived for that long (spans that come late, or out of order, still join it);
- ``"expired"``: it has been open longer than ``ttl_s`` (off by default);
- ``"evicted"``: more than ``max_open_traces`` were open (rootless traces go first, each kind
  longest-quiet first);
- ``"flushed"``: by ``flush()`` at the end of a stream.

``BufferedTrace.complete`` says whether it is whole (its root arrived and it was quiet or the
stream ended); what to do with the rest is the caller's policy. Spans beyond
``max_spans_per_trace`` are dropped and counted in ``dropped_spans``. A span of a trace already
handed out opens a new entry, which is handed out like any other. Memory holds only open traces.

The buffer is not thread-safe: a caller that adds from several threads holds one lock around
every call (``TrajectoryProcessor`` does).

>>> buffer: TraceBuffer[str] = TraceBuffer(linger=1)
>>> buffer.add("t1", "child", is_root=False)
[]
>>> buffer.add("t1", "root", is_root=True)
[]
>>> [(t.trace_id, t.items, t.reason) for t in buffer.add("t2", "other", is_root=False)]
[('t1', ['child', 'root'], 'complete')]
>>> [(t.items, t.complete) for t in buffer.flush()]
[(['other'], False)]
"""

from __future__ import annotations

import logging
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

__all__ = ["BufferedTrace", "HandOutReason", "TraceBuffer"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

T = TypeVar("T")

HandOutReason = Literal["complete", "expired", "evicted", "flushed"]
"""Why a trace left the buffer."""


@dataclass(frozen=True, slots=True)
class BufferedTrace(Generic[T]):
    """The spans of one trace as handed out by a ``TraceBuffer``, in arrival order."""

    trace_id: Hashable
    items: list[T]
    reason: HandOutReason
    has_root: bool

    @property
    def complete(self) -> bool:
        """Whether the trace is whole: its root arrived and it was quiet (or the stream ended)."""
        return self.has_root and (self.reason == "complete" or self.reason == "flushed")


@dataclass(eq=False, slots=True)
class _Open(Generic[T]):
    trace_id: Hashable
    items: list[T]
    opened: float
    last: int
    has_root: bool = False
    quiet_since: float = 0.0


class TraceBuffer(Generic[T]):
    """Groups spans into traces; ``add`` and ``flush`` hand out the traces that are done.

    ``linger``: how many spans of other traces must pass after a rooted trace's latest span
    before it is complete; ``settle_s``: how long a rooted trace must have been quiet (no span of
    its own arriving) before it is complete (``None``: no wait). ``ttl_s``: hand a trace out as
    expired once it has been open that long (``None``: never); ``clock`` is the monotonic clock
    both are measured with.
    ``max_open_traces`` and ``max_spans_per_trace`` (``None``: unbounded) bound memory.
    """

    def __init__(
        self,
        *,
        linger: int = 0,
        ttl_s: float | None = None,
        settle_s: float | None = None,
        max_open_traces: int = 10_000,
        max_spans_per_trace: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if linger < 0 or max_open_traces < 1 or (max_spans_per_trace is not None and max_spans_per_trace < 1):
            raise ValueError("linger must be >= 0, max_open_traces and max_spans_per_trace >= 1")
        if ttl_s is not None and ttl_s <= 0:
            raise ValueError(f"ttl_s must be positive or None, got {ttl_s!r}")
        if settle_s is not None and settle_s < 0:
            raise ValueError(f"settle_s must be zero or more, or None, got {settle_s!r}")
        self.linger = linger
        self.ttl_s = ttl_s
        self.max_open_traces = max_open_traces
        self.max_spans_per_trace = max_spans_per_trace
        self._max_spans = sys.maxsize if max_spans_per_trace is None else max_spans_per_trace
        self._clock = clock
        self._ttl = 0.0 if ttl_s is None else ttl_s
        self.settle_s = settle_s
        self._settle = settle_s or 0.0
        self._timed = ttl_s is not None or self._settle > 0
        # Rooted and rootless traces, each longest-quiet first; with a TTL also all, oldest first.
        self._rooted: OrderedDict[Hashable, _Open[T]] = OrderedDict()
        self._rootless: OrderedDict[Hashable, _Open[T]] = OrderedDict()
        self._by_age: OrderedDict[Hashable, _Open[T]] | None = None if ttl_s is None else OrderedDict()
        self._seen = 0
        self.dropped_spans = 0
        """Spans dropped because their trace already held ``max_spans_per_trace``."""

    @property
    def open_traces(self) -> int:
        """How many traces are being held."""
        return len(self._rooted) + len(self._rootless)

    def add(self, trace_id: Hashable, item: T, *, is_root: bool, now: float | None = None) -> list[BufferedTrace[T]]:
        """Take one span of ``trace_id``; returns the traces now done (usually none).

        ``now``: when the span arrived, on the buffer's clock (default: the clock's reading now);
        a caller that takes spans in later than they arrive passes the time they did.
        """
        done: list[BufferedTrace[T]] = []
        by_age = self._by_age
        if not self._timed:
            now = 0.0
        elif now is None:
            now = self._clock()
        if by_age and next(iter(by_age.values())).opened <= now - self._ttl:
            self._expire(done, now)
        self._seen = seen = self._seen + 1
        rooted = self._rooted
        trace = rooted.get(trace_id)
        if trace is not None:
            rooted.move_to_end(trace_id)
        else:
            rootless = self._rootless
            trace = rootless.get(trace_id)
            if trace is None:
                trace = _Open(trace_id, [], now, seen, is_root, now)
                (rooted if is_root else rootless)[trace_id] = trace
                if by_age is not None:
                    by_age[trace_id] = trace
            elif is_root:
                del rootless[trace_id]
                rooted[trace_id] = trace
                trace.has_root = True
            else:
                rootless.move_to_end(trace_id)
        trace.last = seen
        trace.quiet_since = now
        if len(trace.items) < self._max_spans:
            trace.items.append(item)
        else:
            self.dropped_spans += 1
        self._complete(done, seen, now)
        if len(rooted) + len(self._rootless) > self.max_open_traces:
            self._evict(done)
        return done

    def expire(self) -> list[BufferedTrace[T]]:
        """Hand out the rooted traces quiet for ``settle_s`` and the traces open longer than
        ``ttl_s`` (``add`` does this too); call it from a timer when spans may stop arriving."""
        done: list[BufferedTrace[T]] = []
        if self._timed:
            now = self._clock()
            self._complete(done, self._seen, now)
            if self._by_age:
                self._expire(done, now)
        return done

    def _complete(self, done: list[BufferedTrace[T]], seen: int, now: float) -> None:
        """Hand out the rooted traces that are done (longest-quiet first)."""
        rooted, settled = self._rooted, now - self._settle
        while rooted:
            oldest = next(iter(rooted.values()))
            if seen - oldest.last < self.linger or oldest.quiet_since > settled:
                return
            done.append(self._hand_out(oldest, "complete"))

    def flush(self) -> list[BufferedTrace[T]]:
        """Hand out every open trace (at the end of a stream): rooted ones first, longest-quiet
        first."""
        done = [
            BufferedTrace(t.trace_id, t.items, "flushed", t.has_root)
            for t in (*self._rooted.values(), *self._rootless.values())
        ]
        self._rooted.clear()
        self._rootless.clear()
        if self._by_age is not None:
            self._by_age.clear()
        return done

    def settle(self) -> list[BufferedTrace[T]]:
        """Hand out every rooted trace as complete now, without waiting for ``settle_s`` (no more
        spans will come: the stream is stopping)."""
        return [self._hand_out(trace, "complete") for trace in list(self._rooted.values())]

    def items_of(self, trace_id: Hashable) -> list[T]:
        """The spans held so far for ``trace_id`` (a copy; none when it is not open)."""
        trace = self._rootless.get(trace_id) or self._rooted.get(trace_id)
        return [] if trace is None else list(trace.items)

    def _hand_out(self, trace: _Open[T], reason: HandOutReason) -> BufferedTrace[T]:
        del (self._rooted if trace.has_root else self._rootless)[trace.trace_id]
        if self._by_age is not None:
            del self._by_age[trace.trace_id]
        return BufferedTrace(trace.trace_id, trace.items, reason, trace.has_root)

    def _expire(self, done: list[BufferedTrace[T]], now: float) -> None:
        by_age = self._by_age
        if by_age is None:
            return
        deadline = now - self._ttl
        while by_age:
            oldest = next(iter(by_age.values()))
            if oldest.opened > deadline:
                return
            done.append(self._hand_out(oldest, "expired"))

    def _evict(self, done: list[BufferedTrace[T]]) -> None:
        while len(self._rooted) + len(self._rootless) > self.max_open_traces:
            quiet = self._rootless or self._rooted
            done.append(self._hand_out(next(iter(quiet.values())), "evicted"))
