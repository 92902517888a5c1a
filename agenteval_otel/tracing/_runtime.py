"""The OpenTelemetry context, read and set at the cost of one context-variable call.

``opentelemetry.context.get_current``/``attach``/``detach`` reach the runtime context through two
Python calls each, and ``set_span_in_context`` through two more. With the default runtime (one
``ContextVar``, which every known setup uses) the decorators' hot path calls the variable itself
and builds the span's context in one step; with any other runtime (``OTEL_PYTHON_CONTEXT``) it
falls back to the API functions. Both give the same results: the same ``Context`` values, and a
failed ``detach`` logged, never raised (as the API does).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextvars import ContextVar, Token
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.context import Context
from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext
from opentelemetry.trace import INVALID_SPAN, Span, set_span_in_context

__all__ = ["SPAN_KEY", "attach", "detach", "detach_failed", "get_current", "reset", "with_span"]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())


def _span_key() -> str | None:
    """The key ``set_span_in_context`` stores the span under; ``None`` if it cannot be found."""
    keys = list(set_span_in_context(INVALID_SPAN, Context()))
    return keys[0] if len(keys) == 1 else None


def _context_variable() -> ContextVar[Context] | None:
    runtime = getattr(otel_context, "_RUNTIME_CONTEXT", None)
    if type(runtime) is not ContextVarsRuntimeContext:
        return None
    variable = getattr(runtime, "_current_context", None)
    return variable if isinstance(variable, ContextVar) else None


def detach_failed() -> None:
    """Log a ``reset`` that raised (a token of another context), as the API's ``detach`` does."""
    _logger.exception("Failed to detach context")


_variable = _context_variable()
SPAN_KEY: str | None = _span_key()
"""The key of the current span in a ``Context`` (``None``: unknown, use :func:`with_span`)."""

get_current: Callable[[], Context]
attach: Callable[[Context], Token[Context]]
reset: Callable[[Any], None]
"""``detach`` without its error handling: the caller catches and calls :func:`detach_failed`."""

if _variable is None:
    get_current = otel_context.get_current
    attach = otel_context.attach
    reset = otel_context.detach
else:
    get_current = _variable.get
    attach = _variable.set
    reset = _variable.reset


def detach(token: Any) -> None:
    """Make current again what was current before ``attach`` returned ``token``; never raises."""
    try:
        reset(token)
    except Exception:  # a token of another context: logged like the API's detach
        detach_failed()


def with_span(span: Span, context: Context) -> Context:
    """``context`` with ``span`` as its current span (``set_span_in_context``)."""
    if SPAN_KEY is None:
        return set_span_in_context(span, context)
    values = context.copy()
    values[SPAN_KEY] = span
    return Context(values)
