"""Experiments and comparisons on the console, as rich renderables, and a comparison as an HTML page.

They take an ``agenteval_otel.experiments.ExperimentResult`` and ``Comparison`` by their fields
(reports sit below experiments, so they name neither type).

>>> from rich.console import Console
>>> from agenteval_otel.experiments import ExperimentRecord, ExperimentResult
>>> result = ExperimentResult(records=[ExperimentRecord(query_index=0, query="hi", scores={"m": 1.0},
...                                                    metric_passed={"m": True}, passed=True)])
>>> console = Console(width=100)
>>> with console.capture() as captured:
...     console.print(experiment_table(result))
>>> "1 record(s): 1 passed, 0 failed, 0 errored" in captured.get()
True
"""

from __future__ import annotations

from typing import Any

from agenteval_otel.reports._plots import Estimate, forest_plot_svg

__all__ = ["comparison_forest_svg", "comparison_table", "experiment_table"]


def experiment_table(result: Any) -> Any:
    """Each metric's statistics, the record counts, and the errored records (a ``rich.console.Group``)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    summary = result.summary
    table = Table(title=f"experiment: {result.source or 'records'} graded by {result.graded_by or '?'}")
    for column in ("metric", "count", "mean", "median", "std dev", "min", "max", "pass rate"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for stats in summary.metrics.values():
        table.add_row(stats.metric, str(stats.count), f"{stats.mean:.3f}", f"{stats.median:.3f}",
                      f"{stats.std_dev:.3f}", f"{stats.min:.3f}", f"{stats.max:.3f}", f"{stats.pass_rate:.0%}")
    counts = Text(f"{summary.total} record(s): {summary.passed} passed, {summary.failed} failed, "
                  f"{summary.errored} errored", style="bold")
    errored = [r for r in result.records if r.status == "errored"]
    parts: list[Any] = [table, counts]
    if errored:
        parts.append(Text("\n".join(f"  #{r.query_index} {r.query!r}: {r.error}" for r in errored), style="red"))
    return Group(*parts)


def _number(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def comparison_table(comparison: Any) -> Any:
    """The comparison as rich renderables: the metrics table, then the changed verdicts and the
    unpaired queries (a ``rich.console.Group``)."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"{comparison.source_b or 'B'} vs {comparison.source_a or 'A'} "
                        f"({comparison.pairs} paired queries)")
    table.add_column("metric", overflow="fold")
    for column in ("pairs", "mean A", "mean B", "delta", "95% CI", "p"):
        table.add_column(column, justify="right")
    table.add_column("", min_width=9, no_wrap=True)
    for metric in comparison.metrics:
        verdict = Text("regressed", style="bold red") if metric.regressed else \
            Text("improved", style="bold green") if metric.significant else Text("")
        table.add_row(metric.metric, str(metric.pairs), _number(metric.mean_a), _number(metric.mean_b),
                      _number(metric.delta, True), _interval(metric),
                      "–" if metric.p_value is None else f"{metric.p_value:.4f}", verdict)
    parts: list[Any] = [table]
    for title, changes, style in (("passed in A, not in B", comparison.newly_failed, "red"),
                                  ("passed in B, not in A", comparison.newly_passed, "green")):
        if changes:
            lines = [f"  #{c.query_index} {c.query!r}: {c.status_a} → {c.status_b}" for c in changes]
            parts.append(Text("\n".join([f"{title} ({len(changes)}):", *lines]), style=style))
    for title, keys in (("only in A", comparison.only_in_a), ("only in B", comparison.only_in_b)):
        if keys:
            parts.append(Text("\n".join([f"{title} ({len(keys)}, not compared):",
                                         *(f"  #{index} {query!r}" for index, query in keys)])))
    return Group(*parts)


def comparison_forest_svg(comparison: Any) -> str:
    """The comparison's per-metric deltas (B − A) with their confidence intervals as a forest
    plot (inline SVG): regressions red, significant improvements green.

    >>> from agenteval_otel.experiments import ExperimentRecord, ExperimentResult, compare
    >>> def run(score): return ExperimentResult(records=[
    ...     ExperimentRecord(query_index=i, query="q", scores={"m": score + i / 100}, metric_passed={"m": True},
    ...                      passed=True) for i in range(8)])
    >>> svg = comparison_forest_svg(compare(run(0.8), run(0.5)))
    >>> 'class="plot forest"' in svg, "m: -0.300" in svg
    (True, True)
    """
    estimates = [Estimate(metric.metric, metric.delta or 0.0, metric.ci_low, metric.ci_high,
                          "bad" if metric.regressed else "good" if metric.significant else "neutral")
                 for metric in comparison.metrics if metric.delta is not None]
    return forest_plot_svg(estimates, title=f"{comparison.source_b or 'B'} vs {comparison.source_a or 'A'}: "
                                            "per-metric deltas", x_label="delta of the mean (B − A), 95% CI")


def comparison_html(comparison: Any) -> str:
    """The comparison as a self-contained HTML page: the forest plot of the per-metric deltas,
    the metrics table and the queries whose verdict changed (no script, nothing loaded).

    >>> from agenteval_otel.experiments import ExperimentRecord, ExperimentResult, compare
    >>> def run(score): return ExperimentResult(records=[
    ...     ExperimentRecord(query_index=i, query="<q>", scores={"m": score}, metric_passed={"m": score > 0.6},
    ...                      passed=score > 0.6) for i in range(3)])
    >>> page = comparison_html(compare(run(0.8), run(0.5)))
    >>> 'class="plot forest"' in page, "#0 &#x27;&lt;q&gt;&#x27;: passed → failed" in page
    (True, True)
    """
    from agenteval_otel.reports._html import _POLICY, PAGE_CSS, _e

    title = f"{comparison.source_b or 'B'} vs {comparison.source_a or 'A'} ({comparison.pairs} paired queries)"
    rows = "".join(
        f"<tr><td>{_e(m.metric)}</td><td>{m.pairs}</td><td>{_number(m.mean_a)}</td><td>{_number(m.mean_b)}</td>"
        f"<td>{_number(m.delta, True)}</td><td>{_interval(m)}</td>"
        f"<td>{'–' if m.p_value is None else f'{m.p_value:.4f}'}</td>"
        f"<td>{'regressed' if m.regressed else 'improved' if m.significant else ''}</td></tr>"
        for m in comparison.metrics)
    changes = "".join(
        f"<h2>{_e(heading)} ({len(items)})</h2><ul>"
        + "".join(f"<li>#{c.query_index} {_e(repr(c.query))}: {c.status_a} → {c.status_b}</li>" for c in items)
        + "</ul>"
        for heading, items in (("passed in A, not in B", comparison.newly_failed),
                               ("passed in B, not in A", comparison.newly_passed)) if items)
    notes = "".join(f"<p class=\"note\">{_e(note)}</p>" for note in comparison.notes)
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">\n'
        f"<title>{_e(title)}</title>\n<style>{PAGE_CSS}</style>\n</head>\n<body>\n<main>\n"
        f"<h1>{_e(title)}</h1>\n{comparison_forest_svg(comparison)}\n"
        "<table><thead><tr><th>metric</th><th>pairs</th><th>mean A</th><th>mean B</th><th>delta</th>"
        f"<th>95% CI</th><th>p</th><th></th></tr></thead><tbody>{rows}</tbody></table>\n{changes}{notes}\n"
        "</main>\n</body>\n</html>\n")


def _interval(metric: Any) -> str:
    if metric.ci_low is None:
        return "–"
    return f"[{_number(metric.ci_low, True)}, {_number(metric.ci_high, True)}]"
