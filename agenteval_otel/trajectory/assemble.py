"""Trace assembly: spans → span trees → ``Trajectory`` objects.

Spans are grouped by trace id and put in tree order: a parent before its children, siblings by
start time, ties in arrival order. A span whose parent is missing becomes a root; a child that
(by clock skew) starts before its parent still follows it. Each span is read by the convention
readers; a trace is split into one trajectory per agent invocation (the outermost agent spans),
and invocations are joined into conversations by their conversation id
(``gen_ai.conversation.id``, ``session.id``, ...).

>>> trajectories = build_trajectories(records, group="invocation")  # doctest: +SKIP
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import replace
from typing import Any, Literal

from agenteval_otel.semconv import EVAL_ID, EVAL_SET_ID, EVALUATION_MARKER
from agenteval_otel.trajectory._unchecked import unchecked
from agenteval_otel.trajectory.buffer import TraceBuffer
from agenteval_otel.trajectory.chains import error_reported, join_model_calls
from agenteval_otel.trajectory.conventions import (
    ChatMessage,
    Reader,
    RequestedToolCall,
    SpanReading,
    SpanRole,
    span_reader,
)
from agenteval_otel.trajectory.conventions.values import (
    bare_argument_named,
    is_object_repr,
    is_plain_text,
    text_from,
)
from agenteval_otel.trajectory.messages import MessageContent, normalize_role
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.steps import StepType, TrajectoryStep, unchecked_step
from agenteval_otel.trajectory.trajectory import Trajectory
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = [
    "Grouping",
    "build_trajectories",
    "iter_trajectories",
    "join_conversations",
    "tree_order",
    "trajectories_from_trace",
]

Grouping = Literal["trace", "invocation", "conversation"]
GROUPINGS: tuple[Grouping, ...] = ("trace", "invocation", "conversation")

_RESPONDERS = (SpanRole.MODEL, SpanRole.MESSAGE)
_NOT_A_NAME = re.compile(r"[^a-z0-9]+")
_ROLE_PREFIXES = frozenset({"assistant", "ai", "model", "messagerole.assistant"})


# --- the span tree ----------------------------------------------------------------------------


class _Span:
    """A span in its trace's tree, with what its reader read (``None``: not read, or nothing)."""

    __slots__ = ("children", "parent", "reading", "record")

    def __init__(self, record: SpanRecord) -> None:
        self.record = record
        self.reading: SpanReading | None = None
        self.parent: _Span | None = None
        self.children: list[_Span] | tuple[()] = ()  # a list once it has one


def _link(records: Iterable[SpanRecord]) -> list[_Span]:
    """The spans of one trace (the first of duplicate ids kept) in tree order."""
    spans: dict[str, _Span] = {}
    for record in records:
        if record.span_id not in spans:
            spans[record.span_id] = _Span(record)
    roots: list[_Span] = []
    for span in spans.values():
        parent_id = span.record.parent_id
        parent = spans.get(parent_id) if parent_id else None
        if parent is None or parent is span:
            roots.append(span)
        else:
            span.parent = parent
            children = parent.children
            if isinstance(children, list):
                children.append(span)
            else:
                parent.children = [span]
    return _depth_first(roots, spans)


def _tree(records: Iterable[SpanRecord], readers: Sequence[Reader] | None = None) -> list[_Span]:
    """The spans of one trace in tree order, each read, router readings checked."""
    ordered = _link(records)
    read = span_reader(readers)
    for span in ordered:
        span.reading = read(span.record)
    for span in ordered:
        if span.reading is not None and span.reading.source_node is not None and not _is_router(span):
            span.reading = None
    model_below: set[int] = set()  # spans with a model span beneath them
    for span in reversed(ordered):  # a span's descendants before it
        reading = span.reading
        wraps_a_model = id(span) in model_below
        is_model = reading is not None and reading.role is SpanRole.MODEL
        if span.parent is not None and (wraps_a_model or is_model):
            model_below.add(id(span.parent))
        if reading is not None and is_model and not _is_model_call(reading, wraps_a_model=wraps_a_model):
            span.reading = replace(reading, role=SpanRole.IGNORED)
    return ordered


def _is_model_call(reading: SpanReading, *, wraps_a_model: bool) -> bool:
    """A model span is one model call unless it wraps another model span (a framework's wrapper
    around the client's own span: one call, read from the innermost) or is an OpenInference LLM
    span with no messages and no token counts (a preparation step, no call made)."""
    if wraps_a_model:
        return False
    return not (reading.convention == "openinference" and not reading.input_messages
                and not reading.output_messages and reading.usage is None)


def _span_start(span: _Span) -> int:
    return span.record.start_ns


def _by_start(spans: Sequence[_Span]) -> list[_Span]:
    """``spans`` (in arrival order) by start time; the sort is stable, so ties keep arrival order."""
    return sorted(spans, key=_span_start) if len(spans) > 1 else list(spans)


def _depth_first(roots: list[_Span], spans: dict[str, _Span]) -> list[_Span]:
    ordered: list[_Span] = []
    append = ordered.append
    stack = _by_start(roots)[::-1]
    pop, extend = stack.pop, stack.extend
    while stack:  # each span has one parent: from the roots, each is reached once
        span = pop()
        append(span)
        if span.children:
            extend(_by_start(span.children)[::-1])
    if len(ordered) == len(spans):
        return ordered
    return _with_cycles(ordered, spans)


def _with_cycles(ordered: list[_Span], spans: dict[str, _Span]) -> list[_Span]:
    """``ordered`` (the spans reached from the roots) and then the spans caught in parent cycles."""
    append = ordered.append
    seen = {id(span) for span in ordered}
    while True:
        # Spans caught in a parent cycle have no root: the earliest left becomes a root of its own.
        stack = [next(s for s in _by_start(list(spans.values())) if id(s) not in seen)]
        pop, extend = stack.pop, stack.extend
        while stack:
            span = pop()
            if id(span) in seen:
                continue
            seen.add(id(span))
            append(span)
            if span.children:
                extend(_by_start(span.children)[::-1])
        if len(ordered) == len(spans):
            return ordered


def _is_router(span: _Span) -> bool:
    """A router reading holds only as a direct child of its node, run after the node's work."""
    parent = span.parent
    reading = span.reading
    if parent is None or parent.reading is None or reading is None:
        return False
    if parent.reading.role is not SpanRole.NODE or parent.reading.name != reading.source_node:
        return False
    return all(
        sibling.record.end_ns <= span.record.start_ns
        for sibling in parent.children
        if sibling is not span
        and not (sibling.reading is not None and sibling.reading.source_node is not None)
    )


def tree_order(records: Iterable[SpanRecord]) -> list[SpanRecord]:
    """The spans of one trace, parents before children, siblings by start time (stable)."""
    return [span.record for span in _link(records)]


def _invocations(ordered: list[_Span]) -> list[list[_Span]]:
    """The subtrees of the outermost agent spans (a slice each, in tree order)."""
    size: dict[int, int] = {}
    for span in reversed(ordered):
        size[id(span)] = 1 + sum(size[id(child)] for child in span.children if id(child) in size)
    scopes: list[list[_Span]] = []
    index = 0
    while index < len(ordered):
        span = ordered[index]
        if span.reading is not None and span.reading.role is SpanRole.AGENT:
            scopes.append(ordered[index : index + size[id(span)]])
            index += size[id(span)]
        else:
            index += 1
    return scopes


# --- from readings to a trajectory ------------------------------------------------------------


class _Requested:
    """The tool calls models asked for, matched to tool spans; the tool results sent back; the
    tool definitions offered."""

    def __init__(self, readings: Sequence[SpanReading]) -> None:
        self.definitions = {d.name: d for reading in readings for d in reading.tool_definitions}
        self.calls = [
            call
            for reading in readings
            if reading.role in _RESPONDERS
            for call in reading.requested_tool_calls
        ]
        self.used = [False] * len(self.calls)
        self.responses: dict[str, Any] = {}
        self.errors: dict[str, str] = {}
        for reading in readings:
            for message in reading.input_messages:
                for response in message.tool_responses:
                    if response.call_id is not None:
                        self.responses.setdefault(str(response.call_id), response.response)
                        if response.error is not None:
                            self.errors.setdefault(str(response.call_id), response.error)

    def _claim(self, index: int) -> RequestedToolCall:
        self.used[index] = True
        return self.calls[index]

    def take(
        self, name: str, call_id: str | None, args: dict[str, Any] | None, raw: Any = None
    ) -> RequestedToolCall | None:
        """The requested call a tool span carried out: same id, else same name and arguments
        (or, for a bare ``raw`` value, the one argument), else the first unclaimed call of that name."""
        free = [i for i, used in enumerate(self.used) if not used]
        if call_id is not None:
            for i in free:
                if self.calls[i].call_id == call_id:
                    return self._claim(i)
        if args is not None:
            for i in free:
                if self.calls[i].name == name and self.calls[i].args == args:
                    return self._claim(i)
        elif raw is not None:
            for i in free:
                asked = self.calls[i].args
                if self.calls[i].name == name and asked is not None and list(asked.values()) == [raw]:
                    return self._claim(i)
        for i in free:
            if self.calls[i].name == name:
                return self._claim(i)
        return None

    def single_parameter(self, name: str) -> str | None:
        """The name of a one-parameter tool's parameter, when its definition was recorded."""
        definition = self.definitions.get(name)
        return None if definition is None else definition.single_parameter

    def response(self, call_id: str | None) -> Any:
        return None if call_id is None else self.responses.get(call_id)

    def error(self, call_id: str | None) -> str | None:
        """Why the call failed, when the result sent back for it was marked a failure."""
        return None if call_id is None else self.errors.get(call_id)


def _normal_name(name: str) -> str:
    return _NOT_A_NAME.sub("_", name.lower()).strip("_")


def _is_handoff(call: RequestedToolCall, agent_names: set[str]) -> bool:
    """ADK's ``transfer_to_agent``, or the OpenAI Agents SDK's ``transfer_to_<agent>``."""
    if call.name == "transfer_to_agent":
        return True
    return (
        call.name.startswith("transfer_to_") and _normal_name(call.name[len("transfer_to_") :]) in agent_names
    )


def _step(
    step_type: StepType,
    name: Any,
    record: SpanRecord,
    reading: SpanReading,
    *,
    args: dict[str, Any] | None = None,
    result: Any = None,
    call_id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> TrajectoryStep:
    """A step read from a span, with the typed fields every such step has: where it came from
    (span, trace, the convention in ``metadata``) and how it went (error, duration)."""
    start, error = record.start_ns, reading.error
    return unchecked_step(
        step_type,
        name if type(name) is str else str(name),
        {} if not args else dict(args),
        result,
        start / 1e9,
        call_id if call_id is None or type(call_id) is str else str(call_id),
        error if error is None or type(error) is str else str(error),
        max(0, record.end_ns - start) / 1e6,
        record.span_id,
        record.trace_id,
        metadata if metadata is not None else _metadata(reading),
    )


def _metadata(reading: SpanReading) -> dict[str, Any]:
    if reading.metadata:
        return {"convention": reading.convention, **dict(reading.metadata)}
    return {"convention": reading.convention}


def _output_text(reading: SpanReading) -> str | None:
    texts = [m.text for m in reading.output_messages if m.has_text and m.text is not None]
    if texts:
        return "\n".join(texts)
    return reading.result if isinstance(reading.result, str) else None


def _named_by_node(span: _Span, tool: str, value: Any) -> dict[str, Any] | None:
    """A tool's bare argument named by the input of a graph node it ran in (a ``Send`` payload,
    the state), the nearest such node first, within its invocation."""
    ancestor = span.parent
    while ancestor is not None:
        reading = ancestor.reading
        if reading is not None and reading.role is SpanRole.AGENT:
            return None
        if reading is not None and reading.role is SpanRole.NODE and reading.input is not None:
            named = bare_argument_named(reading.input, tool, value)
            if named is not None:
                return named
        ancestor = ancestor.parent
    return None


def _tool_step(span: _Span, reading: SpanReading, requested: _Requested) -> TrajectoryStep:
    record = span.record
    match = requested.take(reading.name, reading.call_id, reading.args, reading.raw_args)
    metadata = _metadata(reading)
    args = reading.args
    if args is None and match is not None and match.args is not None:
        args = match.args
    if args is None and reading.raw_args is not None:
        # A bare value (OpenInference records a one-key string argument dict as its value):
        # the key is known from the tool's definition, else from the graph node's input.
        parameter = requested.single_parameter(reading.name)
        if parameter is not None:
            args = {parameter: reading.raw_args}
        elif (named := _named_by_node(span, reading.name, reading.raw_args)) is not None:
            args = named
        else:
            metadata["raw_args"] = reading.raw_args
    call_id = reading.call_id or (match.call_id if match else None)
    result = reading.result
    if result is None and reading.error is None:  # a failed call has no result, whatever the model was told
        result = requested.response(call_id)
    return _step(StepType.TOOL, reading.name, record, reading, args=args, result=result, call_id=call_id,
                 metadata=metadata)


def _requested_steps(
    record: SpanRecord, reading: SpanReading, requested: _Requested, agent_names: set[str], phantoms: set[str]
) -> list[TrajectoryStep]:
    steps = []
    for call in reading.requested_tool_calls:
        if _is_handoff(call, agent_names) or call.name in phantoms:
            continue
        metadata: dict[str, Any] = {"requested": True}
        if call.args is None and call.raw_args is not None:
            metadata["raw_args"] = call.raw_args
        response = requested.response(call.call_id)
        error = requested.error(call.call_id) or error_reported(response)
        steps.append(
            TrajectoryStep.tool(
                call.name,
                call.args or {},
                result=None if error is not None else response,
                call_id=call.call_id,
                error=error,
                timestamp=record.end_ns / 1e9,
                span_id=record.span_id,
                trace_id=record.trace_id,
                metadata=metadata,
            )
        )
    return steps


def _steps(scope: Sequence[_Span], readings: Sequence[SpanReading], phantoms: set[str]) -> list[TrajectoryStep]:
    """The steps of an invocation (``scope``: its read spans, ``readings`` theirs); requested
    calls of ``phantoms`` (tools whose spans were recognised as not being steps, e.g. a
    framework's built-in ``final_answer``) are not steps."""
    requested = _Requested(readings)
    has_tool_spans = any(r.role is SpanRole.TOOL for r in readings)
    agent_names = {_normal_name(r.name) for r in readings if r.role is SpanRole.AGENT}
    steps: list[TrajectoryStep] = []
    for span, reading in zip(scope, readings):
        record = span.record
        role = reading.role
        if role is SpanRole.TOOL:
            steps.append(_tool_step(span, reading, requested))
        elif role is SpanRole.NODE:
            steps.append(_step(StepType.NODE, reading.name, record, reading))
        elif role is SpanRole.CONDITIONAL:
            value = reading.value
            steps.append(_step(StepType.CONDITIONAL, reading.name, record, reading,
                               args=None if value is None else {"value": value}, result=reading.branch))
        elif role in _RESPONDERS:
            metadata = _metadata(reading)
            calls = reading.requested_tool_calls
            if calls:
                metadata["tool_calls"] = [{"name": c.name, "args": c.args, "call_id": c.call_id} for c in calls]
            if reading.usage is not None:
                usage = reading.usage
                metadata["usage"] = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
            if role is SpanRole.MODEL:
                metadata["model"] = reading.name
            speaker = reading.output_messages[-1].role if reading.output_messages else reading.name
            steps.append(_step(StepType.MESSAGE, speaker, record, reading, result=_output_text(reading),
                               metadata=metadata))
            if not has_tool_spans:
                steps.extend(_requested_steps(record, reading, requested, agent_names, phantoms))
    return steps


def _last_text(messages: Sequence[ChatMessage], role: str) -> str | None:
    for message in reversed(messages):
        if message.role == role and message.has_text:
            return message.text
    return None


def _user_input(agents: Sequence[SpanReading], responders: Sequence[SpanReading]) -> str | None:
    recorded = next((a.input for a in agents if a.input is not None), None)
    if recorded is not None and (text := text_from(recorded, "user")) is not None and not is_object_repr(text):
        return text
    for reading in responders:
        if reading.input_messages:
            if (text := _last_text(reading.input_messages, "user")) is not None:
                return text
            break
    return recorded if is_plain_text(recorded) else None


def _final_response(agents: Sequence[SpanReading], responders: Sequence[SpanReading]) -> str | None:
    agent = next((a for a in agents if a.output is not None), None)
    if agent is not None:
        if agent.output_is_final:
            return agent.output if isinstance(agent.output, str) else str(agent.output)
        text = text_from(agent.output, "assistant")
        if text is not None and text.strip() and not is_object_repr(text):
            return _without_role_prefix(text.strip())
    for reading in reversed(responders):
        if reading.role is SpanRole.MODEL:
            text = _output_text(reading)
            if text is not None and text.strip():
                return text.strip()
    return None if agent is None or not is_plain_text(agent.output) else str(agent.output)


def _without_role_prefix(text: str) -> str:
    """``assistant: It is sunny.`` (a message printed with its role) → ``It is sunny.``."""
    head, colon, rest = text.partition(":")
    return rest.strip() if colon and head.strip().lower() in _ROLE_PREFIXES and rest.strip() else text


def _message_content(message: ChatMessage) -> MessageContent:
    role = normalize_role(message.role)
    if not message.tool_calls and not message.tool_responses:
        return unchecked(MessageContent, {"role": role, "content": _text_or_none(message.text) or "", "metadata": {}})
    parts: list[dict[str, Any]] = []
    if message.has_text:
        parts.append({"type": "text", "text": message.text})
    parts.extend(
        {
            "type": "tool_call",
            "id": c.call_id,
            "name": c.name,
            "arguments": c.args if c.args is not None else c.raw_args,
        }
        for c in message.tool_calls
    )
    parts.extend(
        {"type": "tool_call_response", "id": r.call_id, "response": r.response}
        for r in message.tool_responses
    )
    return unchecked(MessageContent, {"role": role, "content": parts, "metadata": {}})


def _messages(
    responders: Sequence[SpanReading], user_input: str | None, final_response: str | None
) -> list[MessageContent]:
    for reading in reversed(responders):
        if reading.input_messages or reading.output_messages:
            return [_message_content(m) for m in (*reading.input_messages, *reading.output_messages)]
    found = []
    if user_input is not None:
        found.append(MessageContent.user(user_input))
    if final_response is not None:
        found.append(MessageContent.assistant(final_response))
    return found


def _usage(agents: Sequence[SpanReading], responders: Sequence[SpanReading]) -> TokenUsage:
    total = TokenUsage()
    counted = False
    for reading in responders:
        if reading.usage is not None:
            total, counted = total + reading.usage, True
    if not counted and agents and agents[0].usage is not None:
        total = agents[0].usage
    return total


def _trajectory(scope: Sequence[_Span]) -> Trajectory:
    read: list[_Span] = []
    readings: list[SpanReading] = []
    agents: list[SpanReading] = []
    responders: list[SpanReading] = []
    phantoms: set[str] = set()
    trace_ids: dict[str, None] = {}
    eval_id = eval_set_id = None
    for span in scope:  # one pass over the spans: what each view needs
        record = span.record
        trace_ids[record.trace_id] = None
        attributes = record.attributes
        if eval_id is None and EVAL_ID in attributes:
            eval_id = str(attributes[EVAL_ID])
        if eval_set_id is None and EVAL_SET_ID in attributes:
            eval_set_id = str(attributes[EVAL_SET_ID])
        reading = span.reading
        if reading is None:
            continue
        role = reading.role
        if role is SpanRole.IGNORED:
            phantoms.add(reading.name)
            continue
        read.append(span)
        readings.append(reading)
        if role is SpanRole.AGENT:
            agents.append(reading)
        elif role in _RESPONDERS:
            responders.append(reading)
    user_input = _user_input(agents, responders)
    final_response = _final_response(agents, responders)
    conversation = next((r.conversation_id for r in (*agents, *readings) if r.conversation_id), None)
    if conversation is None:
        conversation = _enclosing_conversation(scope[0])
    root = scope[0].record
    return unchecked(Trajectory, {
        "steps": _steps(read, readings, phantoms),
        "trace_ids": list(trace_ids),
        "trace_id": root.trace_id,
        "span_id": root.span_id,
        "conversation_id": _text_or_none(conversation),
        "eval_id": eval_id,
        "eval_set_id": eval_set_id,
        "agent_name": _text_or_none(agents[0].name) if agents else None,
        "user_input": user_input,
        "final_response": final_response,
        "messages": _messages(responders, user_input, final_response),
        "usage": _usage(agents, responders),
        "start_ns": min((s.record.start_ns for s in scope), default=None),
        "end_ns": max((s.record.end_ns for s in scope), default=None),
        "turns": [],
    })


def _text_or_none(value: Any) -> str | None:
    return value if value is None or type(value) is str else str(value)


def _enclosing_conversation(span: _Span | None) -> str | None:
    """The conversation id read from ``span`` (the invocation's first) or a span around it, one
    not a step itself (a trace span holding several turns)."""
    while span is not None:
        if span.reading is not None and span.reading.conversation_id:
            return span.reading.conversation_id
        span = span.parent
    return None


# --- public API -------------------------------------------------------------------------------


_MARKED = (True, "true", "True")
"""How the evaluation marker reads, as a bool or from a file that kept it as a string."""


_Observer = Callable[[Sequence[_Span], Sequence[Sequence[_Span]], Sequence[Trajectory]], None]
_observer: ContextVar[_Observer | None] = ContextVar("agenteval_trajectory_observer", default=None)
"""Called (when set) with every trace read: its spans, each trajectory's spans, the trajectories
(how ``explain.counting_coverage`` counts what the readers understood, without reading again)."""


def trajectories_from_trace(
    records: Iterable[SpanRecord], *, split: bool = True, readers: Sequence[Reader] | None = None
) -> list[Trajectory]:
    """The trajectories of one trace: one per outermost agent invocation when ``split`` (and
    the trace has more than one), else one for the whole trace. ``readers``: the convention
    readers to use (default: the installed ones, then ours). Our evaluation spans
    (``agenteval.evaluation``) are left out: a trace holding only them has no trajectory."""
    ordered, scopes, found = _read_trace(
        _tree((r for r in records if r.attributes.get(EVALUATION_MARKER) not in _MARKED), readers), split)
    observe = _observer.get()
    if observe is not None:
        observe(ordered, scopes, found)
    _unlink(ordered)
    return found


def _unlink(ordered: list[_Span]) -> None:
    """Break the parent ↔ child cycles of a read trace, so that its spans are freed as soon as
    it is read rather than by the cycle collector (which millions of spans would keep busy)."""
    for span in ordered:
        span.parent = None
        span.children = ()


def _read_trace(ordered: list[_Span], split: bool) -> tuple[list[_Span], list[list[_Span]], list[Trajectory]]:
    """A read trace (``_tree``), each trajectory's spans, and its trajectories."""
    readings = [span.reading for span in ordered if span.reading is not None]
    if not ordered or (readings and all(r.role is SpanRole.IGNORED for r in readings)):
        return ordered, [], []  # nothing, or only spans known not to be a run (a framework building an agent)
    agents = sum(1 for r in readings if r.role is SpanRole.AGENT)
    scopes = _invocations(ordered) if split and agents > 1 else []  # one agent: one invocation
    if len(scopes) <= 1:
        scopes = [ordered]
    return ordered, scopes, [_trajectory(scope) for scope in scopes]


def join_conversations(trajectories: Iterable[Trajectory]) -> list[Trajectory]:
    """Join invocations that share a conversation id into one trajectory each (turns by start
    time); invocations without one stay as they are. Ordered by start time."""
    groups: dict[str, list[Trajectory]] = {}
    alone: list[Trajectory] = []
    for trajectory in trajectories:
        if trajectory.conversation_id:
            groups.setdefault(trajectory.conversation_id, []).append(trajectory)
        else:
            alone.append(trajectory)
    joined = [Trajectory.join(sorted(turns, key=_start)) for turns in groups.values()]
    return sorted([*joined, *alone], key=_start)


def _start(trajectory: Trajectory) -> int:
    return trajectory.start_ns if trajectory.start_ns is not None else 0


def _check_grouping(group: str) -> None:
    if group not in GROUPINGS:
        raise ValueError(f"group must be one of {', '.join(GROUPINGS)}, got {group!r}")


def build_trajectories(
    records: Iterable[SpanRecord], *, group: Grouping = "invocation", readers: Sequence[Reader] | None = None
) -> list[Trajectory]:
    """Every trajectory in ``records`` (any number of traces, any order), by start time.

    ``group``: ``"trace"`` (one per trace), ``"invocation"`` (one per agent invocation) or
    ``"conversation"`` (invocations joined by conversation id). ``readers``: the convention
    readers (default: the installed ones, then ours).
    """
    _check_grouping(group)
    traces: dict[str, list[SpanRecord]] = {}
    for record in records:
        traces.setdefault(record.trace_id, []).append(record)
    found = [t for spans in traces.values()
             for t in trajectories_from_trace(spans, split=group != "trace", readers=readers)]
    if group != "trace":
        found = list(join_model_calls(found))
    if group == "conversation":
        return join_conversations(found)
    return sorted(found, key=_start)


def iter_trajectories(
    records: Iterable[SpanRecord],
    *,
    group: Grouping = "invocation",
    linger: int = 1000,
    readers: Sequence[Reader] | None = None,
) -> Iterator[Trajectory]:
    """Trajectories from a stream of spans, trace by trace as traces complete; memory stays
    bounded by the open traces. With ``group="conversation"`` the (small) trajectories are held
    until the stream ends so that every turn is joined."""
    _check_grouping(group)
    buffer: TraceBuffer[SpanRecord] = TraceBuffer(linger=linger)

    def traces() -> Iterator[list[SpanRecord]]:
        add = buffer.add
        for record in records:
            for trace in add(record.trace_id, record, is_root=record.parent_id is None):
                yield trace.items
        for trace in buffer.flush():
            yield trace.items

    found: Iterator[Trajectory] = (
        t for spans in traces() for t in trajectories_from_trace(spans, split=group != "trace", readers=readers))
    if group != "trace":
        found = join_model_calls(found)
    if group == "conversation":
        yield from join_conversations(found)
    else:
        yield from found
