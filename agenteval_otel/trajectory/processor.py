"""``TrajectoryProcessor``: a span processor that hands finished trajectories to callbacks.

The app thread does no more than a ``BatchSpanProcessor`` does: ``on_end`` appends the finished
span to a bounded intake queue (a lock-free ``deque`` append) and wakes the intake thread when it
sleeps. The intake thread reads nothing but what it needs of each span (its trace, its parent, the
evaluation marker), buffers the spans of each trace in a ``TraceBuffer`` (``linger=0``) and, when
the trace's local root span ends (a span with no parent, or a remote one), queues the trace for the
delivery thread, which converts its spans, assembles its trajectories and calls every callback with
each. Both threads give the GIL up between chunks of spans and between traces, so the app keeps
running while they work; a slow callback never holds up the buffering.

Everything is bounded: spans waiting for the intake thread, open traces, spans per trace, queued
traces, and a time-to-live for traces whose root never ends (counted from when their first span
ended). What does not fit is dropped and counted (``dropped_spans``, ``dropped_traces``), with one
warning per kind: a trace the buffer hands out incomplete (expired, or the longest-quiet rootless
one when too many are open) is dropped whole. Nothing raises into the app: a failing callback is
logged and counted (``callback_errors``). Our own evaluation spans are ignored. A span that ends
after its trace's local root has been handed over opens a new buffer entry that expires. The
counters, ``force_flush`` and ``shutdown`` first take in the spans already ended.

``feed(records)`` takes ``SpanRecord``s that ended elsewhere (an OTLP receiver's batches) into the
same intake, buffer and delivery; it refuses a batch, without blocking, when the intake is full.
``feed_logs(logs)`` takes the log records that carry such spans' content (the GenAI events): each
is joined to its span when its trace is assembled; a record whose trace was assembled before it
came is dropped and counted (``late_logs``), and at most ``max_pending_logs`` wait.

>>> from opentelemetry.sdk.trace import TracerProvider
>>> provider = TracerProvider()
>>> provider.add_span_processor(TrajectoryProcessor(lambda t: print(t.tool_calls())))
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from typing import Literal

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from agenteval_otel.semconv import EVALUATION_MARKER
from agenteval_otel.trajectory.assemble import trajectories_from_trace
from agenteval_otel.trajectory.buffer import BufferedTrace, TraceBuffer
from agenteval_otel.trajectory.conventions import Reader
from agenteval_otel.trajectory.logs import LogRecord, attach_logs
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["TraceDoneCallback", "TrajectoryCallback", "TrajectoryProcessor"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

TrajectoryCallback = Callable[[Trajectory], object]
"""Called (on the processor's delivery thread) with each finished trajectory; what it returns is ignored."""
TraceDoneCallback = Callable[[str, bool], object]
"""Called with a fed trace's hex id once the processor is done with its spans, and whether they
were delivered (``False``: dropped)."""

DEFAULT_TIMEOUT_MILLIS = 30000
_CHUNK = 32
"""Spans the intake thread buffers before it gives the GIL up."""
_COUNTED = " (further drops are counted, not logged)"


def _deadline(timeout_millis: int | None) -> float:
    """The monotonic time ``timeout_millis`` from now (``None``: the default)."""
    return time.monotonic() + (DEFAULT_TIMEOUT_MILLIS if timeout_millis is None else timeout_millis) / 1000


class TrajectoryProcessor(SpanProcessor):
    """Turns each finished trace into trajectories and passes them to ``callbacks``.

    ``group`` is ``"invocation"`` (one trajectory per agent invocation) or ``"trace"``.
    ``max_pending_spans`` bounds the spans ended but not yet taken in by the intake thread,
    ``max_pending_logs`` the fed log records waiting for their trace;
    ``max_open_traces``, ``max_spans_per_trace`` and ``max_queued_traces`` bound memory;
    ``trace_ttl_s`` drops a trace whose local root has not ended after that many seconds, and
    when more than ``max_open_traces`` are open the longest-quiet one is dropped.
    Trajectories with nothing of an agent run in them (no steps, input or response) are not
    passed on unless ``skip_empty=False`` (a live evaluation waiting for each of its traces, even
    one recorded with content capture off, passes that). ``clock`` is the monotonic clock used for
    the time-to-live; ``readers`` the convention readers (default: the installed ones, then ours).

    For fed spans (:meth:`feed`), which may arrive in any order: a trace is complete once a root
    (a span with no parent, or a remote one) has arrived **and** no span of it has arrived for
    ``settle_s`` seconds; a trace whose root never comes is assembled at ``trace_ttl_s`` from the
    spans that did (a span whose parent is absent roots its invocation); spans of a trace already
    assembled are dropped and counted (``late_spans``). ``on_trace_done`` is called with a fed
    trace's hex id once the processor is done with it, and whether it was delivered or dropped.
    """

    def __init__(
        self,
        *callbacks: TrajectoryCallback,
        group: Literal["invocation", "trace"] = "invocation",
        max_open_traces: int = 2048,
        max_spans_per_trace: int = 10_000,
        max_queued_traces: int = 512,
        max_pending_spans: int = 65_536,
        max_pending_logs: int = 65_536,
        trace_ttl_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        skip_empty: bool = True,
        readers: Sequence[Reader] | None = None,
        settle_s: float = 0.0,
        on_trace_done: TraceDoneCallback | None = None,
    ) -> None:
        if group not in ("invocation", "trace"):
            raise ValueError(f"group must be 'invocation' or 'trace', got {group!r}")
        if min(max_open_traces, max_spans_per_trace, max_queued_traces, max_pending_spans) < 1 or trace_ttl_s <= 0:
            raise ValueError("bounds must be at least 1 and trace_ttl_s positive")
        if settle_s < 0:
            raise ValueError(f"settle_s must be zero or more, got {settle_s!r}")
        self._settle = settle_s
        self._trace_done = on_trace_done
        self.late_spans = 0
        self._callbacks: tuple[TrajectoryCallback, ...] = tuple(callbacks)
        self._readers = None if readers is None else tuple(readers)
        self._split = group == "invocation"
        self._skip_empty = skip_empty
        self._ttl = trace_ttl_s
        # the app thread's side: a deque (append and popleft are atomic) and a wake-up
        self._intake: deque[tuple[ReadableSpan | SpanRecord, float]] = deque()
        self._clock = clock
        self._max_pending = max_pending_spans
        self._wake = threading.Event()
        self._idle = False  # the intake thread waits for ``_wake``: the next span sets it
        self._refused_lock = threading.Lock()
        self._refused = 0
        self._fed_roots = 0  # roots fed and not yet taken in: traces on their way to the queue
        # the workers' side, under ``_lock``
        self._lock = threading.Lock()
        self._buffer: TraceBuffer[ReadableSpan | SpanRecord] = TraceBuffer(
            linger=0,
            ttl_s=trace_ttl_s,
            settle_s=settle_s,
            max_open_traces=max_open_traces,
            max_spans_per_trace=max_spans_per_trace,
            clock=clock,
        )
        self._queue: deque[list[ReadableSpan | SpanRecord]] = deque()
        self._max_queued = max_queued_traces
        self._work = threading.Condition(self._lock)
        self._busy = 0
        self._closed = False
        self._warned: set[str] = set()
        self._dropped_spans = 0
        self._logs: dict[str, list[LogRecord]] = {}  # by hex trace id, under ``_logs_lock``
        self._logs_lock = threading.Lock()
        self._pending_logs = 0
        self._max_pending_logs = max_pending_logs
        self._delivered_traces: OrderedDict[str, None] = OrderedDict()  # recent fed traces: late logs
        self.late_logs = 0
        self.dropped_logs = 0
        self._dropped_traces = 0
        self.callback_errors = 0
        self.delivered = 0
        self._intake_thread = threading.Thread(target=self._take_in, name="TrajectoryProcessor-intake", daemon=True)
        self._worker = threading.Thread(target=self._run, name="TrajectoryProcessor", daemon=True)
        self._intake_thread.start()
        self._worker.start()

    @property
    def dropped_spans(self) -> int:
        """Spans dropped: of dropped traces, beyond ``max_spans_per_trace`` or ``max_pending_spans``,
        or after shutdown (spans already ended are taken in first)."""
        with self._lock:
            self._catch_up()
            return self._dropped_spans + self._buffer.dropped_spans + self._refused

    @property
    def dropped_traces(self) -> int:
        """Traces dropped whole: expired, evicted, refused by a full queue, or open at shutdown."""
        with self._lock:
            self._catch_up()
            return self._dropped_traces

    def add_callback(self, callback: TrajectoryCallback) -> None:
        """Also call ``callback`` with every later trajectory."""
        self._callbacks = (*self._callbacks, callback)

    # --- the app thread ------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Queue ``span`` for the intake thread; a lock-free append. Never raises."""
        try:
            intake = self._intake
            if self._closed or len(intake) >= self._max_pending or not isinstance(span, ReadableSpan):
                self._refuse(span)
                return
            intake.append((span, self._clock()))  # the time it ended counts toward the time-to-live
            if self._idle:
                self._idle = False
                self._wake.set()
        except Exception:  # noqa: BLE001 - a processor must never raise into the app
            self._warn_once("on_end", "TrajectoryProcessor.on_end failed; the span is dropped", exc_info=True)

    @property
    def waiting_traces(self) -> int:
        """Fed traces whose root has come and that are not assembled yet (back-pressure reads it)."""
        return len(self._queue) + self._fed_roots

    def feed(self, records: Iterable[SpanRecord]) -> bool:
        """Take spans that ended elsewhere (decoded by an OTLP receiver), assembled like the spans
        ended here: a trace is complete when its root (a span with no parent) arrives. Within a
        batch, roots are taken last, so a trace whose spans come in one batch is whole whatever
        their order.

        Thread-safe and never blocks: the batch is appended for the intake thread. ``False`` when
        nothing was taken (after shutdown, or when the batch would push the spans waiting past
        ``max_pending_spans`` or the traces waiting to be assembled past ``max_queued_traces``): its
        spans are counted in ``dropped_spans`` and the caller may offer them again later (back-pressure,
        where a full queue would drop traces). Never raises."""
        try:
            batch = list(records)
            if not all(type(record) is SpanRecord for record in batch):
                raise TypeError("feed takes SpanRecords")
            intake = self._intake
            roots = sum(1 for record in batch if record.is_local_root)
            with self._refused_lock:  # traces waiting to be assembled: queued, and on their way
                waiting = len(self._queue) + self._fed_roots
                taken = (not self._closed and len(intake) + len(batch) <= self._max_pending
                         and (waiting == 0 or waiting + roots <= self._max_queued))
                if taken:
                    self._fed_roots += roots
                else:
                    self._refused += len(batch)
            if not taken:
                if self._closed:
                    self._warn_once("closed", "spans fed after TrajectoryProcessor.shutdown were dropped" + _COUNTED)
                else:
                    self._warn_once(
                        "pending",
                        f"more than {self._max_pending} spans wait to be buffered, or {self._max_queued} traces "
                        "to be assembled; batches are refused" + _COUNTED,
                    )
                return False
            batch.sort(key=attrgetter("is_local_root"))  # stable: the roots last, each kind in its order
            ended = self._clock()
            intake.extend([(record, ended) for record in batch])  # one C call: batches never interleave
            if self._idle:
                self._idle = False
                self._wake.set()
            return True
        except Exception:  # noqa: BLE001 - never raise into the caller
            self._warn_once("feed", "TrajectoryProcessor.feed failed; the batch is dropped", exc_info=True)
            return False

    def feed_logs(self, logs: Iterable[LogRecord]) -> bool:
        """Take log records decoded by a receiver: each is joined to its span (as a span event,
        see :func:`~agenteval_otel.trajectory.logs.attach_logs`) when its fed trace is assembled.

        Thread-safe and never blocks. Records of a trace already assembled are dropped and counted
        in ``late_logs``; records with no span are ignored; past ``max_pending_logs`` waiting, the
        records of the longest-waiting traces are dropped and counted in ``dropped_logs``.
        ``False`` after shutdown. Never raises."""
        try:
            batch = [log for log in logs if isinstance(log, LogRecord) and log.trace_id and log.span_id]
            with self._logs_lock:
                if self._closed:
                    self.dropped_logs += len(batch)
                    return False
                for log in batch:
                    trace_id = str(log.trace_id)
                    if trace_id in self._delivered_traces:
                        self.late_logs += 1
                        continue
                    self._logs.setdefault(trace_id, []).append(log)
                    self._pending_logs += 1
                while self._pending_logs > self._max_pending_logs:
                    dropped = self._logs.pop(next(iter(self._logs)))
                    self._pending_logs -= len(dropped)
                    self.dropped_logs += len(dropped)
                    self._warn_once("logs", f"more than {self._max_pending_logs} log records wait for their "
                                            "traces; the oldest are dropped" + _COUNTED)
            return True
        except Exception:  # noqa: BLE001 - never raise into the caller
            self._warn_once("feed_logs", "TrajectoryProcessor.feed_logs failed; the batch is dropped", exc_info=True)
            return False

    def _join_logs(self, records: list[SpanRecord]) -> list[SpanRecord]:
        """``records`` (one fed trace) with the fed log records of their trace joined to their
        spans; the trace is remembered as assembled, so that later records of it count as late."""
        trace_id = records[0].trace_id
        with self._logs_lock:
            found = self._logs.pop(trace_id, [])
            self._pending_logs -= len(found)
            self._delivered_traces[trace_id] = None
            while len(self._delivered_traces) > self._max_pending_logs:
                self._delivered_traces.popitem(last=False)
        return list(attach_logs(records, found)) if found else records

    def _refuse(self, span: ReadableSpan) -> None:
        """The slow path of ``on_end``: a span after shutdown, a full intake, or no span at all.

        Counted under a lock of its own, which no worker holds: the app never waits for them."""
        if not isinstance(span, ReadableSpan):
            raise TypeError(f"expected a finished SDK span, got {type(span).__name__}")
        with self._refused_lock:
            self._refused += 1
        if self._closed:
            self._warn_once("closed", "a span ended after TrajectoryProcessor.shutdown was dropped" + _COUNTED)
        else:
            self._warn_once(
                "pending", f"more than {self._max_pending} spans wait to be buffered; spans are dropped" + _COUNTED
            )

    # --- the intake thread ---------------------------------------------------------------

    def _take_in(self) -> None:
        intake, wake = self._intake, self._wake
        poll = min(self._ttl, 1.0, self._settle / 4 if self._settle else 1.0)
        while True:
            with self._lock:
                closed = self._closed
                self._catch_up(_CHUNK)
                for trace in self._buffer.expire():
                    self._hand_over(trace)
            if intake:
                time.sleep(0)  # give the GIL to the app between chunks
                continue
            if closed:
                return
            wake.clear()
            self._idle = True
            if intake:  # a span arrived before the app could see the flag: no wake-up lost
                self._idle = False
                continue
            wake.wait(poll)
            self._idle = False

    def _catch_up(self, limit: int | None = None) -> None:
        """Buffer the spans waiting in the intake (at most ``limit``); under ``_lock``."""
        intake, buffer = self._intake, self._buffer
        if self._closed:  # ended as shutdown began: dropped like any later span
            while intake:
                span, _ = intake.popleft()
                self._drop_spans(1, "closed", "a span ended after TrajectoryProcessor.shutdown was dropped")
                if isinstance(span, SpanRecord):
                    self._done(span.trace_id, delivered=False)
            return
        count = len(intake) if limit is None else min(limit, len(intake))
        for _ in range(count):
            span, ended = intake.popleft()
            try:
                attributes = span.attributes
                if attributes and attributes.get(EVALUATION_MARKER):
                    continue
                refused = buffer.dropped_spans
                if isinstance(span, SpanRecord):  # fed: keyed by its hex trace id
                    is_root = span.is_local_root
                    if is_root:
                        with self._refused_lock:
                            self._fed_roots -= 1
                    if span.trace_id in self._delivered_traces:
                        self._late_span(span.trace_id)
                        continue
                    handed_out = buffer.add(span.trace_id, span, is_root=is_root, now=ended)
                else:
                    context = span.get_span_context()
                    if context is None:
                        continue
                    parent = span.parent
                    handed_out = buffer.add(
                        context.trace_id, span, is_root=parent is None or parent.is_remote, now=ended
                    )
            except Exception:  # noqa: BLE001 - one broken span must not stop the intake
                self._warn_once("intake", "TrajectoryProcessor: could not buffer a span; dropped", exc_info=True)
                self._dropped_spans += 1
                continue
            if buffer.dropped_spans != refused:
                self._warn_once(
                    "spans",
                    f"a trace has more than {buffer.max_spans_per_trace} spans; spans are dropped" + _COUNTED,
                )
            for trace in handed_out:
                self._hand_over(trace)

    def _late_span(self, trace_id: str) -> None:
        """A fed span of a trace already assembled: dropped, counted."""
        self.late_spans += 1
        self._dropped_spans += 1
        self._warn_once("late", "a span arrived after its trace was assembled (raise settle_s?); dropped" + _COUNTED)
        self._done(trace_id, delivered=False)

    def _done(self, trace_id: object, *, delivered: bool) -> None:
        if self._trace_done is not None and isinstance(trace_id, str):
            try:
                self._trace_done(trace_id, delivered)
            except Exception:  # noqa: BLE001 - the consumer's failure must not stop the intake
                self._warn_once("done", "TrajectoryProcessor: the on_trace_done callback raised", exc_info=True)

    def _hand_over(self, trace: BufferedTrace[ReadableSpan | SpanRecord]) -> None:
        """Queue a complete trace, or a fed one at its time-to-live; drop an incomplete one."""
        if trace.complete or (trace.reason == "expired" and isinstance(trace.trace_id, str)):
            self._enqueue(trace.items, trace.trace_id)
        elif trace.reason == "expired":
            self._drop_trace(
                len(trace.items), "ttl", f"a trace's root did not end within {self._ttl}s; dropped"
            )
        else:
            self._drop_trace(
                len(trace.items),
                "open",
                f"more than {self._buffer.max_open_traces} open traces; the longest-quiet is dropped",
            )
            self._done(trace.trace_id, delivered=False)

    def _enqueue(self, spans: list[ReadableSpan | SpanRecord], trace_id: object) -> None:
        if isinstance(trace_id, str):  # fed: later spans of it are late
            with self._logs_lock:
                self._delivered_traces[trace_id] = None
                while len(self._delivered_traces) > self._max_pending_logs:
                    self._delivered_traces.popitem(last=False)
        # A fed trace was taken under feed()'s back-pressure and the feeder's own bounds: the
        # sender was told it is held, so it is queued whatever the count; spans ended here are not.
        if len(self._queue) >= self._max_queued and not isinstance(trace_id, str):
            self._drop_trace(
                len(spans), "queue", f"more than {self._max_queued} traces queued; traces are dropped"
            )
            return
        self._queue.append(spans)
        self._work.notify()

    def _drop_spans(self, count: int, kind: str, message: str) -> None:
        self._dropped_spans += count
        self._warn_once(kind, message + _COUNTED)

    def _drop_trace(self, spans: int, kind: str, message: str) -> None:
        self._dropped_traces += 1
        self._dropped_spans += spans
        self._warn_once(kind, message + _COUNTED)

    def _warn_once(self, kind: str, message: str, exc_info: bool = False) -> None:
        if kind not in self._warned:  # from any thread: at worst a second warning, never a lost count
            self._warned.add(kind)
            logger.warning(message, exc_info=exc_info)

    # --- the delivery thread -------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._work:
                while not self._queue and not self._closed:
                    self._work.wait()
                if not self._queue:
                    return
                spans = self._queue.popleft()
                self._busy += 1
            try:
                self._deliver(spans)
            finally:
                with self._work:
                    self._busy -= 1
                    self._work.notify_all()
            time.sleep(0)  # give the GIL to the app between traces

    def _deliver(self, spans: Sequence[ReadableSpan | SpanRecord]) -> None:
        fed = bool(spans) and isinstance(spans[0], SpanRecord)
        try:
            if fed:  # by a receiver
                records = self._join_logs([span for span in spans if isinstance(span, SpanRecord)])
            else:
                records = [span if isinstance(span, SpanRecord) else SpanRecord.from_readable_span(span)
                           for span in spans]
            trajectories = trajectories_from_trace(records, split=self._split, readers=self._readers)
        except Exception:  # noqa: BLE001 - one bad trace must not stop the worker
            logger.exception("TrajectoryProcessor: could not assemble a trace of %d spans", len(spans))
            trajectories = []
        for trajectory in trajectories:
            if trajectory.is_empty and self._skip_empty:
                continue
            self.delivered += 1
            for callback in self._callbacks:
                try:
                    callback(trajectory)
                except Exception:  # noqa: BLE001 - a callback's failure is logged, never raised
                    self.callback_errors += 1
                    logger.exception("TrajectoryProcessor: callback %r raised", callback)
        if fed:
            self._done(spans[0].trace_id, delivered=True)  # type: ignore[union-attr]

    def settle(self) -> None:
        """Assemble every fed trace whose root has arrived without waiting out ``settle_s`` (the
        sender has stopped: nothing more will come)."""
        with self._lock:
            self._catch_up()
            for trace in self._buffer.settle():
                self._hand_over(trace)

    def open_trace_trajectories(self, trace_id: int, open_spans: Sequence[ReadableSpan]) -> list[Trajectory]:
        """The trajectories of a trace whose root has not ended yet: the spans of ``trace_id``
        ended so far with ``open_spans`` (its root, still open, read as it is now). Lets a live
        evaluation score a turn while its root span can still take the verdicts."""
        with self._lock:
            self._catch_up()
            spans = self._buffer.items_of(trace_id)
        records = [span if isinstance(span, SpanRecord) else SpanRecord.from_readable_span(span)
                   for span in (*spans, *open_spans)]
        return trajectories_from_trace(records, split=self._split, readers=self._readers)

    # --- flush and shutdown --------------------------------------------------------------

    def _wait_idle(self, deadline: float) -> bool:
        with self._work:
            self._catch_up()
            while self._queue or self._busy:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._work.wait(remaining)
            return True

    def force_flush(self, timeout_millis: int | None = DEFAULT_TIMEOUT_MILLIS) -> bool:
        """Deliver every trace whose root has ended; ``False`` if that takes longer than the
        timeout (``None``: the default, 30 s). Traces still open are not complete and stay buffered."""
        return self._wait_idle(_deadline(timeout_millis))

    def shutdown(self, timeout_millis: int | None = DEFAULT_TIMEOUT_MILLIS) -> None:
        """Deliver the queued traces within one overall deadline (``None``: the default, 30 s),
        then stop; later spans are dropped and traces still open are counted as dropped. Idempotent."""
        deadline = _deadline(timeout_millis)
        with self._work:
            if self._closed:
                return
            self._catch_up()
            self._closed = True
            for trace in self._buffer.flush():
                self._dropped_traces += 1
                self._dropped_spans += len(trace.items)
                self._done(trace.trace_id, delivered=False)
            self._work.notify_all()
        self._wake.set()
        if not self._wait_idle(deadline):
            logger.warning(
                "TrajectoryProcessor.shutdown: the deadline passed before every trace was delivered"
            )
        self._intake_thread.join(max(0.0, deadline - time.monotonic()))
        self._worker.join(max(0.0, deadline - time.monotonic()))
