"""The steps of an agent trajectory: what ran, in which order, with which arguments.

This module is a leaf: it imports nothing else from agenteval_otel, so every other package can
depend on it.

>>> TrajectoryStep.tool("get_weather", args={"city": "Tokyo"}).step_type
<StepType.TOOL: 'tool'>
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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
    ``result`` a tool's result, a message's text or the branch a conditional took, and
    ``metadata`` what a reader knew beyond that (call id, span and trace ids, duration).
    """

    model_config = ConfigDict(extra="forbid")

    step_type: StepType
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any | None = None
    timestamp: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def node(
        cls, name: str, *, timestamp: float | None = None, **metadata: Any
    ) -> TrajectoryStep:
        """A graph node that ran."""
        return cls(step_type=StepType.NODE, name=name, timestamp=timestamp, metadata=metadata)

    @classmethod
    def tool(
        cls,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        result: Any | None = None,
        call_id: str | None = None,
        timestamp: float | None = None,
        **metadata: Any,
    ) -> TrajectoryStep:
        """A tool call; ``call_id`` is kept in ``metadata["call_id"]``."""
        if call_id is not None:
            metadata["call_id"] = call_id
        return cls(
            step_type=StepType.TOOL,
            name=name,
            args=dict(args or {}),
            result=result,
            timestamp=timestamp,
            metadata=metadata,
        )

    @classmethod
    def message(
        cls,
        role: str,
        content: str | None = None,
        *,
        timestamp: float | None = None,
        **metadata: Any,
    ) -> TrajectoryStep:
        """A message: ``name`` is the role, ``result`` the text."""
        return cls(
            step_type=StepType.MESSAGE,
            name=role,
            result=content,
            timestamp=timestamp,
            metadata=metadata,
        )

    @classmethod
    def conditional(
        cls,
        name: str,
        branch: str | list[str] | None = None,
        *,
        value: Any | None = None,
        timestamp: float | None = None,
        **metadata: Any,
    ) -> TrajectoryStep:
        """A conditional edge: ``result`` is the branch taken (a list for a fan-out)."""
        return cls(
            step_type=StepType.CONDITIONAL,
            name=name,
            args={} if value is None else {"value": value},
            result=branch,
            timestamp=timestamp,
            metadata=metadata,
        )

    @property
    def call_id(self) -> str | None:
        """The tool call id, when the step is a tool call that had one."""
        value = self.metadata.get("call_id")
        return None if value is None else str(value)
