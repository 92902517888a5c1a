"""Last resort: what a span is, read from its name alone.

GenAI span names (``execute_tool {tool}``, ``invoke_agent {agent}``, ``chat {model}``,
``invoke_node {node}``), Google ADK's older ``call_llm`` and ``agent_run [name]``, OpenLLMetry's
``{tool}.tool`` and ``{from} → {to}.handoff``, and OpenInference's ``handoff to {agent}``.
"""

from __future__ import annotations

import re

from agenteval_otel.trajectory.conventions.reading import SpanReading, SpanRole
from agenteval_otel.trajectory.spans import SpanRecord

__all__ = ["read_span_name"]

NAME = "span-name"

_PATTERNS: tuple[tuple[re.Pattern[str], SpanRole], ...] = (
    (re.compile(r"execute_tool \(merged\)$"), SpanRole.IGNORED),
    (re.compile(r"execute_tool (?P<name>.+)$"), SpanRole.TOOL),
    (re.compile(r"(?:invoke_agent|invoke_workflow) (?P<name>.+)$"), SpanRole.AGENT),
    (re.compile(r"agent_run \[(?P<name>.+)\]$"), SpanRole.AGENT),
    (re.compile(r"invoke_node (?P<name>.+)$"), SpanRole.NODE),
    (re.compile(r"(?:chat|generate_content|text_completion)(?: (?P<name>.+))?$"), SpanRole.MODEL),
    (re.compile(r"call_llm$"), SpanRole.MODEL),
    (re.compile(r"handoff to (?P<name>.+)$"), SpanRole.HANDOFF),
    (re.compile(r"(?P<name>.+)\.handoff$"), SpanRole.HANDOFF),
    (re.compile(r"(?P<name>[^ ]+)\.tool$"), SpanRole.TOOL),
)


_by_name: dict[str, tuple[SpanRole, str] | None] = {}
_MAX_NAMES = 4096


def _read_name(name: str) -> tuple[SpanRole, str] | None:
    for pattern, role in _PATTERNS:
        match = pattern.match(name)
        if match:
            return role, match.groupdict().get("name") or name
    return None


def read_span_name(record: SpanRecord) -> SpanReading | None:
    """Read a span from its name; ``None`` when the name says nothing."""
    name = record.name
    try:
        found = _by_name[name]
    except KeyError:
        found = _read_name(name)
        if len(_by_name) >= _MAX_NAMES:
            _by_name.clear()
        _by_name[name] = found
    if found is None:
        return None
    role, step_name = found
    return SpanReading(role, step_name, NAME, error=record.error if role is SpanRole.TOOL else None)
