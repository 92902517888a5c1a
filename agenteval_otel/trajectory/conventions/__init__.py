"""One reader per producer convention, each a small pure function ``SpanRecord -> SpanReading |
None``, tried in order:

1. ``read_ours`` — agenteval-otel's own ``agenteval.*`` spans (evaluation spans are ignored);
2. ``read_langgraph`` — LangGraph nodes and routers (graph structure outranks a span's kind);
3. ``read_genai`` — the OpenTelemetry GenAI semantic conventions;
4. ``read_openinference`` — OpenInference;
5. ``read_openllmetry`` — OpenLLMetry / Traceloop;
6. ``read_adk`` — Google ADK's older ``gcp.vertex.agent.*`` keys;
7. ``read_haystack`` — Haystack's own tracing (``haystack.*``);
8. ``read_span_name`` — span-name fallbacks.

The first reader that recognises a span decides its role and name. Producers often write more
than one convention on the same span (ADK tool spans carry both ``gen_ai.*`` and
``gcp.vertex.agent.*``), so later readers that agree on the role fill in what the first could
not read (arguments, results, messages, usage).

Your own convention plugs in as a reader of the same shape: pass ``readers=(my_reader,
*READERS)`` to ``build_trajectories`` / ``iter_trajectories`` / ``evaluate_traces``, or install it
under the entry-point group ``agenteval.readers`` (``[project.entry-points."agenteval.readers"]
my_convention = "my_package.readers:read_my_spans"``): installed readers are tried before ours.

>>> def read_my_spans(record):
...     if record.attributes.get("my.kind") != "tool":
...         return None
...     return SpanReading(SpanRole.TOOL, record.attributes["my.tool"], "mine")
>>> record = SpanRecord(trace_id="a" * 32, span_id="b" * 16, parent_id=None, name="x",
...                     attributes={"my.kind": "tool", "my.tool": "search"})
>>> read_span(record, (read_my_spans, *READERS)).name
'search'
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from importlib import metadata
from typing import Any

from agenteval_otel.trajectory.conventions.adk import read_adk
from agenteval_otel.trajectory.conventions.fallback import read_span_name
from agenteval_otel.trajectory.conventions.genai import read_genai
from agenteval_otel.trajectory.conventions.haystack import read_haystack
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
    "ENTRY_POINT_GROUP",
    "READERS",
    "ChatMessage",
    "Reader",
    "RequestedToolCall",
    "SpanReading",
    "SpanRole",
    "ToolResponse",
    "default_readers",
    "read_span",
]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

ENTRY_POINT_GROUP = "agenteval.readers"
"""The entry-point group of installed convention readers."""

Reader = Callable[[SpanRecord], "SpanReading | None"]

READERS: tuple[Reader, ...] = (
    read_ours,
    read_langgraph,
    read_genai,
    read_openinference,
    read_openllmetry,
    read_adk,
    read_haystack,
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


def installed_readers() -> tuple[Reader, ...]:
    """The readers installed under ``agenteval.readers``; one that fails to load is logged and
    left out."""
    found: list[Reader] = []
    for entry in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            reader = entry.load()
        except Exception:
            _log.warning("convention reader %r (%s) could not be loaded; left out", entry.name, entry.value,
                         exc_info=True)
            continue
        if callable(reader):
            found.append(reader)
        else:
            _log.warning("convention reader %r (%s) is not callable; left out", entry.name, entry.value)
    return tuple(found)


_default: tuple[Reader, ...] | None = None


def default_readers() -> tuple[Reader, ...]:
    """The installed readers, then ours (looked up once)."""
    global _default
    if _default is None:
        _default = (*installed_readers(), *READERS)
    return _default


def read_span(record: SpanRecord, readers: Sequence[Reader] | None = None) -> SpanReading | None:
    """What ``record`` says about the agent run, or ``None`` when no reader recognises it.

    ``readers`` default to the installed readers and ours. A reader that raises is logged and
    skipped for that span.
    """
    primary: SpanReading | None = None
    for reader in default_readers() if readers is None else readers:
        try:
            reading = reader(record)
        except Exception:
            _log.debug("reader %r failed on span %r", reader, record.name, exc_info=True)
            continue
        if reading is None:
            continue
        if primary is None:
            primary = reading
            if primary.role in _FINAL:
                return primary
        elif reading.role is primary.role:
            primary = _fill(primary, reading)
    return primary
