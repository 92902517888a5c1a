"""Console output with rich: the eval-set table, and the report people scan after a run
(per-criterion stats, a row per case, and for each failed or errored case the expected and
actual trajectory side by side)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agenteval_otel.evalsets import EvalSet
from agenteval_otel.reports._diff import tool_call_rows
from agenteval_otel.reports._judge import judge_lines
from agenteval_otel.results import EvalCaseResult, EvalReport
from agenteval_otel.trajectory.explain import FINAL_ANSWER_NOT_READ, TOOL_CALLS_NOT_READ

__all__ = [
    "case_diff", "coverage_lines", "criteria_table", "eval_set_table", "print_report", "results_table",
    "runs_table", "summary_line",
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
    table.add_column("turns", justify="right", no_wrap=True)
    table.add_column("first user message", overflow="fold")
    table.add_column("expected tools", overflow="fold")
    table.add_column("expected response", overflow="fold")
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


def _score_cell(case: EvalCaseResult, name: str) -> str:
    result = next((r for r in case.criterion_results if r.criterion == name), None)
    if result is None:
        return "—"
    if result.error:
        return "[yellow]error[/]"
    mark = "[green]✓[/]" if result.passed else "[red]✗[/]"
    return f"{result.score:.2f} {mark}"


def _why(case: EvalCaseResult) -> str:
    problems = case.problems()
    return _preview("; ".join(p.split(": ", 1)[1] for p in problems), _WHY) if problems else ""


_MIN_CASE, _MIN_WHY, _STATUS, _CELL_PADDING = 16, 12, 7, 3


def _fits_a_column_per_criterion(names: list[str], width: int | None) -> bool:
    """Whether a column per criterion leaves the case and why columns room at ``width``."""
    if width is None:
        return True
    needed = sum(max(len(name), len("1.00 ✓")) + _CELL_PADDING for name in names)
    return needed + _MIN_CASE + _MIN_WHY + _STATUS + 3 * _CELL_PADDING + 1 <= width


def results_table(report: EvalReport, width: int | None = None) -> Table:
    """One row per case: status, each criterion's score against its threshold, and why.

    A column per criterion when they fit in ``width`` characters (``None``: always), else one
    ``scores`` column listing each criterion on a line of its own, so nothing is cut short; when
    even that leaves no room, the ``why`` column goes (each failed case's panel says why).
    """
    names = list(dict.fromkeys(r.criterion for case in report.results for r in case.criterion_results))
    wide = _fits_a_column_per_criterion(names, width)
    longest = max((len(name) for name in names), default=0)
    scores_width = longest + len(" 1.00 ✓")
    with_why = wide or width is None or (
        _MIN_CASE + _STATUS + scores_width + _MIN_WHY + 4 * _CELL_PADDING + 3 <= width)
    table = Table(title=f"{report.eval_set_name or report.eval_set_id} — results")
    table.add_column("case", style="bold", overflow="fold", min_width=_MIN_CASE)
    table.add_column("status", no_wrap=True, min_width=_STATUS)
    if wide:
        for name in names:
            table.add_column(name, justify="right", no_wrap=True, min_width=len(name))
    else:
        table.add_column("scores", no_wrap=True, min_width=scores_width)
    if with_why:
        table.add_column("why", overflow="fold", min_width=_MIN_WHY)
    for case in report.results:
        status = f"[{_STATUS_STYLE[case.status]}]{case.status}[/]"
        if wide:
            cells = [_score_cell(case, name) for name in names]
        else:
            lines = [f"{name.ljust(longest)} {_score_cell(case, name)}" for name in names
                     if any(r.criterion == name for r in case.criterion_results)]
            cells = ["\n".join(lines) or "—"]
        table.add_row(case.label, status, *cells, *([_why(case)] if with_why else []))
    return table


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def runs_table(report: EvalReport) -> Table | None:
    """For cases run more than once: runs, passed runs, pass@1, pass@k and pass^k (k = runs);
    ``None`` when every case ran once."""
    repeated = [case for case in report.results if case.metrics.get("runs", 1.0) > 1]
    if not repeated:
        return None
    table = Table(title="repeated runs")
    table.add_column("case", style="bold", overflow="fold", min_width=_MIN_CASE)
    for column in ("runs", "passed", "pass@1", "pass@k", "pass^k"):
        table.add_column(column, justify="right", no_wrap=True)
    for case in repeated:
        metrics = case.metrics
        table.add_row(case.label, f"{metrics['runs']:g}",
                      f"{metrics.get('passed_runs', 0.0):g}", _percent(metrics.get("pass@1")),
                      _percent(metrics.get("pass@k")), _percent(metrics.get("pass^k")))
    return table


def summary_line(report: EvalReport) -> str:
    """``3/4 passed, 1 failed, 0 errored · mean score 0.91 · 1.2 s``, and how many older runs
    and runs of another eval set found in the traces were set aside, if any."""
    s = report.summary
    line = (f"{s.passed_cases}/{s.total_cases} passed, {s.failed_cases} failed, "
            f"{s.error_cases} errored · mean score {s.avg_score:.2f} · "
            f"{report.duration_seconds:.1f} s")
    if s.set_aside_runs:
        line += (f" · {s.set_aside_runs} older run(s) set aside: the latest run of each case "
                 "was scored (--all-runs scores every run)")
    if s.other_eval_set_runs:
        line += f" · {s.other_eval_set_runs} run(s) of another eval set set aside"
    return line


_COVERAGE_WARNINGS = {
    TOOL_CALLS_NOT_READ: "the model requested tool calls but no tool span was read",
    FINAL_ANSWER_NOT_READ: "the root span has output but the trajectory has no final answer",
}


def _by(counts: dict[str, int]) -> str:
    return f" ({', '.join(f'{name} {n}' for name, n in counts.items())})" if counts else ""


def coverage_lines(report: EvalReport) -> list[str]:
    """What the convention readers understood of the traces (an offline run from spans):
    ``spans: 40 read (genai 40), 0 by fallback, 12 unread, of 52 in 2 trace(s)``, then a
    ``warning:`` line per warning with the trajectories it concerns. None for other runs."""
    c = report.summary.read_coverage
    if c is None:
        return []
    lines = [f"spans: {sum(c.read.values())} read{_by(c.read)}, {sum(c.fallback.values())} by fallback"
             f"{_by(c.fallback)}, {c.unread} unread, of {c.spans} in {c.traces} trace(s)"]
    lines += [f"warning: {n} of {c.trajectories} trajectories: {_COVERAGE_WARNINGS.get(kind, kind)}"
              for kind, n in c.warnings.items()]
    return lines


_STATS_COLUMNS = ("semantics", "cases", "passed", "errors", "mean", "min", "max", "pass rate")
_DROPPED_WHEN_NARROW = ("semantics", "min", "max", "errors")
"""The criteria table's columns a narrow console does without, first to last."""


def _stats_columns(names: list[str], width: int | None) -> list[str]:
    """The statistics columns that fit beside the criterion names at ``width`` (``None``: all)."""
    columns = list(_STATS_COLUMNS)
    longest = max((len(name) for name in names), default=len("criterion"))
    for dropped in (None, *_DROPPED_WHEN_NARROW):
        if dropped is not None:
            columns.remove(dropped)
        needed = longest + sum(max(len(c), 4) for c in columns) + _CELL_PADDING * (len(columns) + 1) + 1
        if width is None or needed <= width:
            break
    return columns


def criteria_table(report: EvalReport, width: int | None = None) -> Table:
    """Per criterion: whose rules scored it (``semantics``), cases scored, passed, errors,
    mean / min / max score and pass rate. Names are never split: at a ``width`` too narrow for
    every column, ``semantics``, ``min``, ``max`` and ``errors`` are left out, in that order."""
    stats_by_name = report.summary.criterion_stats
    columns = _stats_columns(list(stats_by_name), width)
    table = Table(title="criteria")
    table.add_column("criterion", no_wrap=True)
    for column in columns:
        table.add_column(column, justify="left" if column == "semantics" else "right", no_wrap=True)
    for name, stats in stats_by_name.items():
        cells = {"semantics": stats.semantics, "cases": str(stats.count), "passed": str(stats.passed),
                 "errors": str(stats.errors), "mean": f"{stats.mean:.2f}", "min": f"{stats.min:.2f}",
                 "max": f"{stats.max:.2f}", "pass rate": f"{stats.pass_rate:.0%}"}
        table.add_row(name, *(cells[column] for column in columns))
    return table


_DIFF_STYLE = {"match": "green", "mismatch": "yellow", "missing": "red", "unexpected": "magenta", "listed": "dim"}


def case_diff(case: EvalCaseResult) -> Panel:
    """Expected against actual for every turn of one case."""
    parts: list[RenderableType] = []
    for index, inv in enumerate(case.invocation_results, start=1):
        parts.append(Text(f"turn {index}: {inv.user_input or ''}", style="bold"))
        rows = tool_call_rows(inv)
        if rows:
            noted = any(row.note for row in rows)
            table = Table(show_edge=False, pad_edge=False, box=None)
            for column in ("", "expected", "actual", *(["difference"] if noted else [])):
                table.add_column(column, overflow="fold")
            for row in rows:
                style = _DIFF_STYLE[row.status]
                table.add_row(Text(row.status, style=style), row.expected or "—",
                              row.actual or "—", *([row.note] if noted else []))
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
    return Panel(Group(*parts), title=f"{case.label} — {status}",
                 border_style=_STATUS_STYLE[status], title_align="left")


SHOW_FAILURES = 20
"""How many failed or errored cases the console shows in full by default."""
_TABLE_CASES = 50
"""Above this many cases the console leaves the per-case table to the report files."""


def print_report(
    report: EvalReport, console: Console | None = None, *, show_failures: int | None = SHOW_FAILURES,
    report_files: Sequence[str] = (),
) -> None:
    """The console report: criteria, what the LLM judge cost (and what it did not score), results
    (one row per case, up to 50 cases), the diff of the first ``show_failures`` cases that did not
    pass (``None``: all) with one plain line per failure (easy to find in a CI log), one line
    counting the rest and naming ``report_files`` where they are, what the readers understood of
    the traces (offline, from spans), and a summary line."""
    console = console or Console()
    console.print(criteria_table(report, width=console.width))
    for line in judge_lines(report):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if len(report.results) <= _TABLE_CASES:
        console.print(results_table(report, width=console.width))
    runs = runs_table(report)
    if runs is not None:
        console.print(runs)
    failed = (case for case in report.results if case.status != "passed")
    shown = list(failed if show_failures is None else islice(failed, show_failures))
    for case in shown:
        console.print(case_diff(case))
    failures = report.failure_message(limit=show_failures)
    if failures:
        console.print(failures, markup=False, highlight=False, soft_wrap=True)
    rest = report.summary.failed_cases + report.summary.error_cases - len(shown)
    if rest > 0:
        where = f"see {', '.join(report_files)}" if report_files else "write them with --report FILE"
        console.print(f"... and {rest:,} more failed or errored case{'s' if rest != 1 else ''} not shown "
                      f"({where}; --show-failures N|all)", markup=False, highlight=False, soft_wrap=True)
    for line in coverage_lines(report):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.print(summary_line(report))
