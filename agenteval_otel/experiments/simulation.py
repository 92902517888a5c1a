"""Simulations: an agent run over a query set, one :class:`SimulationRecord` per query.

A simulation file is JSON Lines: one record per query, appended as each query finishes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenteval_otel.errors import SimulationLoadError
from agenteval_otel.evaluation import ToolCall
from agenteval_otel.evaluation.files import validation_message
from agenteval_otel.experiments.jsonl import read_jsonl
from agenteval_otel.trajectory import TrajectoryStep

__all__ = ["SimulationRecord"]


class SimulationRecord(BaseModel):
    """What one run of the agent on one query gave: its reply or error, its cost, its trace.

    ``duration_seconds`` is wall time from the call to the reply; ``cpu_seconds`` and
    ``peak_memory_bytes`` are described at :func:`simulate`. ``trajectory`` is the run's steps
    as read from its trace, ``tool_calls`` the tool steps among them.
    """

    model_config = ConfigDict(extra="forbid")

    query_index: int = Field(ge=0)
    """The query's position in the query set (0-based)."""
    query: str
    """The query's content."""
    ground_truth: Any | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    response: str | None = None
    error: str | None = None
    """The error's message when the run failed or timed out, else ``None``."""
    error_type: str | None = None
    """The error's class name (``TimeoutError`` for a run past its deadline)."""
    duration_seconds: float = 0.0
    cpu_seconds: float = 0.0
    peak_memory_bytes: int | None = None
    trace_id: str | None = None
    trajectory: list[TrajectoryStep] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    agent: str | None = None
    """The agent's name."""
    started_at: float | None = None
    """When the run started, in seconds since the Unix epoch."""

    @property
    def failed(self) -> bool:
        """Whether the run raised or timed out."""
        return self.error_type is not None or self.error is not None

    @classmethod
    def load_jsonl(cls, path: str | Path) -> list[SimulationRecord]:
        """The records of a simulation file, in file order; a line that is not JSON or not a
        record raises :class:`SimulationLoadError` naming the file, the line and the field."""
        records = []
        for number, data in read_jsonl(path, SimulationLoadError, "a simulation record"):
            try:
                records.append(cls.model_validate(data))
            except ValidationError as exc:
                raise SimulationLoadError(validation_message(f"{path}: line {number}", exc)) from None
        return records
