"""``DeliveryProcessor``: the span and log record processor that exports verdicts and counts what
became of each.

The SDK's ``BatchSpanProcessor`` and ``BatchLogRecordProcessor`` drop items when their queue is
full and log export failures, but count neither, so a worker whose export target is down would
report every verdict as done. This processor batches the same way (a bounded queue, a background
thread, one export at a time) and counts every span or log record it was given as ``exported``,
``failed`` (the exporter said so), ``dropped`` (queue full, after shutdown, or unsent at the
shutdown deadline) or still ``queued``; it warns once per kind, and tells ``on_exported`` which
traces had items exported (a log record's trace: the one it was emitted in, e.g. the judged one).

>>> from opentelemetry.sdk.trace import TracerProvider
>>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
>>> processor = DeliveryProcessor(InMemorySpanExporter())
>>> provider = TracerProvider(); provider.add_span_processor(processor)
>>> provider.get_tracer("doc").start_span("evaluation exact_match").end()
>>> processor.force_flush(5000), processor.counters.exported
(True, 1)
>>> processor.shutdown()
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from opentelemetry.context import Context
from opentelemetry.sdk._logs import LogRecordProcessor, ReadableLogRecord, ReadWriteLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["DeliveryCounters", "DeliveryProcessor"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

ExportedCallback = Callable[[set[str]], object]
"""Called with the hex ids of the traces whose spans or log records an export just delivered."""

_Item = ReadableSpan | ReadableLogRecord
_SUCCESS = (SpanExportResult.SUCCESS, LogRecordExportResult.SUCCESS)


@dataclass(frozen=True, slots=True)
class DeliveryCounters:
    """What became of the spans or log records a ``DeliveryProcessor`` was given (``received`` is
    the sum)."""

    received: int = 0
    exported: int = 0
    failed: int = 0
    dropped: int = 0
    queued: int = 0

    @property
    def lost(self) -> int:
        """Items that will never reach the target: failed or dropped."""
        return self.failed + self.dropped


class DeliveryProcessor(SpanProcessor, LogRecordProcessor):
    """Exports ended spans (as a tracer provider's span processor, with a ``SpanExporter``) or
    emitted log records (as a logger provider's log record processor, with a
    ``LogRecordExporter``) in batches of ``batch_size`` at most every ``delay_s`` seconds from a
    queue of at most ``max_queue`` items, counting every outcome (see the module docs).
    Never raises into the caller; ``force_flush`` and ``shutdown`` keep their deadlines."""

    def __init__(self, exporter: SpanExporter | LogRecordExporter, *, on_exported: ExportedCallback | None = None,
                 max_queue: int = 8192, batch_size: int = 512, delay_s: float = 0.5) -> None:
        if max_queue < 1 or batch_size < 1 or delay_s <= 0:
            raise ValueError("max_queue and batch_size must be at least 1, delay_s positive")
        self._exporter = exporter
        self._on_exported = on_exported
        self._max_queue = max_queue
        self._batch = batch_size
        self._delay = delay_s
        self._queue: deque[_Item] = deque()
        self._lock = threading.Condition()
        self._counts = {"received": 0, "exported": 0, "failed": 0, "dropped": 0}
        self._exporting = 0
        self._flush_asked = False
        self._closed = False
        self._warned: set[str] = set()
        self._thread = threading.Thread(target=self._run, name="DeliveryProcessor", daemon=True)
        self._thread.start()

    @property
    def counters(self) -> DeliveryCounters:
        """A snapshot of the counters."""
        with self._lock:
            return DeliveryCounters(**self._counts, queued=len(self._queue) + self._exporting)

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Queue ``span``; past the bound, or after shutdown, drop and count it."""
        self._take(span)

    def on_emit(self, log_record: ReadWriteLogRecord) -> None:
        """Queue a read-only copy of ``log_record`` (without its context, as the SDK's batch
        processor does); past the bound, or after shutdown, drop and count it."""
        record = copy.copy(log_record.log_record)
        record.context = Context()
        self._take(ReadableLogRecord(
            log_record=record, resource=log_record.resource if log_record.resource is not None else Resource.create({}),
            instrumentation_scope=log_record.instrumentation_scope, limits=log_record.limits))

    def _take(self, item: _Item) -> None:
        with self._lock:
            self._counts["received"] += 1
            if self._closed or len(self._queue) >= self._max_queue:
                self._counts["dropped"] += 1
                kind = "closed" if self._closed else "full"
                self._warn_once(kind, "a verdict was dropped: " + (
                    "the export has shut down" if self._closed else f"{self._max_queue} wait to be exported")
                    + " (further drops are counted, not logged)")
                return
            self._queue.append(item)
            if len(self._queue) >= self._batch:
                self._lock.notify_all()

    def _run(self) -> None:
        while True:
            with self._lock:
                if len(self._queue) < self._batch and not self._closed and not self._flush_asked:
                    self._lock.wait(self._delay)
                if not self._queue:
                    self._flush_asked = False
                    if self._closed:
                        return
                    continue
                batch = [self._queue.popleft() for _ in range(min(self._batch, len(self._queue)))]
                self._exporting = len(batch)
            self._export(batch)
            with self._lock:
                self._exporting = 0
                self._lock.notify_all()

    def _export(self, batch: Sequence[_Item]) -> None:
        try:
            ok = self._exporter.export(batch) in _SUCCESS  # type: ignore[arg-type]  # one kind per exporter
        except Exception:  # noqa: BLE001 - an exporter's failure is counted, never raised
            logger.debug("DeliveryProcessor: the exporter raised", exc_info=True)
            ok = False
        with self._lock:
            self._counts["exported" if ok else "failed"] += len(batch)
            first_failure = not ok and "failed" not in self._warned
            if first_failure:
                self._warned.add("failed")
        if first_failure:  # the exporter warns about its endpoint; the count is in ``counters``
            logger.info("%d verdict(s) could not be exported (further failures are counted, not logged)",
                        len(batch))
        if ok and self._on_exported is not None:
            traces = {format(trace_id, "032x") for trace_id in map(_trace_id, batch) if trace_id}
            try:
                self._on_exported(traces)
            except Exception:  # noqa: BLE001 - the callback's failure must not stop the export
                logger.warning("DeliveryProcessor: the on_exported callback raised", exc_info=True)

    def _warn_once(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            logger.warning(message)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Export everything queued within ``timeout_millis``; whether that happened."""
        deadline = time.monotonic() + timeout_millis / 1000
        with self._lock:
            self._flush_asked = True
            self._lock.notify_all()
            while self._queue or self._exporting:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._lock.wait(min(remaining, self._delay))
                self._lock.notify_all()
            return True

    def shutdown(self, timeout_millis: int = 30000) -> None:
        """Flush within the deadline, count what is left as dropped, shut the exporter down.
        Idempotent."""
        with self._lock:
            if self._closed:
                return
        deadline = time.monotonic() + timeout_millis / 1000
        self.force_flush(timeout_millis)
        with self._lock:
            self._closed = True
            self._counts["dropped"] += len(self._queue)
            self._queue.clear()
            self._lock.notify_all()
        self._thread.join(max(0.0, deadline - time.monotonic()))
        try:
            self._exporter.shutdown()
        except Exception:  # noqa: BLE001 - shutting down never raises
            logger.debug("DeliveryProcessor: the exporter's shutdown raised", exc_info=True)


def _trace_id(item: _Item) -> int | None:
    """The trace ``item`` belongs to: a span's own, a log record's context's."""
    if isinstance(item, ReadableLogRecord):
        return item.log_record.trace_id
    return item.context.trace_id if item.context is not None else None
