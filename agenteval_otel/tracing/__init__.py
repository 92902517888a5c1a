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
``OtlpJsonFileExporter``); ``trace_step`` offers the same steps as context managers;
``conversation`` groups agent runs into a conversation; ``ContentPolicy`` decides what content
is captured and how it is redacted and truncated.
"""

from agenteval_otel.tracing.blocks import TracedStep, trace_step
from agenteval_otel.tracing.configure import TracingHandle, configure
from agenteval_otel.tracing.content import ContentPolicy
from agenteval_otel.tracing.context import (
    ContextThreadPoolExecutor,
    conversation,
    current_conversation_id,
    tool_call_id,
)
from agenteval_otel.tracing.decorators import agent, conditional, message, node, tool
from agenteval_otel.tracing.file_export import OtlpJsonFileExporter

__all__ = [
    "ContentPolicy",
    "ContextThreadPoolExecutor",
    "OtlpJsonFileExporter",
    "TracedStep",
    "TracingHandle",
    "agent",
    "conditional",
    "configure",
    "conversation",
    "current_conversation_id",
    "message",
    "node",
    "tool",
    "tool_call_id",
    "trace_step",
]
