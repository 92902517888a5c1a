"""What a convention reader learns from one span: its role in the agent run and its content.

A reader returns a ``SpanReading`` (or ``None`` when the span is not of its producer). Trace
assembly turns readings into ``TrajectoryStep``s and the views of a ``Trajectory``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from agenteval_otel.trajectory.usage import TokenUsage

__all__ = [
    "ChatMessage",
    "Markers",
    "RequestedToolCall",
    "SpanReading",
    "SpanRole",
    "ToolDefinition",
    "ToolResponse",
]


class SpanRole(str, Enum):
    """The part a span plays in an agent run."""

    AGENT = "agent"
    """An agent or workflow invocation: its input, its output, its name."""
    MODEL = "model"
    """A model call: the messages sent and received, the tool calls requested, token usage."""
    TOOL = "tool"
    """A tool execution."""
    NODE = "node"
    """A graph node."""
    CONDITIONAL = "conditional"
    """A conditional edge: the branch (or branches) taken."""
    MESSAGE = "message"
    """An explicit message step (a role and its text)."""
    HANDOFF = "handoff"
    """Control passed from one agent to another: never a tool call."""
    IGNORED = "ignored"
    """Recognised, but not part of the trajectory (phantom, evaluation or plumbing spans)."""


@dataclass(slots=True)
class RequestedToolCall:
    """A tool call a model asked for. ``args`` is ``None`` when the arguments were not captured
    or are not a JSON object (then ``raw_args`` keeps them)."""

    name: str
    args: dict[str, Any] | None = None
    call_id: str | None = None
    raw_args: Any = None


@dataclass(slots=True)
class ToolResponse:
    """A tool result sent back to a model; ``error``: why the call failed, when the producer
    marked the result as a failure."""

    call_id: str | None
    response: Any
    name: str | None = None
    error: str | None = None


@dataclass(slots=True)
class ToolDefinition:
    """A tool offered to a model: its name and the names of its parameters."""

    name: str
    parameters: tuple[str, ...] = ()

    @property
    def single_parameter(self) -> str | None:
        """The parameter's name when the tool takes exactly one."""
        return self.parameters[0] if len(self.parameters) == 1 else None


@dataclass(slots=True)
class ChatMessage:
    """One message sent to or received from a model, in a producer-neutral shape."""

    role: str
    text: str | None = None
    tool_calls: tuple[RequestedToolCall, ...] = ()
    tool_responses: tuple[ToolResponse, ...] = ()

    @property
    def has_text(self) -> bool:
        """Whether the message carries non-blank text."""
        return bool(self.text and self.text.strip())


@dataclass(slots=True)
class SpanReading:
    """What one span says about the agent run.

    Tool spans fill ``args`` (``None`` when not captured or not a JSON object, then
    ``raw_args`` keeps the input), ``result``, ``call_id`` and ``error``. Conditionals fill
    ``branch`` and ``value``; ``source_node`` means the reading only holds as a direct child of
    that graph node. Agent spans fill ``input`` and ``output``; model spans the messages,
    ``usage`` and the ``tool_definitions`` offered. ``convention`` names the reader that produced it.
    """

    role: SpanRole
    name: str
    convention: str
    args: dict[str, Any] | None = None
    raw_args: Any = None
    result: Any = None
    call_id: str | None = None
    error: str | None = None
    branch: str | list[str] | None = None
    value: Any = None
    source_node: str | None = None
    input: Any = None
    output: Any = None
    output_is_final: bool = False
    input_messages: tuple[ChatMessage, ...] = ()
    output_messages: tuple[ChatMessage, ...] = ()
    usage: TokenUsage | None = None
    tool_definitions: tuple[ToolDefinition, ...] = ()
    conversation_id: str | None = None
    metadata: tuple[tuple[str, Any], ...] = ()

    @property
    def requested_tool_calls(self) -> list[RequestedToolCall]:
        """The tool calls a model span's output asked for."""
        return [call for message in self.output_messages for call in message.tool_calls]


@dataclass(frozen=True, slots=True)
class Markers:
    """What a span must carry for a reader to recognise it: one of ``keys`` among its attributes,
    an attribute key starting with one of ``prefixes``, or one of ``span_names`` as its name. A
    span with none of them is never given to that reader. ``exclusive``: a span that carries them
    (and no span events) is read by this reader alone among those with markers, because the
    reader reads everything the others would."""

    keys: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    span_names: frozenset[str] = frozenset()
    exclusive: bool = False

    def found_in(self, attributes: dict[str, Any], name: str) -> bool:
        """Whether a span with these attributes and this name carries one of the markers."""
        return (
            not self.keys.isdisjoint(attributes)
            or name in self.span_names
            or (bool(self.prefixes) and any(key.startswith(self.prefixes) for key in attributes))
        )
