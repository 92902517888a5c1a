"""The run history on the console: the runs recorded (``agenteval history``) and a run against
its baseline (``--baseline``).

>>> from rich.console import Console
>>> from agenteval_otel.results import compare_runs, CaseScores, RunInfo
>>> from datetime import datetime, timezone
>>> info = RunInfo("r0", datetime(2025, 1, 1, tzinfo=timezone.utc), "run", "weather", {}, 1, 1, 0, 0, 1.0, 1.0,
...                0.0, 0, None, None, {"m": 1.0})
>>> before = [CaseScores("c1", "passed", {"m": 1.0}, {"m": "passed"})]
>>> after = [CaseScores("c1", "failed", {"m": 0.5}, {"m": "failed"})]
>>> Console(width=120, color_system=None).print(baseline_table(compare_runs(info, before, after)))
... # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
against run r0 of 2025-01-01 00:00 UTC (1 paired case)
...
m 1.00 → 0.50 -0.50 [-0.50, -0.50] 1.000 100% → 0%
<BLANKLINE>
passed in the baseline, not now (1):
  c1: passed → failed
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenteval_otel.reports._plots import Estimate, forest_plot_svg
from agenteval_otel.results import BaselineComparison, RunInfo

__all__ = ["baseline_forest_svg", "baseline_table", "history_table"]


def baseline_table(comparison: BaselineComparison) -> Any:
    """Per criterion: the mean score and the pass rate against the baseline run, with the paired
    95% interval and p-value of the mean's change (a row in red or green when the mean or the
    pass rate changed significantly); then the cases whose verdict changed (a ``rich.console.Group``)."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    when = comparison.baseline_created_at[:16].replace("T", " ")
    table = Table(title=f"against run {comparison.baseline_run_id} of {when} UTC "
                        f"({comparison.pairs} paired case{'s' if comparison.pairs != 1 else ''})",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("criterion", no_wrap=True)
    for column in ("mean", "delta", "95% CI", "p", "pass rate"):
        table.add_column(column, justify="right", no_wrap=True)
    moved: dict[str, list[str]] = {"regressed": [], "improved": []}
    for delta in comparison.criteria:
        mean, rate = delta.mean, delta.pass_rate
        interval = f"[{_number(mean.ci_low, True)}, {_number(mean.ci_high, True)}]" if mean.ci_low is not None else "–"
        change = "regressed" if mean.regressed or rate.regressed else \
            "improved" if mean.significant or rate.significant else None
        if change:
            moved[change].append(delta.criterion)
        table.add_row(delta.criterion, f"{_number(mean.mean_a)} → {_number(mean.mean_b)}",
                      _number(mean.delta, True), interval, "–" if mean.p_value is None else f"{mean.p_value:.3f}",
                      f"{_percent(rate.mean_a)} → {_percent(rate.mean_b)}",
                      style={"regressed": "bold red", "improved": "bold green", None: None}[change])
    parts: list[Any] = [table]
    for change, style in (("regressed", "bold red"), ("improved", "bold green")):
        if moved[change]:
            parts.append(Text(f"{change} significantly (p < {comparison.alpha:g}): {', '.join(moved[change])}",
                              style=style))
    for title, changes, style in (("passed in the baseline, not now", comparison.newly_failed, "red"),
                                  ("passed now, not in the baseline", comparison.newly_passed, "green")):
        if changes:
            lines = [f"  {c.eval_id}: {c.status_a} → {c.status_b}" for c in changes]
            parts.append(Text("\n".join([f"{title} ({len(changes)}):", *lines]), style=style))
    unpaired = [f"{count} only in {side}" for count, side in ((comparison.only_in_baseline, "the baseline"),
                                                              (comparison.only_in_run, "this run")) if count]
    if unpaired:
        parts.append(Text(f"cases not compared: {', '.join(unpaired)}"))
    return Group(*parts)


def baseline_forest_svg(comparison: BaselineComparison, *, title: str | None = None) -> str:
    """The per-criterion change of the mean score (this run − the baseline) with its paired 95%
    interval, as a forest plot (inline SVG): significant regressions red, improvements green.

    >>> from agenteval_otel.results import compare_runs, CaseScores, RunInfo
    >>> from datetime import datetime, timezone
    >>> info = RunInfo("r0", datetime(2025, 1, 1, tzinfo=timezone.utc), "run", "s", {}, 2, 2, 0, 0, 1.0, 1.0,
    ...                0.0, 0, None, None)
    >>> a = [CaseScores(c, "passed", {"m": 1.0}, {"m": "passed"}) for c in ("c1", "c2")]
    >>> b = [CaseScores(c, "failed", {"m": 0.5}, {"m": "failed"}) for c in ("c1", "c2")]
    >>> svg = baseline_forest_svg(compare_runs(info, a, b))
    >>> 'class="plot forest"' in svg, "m: -0.500" in svg
    (True, True)
    """
    estimates = [Estimate(delta.criterion, delta.mean.delta, delta.mean.ci_low, delta.mean.ci_high,
                          "bad" if delta.mean.regressed else "good" if delta.mean.significant else "neutral")
                 for delta in comparison.criteria if delta.mean.delta is not None]
    return forest_plot_svg(estimates, title=title or f"against run {comparison.baseline_run_id}: "
                                                      "per-criterion deltas",
                           x_label="change of the mean score (this run − baseline), 95% CI")


def _number(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def history_table(runs: Sequence[RunInfo], title: str = "run history") -> Any:
    """The runs, newest first: id, when (month, day and time, UTC), command, source, cases,
    pass rate, and each criterion's mean score."""
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("run", "when (UTC)", "command"):
        table.add_column(column, no_wrap=True)
    table.add_column("source", overflow="fold")
    for column in ("cases", "passed"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("criterion means", overflow="fold")
    for run in runs:
        means = "\n".join(f"{name} {mean:.2f}" for name, mean in run.criteria_means.items())
        table.add_row(run.id, f"{run.created_at:%m-%d %H:%M}", run.command, run.source or "–",
                      str(run.cases), f"{run.pass_rate:.0%}", means or "–")
    return table
