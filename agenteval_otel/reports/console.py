"""Console output with rich."""

from __future__ import annotations

from rich.table import Table

from agenteval_otel.evaluation.models import EvalSet

__all__ = ["eval_set_table"]

_PREVIEW = 60


def _preview(text: str | None) -> str:
    if not text:
        return ""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= _PREVIEW else one_line[: _PREVIEW - 1] + "…"


def eval_set_table(eval_set: EvalSet) -> Table:
    """The cases of an eval set: id, turns, first user message, expected tools and response."""
    title = eval_set.name or eval_set.eval_set_id
    table = Table(title=f"{title} — {len(eval_set.eval_cases)} case(s)", show_lines=False)
    table.add_column("case", style="bold", overflow="fold")
    table.add_column("turns", justify="right")
    table.add_column("first user message")
    table.add_column("expected tools")
    table.add_column("expected response")
    for case in eval_set.eval_cases:
        if case.conversation:
            first = case.conversation[0].user_content.get_text()
        elif case.conversation_scenario is not None:
            first = f"(simulated) {case.conversation_scenario.starting_prompt}"
        else:
            first = ""
        tools = ", ".join(call.name for call in case.expected_tools) or "—"
        table.add_row(
            case.name or case.eval_id,
            str(len(case.conversation)),
            _preview(first),
            _preview(tools),
            _preview(case.expected_response),
        )
    return table
