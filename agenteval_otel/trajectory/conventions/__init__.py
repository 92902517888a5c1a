"""One reader per producer convention, each a small pure function ``SpanRecord -> SpanReading |
None``, tried in order:

- ``read_ours`` — agenteval-otel's own ``agenteval.*`` spans (evaluation spans are ignored);
- ``read_langgraph`` — LangGraph nodes and routers (graph structure outranks a span's kind);
- ``read_litellm`` — LiteLLM's OpenTelemetry callback (GenAI keys plus its own);
- ``read_vercel_ai`` — the Vercel AI SDK's own ``ai.*`` spans (before GenAI: its model calls
  also carry a few ``gen_ai.*`` keys);
- ``read_logfire`` — Logfire's spans of the OpenAI Agents SDK (``logfire.msg_template``);
- ``read_genai`` — the OpenTelemetry GenAI semantic conventions;
- ``read_openlit`` — OpenLIT's own keys beside them (a reply's tool calls without content);
- ``read_openinference`` — OpenInference;
- ``read_openllmetry`` — OpenLLMetry / Traceloop;
- ``read_adk`` — Google ADK's older ``gcp.vertex.agent.*`` keys;
- ``read_mastra`` — Mastra's AI tracing through ``@mastra/otel-exporter`` (``mastra.*``);
- ``read_haystack`` — Haystack's own tracing (``haystack.*``);
- ``read_langfuse`` — the Langfuse SDK (``langfuse.observation.*``);
- ``read_mlflow`` — MLflow tracing (``mlflow.spanType``);
- ``read_span_name`` — span-name fallbacks.

The first reader that recognises a span decides its role and name. Producers often write more
than one convention on the same span (ADK tool spans carry both ``gen_ai.*`` and
``gcp.vertex.agent.*``), so later readers that agree on the role fill in what the first could
not read (arguments, results, messages, usage).

Each of our readers declares its ``MARKERS``: the attribute keys (or span names) without which it
recognises nothing. A span is given only to the readers whose markers it carries (chosen once per
set of attribute keys), to readers without markers (yours), and to the span-name fallback.

Your own convention plugs in as a reader of the same shape: pass ``readers=(my_reader,
*READERS)`` to ``build_trajectories`` / ``iter_trajectories`` / ``evaluate_traces``, or install it
under the entry-point group ``agenteval.readers`` (``[project.entry-points."agenteval.readers"]
my_convention = "my_package.readers:read_my_spans"``): installed readers are tried before ours.
Or, with no Python, describe it in a JSON or YAML mapping: ``readers=(*load_readers("acme.yaml"),
*default_readers())`` (see ``declarative``).

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
from operator import attrgetter
from typing import Any

from agenteval_otel.trajectory.conventions import (
    adk,
    genai,
    haystack,
    langfuse,
    langgraph,
    litellm,
    logfire,
    mastra,
    mlflow,
    openinference,
    openlit,
    openllmetry,
    ours,
    vercel_ai,
)
from agenteval_otel.trajectory.conventions.adk import read_adk
from agenteval_otel.trajectory.conventions.declarative import DeclarativeReader, load_readers
from agenteval_otel.trajectory.conventions.fallback import read_span_name
from agenteval_otel.trajectory.conventions.genai import read_genai
from agenteval_otel.trajectory.conventions.haystack import read_haystack
from agenteval_otel.trajectory.conventions.langfuse import read_langfuse
from agenteval_otel.trajectory.conventions.langgraph import read_langgraph
from agenteval_otel.trajectory.conventions.litellm import read_litellm
from agenteval_otel.trajectory.conventions.logfire import read_logfire
from agenteval_otel.trajectory.conventions.mastra import read_mastra
from agenteval_otel.trajectory.conventions.mlflow import read_mlflow
from agenteval_otel.trajectory.conventions.openinference import read_openinference
from agenteval_otel.trajectory.conventions.openlit import read_openlit
from agenteval_otel.trajectory.conventions.openllmetry import read_openllmetry
from agenteval_otel.trajectory.conventions.ours import read_ours
from agenteval_otel.trajectory.conventions.reading import (
    ChatMessage,
    Markers,
    RequestedToolCall,
    SpanReading,
    SpanRole,
    ToolResponse,
)
from agenteval_otel.trajectory.conventions.vercel_ai import read_vercel_ai
from agenteval_otel.trajectory.spans import SpanRecord

__all__ = [
    "ENTRY_POINT_GROUP",
    "READERS",
    "ChatMessage",
    "DeclarativeReader",
    "Reader",
    "RequestedToolCall",
    "SpanReading",
    "SpanRole",
    "ToolResponse",
    "default_readers",
    "load_readers",
    "read_span",
    "span_reader",
]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

ENTRY_POINT_GROUP = "agenteval.readers"
"""The entry-point group of installed convention readers."""

Reader = Callable[[SpanRecord], "SpanReading | None"]

READERS: tuple[Reader, ...] = (
    read_ours,
    read_langgraph,
    read_litellm,
    read_vercel_ai,
    read_logfire,
    read_genai,
    read_openlit,
    read_openinference,
    read_openllmetry,
    read_adk,
    read_mastra,
    read_haystack,
    read_langfuse,
    read_mlflow,
    read_span_name,
)
"""The convention readers, in the order they are tried."""

MARKERS: dict[Reader, Markers] = {
    read_ours: ours.MARKERS,
    read_langgraph: langgraph.MARKERS,
    read_litellm: litellm.MARKERS,
    read_vercel_ai: vercel_ai.MARKERS,
    read_logfire: logfire.MARKERS,
    read_genai: genai.MARKERS,
    read_openlit: openlit.MARKERS,
    read_openinference: openinference.MARKERS,
    read_openllmetry: openllmetry.MARKERS,
    read_adk: adk.MARKERS,
    read_mastra: mastra.MARKERS,
    read_haystack: haystack.MARKERS,
    read_langfuse: langfuse.MARKERS,
    read_mlflow: mlflow.MARKERS,
}
"""Our readers' markers; a reader not in here is given every span."""

_FILLABLE = tuple(
    f.name for f in fields(SpanReading) if f.name not in ("role", "name", "convention", "output_is_final")
)
_fillable = attrgetter(*_FILLABLE)
_FINAL = frozenset({SpanRole.IGNORED, SpanRole.HANDOFF})
_MAX_CHOICES = 4096


def _fill(primary: SpanReading, other: SpanReading) -> SpanReading:
    updates = {}
    for name, mine, theirs in zip(_FILLABLE, _fillable(primary), _fillable(other)):
        if theirs is not None and theirs != () and (mine is None or mine == ()):
            updates[name] = theirs
    if not updates:
        return primary
    if "output" in updates and other.output_is_final:
        updates["output_is_final"] = True
    return replace(primary, **updates)


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


class _SpanReader:
    """Reads spans with ``readers``, each span given only to the readers whose markers it carries."""

    def __init__(self, readers: Sequence[Reader]) -> None:
        self.readers = tuple(readers)
        self.markers = tuple(MARKERS.get(reader) for reader in self.readers)
        self.marked_names = frozenset(name for m in self.markers if m is not None for name in m.span_names)
        self.choices: dict[tuple[Any, ...], tuple[Reader, ...]] = {}

    def _choose(self, record: SpanRecord) -> tuple[Reader, ...]:
        a, name = record.attributes, record.name
        key = (*a, name if name in self.marked_names else None, not record.events)
        chosen = self.choices.get(key)
        if chosen is None:
            found = [markers is None or markers.found_in(a, name) for markers in self.markers]
            alone = not record.events and any(
                ok and markers is not None and markers.exclusive for ok, markers in zip(found, self.markers)
            )
            chosen = tuple(
                reader for reader, markers, ok in zip(self.readers, self.markers, found)
                if ok and not (alone and markers is not None and not markers.exclusive)
            )
            if len(self.choices) >= _MAX_CHOICES:
                self.choices.clear()
            self.choices[key] = chosen
        return chosen

    def __call__(self, record: SpanRecord) -> SpanReading | None:
        primary: SpanReading | None = None
        for reader in self._choose(record):
            if reader is read_span_name and primary is not None and (
                primary.role is not SpanRole.TOOL or primary.error is not None or record.error is None
            ):
                continue  # a name reading adds nothing to a reading of the span's content but a tool's error
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


_span_readers: dict[tuple[Reader, ...], _SpanReader] = {}


def span_reader(readers: Sequence[Reader] | None = None) -> Callable[[SpanRecord], SpanReading | None]:
    """``read_span`` with ``readers`` bound: what a span says about the agent run, or ``None``."""
    key = default_readers() if readers is None else tuple(readers)
    try:
        found = _span_readers.get(key)
    except TypeError:  # an unhashable reader: not kept
        return _SpanReader(key)
    if found is None:
        if len(_span_readers) >= 64:
            _span_readers.clear()
        found = _span_readers[key] = _SpanReader(key)
    return found


def read_span(record: SpanRecord, readers: Sequence[Reader] | None = None) -> SpanReading | None:
    """What ``record`` says about the agent run, or ``None`` when no reader recognises it.

    ``readers`` default to the installed readers and ours. A reader that raises is logged and
    skipped for that span.
    """
    return span_reader(readers)(record)
