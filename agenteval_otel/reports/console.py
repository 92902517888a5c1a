"""Console output with rich."""

from __future__ import annotations

from rich.table import Table

from agenteval_otel.evaluation.models import EvalSet
from agenteval_otel.evaluation.results import EvalReport

__all__ = ["eval_set_table", "results_table", "summary_line"]

_PREVIEW = 60
_WHY = 90


def _preview(text: str | None, width: int = _PREVIEW) -> str:
    if not text:
        return ""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= width else one_line[: width - 1] + "…"


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


_STATUS_STYLE = {"passed": "green", "failed": "red", "errored": "yellow"}


def results_table(report: EvalReport) -> Table:
    """One row per case: status, each criterion's score against its threshold, and why."""
    names = list(dict.fromkeys(r.criterion for case in report.results for r in case.criterion_results))
    table = Table(title=f"{report.eval_set_name or report.eval_set_id} — results")
    table.add_column("case", style="bold", overflow="fold")
    table.add_column("status")
    for name in names:
        table.add_column(name, justify="right")
    table.add_column("why", overflow="fold")
    for case in report.results:
        by_name = {r.criterion: r for r in case.criterion_results}
        cells = []
        for name in names:
            result = by_name.get(name)
            if result is None:
                cells.append("—")
            elif result.error:
                cells.append("[yellow]error[/]")
            else:
                mark = "[green]✓[/]" if result.passed else "[red]✗[/]"
                cells.append(f"{result.score:.2f} {mark}")
        problems = case.problems()
        why = _preview("; ".join(p.split(": ", 1)[1] for p in problems), _WHY) if problems else ""
        table.add_row(case.name or case.eval_id,
                      f"[{_STATUS_STYLE[case.status]}]{case.status}[/]", *cells, why)
    return table


def summary_line(report: EvalReport) -> str:
    """``3/4 passed, 1 failed, 0 errored · mean score 0.91 · 1.2 s``."""
    s = report.summary
    return (f"{s.passed_cases}/{s.total_cases} passed, {s.failed_cases} failed, "
            f"{s.error_cases} errored · mean score {s.avg_score:.2f} · "
            f"{report.duration_seconds:.1f} s")
