"""The decorators' direct path to the OpenTelemetry context gives what the API gives."""

from __future__ import annotations

import contextvars
import logging

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from agenteval_otel.tracing import _runtime


def _span() -> NonRecordingSpan:
    return NonRecordingSpan(SpanContext(trace_id=1, span_id=2, is_remote=False, trace_flags=TraceFlags(1)))


def test_with_span_builds_the_context_set_span_in_context_builds() -> None:
    span, parent = _span(), otel_context.set_value("k", "v")
    made = _runtime.with_span(span, parent)
    assert made == trace.set_span_in_context(span, parent)
    assert trace.get_current_span(made) is span and made.get("k") == "v"
    assert parent == otel_context.set_value("k", "v")  # the parent is left as it was


def test_attach_and_detach_are_the_api_s_current_context() -> None:
    before = otel_context.get_current()
    token = _runtime.attach(_runtime.with_span(_span(), before))
    assert trace.get_current_span() is not trace.get_current_span(before)
    assert _runtime.get_current() is otel_context.get_current()
    _runtime.detach(token)
    assert otel_context.get_current() is before


def test_a_token_of_another_context_is_logged_never_raised(caplog) -> None:
    token = contextvars.copy_context().run(_runtime.attach, otel_context.get_current())
    with caplog.at_level(logging.ERROR):
        _runtime.detach(token)
    assert "Failed to detach context" in caplog.text
