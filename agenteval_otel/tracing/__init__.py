"""Capture: trace an agent's steps as OpenTelemetry spans.

>>> from agenteval_otel.tracing import agent, tool, configure
>>> @tool
... def get_weather(city: str) -> str:
...     return "sunny"
>>> @agent(name="weather")
... def run(query: str) -> str:
...     return f"It is {get_weather('Tokyo')} in Tokyo."

``configure()`` once at start-up sends the spans somewhere (an OTLP endpoint from the standard
``OTEL_EXPORTER_OTLP_*`` variables, else a local OTLP/JSON-lines file written by
``OtlpJsonFileExporter``), and log records beside them (``OtlpJsonLogFileExporter`` writes the
file ``logs_file_for`` names); ``providers_for(target)`` builds such a pair for an explicit
OTLP URL or file; ``trace_step`` offers the same steps as context managers;
``conversation`` groups agent runs into a conversation; ``ContentPolicy`` decides what content
is captured and how it is redacted and truncated; ``configure(conventions=...)`` (or
``set_conventions``) adds OpenInference keys beside the GenAI ones, and ``with_conventions``
adds them to the attributes of a span made outside the step lifecycle.

For instrumentor packages (one per instrumented client library), the same capture as a public
lifecycle, on which the decorators and ``trace_step`` sit too:

>>> from agenteval_otel.tracing import start_step
>>> with start_step("tool", "search", arguments={"q": "weather"}) as step:
...     step.set_result(["sunny"])

with the content policy in force (``active_policy``/``set_active_policy``), the model-message
reader (``read_message``, ``ModelMessage``), and the provider our steps' spans go to: what an
instrumentor needs is ``current_tracer()`` (our tracer on that provider); ``current_provider()``
names the provider and ``routed_to(provider)`` sends the steps of a block elsewhere.

Names load on first use: a decorator loads the step lifecycle alone, not ``configure``'s
exporters and destinations.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

__all__ = [
    "AgentClaim",
    "ContentPolicy",
    "ContextThreadPoolExecutor",
    "OtlpJsonFileExporter",
    "OtlpJsonLogFileExporter",
    "ModelMessage",
    "StepKind",
    "StepRun",
    "TracedStep",
    "TracingHandle",
    "active_conventions",
    "active_policy",
    "agent",
    "conditional",
    "configure",
    "conversation",
    "current_conversation_id",
    "current_provider",
    "current_tracer",
    "is_otlp_url",
    "logs_file_for",
    "message",
    "node",
    "openinference_attributes",
    "otlp_traces_endpoint",
    "providers_for",
    "read_message",
    "routed_to",
    "set_active_policy",
    "set_conventions",
    "span_destinations",
    "start_step",
    "step_kind_of",
    "tool",
    "tool_call_id",
    "trace_step",
    "unreachable",
    "with_conventions",
]

_MODULES = {
    "blocks": ("TracedStep", "trace_step"),
    "configure": ("TracingHandle", "configure", "is_otlp_url", "providers_for"),
    "content": ("ContentPolicy", "active_policy", "set_active_policy"),
    "context": ("ContextThreadPoolExecutor", "conversation", "current_conversation_id", "tool_call_id"),
    "conventions": ("active_conventions", "openinference_attributes", "set_conventions", "with_conventions"),
    "decorators": ("agent", "conditional", "message", "node", "step_kind_of", "tool"),
    "destinations": ("otlp_traces_endpoint", "span_destinations", "unreachable"),
    "file_export": ("OtlpJsonFileExporter",),
    "lifecycle": ("AgentClaim", "StepKind", "StepRun", "start_step"),
    "log_file_export": ("OtlpJsonLogFileExporter", "logs_file_for"),
    "messages": ("ModelMessage", "read_message"),
    # release_provider and route_to_provider: for the evaluation engine's turn capture, outside the
    # documented surface
    "providers": ("current_provider", "current_tracer", "routed_to", "release_provider", "route_to_provider"),
}
_HOME = {name: f"{__name__}.{module}" for module, names in _MODULES.items() for name in names}

if TYPE_CHECKING:
    from agenteval_otel.tracing.blocks import TracedStep, trace_step
    from agenteval_otel.tracing.configure import TracingHandle, configure, is_otlp_url, providers_for
    from agenteval_otel.tracing.content import ContentPolicy, active_policy, set_active_policy
    from agenteval_otel.tracing.context import (
        ContextThreadPoolExecutor,
        conversation,
        current_conversation_id,
        tool_call_id,
    )
    from agenteval_otel.tracing.conventions import (
        active_conventions,
        openinference_attributes,
        set_conventions,
        with_conventions,
    )
    from agenteval_otel.tracing.decorators import agent, conditional, message, node, step_kind_of, tool
    from agenteval_otel.tracing.destinations import otlp_traces_endpoint, span_destinations, unreachable
    from agenteval_otel.tracing.file_export import OtlpJsonFileExporter
    from agenteval_otel.tracing.lifecycle import AgentClaim, StepKind, StepRun, start_step
    from agenteval_otel.tracing.log_file_export import OtlpJsonLogFileExporter, logs_file_for
    from agenteval_otel.tracing.messages import ModelMessage, read_message
    from agenteval_otel.tracing.providers import current_provider, current_tracer, routed_to
    from agenteval_otel.tracing.providers import release_provider as release_provider
    from agenteval_otel.tracing.providers import route_to_provider as route_to_provider


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})


class _Package(ModuleType):
    """This package, whose ``configure`` stays the function when its module ``configure`` is imported."""

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, ModuleType) and name in _HOME:  # the import system binding a submodule
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
