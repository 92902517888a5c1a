"""The evaluation report as one self-contained HTML page.

The page shows the run's summary, a chart of each criterion's mean score and pass rate against
its threshold, the distributions (a histogram per criterion, the pass rate per tag, agent time
and tokens per case), a table of cases, and per case the trajectory diff of every turn: tool
calls, responses and node order, expected beside actual. Failed and errored cases start
expanded. Above ``ReportLimits.full_cases`` cases only the first failures are listed, the rest
counted.

It loads nothing and runs nothing: styles are inline, the chart is inline SVG, expanding uses
``<details>``, and a Content-Security-Policy forbids every fetch and script, so the file reads
the same from ``file://``, a CI artifact or a mail attachment. Every piece of report text is
escaped: it is data, never markup.

>>> from agenteval_otel.evaluation import EvalCaseResult, EvalReport
>>> report = EvalReport.from_results("demo", [EvalCaseResult(eval_id="<b>hi</b>", passed=True)])
>>> "&lt;b&gt;hi&lt;/b&gt;" in render_html(report), "<b>hi" in render_html(report)
(True, False)
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from html import escape
from pathlib import Path
from typing import IO

from agenteval_otel.reports._diff import tool_call_rows
from agenteval_otel.reports._history import baseline_forest_svg
from agenteval_otel.reports._judge import judge_lines
from agenteval_otel.reports._plots import bar_chart_svg, bin_counts, distribution_svg, histogram_svg
from agenteval_otel.reports._scale import SCORE_BINS, Aggregates, CaseTags, ReportLimits
from agenteval_otel.results import (
    CriterionResult,
    CriterionStats,
    EvalCaseResult,
    EvalReport,
    EvidenceRow,
    InvocationResult,
)

__all__ = ["render_html", "write_html"]


def write_html(report: EvalReport, path: str | os.PathLike[str], *, limits: ReportLimits | None = None,
               tags: CaseTags | None = None) -> Path:
    """Write the page of ``report`` to ``path`` as UTF-8, creating parent folders; the path.
    The page is written piece by piece, and each case result is read once. ``limits``: how
    many cases are listed (see ``ReportLimits``); ``tags``: each case's tags by eval id (for
    the pass rate per tag)."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    with file.open("w", encoding="utf-8", newline="") as out:
        out.writelines(_page(report, limits or ReportLimits(), tags or {}))
    return file


def render_html(report: EvalReport, *, limits: ReportLimits | None = None, tags: CaseTags | None = None) -> str:
    """The report as a complete HTML document (``limits`` and ``tags`` as for :func:`write_html`)."""
    return "".join(_page(report, limits or ReportLimits(), tags or {}))


def _page(report: EvalReport, limits: ReportLimits, tags: CaseTags) -> Iterator[str]:
    """The document in pieces. Each case result is read once: its row and its details are
    rendered then (if it is listed) and set aside in temporary files, the table's columns
    (every criterion scored) and the plots' numbers gathered on the way."""
    title = report.eval_set_name or report.eval_set_id
    with _spool() as rows, _spool() as details:
        cases = _CasePass(Aggregates(tags), limits.lists_all(len(report.results)), limits.full_failures)
        for index, case in enumerate(report.results, 1):
            cases.add(index, case, rows, details)
        yield (
            '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">\n'
            f"<title>{_e(title)} · evaluation report</title>\n<style>{PAGE_CSS}</style>\n</head>\n"
            f"<body>\n{_header(report)}\n<main>"
        )
        yield _summary(report)
        yield _baseline_section(report)
        yield _chart_section(report, cases.thresholds())
        yield _plots_section(cases.aggregates)
        yield from _cases_table(cases, rows)
        if cases.listed:
            yield '<section aria-labelledby="details-title"><h2 id="details-title">Trajectories</h2>'
            yield from _read_back(details)
            yield "</section>"
        yield _config(report)
        yield "</main>\n</body>\n</html>\n"


def _spool() -> IO[str]:
    return tempfile.TemporaryFile("w+", encoding="utf-8", newline="")


def _read_back(spool: IO[str]) -> Iterator[str]:
    spool.seek(0)
    yield from iter(lambda: spool.read(1 << 16), "")


class _CasePass:
    """What the page needs from every case, gathered in one pass over the results."""

    def __init__(self, aggregates: Aggregates, list_all: bool, full_failures: int) -> None:
        self.count = 0
        self.listed = 0
        self.names: dict[str, None] = {}
        self.aggregates = aggregates
        self.list_all = list_all
        self.full_failures = full_failures
        self.omitted: Counter[str] = Counter()

    def add(self, index: int, case: EvalCaseResult, rows: IO[str], details: IO[str]) -> None:
        """Count ``case`` (the ``index``-th), and set its table row and its details aside if it
        is listed: every case of a small run, the first failed or errored ones of a large one."""
        self.count += 1
        self.aggregates.add(case)
        for r in case.criterion_results:
            self.names.setdefault(r.criterion)
        if not self.list_all and (case.status == "passed" or self.listed >= self.full_failures):
            self.omitted[case.status] += 1
            return
        self.listed += 1
        cells = {r.criterion: _score_cell(r.criterion, r) for r in case.criterion_results}
        why = "".join(f"<div>{_e(line[len(case.eval_id) + 2:])}</div>" for line in case.problems())
        rows.write(json.dumps([f'<tr class="status-{case.status}"><th scope="row"><a href="#case-{index}">'
                               f"{_e(_case_label(case))}</a></th><td>{_badge(case.status)}</td>",
                               cells, f'<td class="why" data-label="Why">{why}</td></tr>']) + "\n")
        details.write(case_details(index, case))

    def thresholds(self) -> dict[str, float]:
        """The threshold each criterion was scored against (the most common one, should they vary)."""
        return {name: counts.most_common(1)[0][0] for name, counts in self.aggregates.thresholds.items()}


# --- header and summary ----------------------------------------------------------------------

def _header(report: EvalReport) -> str:
    created = report.created_at.strftime("%Y-%m-%d %H:%M:%S %Z").strip()
    facts = [
        ("Eval set", f"<code>{_e(report.eval_set_id)}</code>"),
        ("Created", f'<time datetime="{_e(report.created_at.isoformat())}">{_e(created)}</time>'),
        ("Duration", _e(_seconds(report.duration_seconds))),
        ("Report", f"<code>{_e(report.report_id)}</code>"),
    ]
    return (
        '<header class="page-head"><p class="kicker">Evaluation report</p>'
        f"<h1>{_e(report.eval_set_name or report.eval_set_id)} {_badge(_verdict(report))}</h1>"
        f"{_facts(facts, 'facts')}</header>"
    )


def _verdict(report: EvalReport) -> str:
    s = report.summary
    if report.passed:
        return "passed"
    return "errored" if s.error_cases and not s.failed_cases else "failed"


def _summary(report: EvalReport) -> str:
    s = report.summary
    cards = [("Cases", str(s.total_cases), ""), ("Passed", str(s.passed_cases), "passed"),
             ("Failed", str(s.failed_cases), "failed"), ("Errored", str(s.error_cases), "errored"),
             ("Pass rate", f"{s.pass_rate:.0%}", ""), ("Mean score", f"{s.avg_score:.2f}", "")]
    items = "".join(f'<div class="card {cls}"><dt>{label}</dt><dd>{value}</dd></div>'
                    for label, value, cls in cards)
    stack = ""
    if s.total_cases:
        parts = [(s.passed_cases, "passed"), (s.failed_cases, "failed"), (s.error_cases, "errored")]
        spans = "".join(f'<span class="{status}" style="flex-grow:{count}"></span>'
                        for count, status in parts if count)
        label = ", ".join(f"{count} {status}" for count, status in parts)
        stack = f'<div class="stack" role="img" aria-label="{label}">{spans}</div>'
    judge = "".join(f'<p class="judge{" case-error" if line.startswith("LLM judge did not") else ""}">'
                    f"{_e(line)}</p>" for line in judge_lines(report))
    return (f'<section aria-labelledby="summary-title"><h2 id="summary-title">Summary</h2>'
            f'<dl class="cards">{items}</dl>{stack}{judge}</section>')


def _baseline_section(report: EvalReport) -> str:
    """With a baseline: the forest plot of each criterion's change and the cases whose verdict changed."""
    comparison = report.baseline
    if comparison is None:
        return ""
    when = comparison.baseline_created_at[:16].replace("T", " ")
    changes = "".join(f'<p class="changed">{_e(title)} ({len(cases)}): '
                      f'{_e(", ".join(f"{c.eval_id} ({c.status_a} → {c.status_b})" for c in cases))}</p>'
                      for title, cases in (("Passed in the baseline, not now", comparison.newly_failed),
                                           ("Passed now, not in the baseline", comparison.newly_passed)) if cases)
    return (f'<section aria-labelledby="baseline-title"><h2 id="baseline-title">Against the baseline</h2>'
            f'<p class="muted">Run <code>{_e(comparison.baseline_run_id)}</code> of {_e(when)} UTC, '
            f"{comparison.pairs} paired case{'s' if comparison.pairs != 1 else ''}.</p>"
            f'<figure class="plot-figure">{baseline_forest_svg(comparison)}</figure>{changes}</section>')


# --- the score chart -------------------------------------------------------------------------

# Drawn in pixels vertically and in percent horizontally: the text keeps its size while the bars
# follow the window's width. The plot takes _PLOT percent; the values sit to its right.
_ROW_H, _TOP, _PLOT = 64, 4, 87


def _pct(value: float) -> str:
    return f"{max(0.0, min(1.0, value)) * 100:.1f}%"


def _chart_section(report: EvalReport, thresholds: dict[str, float]) -> str:
    stats = report.summary.criterion_stats
    if not stats:
        chart = '<p class="none">No criterion was scored.</p>'
    else:
        legend = ('<span class="key"><span class="swatch ok"></span>mean score, at or above '
                  'threshold</span><span class="key"><span class="swatch low"></span>mean score, '
                  'below threshold</span><span class="key"><span class="swatch rate"></span>pass '
                  'rate (0–100%)</span><span class="key"><span class="swatch thr"></span>'
                  "threshold</span>")
        chart = (f'<figure class="chart">{_score_chart(stats, thresholds)}'
                 f"<figcaption>{legend}</figcaption></figure>")
    return (f'<section aria-labelledby="chart-title"><h2 id="chart-title">Scores by criterion</h2>'
            f"{chart}</section>")


def _score_chart(stats: dict[str, CriterionStats], thresholds: dict[str, float]) -> str:
    axis_y = _TOP + len(stats) * _ROW_H
    height = axis_y + 20
    described = "; ".join(_chart_label(name, s, thresholds.get(name)) for name, s in stats.items())
    parts = [f'<svg class="score-chart" width="100%" height="{height}" role="img" '
             'aria-labelledby="score-chart-title score-chart-desc">'
             '<title id="score-chart-title">Mean score and pass rate per criterion</title>'
             f'<desc id="score-chart-desc">{_e(described)}</desc>'
             f'<svg width="{_PLOT}%" height="{height}" overflow="visible">']
    for tick, anchor in ((0.0, "start"), (0.25, "middle"), (0.5, "middle"), (0.75, "middle"),
                         (1.0, "end")):
        parts.append(f'<line class="grid" x1="{_pct(tick)}" y1="{_TOP + 18}" x2="{_pct(tick)}" '
                     f'y2="{axis_y}"/><text class="tick" x="{_pct(tick)}" y="{axis_y + 15}" '
                     f'text-anchor="{anchor}">{tick:g}</text>')
    for row, (name, s) in enumerate(stats.items()):
        parts.append(_chart_row(name, s, thresholds.get(name), _TOP + row * _ROW_H))
    parts.append("</svg></svg>")
    return "".join(parts)


def _chart_label(name: str, s: CriterionStats, threshold: float | None) -> str:
    mean = f"mean score {s.mean:.2f}" if s.count > s.errors else "no score"
    text = f"{name}: {mean}, pass rate {s.pass_rate:.0%}"
    if threshold is not None:
        text += f", threshold {threshold:.2f}"
    return text + (f", {s.errors} of {s.count} errored" if s.errors else "")


def _chart_row(name: str, s: CriterionStats, threshold: float | None, y: int) -> str:
    scored = s.count > s.errors
    level = "ok" if threshold is None or s.mean >= threshold else "low"
    note = "" if threshold is None else f"threshold {threshold:.2f}"
    note += f" · {s.errors} errored" if s.errors else ""
    row = [
        f'<g class="criterion" data-criterion="{_e(name)}">'
        f"<title>{_e(_chart_label(name, s, threshold))}</title>",
        f'<text class="label" x="0" y="{y + 14}">{_e(name)}</text>',
        f'<text class="note" x="100%" y="{y + 14}" text-anchor="end">{_e(note)}</text>',
        f'<rect class="track" x="0" y="{y + 21}" width="100%" height="18" rx="3"/>',
        f'<rect class="bar {level}" x="0" y="{y + 21}" width="{_pct(s.mean)}" height="18" rx="3"/>'
        if scored else "",
        f'<text class="value" x="102%" y="{y + 35}">{f"{s.mean:.2f}" if scored else "—"}</text>',
        f'<rect class="track" x="0" y="{y + 43}" width="100%" height="10" rx="2"/>',
        f'<rect class="bar rate" x="0" y="{y + 43}" width="{_pct(s.pass_rate)}" height="10" rx="2"/>',
        f'<text class="value small" x="102%" y="{y + 53}">{s.pass_rate:.0%}</text>',
    ]
    if threshold is not None:
        row.append(f'<line class="threshold" x1="{_pct(threshold)}" y1="{y + 17}" '
                   f'x2="{_pct(threshold)}" y2="{y + 57}"/>')
    row.append("</g>")
    return "".join(row)


# --- the distributions ---------------------------------------------------------------------

def _plots_section(aggregates: Aggregates) -> str:
    """A histogram of each criterion's scores, the pass rate per tag, and the distributions of
    agent time and tokens per case; nothing when there is nothing to plot."""
    plots = [histogram_svg(*bin_counts(scores, SCORE_BINS, 0.0, 1.0), title=name, x_label="score",
                           y_label="results", marker=aggregates.threshold(name))
             for name, scores in aggregates.scores.items()]
    if aggregates.tag_cases:
        tallies = sorted(aggregates.tag_cases.items())
        plots.append(bar_chart_svg([(tag, passed / total) for tag, (passed, total) in tallies],
                                   title="Pass rate per tag", x_label="cases passed",
                                   notes=[f"{passed}/{total}" for _, (passed, total) in tallies]))
    if aggregates.latency_s:
        plots.append(distribution_svg(aggregates.latency_s, title="Agent time per case", x_label="seconds",
                                      unit=" s"))
    if aggregates.tokens:
        plots.append(distribution_svg(aggregates.tokens, title="Tokens per case", x_label="input + output tokens"))
    if not plots:
        return ""
    figures = "".join(f'<figure class="plot-figure">{svg}</figure>' for svg in plots)
    return (f'<section aria-labelledby="plots-title"><h2 id="plots-title">Distributions</h2>'
            f'<div class="plots">{figures}</div></section>')


# --- the table of cases ----------------------------------------------------------------------

def _cases_table(cases: _CasePass, rows: IO[str]) -> Iterator[str]:
    if not cases.listed:
        if cases.count:
            yield (f'<section aria-labelledby="cases-title"><h2 id="cases-title">Cases</h2>'
                   f"{_omitted_note(cases)}</section>")
            return
        yield ('<section aria-labelledby="cases-title"><h2 id="cases-title">Cases</h2>'
               '<p class="none">No case was run.</p></section>')
        return
    names = list(cases.names)
    # a criterion name may break after its underscores, so that many columns fit
    head = "".join(f'<th scope="col">{_e(name).replace("_", "_<wbr>")}</th>' for name in names)
    yield ('<section aria-labelledby="cases-title"><h2 id="cases-title">Cases</h2>'
           '<div class="scroll"><table class="cases stackable"><thead><tr><th scope="col">Case</th>'
           f'<th scope="col">Status</th>{head}<th scope="col">Why</th></tr></thead><tbody>')
    rows.seek(0)
    for line in rows:
        start, cells, end = json.loads(line)
        yield start + "".join(cells.get(name) or _score_cell(name, None) for name in names) + end
    yield f"</tbody></table></div>{_omitted_note(cases)}</section>"


def _omitted_note(cases: _CasePass) -> str:
    if cases.list_all:
        return ""
    counts = ", ".join(f"{count:,} {status}" for status in ("passed", "failed", "errored")
                       if (count := cases.omitted[status]))
    listed = (f"the first {cases.listed:,} failed or errored cases are listed in full"
              if cases.listed else "no case failed or errored")
    return (f'<p class="omitted">{cases.count:,} cases: {listed}; {_e(counts or "none")} counted, '
            "not listed (the summary, the statistics and the plots count every case).</p>")


def _score_cell(name: str, result: CriterionResult | None) -> str:
    label = f'data-label="{_e(name)}"'
    if result is None:
        return f'<td class="score" {label}><span class="none">—</span></td>'
    if result.error:
        return f'<td class="score error" {label}><span class="mark">!</span> error</td>'
    level, mark = ("pass", "✓") if result.passed else ("fail", "✗")
    return (f'<td class="score {level}" {label}>{result.score:.2f}<span class="thr"> / '
            f'{result.threshold:.2f}</span> <span class="mark" aria-label="{level}ed">{mark}</span></td>')


# --- per case: criteria, metrics and the trajectory diff of every turn ------------------------

def case_details(index: int, case: EvalCaseResult) -> str:
    """One case as the page shows it (``id="case-{index}"``): its verdict, error, criteria,
    metrics and the trajectory diff of every turn, in a ``<details>`` open unless it passed."""
    opened = "" if case.status == "passed" else " open"
    score = "" if case.score is None else f'<span class="case-score">score {case.score:.2f}</span>'
    eval_id = (f' <code class="muted">{_e(case.eval_id)}</code>'
               if case.name and case.name != case.eval_id else "")
    parts = [f'<details class="case status-{case.status}" id="case-{index}"{opened}><summary>'
             f'<h3 class="case-title">{_badge(case.status)} {_e(_case_label(case))}{eval_id}</h3>'
             f"{score}</summary><div class=\"case-body\">"]
    if case.error:
        trace = (f'<details class="traceback"><summary>Traceback</summary><pre>{_e(case.traceback)}</pre>'
                 "</details>" if case.traceback else "")
        parts.append(f'<div class="case-error"><strong>Error</strong><pre>{_e(case.error)}</pre>{trace}</div>')
    if case.criterion_results:
        parts.append(_criteria_table(case.criterion_results))
    parts.append(_metrics(case))
    if case.run_results:
        badges = " ".join(_badge(run.status) for run in case.run_results)
        parts.append(f'<p class="runs"><span class="label">Runs</span> {badges}</p>')
    many = len(case.invocation_results) > 1
    parts.extend(_turn(number, inv, many) for number, inv in enumerate(case.invocation_results, 1))
    if not case.invocation_results:
        parts.append('<p class="none">No turn was scored.</p>')
    if case.trace_ids:
        ids = " ".join(f"<code>{_e(t)}</code>" for t in case.trace_ids)
        parts.append(f'<p class="traces"><span class="label">Traces</span> {ids}</p>')
    parts.append("</div></details>")
    return "".join(parts)


def _criteria_table(results: Sequence[CriterionResult]) -> str:
    rows = []
    for r in results:
        level = "error" if r.error else "pass" if r.passed else "fail"
        verdict = {"error": "errored", "pass": "passed", "fail": "failed"}[level]
        score = "—" if r.error else f"{r.score:.2f}"
        rules = f' <span class="semantics">({_e(r.semantics)} rules)</span>' if r.semantics != "agenteval" else ""
        rows.append(f'<tr class="{level}"><th scope="row">{_e(r.criterion)}{rules}</th>'
                    f'<td class="num" data-label="Score">{score}</td>'
                    f'<td class="num" data-label="Threshold">{r.threshold:.2f}</td>'
                    f'<td>{_badge(verdict)}</td>'
                    f'<td class="reason" data-label="Reason">{_e(r.explanation)}</td></tr>')
    return ('<div class="scroll"><table class="criteria stackable"><thead><tr><th scope="col">Criterion</th>'
            '<th scope="col">Score</th><th scope="col">Threshold</th><th scope="col">Result</th>'
            f'<th scope="col">Reason</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


_METRICS: dict[str, str] = {
    "turns": "Turns", "tool_calls": "Tool calls", "model_calls": "Model calls",
    "input_tokens": "Input tokens", "output_tokens": "Output tokens", "duration_s": "Agent time",
    "matched_turns": "Matched turns", "runs": "Runs", "passed_runs": "Passed runs",
    "pass@1": "pass@1", "pass@k": "pass@k", "pass^k": "pass^k",
}


def _metric(key: str, value: float) -> str:
    if key == "duration_s":
        return _seconds(value)
    if key.startswith("pass@") or key.startswith("pass^"):
        return f"{value:.0%}"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def _metrics(case: EvalCaseResult) -> str:
    known = [k for k in _METRICS if k in case.metrics]
    others = [k for k in case.metrics if k not in _METRICS]
    facts = [(_METRICS.get(k, k), _e(_metric(k, case.metrics[k]))) for k in known + others]
    if case.duration_seconds:
        facts.append(("Case time", _e(_seconds(case.duration_seconds))))
    return _facts(facts, "metrics") if facts else ""


def _turn(number: int, inv: InvocationResult, with_criteria: bool) -> str:
    parts = [f'<section class="turn" aria-label="Turn {number}"><h4>Turn {number} '
             f'<code class="muted">{_e(inv.invocation_id)}</code></h4>',
             f'<div class="user-input"><span class="label">User</span>'
             f'<p class="text">{_text(inv.user_input)}</p></div>',
             _tool_diff(tool_call_rows(inv)),
             _responses(inv.expected_response, inv.actual_response),
             _node_order(inv)]
    if with_criteria and inv.criterion_results:
        parts.append(_criteria_table(inv.criterion_results))
    parts.append("</section>")
    return "".join(parts)


_DIFF_MARK = {"match": "=", "mismatch": "≠", "missing": "−", "unexpected": "+", "listed": "·"}


def _tool_diff(rows: Sequence[EvidenceRow]) -> str:
    if not rows:
        return '<div class="block"><h5>Tool calls</h5><p class="none">None expected, none made.</p></div>'
    body = "".join(
        f'<tr class="diff-row diff-{_e(row.status)}" data-status="{_e(row.status)}">'
        f'<td class="diff-status"><span aria-hidden="true">{_DIFF_MARK.get(row.status, "")}</span> '
        f'{_e(row.status)}</td><td data-label="Expected">{_call(row.expected)}</td>'
        f'<td data-label="Actual">{_call(row.actual)}</td>'
        f'<td class="note" data-label="Note">{_e(row.note)}</td></tr>' for row in rows)
    return ('<div class="block"><h5>Tool calls</h5><div class="scroll"><table class="diff stackable">'
            '<thead><tr><th scope="col">Status</th><th scope="col">Expected</th>'
            '<th scope="col">Actual</th><th scope="col">Note</th></tr></thead>'
            f"<tbody>{body}</tbody></table></div></div>")


def _call(text: str | None) -> str:
    return '<span class="none">—</span>' if text is None else f"<code>{_e(text)}</code>"


def _responses(expected: str | None, actual: str | None) -> str:
    if expected is None and actual is None:
        return ""
    tag = '<span class="tag same">identical</span>' if expected == actual else ""
    sides = "".join(f'<div class="side"><span class="label">{label}</span>'
                    f'<p class="text">{_text(text)}</p></div>'
                    for label, text in (("Expected", expected), ("Actual", actual)))
    return f'<div class="block"><h5>Response {tag}</h5><div class="pair">{sides}</div></div>'


def _node_order(inv: InvocationResult) -> str:
    expected, actual = inv.expected_node_order, inv.actual_node_order
    if not expected and not actual:
        return ""
    verdict = inv.result("node_order")  # the criterion's verdict, never a comparison of our own
    tag = ""
    if verdict is not None and verdict.error is None:
        tag = (f'<span class="tag {"same" if verdict.passed else "differs"}">'
               f'node_order {"passed" if verdict.passed else "failed"}</span>')
    return (f'<div class="block"><h5>Node order {tag}</h5><div class="pair">'
            f'<div class="side"><span class="label">Expected</span>{_nodes(expected)}</div>'
            f'<div class="side"><span class="label">Actual</span>{_nodes(actual)}</div>'
            "</div></div>")


def _nodes(names: Sequence[str]) -> str:
    if not names:
        return '<p class="none">—</p>'
    return '<ol class="nodes">' + "".join(f"<li><span>{_e(name)}</span></li>" for name in names) + "</ol>"


def _config(report: EvalReport) -> str:
    if not report.config_used:
        return ""
    text = json.dumps(report.config_used, indent=2, ensure_ascii=False, default=str)
    return (f'<details class="config"><summary>Configuration used</summary>'
            f"<pre>{_e(text)}</pre></details>")


# --- small pieces ----------------------------------------------------------------------------

def _e(value: object) -> str:
    """Report text as HTML text (also safe inside a quoted attribute)."""
    return "" if value is None else escape(str(value), quote=True)


def _text(value: str | None) -> str:
    return '<span class="none">(none)</span>' if value is None else _e(value)


_BADGE_MARK = {"passed": "✓", "failed": "✗", "errored": "!"}


def _badge(status: str) -> str:
    return (f'<span class="badge {_e(status)}"><span aria-hidden="true">'
            f"{_BADGE_MARK.get(status, '')}</span> {_e(status)}</span>")


def _facts(facts: Sequence[tuple[str, str]], cls: str) -> str:
    """A ``<dl>`` of label / value pairs; values are HTML already escaped by the caller."""
    items = "".join(f"<div><dt>{_e(label)}</dt><dd>{value}</dd></div>" for label, value in facts)
    return f'<dl class="{cls}">{items}</dl>'


def _case_label(case: EvalCaseResult) -> str:
    return case.label


def _seconds(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

PAGE_CSS = """
:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#fff;--panel:#f6f8fa;
--line:#d1d9e0;--pass:#116329;--pass-bg:#dafbe1;--pass-strong:#1a7f37;--fail:#a40e26;
--fail-bg:#ffebe9;--fail-strong:#cf222e;--error:#7d4e00;--error-bg:#fff4d4;--error-strong:#d4a72c;
--extra:#6639ba;--extra-bg:#f5edff;--rate:#6e7781;--track:#eaeef2;--thr:#1f2328}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;
--panel:#151b23;--line:#3d444d;--pass:#56d364;--pass-bg:#12261e;--pass-strong:#2ea043;
--fail:#ff7b72;--fail-bg:#2d1215;--fail-strong:#da3633;--error:#e3b341;--error-bg:#2b2111;
--error-strong:#bb8009;--extra:#d2a8ff;--extra-bg:#231a33;--rate:#8b949e;--track:#262c36;
--thr:#e6edf3}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:76rem;padding:1.25rem clamp(.75rem,3vw,2rem) 3rem;background:var(--bg);
color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
h1{font-size:1.6rem;margin:.1rem 0 .6rem;overflow-wrap:anywhere}
h1 .badge{font-size:.9rem;vertical-align:middle}
h2{font-size:1.2rem;margin:2rem 0 .8rem;padding-bottom:.3rem;border-bottom:1px solid var(--line)}
h4{font-size:1rem;margin:0 0 .6rem}
h5{font-size:.8rem;margin:.9rem 0 .35rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:.85em}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
.kicker{margin:0;color:var(--muted);font-size:.85rem;text-transform:uppercase;letter-spacing:.06em}
.muted,.none{color:var(--muted)}
.none{font-style:italic}
.facts,.metrics{display:flex;flex-wrap:wrap;gap:.3rem 1.5rem;margin:0}
.facts div,.metrics div{display:flex;gap:.4rem;align-items:baseline;min-width:0}
.facts dt,.metrics dt,.label{color:var(--muted);font-size:.8rem}
.facts dd,.metrics dd{margin:0;overflow-wrap:anywhere}
.metrics{margin:.8rem 0;padding:.5rem .75rem;background:var(--panel);border-radius:6px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(8.5rem,1fr));gap:.6rem;margin:0}
.card{display:flex;flex-direction:column-reverse;padding:.6rem .8rem;border:1px solid var(--line);
border-radius:8px;border-top:4px solid var(--line)}
.card dt{color:var(--muted);font-size:.85rem}
.card dd{margin:0;font-size:1.6rem;font-weight:650;font-variant-numeric:tabular-nums}
.card.passed{border-top-color:var(--pass-strong)}.card.passed dd{color:var(--pass)}
.card.failed{border-top-color:var(--fail-strong)}.card.failed dd{color:var(--fail)}
.card.errored{border-top-color:var(--error-strong)}.card.errored dd{color:var(--error)}
.stack{display:flex;height:.7rem;margin-top:.7rem;border-radius:99px;overflow:hidden;background:var(--track)}
.stack .passed{background:var(--pass-strong)}.stack .failed{background:var(--fail-strong)}
.stack .errored{background:var(--error-strong)}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:99px;font-size:.8rem;font-weight:600;
white-space:nowrap;border:1px solid transparent}
.badge.passed{background:var(--pass-bg);color:var(--pass);border-color:var(--pass-strong)}
.badge.failed{background:var(--fail-bg);color:var(--fail);border-color:var(--fail-strong)}
.badge.errored{background:var(--error-bg);color:var(--error);border-color:var(--error-strong)}
.chart{margin:0}
.score-chart{display:block;width:100%;max-width:52rem}
.score-chart text{fill:var(--fg);font-size:14px}
.score-chart .label{font-weight:600}
.score-chart .note,.score-chart .tick{fill:var(--muted);font-size:12px}
.score-chart .small{font-size:12px}
.score-chart .grid{stroke:var(--line);stroke-width:1}
.score-chart .track{fill:var(--track)}
.score-chart .ok{fill:var(--pass-strong)}.score-chart .low{fill:var(--fail-strong)}
.score-chart .rate{fill:var(--rate)}
.score-chart .threshold{stroke:var(--thr);stroke-width:2.5;stroke-dasharray:4 2}
.plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,28rem),1fr));gap:1rem 1.5rem}
.plot-figure{margin:0;min-width:0}.plot-figure svg{display:block;height:auto}
.omitted{color:var(--muted);margin:.6rem 0}
figcaption{display:flex;flex-wrap:wrap;gap:.3rem 1.2rem;font-size:.85rem;color:var(--muted);margin-top:.4rem}
.key{display:inline-flex;align-items:center;gap:.35rem}
.swatch{display:inline-block;width:.9rem;height:.9rem;border-radius:2px}
.swatch.ok{background:var(--pass-strong)}.swatch.low{background:var(--fail-strong)}
.swatch.rate{background:var(--rate)}.swatch.thr{width:3px;background:var(--thr)}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;vertical-align:top;padding:.4rem .6rem;border-bottom:1px solid var(--line)}
thead th{font-size:.8rem;color:var(--muted);font-weight:600;white-space:nowrap}
tbody th{font-weight:600;overflow-wrap:break-word}
.cases tbody th{min-width:9rem;max-width:22rem}
.cases td.why{min-width:12rem;color:var(--muted);overflow-wrap:anywhere}
.cases a{color:inherit}
td.score,td.num{white-space:nowrap;font-variant-numeric:tabular-nums}
td.score .thr{color:var(--muted);font-size:.85em}
td.pass .mark{color:var(--pass)}td.fail{color:var(--fail)}td.error{color:var(--error);font-weight:600}
td.reason{min-width:12rem;overflow-wrap:anywhere}
.case{margin:.7rem 0;border:1px solid var(--line);border-left:5px solid var(--line);border-radius:8px}
.case.status-passed{border-left-color:var(--pass-strong)}
.case.status-failed{border-left-color:var(--fail-strong)}
.case.status-errored{border-left-color:var(--error-strong)}
.case>summary{cursor:pointer;padding:.6rem .8rem;display:flex;align-items:baseline;gap:.6rem}
.case>summary::before{content:"▸";color:var(--muted)}
.case[open]>summary::before{content:"▾"}
.case>summary::-webkit-details-marker{display:none}
.case>summary:focus-visible{outline:2px solid var(--fg);outline-offset:2px}
.case-title{flex:1 1 auto;min-width:0;font-size:1rem;margin:0;overflow-wrap:break-word}
.case-score{color:var(--muted);font-size:.85rem;white-space:nowrap}
.case-body{padding:0 .8rem .8rem}
.case-error{margin:.4rem 0 .8rem;padding:.6rem .8rem;background:var(--error-bg);color:var(--error);
border:1px solid var(--error-strong);border-radius:6px}
.case-error pre{color:var(--fg);margin-top:.2rem}
.turn{margin-top:1rem;padding:.8rem;background:var(--panel);border-radius:6px}
.user-input{display:flex;flex-direction:column}
.text{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
.user-input .text{font-weight:500}
.diff{background:var(--bg);table-layout:fixed;min-width:34rem}
.diff th:first-child{width:8.5rem}.diff th:nth-child(2),.diff th:nth-child(3){width:33%}
.diff td{overflow-wrap:anywhere}
.diff-row td:first-child{font-weight:600;white-space:nowrap;border-left:4px solid transparent}
.diff-match td{background:var(--pass-bg)}
.diff-match td:first-child{color:var(--pass);border-left-color:var(--pass-strong)}
.diff-mismatch td{background:var(--error-bg)}
.diff-mismatch td:first-child{color:var(--error);border-left-color:var(--error-strong)}
.diff-missing td{background:var(--fail-bg)}
.diff-missing td:first-child{color:var(--fail);border-left-color:var(--fail-strong)}
.diff-unexpected td{background:var(--extra-bg)}
.diff-unexpected td:first-child{color:var(--extra);border-left-color:var(--extra)}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:.6rem}
.side{padding:.5rem .7rem;background:var(--bg);border:1px solid var(--line);border-radius:6px;min-width:0}
.side .label{display:block;margin-bottom:.2rem}
.tag{font-size:.75rem;font-weight:600;text-transform:none;letter-spacing:0;padding:0 .4rem;
border-radius:4px;margin-left:.3rem}
.tag.same{background:var(--pass-bg);color:var(--pass)}.tag.differs{background:var(--fail-bg);color:var(--fail)}
.nodes{display:flex;flex-wrap:wrap;gap:.3rem;list-style:none;margin:0;padding:0}
.nodes li{display:flex;gap:.3rem;align-items:center;min-width:0}
.nodes span{padding:0 .45rem;border:1px solid var(--line);border-radius:4px;overflow-wrap:anywhere;
font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:.85em}
.nodes li+li::before{content:"→";color:var(--muted)}
.criteria{margin:.4rem 0;background:var(--bg)}
.runs,.traces{margin:.6rem 0;overflow-wrap:anywhere}
.config{margin-top:2rem}.config summary{cursor:pointer;color:var(--muted)}
.config pre{margin-top:.5rem;padding:.7rem;background:var(--panel);border-radius:6px}
@media (max-width:56rem){body{font-size:14px}
.stackable,.stackable tbody,.stackable tr,.stackable th,.stackable td{display:block;width:auto}
.stackable thead{display:none}
.stackable tr{border-bottom:1px solid var(--line);padding:.3rem 0}
.stackable th,.stackable td,.cases tbody th,td.reason,.cases td.why{border:0;min-width:0;max-width:none;
padding:.15rem .5rem;white-space:normal}
.stackable td[data-label]::before{content:attr(data-label);display:inline-block;min-width:8rem;
margin-right:.5rem;font-size:.75rem;font-weight:400;color:var(--muted)}
.stackable td.why::before,.stackable td.reason::before,.diff td[data-label]::before{display:block}
.stackable td:empty{display:none}
.diff{min-width:0}.diff-row td{border-left:4px solid transparent}
.diff-match td{border-left-color:var(--pass-strong)}.diff-mismatch td{border-left-color:var(--error-strong)}
.diff-missing td{border-left-color:var(--fail-strong)}.diff-unexpected td{border-left-color:var(--extra)}}
"""
