"""The steps of an agent trajectory: what ran, in which order, with which arguments.

This module is a leaf: it imports nothing else from agenteval_otel but the package's model
builder, so every other package can depend on it.

>>> TrajectoryStep.tool("get_weather", args={"city": "Tokyo"}).step_type
<StepType.TOOL: 'tool'>
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenteval_otel.trajectory._unchecked import blank_fields, from_fields

__all__ = ["StepType", "TrajectoryStep"]


class StepType(str, Enum):
    """What kind of step an agent took."""

    NODE = "node"
    """A graph node was executed."""
    TOOL = "tool"
    """A tool was called."""
    MESSAGE = "message"
    """A message was generated (by the model, the user or a tool)."""
    CONDITIONAL = "conditional"
    """A conditional edge was evaluated; the step's ``result`` is the branch taken."""

    @classmethod
    def _missing_(cls, value: object) -> StepType | None:
        if isinstance(value, str):
            lowered = value.lower()
            for member in cls:
                if member.value == lowered:
                    return member
        return None


class TrajectoryStep(BaseModel):
    """One step of a trajectory.

    ``args`` holds a tool's arguments (or a conditional's evaluated value under ``"value"``),
    ``result`` a tool's result, a message's text or the branch a conditional took. The typed
    fields say where the step came from and how it went: the tool call id, the error it ended
    with, its duration, and the trace and span it was read from. ``metadata`` keeps whatever else
    a reader knew (the convention it was read by, a model's requested tool calls, token usage ...).
    """

    model_config = ConfigDict(extra="forbid")

    step_type: StepType
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any | None = None
    timestamp: float | None = None
    call_id: str | None = None
    """The tool call id, when the step is a tool call that had one."""
    error: str | None = None
    """Why the step failed (its span's status or exception), ``None`` when it did not."""
    duration_ms: float | None = None
    span_id: str | None = None
    trace_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def node(cls, name: str, **fields: Any) -> TrajectoryStep:
        """A graph node that ran; ``fields`` are the typed fields (``timestamp``, ``span_id``, ...)."""
        return cls(step_type=StepType.NODE, name=name, **fields)

    @classmethod
    def tool(
        cls, name: str, args: dict[str, Any] | None = None, *, result: Any | None = None, **fields: Any
    ) -> TrajectoryStep:
        """A tool call with its arguments and result (``call_id=`` and the other typed fields too)."""
        return cls(step_type=StepType.TOOL, name=name, args=dict(args or {}), result=result, **fields)

    @classmethod
    def message(cls, role: str, content: str | None = None, **fields: Any) -> TrajectoryStep:
        """A message: ``name`` is the role, ``result`` the text."""
        return cls(step_type=StepType.MESSAGE, name=role, result=content, **fields)

    @classmethod
    def conditional(
        cls, name: str, branch: str | list[str] | None = None, *, value: Any | None = None, **fields: Any
    ) -> TrajectoryStep:
        """A conditional edge: ``result`` is the branch taken (a list for a fan-out)."""
        return cls(
            step_type=StepType.CONDITIONAL,
            name=name,
            args={} if value is None else {"value": value},
            result=branch,
            **fields,
        )



def unchecked_step(
    step_type: StepType,
    name: str,
    args: dict[str, Any],
    result: Any,
    timestamp: float | None,
    call_id: str | None,
    error: str | None,
    duration_ms: float | None,
    span_id: str | None,
    trace_id: str | None,
    metadata: dict[str, Any],
) -> TrajectoryStep:
    """A step built without validation, from values of the declared types (trace assembly's
    fast path: a million steps are not checked field by field)."""
    fields = blank_fields(TrajectoryStep)
    fields["step_type"] = step_type
    fields["name"] = name
    fields["args"] = args
    fields["result"] = result
    fields["timestamp"] = timestamp
    fields["call_id"] = call_id
    fields["error"] = error
    fields["duration_ms"] = duration_ms
    fields["span_id"] = span_id
    fields["trace_id"] = trace_id
    fields["metadata"] = metadata
    return from_fields(TrajectoryStep, fields)
