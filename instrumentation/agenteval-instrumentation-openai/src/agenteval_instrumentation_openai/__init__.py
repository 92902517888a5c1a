"""OpenTelemetry instrumentation of the ``openai`` client, in agenteval-otel's conventions.

Every ``chat.completions.create`` and ``responses.create`` call, sync or async, streamed or not,
becomes a GenAI ``chat {model}`` span (``agenteval.step.type = message``): request parameters,
``server.address``/``server.port``, response id and model, finish reasons, token usage (a
stream's from its final chunk) and, when content is captured, the messages sent (the tool
results among them as ``tool_call_response`` parts) and the reply (the tool calls the model
asked for as ``tool_call`` parts). So the trace of an agent written against the bare client
still yields its tool trajectory. A stream's span ends exactly once: exhausted, closed, left by
its ``with`` block, garbage-collected unfinished, or failed.

Usage::

    from agenteval_instrumentation_openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(capture_content=True)

or ``configure(instrument=["openai"])``, or with no code at all, ``opentelemetry-instrument
python app.py`` (entry point group ``opentelemetry_instrumentor``, name ``openai``).

Content (messages, tool arguments and results) follows OpenTelemetry's default for a
third-party client: off, unless ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is
``true`` / ``span_only`` / ``span_and_event`` or ``instrument(capture_content=True)`` (which
``configure(capture_content=True, instrument=[...])`` passes) turns it on; then agenteval-otel's
content policy in force (``configure(content_policy=...)``) redacts and truncates it, and its
``capture=False`` turns it off again. ``tracer_provider=`` sends the spans to that provider
instead of the one agenteval-otel's steps use.

A failed call's span records the error (``error.type``, status, exception event) with
credential shapes and the client's own key masked, whole or in part, whatever the content
setting: a server refusing a key may echo it. The steps around the call mask that key too.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Collection
from typing import Any

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]
from opentelemetry.instrumentation.utils import unwrap

from agenteval_instrumentation_openai.package import _instruments
from agenteval_instrumentation_openai.version import __version__
from agenteval_otel.tracing import ContentPolicy

__all__ = ["OpenAIInstrumentor", "__version__"]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())


class OpenAIInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Wraps the openai client's ``create`` methods; ``uninstrument()`` puts the originals back."""

    def instrumentation_dependencies(self) -> Collection[str]:
        return _instruments

    def _instrument(self, **kwargs: Any) -> None:
        from wrapt import wrap_function_wrapper

        from agenteval_instrumentation_openai import patch

        capture = kwargs.get("capture_content")
        if capture is None:
            capture = ContentPolicy.from_env(default_capture=False).capture
        settings = patch.Settings(bool(capture), kwargs.get("tracer_provider"))
        for module, cls, wrapper, api in patch.TARGETS:
            try:
                wrap_function_wrapper(module, f"{cls}.create", wrapper(api, settings))
            except (ImportError, AttributeError):
                _logger.warning("openai instrumentation: %s.%s.create not found; not traced", module, cls)

    def _uninstrument(self, **kwargs: Any) -> None:
        from agenteval_instrumentation_openai import patch

        for module, cls, _, _ in patch.TARGETS:
            try:
                owner = getattr(importlib.import_module(module), cls)
            except (ImportError, AttributeError):
                continue
            unwrap(owner, "create")
