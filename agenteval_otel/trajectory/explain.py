"""Why a trajectory looks as it does: which reader read each span, and what it read.

``agenteval trajectory --explain FILE`` prints this per trace, in tree order, so a missing step
can be traced to the span that should have held it, and ends with the trace's ``Coverage``: how
many spans a convention reader read, how many only the span-name fallback, how many none, and
warnings when the readers plainly missed something (a producer not understood).

>>> from agenteval_otel.trajectory.spans import SpanRecord
>>> spans = [SpanRecord(trace_id="a" * 32, span_id="b" * 16, parent_id=None, name="execute_tool get_weather",
...                     attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
...                                 "gen_ai.tool.call.arguments": '{"city": "Paris"}'})]
>>> print(explain(spans)[0].line())
execute_tool get_weather  ->  genai: tool get_weather  args={"city": "Paris"}
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agenteval_otel.trajectory.assemble import _observer, _read_trace, _Span, _tree
from agenteval_otel.trajectory.conventions import Reader, SpanReading, SpanRole
from agenteval_otel.trajectory.conventions.fallback import NAME as SPAN_NAME
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.steps import StepType
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = [
    "FALLBACKS",
    "TOOL_CALLS_NOT_READ",
    "FINAL_ANSWER_NOT_READ",
    "Coverage",
    "CoverageTally",
    "CoverageWarning",
    "SpanExplanation",
    "TraceExplanation",
    "counting_coverage",
    "coverage_of",
    "explain",
    "explain_traces",
]

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
    return _explained(_tree(records, readers))


def _explained(ordered: Sequence[_Span]) -> list[SpanExplanation]:
    depth: dict[int, int] = {}
    found = []
    for span in ordered:
        level = 0 if span.parent is None else depth.get(id(span.parent), 0) + 1
        depth[id(span)] = level
        found.append(SpanExplanation(span.record, level, span.reading))
    return found


class TraceExplanation(NamedTuple):
    """One trace explained: its id, its spans (``explain``) and its ``Coverage``."""

    trace_id: str
    spans: list[SpanExplanation]
    coverage: Coverage


def explain_traces(
    records: Iterable[SpanRecord], readers: Sequence[Reader] | None = None, *, split: bool = True
) -> Iterator[TraceExplanation]:
    """Every trace among ``records`` explained, in the order the traces first appear; the
    coverage's warnings are about the trace's trajectories (one per agent invocation when
    ``split``, as ``trajectories_from_trace`` builds them). Each trace is read once."""
    traces: dict[str, list[SpanRecord]] = {}
    for record in records:
        traces.setdefault(record.trace_id, []).append(record)
    for trace_id, spans in traces.items():
        ordered, scopes, trajectories = _read_trace(_tree(spans, readers), split)
        yield TraceExplanation(trace_id, _explained(ordered), coverage_of(ordered, scopes, trajectories))


# --- coverage: how much of a trace the readers understood -------------------------------------


FALLBACKS = frozenset({SPAN_NAME})
"""The readers that guess from a span's name alone: a span only they read is counted apart."""

TOOL_CALLS_NOT_READ = "tool_calls_not_read"
"""Warning: a model asked for tool calls, but no tool span was read (the trajectory's tool calls,
if any, are the requests alone: no execution, error or duration of their own)."""
FINAL_ANSWER_NOT_READ = "final_answer_not_read"
"""Warning: the root span carries an output, but the trajectory has no final answer."""

_OUTPUT_KEY = re.compile(
    r"(?:^|[._])(?:output|outputs|output_messages|completion|completions|final_result)(?:$|[._])"
    r"|(?:^|\.)response\.text$|spanOutputs$",
    re.IGNORECASE,
)
"""Attribute keys that hold a span's output in the conventions we know of and those we do not
(``output.value``, ``gen_ai.output.messages``, ``traceloop.entity.output``, ``ai.response.text``,
``gen_ai.completion.0.content``, ...); token counts excluded apart."""


@dataclass(frozen=True)
class CoverageWarning:
    """Something the readers plainly missed in one trajectory: its ``kind``
    (``TOOL_CALLS_NOT_READ``, ``FINAL_ANSWER_NOT_READ``) and a sentence for people."""

    kind: str
    text: str


@dataclass
class Coverage:
    """How much of a trace the readers understood: its spans, those read by a convention reader
    (``read``, by convention), those read by a fallback alone (``fallback``, by fallback), those
    no reader recognised (``unread``), and ``warnings`` about its trajectories."""

    spans: int = 0
    read: dict[str, int] = field(default_factory=dict)
    fallback: dict[str, int] = field(default_factory=dict)
    unread: int = 0
    trajectories: int = 0
    warnings: tuple[CoverageWarning, ...] = ()

    def line(self) -> str:
        """``coverage: 9 spans: 5 read (genai 5), 1 by fallback (span-name 1), 3 unread``."""
        return (f"coverage: {self.spans} span{'' if self.spans == 1 else 's'}: "
                f"{sum(self.read.values())} read{_by(self.read)}, "
                f"{sum(self.fallback.values())} by fallback{_by(self.fallback)}, {self.unread} unread")

    def lines(self) -> list[str]:
        """The coverage line, then one ``warning: ...`` line per warning."""
        return [self.line(), *(f"warning: {w.text}" for w in self.warnings)]


def _by(counts: dict[str, int]) -> str:
    return f" ({', '.join(f'{name} {n}' for name, n in counts.items())})" if counts else ""


def coverage_of(
    ordered: Sequence[_Span], scopes: Sequence[Sequence[_Span]], trajectories: Sequence[Trajectory]
) -> Coverage:
    """The coverage of a trace read by ``assemble._read_trace``: its spans (read), each
    trajectory's spans and the trajectories. Counts the readings already made."""
    conventions = Counter(span.reading.convention for span in ordered if span.reading is not None)
    read = {name: n for name, n in conventions.items() if name not in FALLBACKS}
    fallback = {name: n for name, n in conventions.items() if name in FALLBACKS}
    warnings = tuple(w for scope, trajectory in zip(scopes, trajectories) for w in _warnings(scope, trajectory))
    return Coverage(len(ordered), read, fallback, len(ordered) - sum(conventions.values()), len(trajectories),
                    warnings)


def _warnings(scope: Sequence[_Span], trajectory: Trajectory) -> Iterator[CoverageWarning]:
    where = f"{trajectory.agent_name or 'invocation'} (span {trajectory.span_id})"
    # Requested calls become tool steps only when the trajectory has no tool span (assemble._steps).
    requested = [step.name for step in trajectory.steps
                 if step.step_type is StepType.TOOL and step.metadata.get("requested")]
    if requested:
        yield CoverageWarning(
            TOOL_CALLS_NOT_READ,
            f"{where}: the model requested tool calls ({', '.join(dict.fromkeys(requested))}) but no tool span "
            "was read: the trajectory's tool calls are the requests alone",
        )
    if not (trajectory.final_response or "").strip() and scope:
        root = scope[0]
        if _has_output(root) and not _asks_for_tools_only(root):
            yield CoverageWarning(
                FINAL_ANSWER_NOT_READ,
                f"{where}: the root span {root.record.name!r} has output but the trajectory has no final answer",
            )


def _asks_for_tools_only(span: _Span) -> bool:
    """Whether the span is a model call whose reply only asks for tools (a turn's call before the
    last, traced alone): it has no answer to read."""
    reading = span.reading
    return (reading is not None and bool(reading.requested_tool_calls)
            and not any(m.has_text for m in reading.output_messages))


def _has_output(span: _Span) -> bool:
    reading = span.reading
    if reading is not None and (reading.output is not None or reading.output_messages):
        return True
    return any(
        value not in (None, "", [], {}) and not (isinstance(value, str) and not value.strip())
        and "token" not in key.lower() and _OUTPUT_KEY.search(key) is not None
        for key, value in span.record.attributes.items()
    )


class CoverageTally:
    """Coverage summed over every trace read while it counts (see ``counting_coverage``):
    spans read by convention, by fallback, unread, trajectories, and trajectories per warning."""

    def __init__(self) -> None:
        self.traces = 0
        self.spans = 0
        self.read: Counter[str] = Counter()
        self.fallback: Counter[str] = Counter()
        self.unread = 0
        self.trajectories = 0
        self.warnings: Counter[str] = Counter()

    def add(self, coverage: Coverage) -> None:
        """Count one trace's ``coverage``."""
        self.traces += 1
        self.spans += coverage.spans
        self.read.update(coverage.read)
        self.fallback.update(coverage.fallback)
        self.unread += coverage.unread
        self.trajectories += coverage.trajectories
        self.warnings.update(w.kind for w in coverage.warnings)

    def merge(self, other: CoverageTally) -> None:
        """Count what ``other`` counted too (coverage counted in several processes)."""
        self.traces += other.traces
        self.spans += other.spans
        self.read.update(other.read)
        self.fallback.update(other.fallback)
        self.unread += other.unread
        self.trajectories += other.trajectories
        self.warnings.update(other.warnings)

    def as_dict(self) -> dict[str, Any]:
        """The counts as JSON-ready data (:meth:`from_dict` reads them back)."""
        return {"traces": self.traces, "spans": self.spans, "read": dict(self.read), "fallback": dict(self.fallback),
                "unread": self.unread, "trajectories": self.trajectories, "warnings": dict(self.warnings)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CoverageTally:
        """The tally :meth:`as_dict` wrote."""
        tally = cls()
        tally.traces, tally.spans = int(data.get("traces", 0)), int(data.get("spans", 0))
        tally.unread, tally.trajectories = int(data.get("unread", 0)), int(data.get("trajectories", 0))
        tally.read.update(data.get("read", {}))
        tally.fallback.update(data.get("fallback", {}))
        tally.warnings.update(data.get("warnings", {}))
        return tally

    def __call__(
        self, ordered: Sequence[_Span], scopes: Sequence[Sequence[_Span]], trajectories: Sequence[Trajectory]
    ) -> None:
        self.add(coverage_of(ordered, scopes, trajectories))


@contextmanager
def counting_coverage(tally: CoverageTally | None = None) -> Iterator[CoverageTally]:
    """Count in ``tally`` (a new one by default) the coverage of every trace assembled in this
    context (``trajectories_from_trace`` and all that uses it: files, sources, streams), as it is
    read: no span is read twice.

    >>> with counting_coverage() as tally:
    ...     _ = trajectories_from_trace(spans)  # doctest: +SKIP
    """
    tally = tally if tally is not None else CoverageTally()
    token = _observer.set(tally)
    try:
        yield tally
    finally:
        _observer.reset(token)
