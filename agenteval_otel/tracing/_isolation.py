"""A span processor wrapper that keeps whatever the wrapped processor raises away from the app.

The SDK calls processors inline in ``start_span`` and ``span.end()``: a processor that raises would
raise into the code that started or ended the span. Wrapped, the error is logged (once at WARNING
per hook, then at DEBUG) and the span goes on to the next processor.
"""

from __future__ import annotations

import logging

from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

__all__ = ["IsolatedSpanProcessor"]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())


class IsolatedSpanProcessor(SpanProcessor):
    """Forwards every hook to ``processor``; nothing it raises leaves this wrapper."""

    def __init__(self, processor: SpanProcessor) -> None:
        self.processor = processor
        self._reported: set[str] = set()

    def _report(self, hook: str) -> None:
        level = logging.DEBUG if hook in self._reported else logging.WARNING
        self._reported.add(hook)
        _logger.log(level, "%r.%s raised; ignored", self.processor, hook, exc_info=True)

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        try:
            self.processor.on_start(span, parent_context=parent_context)
        except Exception:
            self._report("on_start")

    def _on_ending(self, span: Span) -> None:
        try:
            self.processor._on_ending(span)
        except Exception:
            self._report("_on_ending")

    def on_end(self, span: ReadableSpan) -> None:
        try:
            self.processor.on_end(span)
        except Exception:
            self._report("on_end")

    def shutdown(self) -> None:
        try:
            self.processor.shutdown()
        except Exception:
            self._report("shutdown")

    def force_flush(self, timeout_millis: int | None = 30000) -> bool:
        try:
            return bool(self.processor.force_flush(30000 if timeout_millis is None else timeout_millis))
        except Exception:
            self._report("force_flush")
            return False
