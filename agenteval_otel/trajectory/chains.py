"""Model calls traced one per trace, joined into the turns they belong to.

Model clients traced without an agent span around them (LiteLLM's callback, a bare chat
instrumentation) leave one trace per call: a turn that called two tools is three traces. Each
call sends the whole history again, so a call continues an earlier one when its messages start
with everything the earlier call sent, followed by that call's reply and tool results only (no
new user message). Such calls are joined into one trajectory: their steps in order, the first
call's user input, the last call's answer and messages, the usage summed. The tool calls the
replies asked for get their call ids and results from the history the later calls sent; a tool
result the program reported as ``Error: ...`` is the call's error.

>>> from agenteval_otel.trajectory.messages import MessageContent
>>> from agenteval_otel.trajectory.steps import TrajectoryStep
>>> def call(messages, steps, start):
...     return Trajectory(messages=messages, steps=steps, start_ns=start, end_ns=start + 1,
...                       user_input="Book LX92", trace_ids=[str(start)])
>>> user = MessageContent.user("Book LX92")
>>> asked = MessageContent(role="assistant", content=[
...     {"type": "tool_call", "id": "c1", "name": "book", "arguments": {"flight_id": "LX92"}}])
>>> result = MessageContent(role="tool", content=[{"type": "tool_call_response", "id": "c1", "response": "Booked"}])
>>> first = call([user, MessageContent.assistant("")],
...              [TrajectoryStep.message("assistant", metadata={"model": "m"}),
...               TrajectoryStep.tool("book", {"flight_id": "LX92"}, metadata={"requested": True})], 1)
>>> second = call([user, asked, result, MessageContent.assistant("Done.")],
...               [TrajectoryStep.message("assistant", "Done.", metadata={"model": "m"})], 2)
>>> (turn,) = join_model_calls([first, second])
>>> [(s.name, s.call_id, s.result) for s in turn.tool_calls()], turn.final_response, turn.trace_ids
([('book', 'c1', 'Booked')], None, ['1', '2'])
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from agenteval_otel.trajectory.messages import MessageContent
from agenteval_otel.trajectory.steps import StepType, TrajectoryStep
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["ModelCallChains", "error_reported", "join_model_calls"]

_MAX_OPEN = 10_000
"""Calls held open for a continuation; beyond this the oldest is let go as it is."""
_ERROR_PREFIXES = ("Error:", "error:", "ERROR:", "Error executing tool:")  # the last is CrewAI's


def error_reported(response: Any) -> str | None:
    """The error a tool result sent to a model reports (``Error: unknown flight``), else ``None``.

    >>> error_reported("Error: unknown flight: LX99"), error_reported("Booked")
    ('Error: unknown flight: LX99', None)
    """
    if isinstance(response, str) and response.lstrip().startswith(_ERROR_PREFIXES):
        return response.strip()
    return None


def _is_lone_model_call(trajectory: Trajectory) -> bool:
    """One model call and the calls it asked for, with no agent, conversation or tool span."""
    if trajectory.conversation_id is not None or trajectory.agent_name is not None or trajectory.turns:
        return False
    models = 0
    for step in trajectory.steps:
        if step.step_type is StepType.MESSAGE and "model" in step.metadata:
            models += 1
        elif not (step.step_type is StepType.TOOL and step.metadata.get("requested")):
            return False
    return models == 1 and bool(trajectory.messages)


def _key(message: MessageContent) -> bytes:
    return orjson.dumps([message.role, message.content], option=orjson.OPT_SORT_KEYS, default=str)


def _sent(messages: list[MessageContent]) -> int:
    """How many of a call's messages it sent (the rest, trailing assistant messages, came back)."""
    end = len(messages)
    while end and messages[end - 1].role == "assistant":
        end -= 1
    return end


class ModelCallChains:
    """Joins lone model calls as they arrive (:func:`join_model_calls` over a stream): ``add``
    returns what can be let go now, ``flush`` the rest by start time."""

    def __init__(self, max_open: int = _MAX_OPEN) -> None:
        self.max_open = max_open
        self.open: dict[tuple[bytes, ...], Trajectory] = {}

    def add(self, trajectory: Trajectory) -> list[Trajectory]:
        """``trajectory`` taken in; what is let go (anything not a lone model call, at once)."""
        if not _is_lone_model_call(trajectory):
            return [trajectory]
        keys = [_key(m) for m in trajectory.messages[: _sent(trajectory.messages)]]
        earlier = self._continued(trajectory.messages, keys)
        if earlier is not None:
            trajectory = _joined(self.open.pop(earlier), trajectory)
        self.open[tuple(keys)] = trajectory
        if len(self.open) > self.max_open:
            return [self.open.pop(next(iter(self.open)))]
        return []

    def _continued(self, messages: list[MessageContent], keys: list[bytes]) -> tuple[bytes, ...] | None:
        """The key of the open call whose history, reply and tool results these messages repeat."""
        start = len(keys)
        while start and messages[start - 1].role in ("assistant", "tool"):
            start -= 1
        for end in range(len(keys) - 1, start - 1, -1):
            if messages[end].role == "assistant" and (prefix := tuple(keys[:end])) in self.open:
                return prefix
        return None

    def flush(self) -> list[Trajectory]:
        """Every call still held, by start time."""
        held, self.open = list(self.open.values()), {}
        return sorted(held, key=lambda t: t.start_ns or 0)


def join_model_calls(trajectories: Iterable[Trajectory]) -> Iterator[Trajectory]:
    """``trajectories`` with lone model calls of one turn joined (see the module); the others
    pass at once, the joined ones come at the end."""
    chains = ModelCallChains()
    for trajectory in trajectories:
        yield from chains.add(trajectory)
    yield from chains.flush()


def _joined(first: Trajectory, then: Trajectory) -> Trajectory:
    return _settled(first.model_copy(update={
        "steps": [*first.steps, *then.steps],
        "trace_ids": list(dict.fromkeys([*first.trace_ids, *then.trace_ids])),
        "final_response": then.final_response,
        "messages": then.messages,
        "usage": first.usage + then.usage,
        "end_ns": then.end_ns,
    }))


def _settled(trajectory: Trajectory) -> Trajectory:
    """Requested tool calls given the call ids, results and errors the later history holds."""
    asked: list[dict[str, Any]] = []
    responses: dict[Any, Any] = {}
    for message in trajectory.messages:
        if isinstance(message.content, list):
            for part in message.content:
                if part.get("type") == "tool_call":
                    asked.append(part)
                elif part.get("type") == "tool_call_response":
                    responses[part.get("id")] = part.get("response")
    taken = {step.call_id for step in trajectory.steps if step.call_id is not None}
    asked = [part for part in asked if part.get("id") not in taken]
    steps: list[TrajectoryStep] = []
    for step in trajectory.steps:
        if step.step_type is StepType.TOOL and step.metadata.get("requested") and step.result is None:
            step = _answered(step, asked, responses)
        steps.append(step)
    return trajectory.model_copy(update={"steps": steps})


def _answered(step: TrajectoryStep, asked: list[dict[str, Any]], responses: dict[Any, Any]) -> TrajectoryStep:
    call_id = step.call_id
    if call_id is None:
        found = next((i for i, part in enumerate(asked) if part.get("name") == step.name), None)
        if found is None:
            return step
        call_id = asked.pop(found).get("id")
    if call_id not in responses:
        return step.model_copy(update={"call_id": call_id})
    response = responses[call_id]
    error = error_reported(response)
    return step.model_copy(update={
        "call_id": call_id, "result": None if error else response, "error": error or step.error})
