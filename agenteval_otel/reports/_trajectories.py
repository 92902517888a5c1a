"""Showing trajectories: as JSON for programs, as rich tables for people."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import orjson
from rich.console import Group
from rich.table import Table
from rich.text import Text

from agenteval_otel.trajectory.steps import StepType
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["iter_trajectories_json", "trajectories_json", "trajectories_table"]

_MAX_CELL = 120
_STYLES = {
    StepType.TOOL: "cyan",
    StepType.NODE: "magenta",
    StepType.CONDITIONAL: "yellow",
    StepType.MESSAGE: "green",
}


def trajectories_json(trajectories: Sequence[Trajectory]) -> str:
    """A JSON list with one object per trajectory (``Trajectory.to_json_dict``), indented by two."""
    return "".join(iter_trajectories_json(trajectories))


def iter_trajectories_json(trajectories: Iterable[Trajectory]) -> Iterator[str]:
    """``trajectories_json`` in pieces, one trajectory at a time, so that a long list is written
    out without being held as one string."""
    first = True
    for trajectory in trajectories:
        item = orjson.dumps(trajectory.to_json_dict(), option=orjson.OPT_INDENT_2, default=str).decode()
        yield ("[\n  " if first else ",\n  ") + item.replace("\n", "\n  ")
        first = False
    yield "[]" if first else "\n]"


def _cell(value: Any) -> str:
    if value is None or value == {}:
        return ""
    text = value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
    text = " ".join(text.split())
    return text if len(text) <= _MAX_CELL else text[: _MAX_CELL - 1] + "…"


def _table(index: int, trajectory: Trajectory) -> Table:
    title = f"trajectory {index}"
    if trajectory.agent_name:
        title += f" · {trajectory.agent_name}"
    duration = trajectory.duration_s
    caption = [f"trace {', '.join(trajectory.trace_ids)}"]
    if trajectory.conversation_id:
        caption.append(f"conversation {trajectory.conversation_id}")
    if duration is not None:
        caption.append(f"{duration * 1000:.1f} ms")
    if trajectory.usage.total_tokens:
        caption.append(f"{trajectory.usage.input_tokens} in / {trajectory.usage.output_tokens} out tokens")
    table = Table(title=title, caption=" · ".join(caption), title_justify="left", expand=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column("step")
    table.add_column("name")
    table.add_column("args")
    table.add_column("result")
    for number, step in enumerate(trajectory.steps, 1):
        style = _STYLES.get(step.step_type, "")
        result = step.result
        if step.error:
            result = f"error: {step.error}"
        table.add_row(
            str(number), Text(step.step_type.value, style=style), step.name, _cell(step.args), _cell(result)
        )
    return table


def trajectories_table(trajectories: Sequence[Trajectory]) -> Group:
    """One table per trajectory, headed by the user input and followed by the final response."""
    parts: list[Any] = []
    for index, trajectory in enumerate(trajectories, 1):
        if trajectory.user_input is not None:
            parts.append(Text.assemble(("user: ", "bold"), _cell(trajectory.user_input)))
        parts.append(_table(index, trajectory))
        if trajectory.final_response is not None:
            parts.append(Text.assemble(("final response: ", "bold"), _cell(trajectory.final_response)))
        if trajectory.node_order():
            parts.append(Text.assemble(("node order: ", "bold"), " → ".join(trajectory.node_order())))
        parts.append(Text(""))
    if not parts:
        parts.append(Text("no trajectories found", style="dim"))
    return Group(*parts)
