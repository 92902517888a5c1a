"""One reader per producer convention, each a small pure function ``SpanRecord -> SpanReading |
None``, tried in order:

1. ``read_ours`` — agenteval-otel's own ``agenteval.*`` spans (evaluation spans are ignored);
2. ``read_langgraph`` — LangGraph nodes and routers (graph structure outranks a span's kind);
3. ``read_genai`` — the OpenTelemetry GenAI semantic conventions;
4. ``read_openinference`` — OpenInference;
5. ``read_openllmetry`` — OpenLLMetry / Traceloop;
6. ``read_adk`` — Google ADK's older ``gcp.vertex.agent.*`` keys;
7. ``read_span_name`` — span-name fallbacks.

The first reader that recognises a span decides its role and name. Producers often write more
than one convention on the same span (ADK tool spans carry both ``gen_ai.*`` and
``gcp.vertex.agent.*``), so later readers that agree on the role fill in what the first could
not read (arguments, results, messages, usage).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any

from agenteval_otel.trajectory.conventions.adk import read_adk
from agenteval_otel.trajectory.conventions.fallback import read_span_name
from agenteval_otel.trajectory.conventions.genai import read_genai
from agenteval_otel.trajectory.conventions.langgraph import read_langgraph
from agenteval_otel.trajectory.conventions.openinference import read_openinference
from agenteval_otel.trajectory.conventions.openllmetry import read_openllmetry
from agenteval_otel.trajectory.conventions.ours import read_ours
from agenteval_otel.trajectory.conventions.reading import (
    ChatMessage,
    RequestedToolCall,
    SpanReading,
    SpanRole,
    ToolResponse,
)
from agenteval_otel.trajectory.spans import SpanRecord

__all__ = [
    "READERS",
    "ChatMessage",
    "Reader",
    "RequestedToolCall",
    "SpanReading",
    "SpanRole",
    "ToolResponse",
    "read_span",
]

Reader = Callable[[SpanRecord], "SpanReading | None"]

READERS: tuple[Reader, ...] = (
    read_ours,
    read_langgraph,
    read_genai,
    read_openinference,
    read_openllmetry,
    read_adk,
    read_span_name,
)
"""The convention readers, in the order they are tried."""

_FILLABLE = tuple(
    f.name for f in fields(SpanReading) if f.name not in ("role", "name", "convention", "output_is_final")
)
_FINAL = frozenset({SpanRole.IGNORED, SpanRole.HANDOFF})


def _is_empty(value: Any) -> bool:
    return value is None or value == ()


def _fill(primary: SpanReading, other: SpanReading) -> SpanReading:
    updates = {}
    for name in _FILLABLE:  # most of ``other`` is empty: look at it first
        value = getattr(other, name)
        if value is not None and value != () and _is_empty(getattr(primary, name)):
            updates[name] = value
    if "output" in updates and other.output_is_final:
        updates["output_is_final"] = True
    return replace(primary, **updates) if updates else primary


def read_span(record: SpanRecord, readers: tuple[Reader, ...] = READERS) -> SpanReading | None:
    """What ``record`` says about the agent run, or ``None`` when no reader recognises it."""
    primary: SpanReading | None = None
    for reader in readers:
        reading = reader(record)
        if reading is None:
            continue
        if primary is None:
            primary = reading
            if primary.role in _FINAL:
                return primary
        elif reading.role is primary.role:
            primary = _fill(primary, reading)
    return primary
