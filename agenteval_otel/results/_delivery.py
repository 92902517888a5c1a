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
from collections.abc import Callable

from opentelemetry.context import Context
from opentelemetry.sdk._logs import LogRecordProcessor, ReadableLogRecord, ReadWriteLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from agenteval_otel.results._batching import BatchQueue, DeliveryCounters

__all__ = ["DeliveryCounters", "DeliveryProcessor"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

ExportedCallback = Callable[[set[str]], object]
"""Called with the hex ids of the traces whose spans or log records an export just delivered."""

_Item = ReadableSpan | ReadableLogRecord
_SUCCESS = (SpanExportResult.SUCCESS, LogRecordExportResult.SUCCESS)


class DeliveryProcessor(SpanProcessor, LogRecordProcessor):
    """Exports ended spans (as a tracer provider's span processor, with a ``SpanExporter``) or
    emitted log records (as a logger provider's log record processor, with a
    ``LogRecordExporter``) in batches of ``batch_size`` at most every ``delay_s`` seconds from a
    queue of at most ``max_queue`` items, counting every outcome (see the module docs).
    Never raises into the caller; ``force_flush`` and ``shutdown`` keep their deadlines."""

    def __init__(self, exporter: SpanExporter | LogRecordExporter, *, on_exported: ExportedCallback | None = None,
                 max_queue: int = 8192, batch_size: int = 512, delay_s: float = 0.5) -> None:
        self._exporter = exporter
        self._on_exported = on_exported
        self._failed_once = False
        self._queue: BatchQueue[_Item] = BatchQueue(self._export, name="DeliveryProcessor", max_queue=max_queue,
                                                    batch_size=batch_size, delay_s=delay_s)

    @property
    def counters(self) -> DeliveryCounters:
        """A snapshot of the counters."""
        return self._queue.counters

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Queue ``span``; past the bound, or after shutdown, drop and count it."""
        self._queue.put((span,))

    def on_emit(self, log_record: ReadWriteLogRecord) -> None:
        """Queue a read-only copy of ``log_record`` (without its context, as the SDK's batch
        processor does); past the bound, or after shutdown, drop and count it."""
        record = copy.copy(log_record.log_record)
        record.context = Context()
        self._queue.put((ReadableLogRecord(
            log_record=record, resource=log_record.resource if log_record.resource is not None else Resource.create({}),
            instrumentation_scope=log_record.instrumentation_scope, limits=log_record.limits),))

    def _export(self, batch: list[_Item]) -> int:
        """Export ``batch``; how many items went (all or none)."""
        try:
            ok = self._exporter.export(batch) in _SUCCESS  # type: ignore[arg-type]  # one kind per exporter
        except Exception:  # noqa: BLE001 - an exporter's failure is counted, never raised
            logger.debug("DeliveryProcessor: the exporter raised", exc_info=True)
            ok = False
        if not ok:
            if not self._failed_once:  # the exporter warns about its endpoint; the count is in ``counters``
                self._failed_once = True
                logger.info("%d verdict(s) could not be exported (further failures are counted, not logged)",
                            len(batch))
            return 0
        if self._on_exported is not None:
            traces = {format(trace_id, "032x") for trace_id in map(_trace_id, batch) if trace_id}
            try:
                self._on_exported(traces)
            except Exception:  # noqa: BLE001 - the callback's failure must not stop the export
                logger.warning("DeliveryProcessor: the on_exported callback raised", exc_info=True)
        return len(batch)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Export everything queued within ``timeout_millis``; whether that happened."""
        return self._queue.flush(timeout_millis / 1000)

    def shutdown(self, timeout_millis: int = 30000) -> None:
        """Flush within the deadline, count what is left as dropped, shut the exporter down.
        Idempotent."""
        if self._queue.closed:
            return
        self._queue.close(timeout_millis / 1000)
        try:
            self._exporter.shutdown()
        except Exception:  # noqa: BLE001 - shutting down never raises
            logger.debug("DeliveryProcessor: the exporter's shutdown raised", exc_info=True)


def _trace_id(item: _Item) -> int | None:
    """The trace ``item`` belongs to: a span's own, a log record's context's."""
    if isinstance(item, ReadableLogRecord):
        return item.log_record.trace_id
    return item.context.trace_id if item.context is not None else None
