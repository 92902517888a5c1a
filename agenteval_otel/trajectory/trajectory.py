"""``Trajectory``: the ordered steps of one agent invocation (or one conversation) and the views
criteria read: tool calls, node order, branches, the user input, the final response, the
messages, latency and token usage.

>>> from agenteval_otel.trajectory.steps import TrajectoryStep
>>> t = Trajectory(steps=[TrajectoryStep.node("plan"), TrajectoryStep.tool("get_weather", {"city": "Paris"})])
>>> t.node_order(), [call.name for call in t.tool_calls()]
(['plan'], ['get_weather'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenteval_otel.trajectory._unchecked import unchecked
from agenteval_otel.trajectory.messages import MessageContent, ToolCall
from agenteval_otel.trajectory.steps import StepType, TrajectoryStep
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = ["Trajectory"]


class Trajectory(BaseModel):
    """The ordered steps of one agent invocation, or of a conversation (then ``turns`` holds the
    invocations in order).

    ``trace_id`` / ``span_id`` name the invocation's root span (the span a verdict on it is
    attached to; ``None`` for a joined conversation, whose turns carry their own);
    ``start_ns`` / ``end_ns`` span the spans read; ``usage`` sums the model calls' tokens.
    """

    model_config = ConfigDict(extra="forbid")

    steps: list[TrajectoryStep] = Field(default_factory=list)
    trace_ids: list[str] = Field(default_factory=list)
    trace_id: str | None = None
    span_id: str | None = None
    conversation_id: str | None = None
    eval_id: str | None = None
    """The eval case the run belongs to (``agenteval.eval_id``), for runs made by an evaluation."""
    eval_set_id: str | None = None
    """The eval set of that case (``agenteval.eval_set_id``), for runs made by an evaluation."""
    agent_name: str | None = None
    user_input: str | None = None
    final_response: str | None = None
    messages: list[MessageContent] = Field(default_factory=list)
    usage: TokenUsage = Field(default_factory=TokenUsage)
    start_ns: int | None = None
    end_ns: int | None = None
    turns: list[Trajectory] = Field(default_factory=list)

    def tool_calls(self) -> list[ToolCall]:
        """The tool calls, in order."""
        return [  # the step's fields are valid already
            unchecked(ToolCall, {"name": step.name, "args": step.args, "call_id": step.call_id, "result": step.result})
            for step in self.steps
            if step.step_type is StepType.TOOL
        ]

    def node_order(self) -> list[str]:
        """The names of the graph nodes that ran, in order."""
        return [step.name for step in self.steps if step.step_type is StepType.NODE]

    def branches(self) -> list[tuple[str, Any]]:
        """Each conditional edge evaluated, in order, with the branch it took (a list for a fan-out)."""
        return [(step.name, step.result) for step in self.steps if step.step_type is StepType.CONDITIONAL]

    @property
    def duration_ns(self) -> int | None:
        """From the first span's start to the last span's end."""
        if self.start_ns is None or self.end_ns is None:
            return None
        return max(0, self.end_ns - self.start_ns)

    @property
    def duration_s(self) -> float | None:
        """``duration_ns`` in seconds."""
        duration = self.duration_ns
        return None if duration is None else duration / 1e9

    @property
    def is_empty(self) -> bool:
        """Whether nothing of an agent run was found: no step, no input, no response."""
        return not self.steps and self.user_input is None and self.final_response is None

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON shape printed by ``agenteval trajectory --format json``."""
        return {
            "trace_ids": list(self.trace_ids),
            "conversation_id": self.conversation_id,
            "steps": [
                {
                    "step_type": step.step_type.value,
                    "name": step.name,
                    "args": step.args,
                    "result": step.result,
                    "error": step.error,
                    "timestamp": step.timestamp,
                }
                for step in self.steps
            ],
            "tool_calls": [
                {"name": call.name, "args": call.args, "result": call.result, "call_id": call.call_id}
                for call in self.tool_calls()
            ],
            "node_order": self.node_order(),
            "user_input": self.user_input,
            "final_response": self.final_response,
        }

    @classmethod
    def join(cls, turns: Sequence[Trajectory]) -> Trajectory:
        """One conversation from its invocations, in the order given."""
        if not turns:
            return cls()
        trace_ids: list[str] = []
        for turn in turns:
            trace_ids.extend(t for t in turn.trace_ids if t not in trace_ids)
        usage = TokenUsage()
        for turn in turns:
            usage = usage + turn.usage
        starts = [t.start_ns for t in turns if t.start_ns is not None]
        ends = [t.end_ns for t in turns if t.end_ns is not None]
        return cls(
            steps=[step for turn in turns for step in turn.steps],
            trace_ids=trace_ids,
            conversation_id=next((t.conversation_id for t in turns if t.conversation_id), None),
            eval_id=next((t.eval_id for t in turns if t.eval_id), None),
            eval_set_id=next((t.eval_set_id for t in turns if t.eval_set_id), None),
            agent_name=turns[0].agent_name,
            user_input=turns[0].user_input,
            final_response=turns[-1].final_response,
            messages=_conversation_messages(turns),
            usage=usage,
            start_ns=min(starts) if starts else None,
            end_ns=max(ends) if ends else None,
            turns=list(turns),
        )


def _conversation_messages(turns: Sequence[Trajectory]) -> list[MessageContent]:
    """The last turn's messages when they carry the whole history, else every turn's in order."""
    last = turns[-1].messages
    first_input = turns[0].user_input
    if first_input and any(m.role == "user" and m.get_text() == first_input for m in last):
        return list(last)
    return [message for turn in turns for message in turn.messages]
