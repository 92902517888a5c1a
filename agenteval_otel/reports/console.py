"""Console output with rich: the eval-set table, and the report people scan after a run
(per-criterion stats, a row per case, and for each failed or errored case the expected and
actual trajectory side by side)."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agenteval_otel.evaluation.models import EvalSet
from agenteval_otel.evaluation.results import EvalCaseResult, EvalReport
from agenteval_otel.reports.diff import tool_call_rows

__all__ = [
    "case_diff", "criteria_table", "eval_set_table", "print_report", "results_table", "summary_line",
]

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


def criteria_table(report: EvalReport) -> Table:
    """Per criterion: whose rules scored it (``semantics``), cases scored, passed, errors,
    mean / min / max score and pass rate."""
    table = Table(title="criteria")
    for column in ("criterion", "semantics", "cases", "passed", "errors", "mean", "min", "max", "pass rate"):
        table.add_column(column, justify="left" if column in ("criterion", "semantics") else "right")
    for name, stats in report.summary.criterion_stats.items():
        table.add_row(name, stats.semantics, str(stats.count), str(stats.passed), str(stats.errors),
                      f"{stats.mean:.2f}", f"{stats.min:.2f}", f"{stats.max:.2f}",
                      f"{stats.pass_rate:.0%}")
    return table


_DIFF_STYLE = {"match": "green", "mismatch": "yellow", "missing": "red", "unexpected": "magenta", "listed": "dim"}


def case_diff(case: EvalCaseResult) -> Panel:
    """Expected against actual for every turn of one case."""
    parts: list[RenderableType] = []
    for index, inv in enumerate(case.invocation_results, start=1):
        parts.append(Text(f"turn {index}: {inv.user_input or ''}", style="bold"))
        rows = tool_call_rows(inv)
        if rows:
            table = Table(show_edge=False, pad_edge=False, box=None)
            for column in ("", "expected", "actual", "difference"):
                table.add_column(column, overflow="fold")
            for row in rows:
                style = _DIFF_STYLE[row.status]
                table.add_row(Text(row.status, style=style), row.expected or "—",
                              row.actual or "—", row.note)
            parts.append(table)
        else:
            parts.append(Text("no tool calls expected or made", style="dim"))
        if inv.expected_node_order or inv.actual_node_order:
            verdict = inv.result("node_order")
            judged = "" if verdict is None or verdict.error else (
                "  (node_order passed)" if verdict.passed else "  (node_order failed)")
            parts.append(Text(f"nodes    expected {' → '.join(inv.expected_node_order) or '—'}{judged}\n"
                              f"         actual   {' → '.join(inv.actual_node_order) or '—'}"))
        if inv.expected_response is not None or inv.actual_response is not None:
            parts.append(Text(f"response expected {inv.expected_response!r}\n"
                              f"         actual   {inv.actual_response!r}"))
    for line in case.problems():
        parts.append(Text(line.split(": ", 1)[1], style="red"))
    status = case.status
    return Panel(Group(*parts), title=f"{case.name or case.eval_id} — {status}",
                 border_style=_STATUS_STYLE[status], title_align="left")


def print_report(report: EvalReport, console: Console | None = None) -> None:
    """The console report: criteria, results, the diff of every case that did not pass, one
    plain line per failure (easy to find in a CI log), and a summary line."""
    console = console or Console()
    console.print(criteria_table(report))
    console.print(results_table(report))
    for case in report.results:
        if case.status != "passed":
            console.print(case_diff(case))
    failures = report.failure_message()
    if failures:
        console.print(failures, markup=False, highlight=False, soft_wrap=True)
    console.print(summary_line(report))
