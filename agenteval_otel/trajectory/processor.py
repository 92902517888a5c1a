"""``TrajectoryProcessor``: a span processor that hands finished trajectories to callbacks.

It buffers the finished spans of each trace in a ``TraceBuffer`` (``linger=0``) and, when the
trace's local root span ends (a span with no parent, or a remote one), queues the trace for a
background worker, which converts its spans, assembles its trajectories and calls every callback
with each. The app thread only appends to the buffer, under the processor's lock.

Everything is bounded: open traces, spans per trace, queued traces, and a time-to-live for traces
whose root never ends. What does not fit is dropped and counted (``dropped_spans``,
``dropped_traces``), with one warning per kind: a trace the buffer hands out incomplete (expired,
or the longest-quiet rootless one when too many are open) is dropped whole. Nothing raises into
the app: a failing callback is logged and counted (``callback_errors``). Our own evaluation spans
are ignored. A span that ends after its trace's local root has been handed over opens a new
buffer entry that expires.

>>> from opentelemetry.sdk.trace import TracerProvider
>>> provider = TracerProvider()
>>> provider.add_span_processor(TrajectoryProcessor(lambda t: print(t.tool_calls())))
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Literal

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from agenteval_otel.semconv import EVALUATION_SPAN
from agenteval_otel.trajectory.assemble import trajectories_from_trace
from agenteval_otel.trajectory.buffer import BufferedTrace, TraceBuffer
from agenteval_otel.trajectory.conventions import Reader
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["TrajectoryCallback", "TrajectoryProcessor"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

TrajectoryCallback = Callable[[Trajectory], None]
"""Called (on the processor's worker thread) with each finished trajectory."""

DEFAULT_TIMEOUT_MILLIS = 30000


def _deadline(timeout_millis: int | None) -> float:
    """The monotonic time ``timeout_millis`` from now (``None``: the default)."""
    return time.monotonic() + (DEFAULT_TIMEOUT_MILLIS if timeout_millis is None else timeout_millis) / 1000


class TrajectoryProcessor(SpanProcessor):
    """Turns each finished trace into trajectories and passes them to ``callbacks``.

    ``group`` is ``"invocation"`` (one trajectory per agent invocation) or ``"trace"``.
    ``max_open_traces``, ``max_spans_per_trace`` and ``max_queued_traces`` bound memory;
    ``trace_ttl_s`` drops a trace whose local root has not ended after that many seconds, and
    when more than ``max_open_traces`` are open the longest-quiet one is dropped.
    Trajectories with nothing of an agent run in them (no steps, input or response) are not
    passed on unless ``skip_empty=False`` (a live evaluation waiting for each of its traces, even
    one recorded with content capture off, passes that). ``clock`` is the monotonic clock used for
    the time-to-live; ``readers`` the convention readers (default: the installed ones, then ours).
    """

    def __init__(
        self,
        *callbacks: TrajectoryCallback,
        group: Literal["invocation", "trace"] = "invocation",
        max_open_traces: int = 2048,
        max_spans_per_trace: int = 10_000,
        max_queued_traces: int = 512,
        trace_ttl_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        skip_empty: bool = True,
        readers: Sequence[Reader] | None = None,
    ) -> None:
        if group not in ("invocation", "trace"):
            raise ValueError(f"group must be 'invocation' or 'trace', got {group!r}")
        if min(max_open_traces, max_spans_per_trace, max_queued_traces) < 1 or trace_ttl_s <= 0:
            raise ValueError("bounds must be at least 1 and trace_ttl_s positive")
        self._callbacks: tuple[TrajectoryCallback, ...] = tuple(callbacks)
        self._readers = None if readers is None else tuple(readers)
        self._split = group == "invocation"
        self._skip_empty = skip_empty
        self._ttl = trace_ttl_s
        self._lock = threading.Lock()
        self._buffer: TraceBuffer[ReadableSpan] = TraceBuffer(
            linger=0,
            ttl_s=trace_ttl_s,
            max_open_traces=max_open_traces,
            max_spans_per_trace=max_spans_per_trace,
            clock=clock,
        )
        self._queue: deque[list[ReadableSpan]] = deque()
        self._max_queued = max_queued_traces
        self._work = threading.Condition(self._lock)
        self._busy = 0
        self._closed = False
        self._warned: set[str] = set()
        self._dropped_spans = 0
        self.dropped_traces = 0
        self.callback_errors = 0
        self.delivered = 0
        self._worker = threading.Thread(target=self._run, name="TrajectoryProcessor", daemon=True)
        self._worker.start()

    @property
    def dropped_spans(self) -> int:
        """Spans dropped: of dropped traces, beyond ``max_spans_per_trace``, or after shutdown."""
        return self._dropped_spans + self._buffer.dropped_spans

    def add_callback(self, callback: TrajectoryCallback) -> None:
        """Also call ``callback`` with every later trajectory."""
        self._callbacks = (*self._callbacks, callback)

    # --- the app thread ------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Buffer ``span``; queue its trace when it is the local root. Never raises."""
        try:
            self._on_end(span)
        except Exception:  # noqa: BLE001 - a processor must never raise into the app
            self._warn_once("on_end", "TrajectoryProcessor.on_end failed; the span is dropped", exc_info=True)

    def _on_end(self, span: ReadableSpan) -> None:
        attributes = span.attributes or {}
        if attributes.get(EVALUATION_SPAN):
            return
        context = span.get_span_context()
        if context is None:
            return
        parent = span.parent
        with self._lock:
            if self._closed:
                self._drop_spans(1, "closed", "a span ended after TrajectoryProcessor.shutdown was dropped")
                return
            buffer = self._buffer
            refused = buffer.dropped_spans
            handed_out = buffer.add(context.trace_id, span, is_root=parent is None or parent.is_remote)
            if buffer.dropped_spans != refused:
                self._warn_once(
                    "spans",
                    f"a trace has more than {buffer.max_spans_per_trace} spans; spans are dropped"
                    " (further drops are counted, not logged)",
                )
            for trace in handed_out:
                self._hand_over(trace)

    def _hand_over(self, trace: BufferedTrace[ReadableSpan]) -> None:
        """Queue a complete trace; drop an incomplete one (expired, or evicted)."""
        if trace.complete:
            self._enqueue(trace.items)
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

    def _enqueue(self, spans: list[ReadableSpan]) -> None:
        if len(self._queue) >= self._max_queued:
            self._drop_trace(
                len(spans), "queue", f"more than {self._max_queued} traces queued; traces are dropped"
            )
            return
        self._queue.append(spans)
        self._work.notify()

    def _drop_spans(self, count: int, kind: str, message: str) -> None:
        self._dropped_spans += count
        self._warn_once(kind, message + " (further drops are counted, not logged)")

    def _drop_trace(self, spans: int, kind: str, message: str) -> None:
        self.dropped_traces += 1
        self._dropped_spans += spans
        self._warn_once(kind, message + " (further drops are counted, not logged)")

    def _warn_once(self, kind: str, message: str, exc_info: bool = False) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            logger.warning(message, exc_info=exc_info)

    # --- the worker ----------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._work:
                while not self._queue and not self._closed:
                    self._work.wait(timeout=min(self._ttl, 1.0))
                    for trace in self._buffer.expire():
                        self._hand_over(trace)
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

    def _deliver(self, spans: Sequence[ReadableSpan]) -> None:
        try:
            records = [SpanRecord.from_readable_span(span) for span in spans]
            trajectories = trajectories_from_trace(records, split=self._split, readers=self._readers)
        except Exception:  # noqa: BLE001 - one bad trace must not stop the worker
            logger.exception("TrajectoryProcessor: could not assemble a trace of %d spans", len(spans))
            return
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

    # --- flush and shutdown --------------------------------------------------------------

    def _wait_idle(self, deadline: float) -> bool:
        with self._work:
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
            self._closed = True
            for trace in self._buffer.flush():
                self.dropped_traces += 1
                self._dropped_spans += len(trace.items)
            self._work.notify_all()
        if not self._wait_idle(deadline):
            logger.warning(
                "TrajectoryProcessor.shutdown: the deadline passed before every trace was delivered"
            )
        self._worker.join(max(0.0, deadline - time.monotonic()))
