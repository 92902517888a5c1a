"""Why a trajectory looks as it does: which reader read each span, and what it read.

``agenteval trajectory --explain FILE`` prints this per trace, in tree order, so a missing step
can be traced to the span that should have held it.

>>> from agenteval_otel.trajectory.spans import SpanRecord
>>> spans = [SpanRecord(trace_id="a" * 32, span_id="b" * 16, parent_id=None, name="execute_tool get_weather",
...                     attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
...                                 "gen_ai.tool.call.arguments": '{"city": "Paris"}'})]
>>> print(explain(spans)[0].line())
execute_tool get_weather  ->  genai: tool get_weather  args={"city": "Paris"}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from agenteval_otel.trajectory.assemble import _tree
from agenteval_otel.trajectory.conventions import Reader, SpanReading, SpanRole
from agenteval_otel.trajectory.spans import SpanRecord

__all__ = ["SpanExplanation", "explain", "explain_traces"]

_PREVIEW = 80


def _preview(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= _PREVIEW else one_line[: _PREVIEW - 1] + "…"


@dataclass(frozen=True)
class SpanExplanation:
    """One span of a trace: where it sits and what the readers made of it (``None``: nothing)."""

    record: SpanRecord
    depth: int
    reading: SpanReading | None

    def facts(self) -> list[str]:
        """What the reading holds, as short ``key=value`` texts."""
        r = self.reading
        if r is None:
            return []
        found = []
        for key, value in (("args", r.args), ("raw_args", r.raw_args), ("result", r.result),
                           ("call_id", r.call_id), ("error", r.error), ("branch", r.branch),
                           ("input", r.input), ("output", r.output)):
            if value is not None:
                found.append(f"{key}={_preview(value)}")
        if r.input_messages or r.output_messages:
            found.append(f"messages={len(r.input_messages)} in, {len(r.output_messages)} out")
        calls = r.requested_tool_calls
        if calls:
            found.append("requested=" + ", ".join(c.name for c in calls))
        return found

    def line(self) -> str:
        """``  span name  ->  reader: role name  facts`` (indented by depth)."""
        head = "  " * self.depth + self.record.name
        r = self.reading
        if r is None:
            return f"{head}  ->  not read (no reader recognised it)"
        if r.role is SpanRole.IGNORED:
            return f"{head}  ->  {r.convention}: ignored (not a step)"
        facts = "  ".join(self.facts())
        return f"{head}  ->  {r.convention}: {r.role.value} {r.name}" + (f"  {facts}" if facts else "")


def explain(records: Iterable[SpanRecord], readers: Sequence[Reader] | None = None) -> list[SpanExplanation]:
    """Every span of ONE trace in tree order with its reading (as trajectories are built)."""
    ordered = _tree(records, readers)
    depth: dict[int, int] = {}
    found = []
    for span in ordered:
        level = 0 if span.parent is None else depth.get(id(span.parent), 0) + 1
        depth[id(span)] = level
        found.append(SpanExplanation(span.record, level, span.reading))
    return found


def explain_traces(
    records: Iterable[SpanRecord], readers: Sequence[Reader] | None = None
) -> Iterator[tuple[str, list[SpanExplanation]]]:
    """``(trace id, explain(its spans))`` for every trace among ``records``, in the order the
    traces first appear."""
    traces: dict[str, list[SpanRecord]] = {}
    for record in records:
        traces.setdefault(record.trace_id, []).append(record)
    for trace_id, spans in traces.items():
        yield trace_id, explain(spans, readers)
