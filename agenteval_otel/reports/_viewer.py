"""The local viewer (``agenteval view``): pages over the run history and the JSON reports, served
on 127.0.0.1 only.

:class:`Viewer` renders the pages from a :class:`~agenteval_otel.results.HistoryStore` and report
files; :func:`viewer_server` serves them (stdlib ``ThreadingHTTPServer``). The pages:

- ``/``: the runs, newest first, with a form to compare two of them, and line charts over the runs
  of one source (``?source=``; default: the newest run's): pass rate and mean score per criterion,
  agent time and tokens per case (p50, p90, p99), and the LLM judge's time per criterion.
- ``/run/RUN_ID``: a run's per-criterion statistics, score histograms, time and token
  distributions, and its failures with their reasons. When one of the JSON reports given is this
  run's (same eval set id and the same creation time, which the history records from the report),
  each failed case is shown below with its evidence and trajectory, as the HTML report shows it.
- ``/compare?a=RUN_A&b=RUN_B``: run B against run A, paired case by case: per-criterion deltas with
  their 95% intervals (a table and a forest plot) and the cases whose verdict changed.

Each failure links to its trace in the user's backend when a ``trace_url`` template is given:
``{trace_id}`` and ``{span_id}`` are replaced by the ids (nothing else in it is read, so a
Grafana URL's own braces stay as they are). For example:

- Jaeger: ``http://localhost:16686/trace/{trace_id}?uiFind={span_id}``
- Phoenix: ``http://localhost:6006/projects/UHJvamVjdDox/traces/{trace_id}`` (the default project)
- Grafana with Tempo: ``http://localhost:3000/explore?left={"datasource":"tempo","queries":[{"query":"{trace_id}","queryType":"traceql"}]}``

The pages load nothing and run no script: styles are inline, plots are inline SVG, the only form
submits to the viewer itself, and a Content-Security-Policy says so. Every piece of history and
report text is escaped.

>>> import tempfile
>>> from agenteval_otel.results import EvalCaseResult, EvalReport, HistoryStore
>>> store = HistoryStore(Path(tempfile.mkdtemp()) / "history.db")
>>> _ = store.record(EvalReport.from_results("<b>demo</b>", [EvalCaseResult(eval_id="c1", passed=True)]),
...                  command="run", run_id="r1")
>>> status, page = Viewer(store).render("/run/r1")
>>> int(status), "&lt;b&gt;demo&lt;/b&gt;" in page, "<b>demo" in page
(200, True, False)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

from agenteval_otel.errors import AgentEvalError, ConfigError, HistoryError
from agenteval_otel.reports._history import baseline_forest_svg
from agenteval_otel.reports._html import PAGE_CSS, _badge, _e, _seconds, case_details
from agenteval_otel.reports._plots import bin_counts, distribution_svg, histogram_svg, line_chart_svg
from agenteval_otel.reports._scale import SCORE_BINS
from agenteval_otel.results import (
    CriterionSummary,
    EvalReport,
    FailureRecord,
    HistoryStore,
    RunInfo,
    compare_runs,
)

__all__ = ["LOOPBACK", "TraceLink", "Viewer", "viewer_server"]

LOOPBACK = "127.0.0.1"
"""The only address the viewer listens on."""
POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'"
"""The pages' Content-Security-Policy (the server's header adds ``frame-ancestors 'none'``)."""


@dataclass(frozen=True)
class TraceLink:
    """A URL template of the user's trace backend, with ``{trace_id}`` and, optionally,
    ``{span_id}`` (see the module docstring); ``ConfigError`` for one that is not an http(s) URL
    or names no trace.

    >>> TraceLink("http://localhost:16686/trace/{trace_id}").url("4bf92f35", None)
    'http://localhost:16686/trace/4bf92f35'
    """

    template: str

    def __post_init__(self) -> None:
        scheme = urlsplit(self.template).scheme.lower()
        if scheme not in ("http", "https") or "{trace_id}" not in self.template:
            raise ConfigError(f"--trace-url {self.template!r}: expected an http(s) URL with {{trace_id}} in it "
                              "(and optionally {span_id}), e.g. http://localhost:16686/trace/{trace_id}")

    def url(self, trace_id: str | None, span_id: str | None) -> str | None:
        """The link to the trace ``trace_id`` (its span ``span_id``); ``None`` without a trace id."""
        if not trace_id:
            return None
        return (self.template.replace("{trace_id}", quote(trace_id, safe=""))
                .replace("{span_id}", quote(span_id or "", safe="")))


class _ReportFiles:
    """The JSON reports among the paths given (files, and the ``*.json`` files of folders), each
    read once to learn which run it is (eval set id and creation time); files that are not
    reports are skipped."""

    def __init__(self, paths: Sequence[str | os.PathLike[str]]) -> None:
        self.paths = [Path(path) for path in paths]
        for path in self.paths:
            if not path.exists():
                raise ConfigError(f"--reports {path}: no such file or folder")
        self._keys: dict[Path, tuple[int, tuple[str, datetime] | None]] = {}
        self._lock = threading.Lock()

    def files(self) -> list[Path]:
        """Every candidate file, in the order given (a folder's files sorted)."""
        return [file for path in self.paths
                for file in (sorted(path.glob("*.json")) if path.is_dir() else [path])]

    def find(self, run: RunInfo) -> tuple[Path, EvalReport] | None:
        """The report of ``run`` and its file, if one is there."""
        for file in self.files():
            try:
                stamp = file.stat().st_mtime_ns
            except OSError:
                continue
            with self._lock:
                known = self._keys.get(file)
            if known is not None and known[0] == stamp and known[1] != (run.source, run.created_at):
                continue
            report = _load(file)
            key = (report.eval_set_id, report.created_at) if report is not None else None
            with self._lock:
                self._keys[file] = (stamp, key)
            if report is not None and key == (run.source, run.created_at):
                return file, report
        return None


def _load(file: Path) -> EvalReport | None:
    try:
        return EvalReport.load(file)
    except (AgentEvalError, ValueError, OSError):
        return None


class Viewer:
    """The viewer's pages: :meth:`render` answers a request path with a status and an HTML page.

    Args:
        history: the run history to show.
        reports: JSON report files, or folders of them, whose runs get their failures' evidence shown.
        trace_url: the trace backend's URL template (see :class:`TraceLink`); no links without it.
    """

    def __init__(self, history: HistoryStore, reports: Sequence[str | os.PathLike[str]] = (),
                 trace_url: str | None = None) -> None:
        self.history = history
        self.reports = _ReportFiles(reports)
        self.trace_link = TraceLink(trace_url) if trace_url else None

    def render(self, target: str) -> tuple[HTTPStatus, str]:
        """The page at ``target`` (a path with its query string): ``(status, html)``. A store that
        cannot be read, an unknown run or page, is a page that says so."""
        parts = urlsplit(target)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        path = unquote(parts.path)
        try:
            if path in ("/", ""):
                return HTTPStatus.OK, self.runs_page(query.get("source"))
            if path.startswith("/run/") and len(path) > 5:
                return HTTPStatus.OK, self.run_page(path[5:])
            if path == "/compare" and query.get("a") and query.get("b"):
                return HTTPStatus.OK, self.compare_page(query["a"], query["b"])
        except HistoryError as exc:
            status = HTTPStatus.NOT_FOUND if "no run " in str(exc) else HTTPStatus.INTERNAL_SERVER_ERROR
            return status, _message_page("The run history cannot show this", str(exc))
        return HTTPStatus.NOT_FOUND, _message_page("No such page", f"{path} is not a page of this viewer")

    # --- the runs over time -------------------------------------------------------------------
    def runs_page(self, source: str | None = None) -> str:
        """The runs, a form to compare two, and the charts of ``source``'s runs over time."""
        runs = self.history.runs()
        if not runs:
            return _page("Runs", f"<h1>Runs</h1><p class=\"none\">{_e(self.history.path)} holds no run yet.</p>")
        sources = list(dict.fromkeys(run.source or "" for run in runs))
        chosen = source if source in sources else runs[0].source or ""
        current = ' aria-current="page"'
        picker = " ".join(f'<a href="/?source={_q(name)}"{current if name == chosen else ""}>'
                          f"{_e(name or '(no source)')}</a>" for name in sources)
        charted = [run for run in reversed(runs) if (run.source or "") == chosen]
        body = [f"<h1>Runs <span class=\"muted\">{len(runs)} in {_e(self.history.path)}</span></h1>",
                f'<section aria-labelledby="trend-title"><h2 id="trend-title">{_e(chosen or "(no source)")} over '
                f"time <span class=\"muted\">({len(charted)} run{'s' if len(charted) != 1 else ''})</span></h2>",
                f'<p class="sources">Source: {picker}</p>' if len(sources) > 1 else "",
                f'<div class="plots">{self._trend_plots(charted)}</div></section>',
                _runs_form(runs)]
        return _page("Runs", "".join(body))

    def _trend_plots(self, runs: Sequence[RunInfo]) -> str:
        labels = [run.id for run in runs]
        criteria = [self.history.criteria(run.id) for run in runs]
        names = list(dict.fromkeys(c.name for per_run in criteria for c in per_run))
        by_run = [{c.name: c for c in per_run} for per_run in criteria]
        plots = [
            line_chart_svg([("all cases", [run.pass_rate for run in runs]),
                            *((name, [_get(r, name, "pass_rate") for r in by_run]) for name in names)],
                           labels, title="Pass rate", y_label="pass rate", minimum=0.0, maximum=1.0, percent=True),
            line_chart_svg([("all criteria", [run.mean_score for run in runs]),
                            *((name, [_get(r, name, "mean") for r in by_run]) for name in names)],
                           labels, title="Mean score", y_label="score", minimum=0.0, maximum=1.0),
        ]
        for title, unit, measure in (("Agent time per case", "seconds", "latency"),
                                     ("Tokens per case", "tokens", "tokens")):
            values = [getattr(run, measure) for run in runs]
            if any(v is not None and v.p99 > 0 for v in values):
                plots.append(line_chart_svg(
                    [(point, [None if v is None else float(getattr(v, point)) for v in values])
                     for point in ("p50", "p90", "p99")], labels, title=title, y_label=unit))
        judged = [(name, [None if (c := r.get(name)) is None or c.judge_latency is None else c.judge_latency.p50
                          for r in by_run]) for name in names]
        if any(v is not None for _, values in judged for v in values):
            plots.append(line_chart_svg([(name, values) for name, values in judged
                                         if any(v is not None for v in values)],
                                        labels, title="LLM judge time per case (p50)", y_label="seconds"))
        return "".join(f'<figure class="plot-figure">{svg}</figure>' for svg in plots)

    # --- one run ------------------------------------------------------------------------------
    def run_page(self, run_id: str) -> str:
        """A run: its statistics, distributions and failures (with their evidence when its report is found)."""
        run = self.history.run(run_id)
        criteria = self.history.criteria(run_id)
        cases = self.history.cases(run_id)
        failures = self.history.failures(run_id)
        previous = self.history.latest(before=run_id, source=run.source)
        found = self.reports.find(run)
        report_path, report = found if found is not None else (None, None)
        when = f"{run.created_at:%Y-%m-%d %H:%M:%S} UTC"
        compare = (f' · <a href="/compare?a={_q(previous.id)}&amp;b={_q(run.id)}">compare with the previous run '
                   f"{_e(previous.id)}</a>" if previous is not None else "")
        body = [f'<p class="kicker"><a href="/">Runs</a> · run</p><h1>{_e(run.id)} '
                f"{_badge('passed' if run.failures == 0 else 'failed')}</h1>",
                f'<p class="muted">{_e(run.command)} of <code>{_e(run.source or "(no source)")}</code>, '
                f"{_e(when)}{compare}</p>",
                _cards(run), _criteria_summary(criteria)]
        plots = [histogram_svg(*bin_counts([s for case in cases if (s := case.scores.get(c.name)) is not None],
                                           SCORE_BINS, 0.0, 1.0),
                               title=c.name, x_label="score", y_label="cases", marker=c.threshold)
                 for c in criteria]
        durations = [case.duration_s for case in cases if case.duration_s is not None]
        tokens = [case.tokens for case in cases if case.tokens is not None]
        if durations:
            plots.append(distribution_svg(durations, title="Agent time per case", x_label="seconds", unit=" s"))
        if any(tokens):
            plots.append(distribution_svg(tokens, title="Tokens per case", x_label="input + output tokens"))
        if plots:
            figures = "".join(f'<figure class="plot-figure">{svg}</figure>' for svg in plots)
            body.append(f'<section aria-labelledby="plots-title"><h2 id="plots-title">Distributions</h2>'
                        f'<div class="plots">{figures}</div></section>')
        if not cases and run.cases:
            body.append('<p class="none">This run kept no case (a long-lived session records its summary only).</p>')
        anchors: dict[str, int] = {}
        if report is not None:
            anchors = {case.eval_id: index for index, case in enumerate(report.results, 1) if case.status != "passed"}
        body.append(self._failures(run, failures, anchors))
        body.append(self._evidence(failures, report, report_path))
        return _page(f"Run {run.id}", "".join(body))

    def _failures(self, run: RunInfo, failures: Sequence[FailureRecord], anchors: dict[str, int]) -> str:
        if not failures:
            return ('<section aria-labelledby="failures-title"><h2 id="failures-title">Failures</h2>'
                    '<p class="none">No criterion failed or errored.</p></section>')
        rows = []
        for f in failures:
            case = (f'<a href="#case-{anchors[f.eval_id]}">{_e(f.eval_id)}</a>' if f.eval_id in anchors
                    else _e(f.eval_id))
            link = self.trace_link.url(f.trace_id, f.span_id) if self.trace_link is not None else None
            trace = (f'<a class="trace-link" href="{_e(link)}" rel="noreferrer">trace</a>' if link is not None
                     else f"<code>{_e(f.trace_id)}</code>" if f.trace_id else '<span class="none">—</span>')
            score = "errored" if f.score is None else f"{f.score:.2f}"
            rows.append(f'<tr class="failure"><th scope="row">{case}</th>'
                        f'<td data-label="Turn"><code>{_e(f.invocation_id or "—")}</code></td>'
                        f'<td data-label="Criterion">{_e(f.criterion or "(the case)")}</td>'
                        f'<td class="num" data-label="Score">{score}</td>'
                        f'<td class="reason" data-label="Reason">{_e(f.reason)}</td>'
                        f'<td data-label="Trace">{trace}</td></tr>')
        more = (f'<p class="omitted">{run.failures - len(failures):,} more failures were counted, not kept.</p>'
                if run.failures > len(failures) else "")
        return ('<section aria-labelledby="failures-title"><h2 id="failures-title">Failures</h2>'
                '<div class="scroll"><table class="failures stackable"><thead><tr><th scope="col">Case</th>'
                '<th scope="col">Turn</th><th scope="col">Criterion</th><th scope="col">Score</th>'
                '<th scope="col">Reason</th><th scope="col">Trace</th></tr></thead>'
                f'<tbody>{"".join(rows)}</tbody></table></div>{more}</section>')

    def _evidence(self, failures: Sequence[FailureRecord], report: EvalReport | None, path: Path | None) -> str:
        if not failures:
            return ""
        if report is None or path is None:
            given = len(self.reports.files())
            return ('<section aria-labelledby="evidence-title"><h2 id="evidence-title">Evidence</h2>'
                    f'<p class="none">No JSON report of this run among the {given} report file'
                    f'{"s" if given != 1 else ""} given (--reports): the history keeps each failure\'s reason '
                    "only. Write one with --report FILE and give it to agenteval view --reports.</p></section>")
        failed = {f.eval_id for f in failures}
        shown = [case_details(index, case) for index, case in enumerate(report.results, 1)
                 if case.eval_id in failed and case.status != "passed"]
        missing = "" if shown else '<p class="none">The report lists none of these cases in full.</p>'
        return ('<section aria-labelledby="evidence-title"><h2 id="evidence-title">Evidence</h2>'
                f'<p class="muted">From <code>{_e(path)}</code>.</p>{"".join(shown)}{missing}</section>')

    # --- two runs -----------------------------------------------------------------------------
    def compare_page(self, a: str, b: str) -> str:
        """Run ``b`` against run ``a``: per-criterion deltas, their forest plot, the changed verdicts."""
        run_a, run_b = self.history.run(a), self.history.run(b)
        comparison = compare_runs(run_a, self.history.cases(a), self.history.cases(b))
        rows = []
        for delta in comparison.criteria:
            mean, rate = delta.mean, delta.pass_rate
            change = "regressed" if mean.regressed or rate.regressed else \
                "improved" if mean.significant or rate.significant else ""
            interval = (f"[{mean.ci_low:+.3f}, {mean.ci_high:+.3f}]"
                        if mean.ci_low is not None and mean.ci_high is not None else "–")
            rows.append(f'<tr class="{change}"><th scope="row">{_e(delta.criterion)}</th>'
                        f'<td class="num" data-label="Mean">{_n(mean.mean_a)} → {_n(mean.mean_b)}</td>'
                        f'<td class="num" data-label="Delta">{_n(mean.delta, signed=True)}</td>'
                        f'<td class="num" data-label="95% CI">{interval}</td>'
                        f'<td class="num" data-label="p">{_n(mean.p_value)}</td>'
                        f'<td class="num" data-label="Pass rate">{_pct(rate.mean_a)} → {_pct(rate.mean_b)}</td>'
                        f'<td data-label="Change">{change}</td></tr>')
        table = ('<div class="scroll"><table class="deltas stackable"><thead><tr><th scope="col">Criterion</th>'
                 '<th scope="col">Mean A → B</th><th scope="col">Delta</th><th scope="col">95% CI</th>'
                 '<th scope="col">p</th><th scope="col">Pass rate A → B</th><th scope="col">Change</th></tr></thead>'
                 f'<tbody>{"".join(rows)}</tbody></table></div>') if rows else \
            '<p class="none">No criterion was scored in both runs on the same cases.</p>'
        forest = (f'<figure class="plot-figure">'
                  f'{baseline_forest_svg(comparison, title=f"{run_b.id} against {run_a.id}: per-criterion deltas")}'
                  "</figure>") if comparison.criteria else ""
        changed = []
        for title, changes in (("Passed in A, not in B", comparison.newly_failed),
                               ("Passed in B, not in A", comparison.newly_passed)):
            items = "".join(f"<li><code>{_e(c.eval_id)}</code> {_badge(c.status_a)} → {_badge(c.status_b)}</li>"
                            for c in changes)
            changed.append(f"<h3>{title} ({len(changes)})</h3>"
                           + (f'<ul class="changes">{items}</ul>' if items else '<p class="none">None.</p>'))
        unpaired = ", ".join(f"{count} only in {side}" for count, side in
                             ((comparison.only_in_baseline, "A"), (comparison.only_in_run, "B")) if count)
        notes = "".join(f'<p class="muted">{_e(note)}</p>' for note in comparison.notes)
        body = ['<p class="kicker"><a href="/">Runs</a> · comparison</p>',
                f'<h1>B <a href="/run/{_q(run_b.id)}">{_e(run_b.id)}</a> against A '
                f'<a href="/run/{_q(run_a.id)}">{_e(run_a.id)}</a></h1>',
                f'<p class="muted">{comparison.pairs} paired case{"s" if comparison.pairs != 1 else ""}'
                f'{f"; not compared: {unpaired}" if unpaired else ""}. A: {_e(run_a.source or "")} of '
                f"{run_a.created_at:%Y-%m-%d %H:%M} UTC; B: {_e(run_b.source or '')} of "
                f"{run_b.created_at:%Y-%m-%d %H:%M} UTC.</p>",
                '<section aria-labelledby="deltas-title"><h2 id="deltas-title">Per-criterion deltas</h2>',
                table, forest, notes, "</section>",
                '<section aria-labelledby="changed-title"><h2 id="changed-title">Cases that changed verdict</h2>',
                *changed, "</section>"]
        return _page(f"{run_b.id} against {run_a.id}", "".join(body))


# --- the server -----------------------------------------------------------------------------------

class _Handler(BaseHTTPRequestHandler):
    server: _ViewerServer
    server_version = "agenteval-view"

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802 - the stdlib's name
        self._answer(body=False)

    def _answer(self, *, body: bool) -> None:
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        if host not in (LOOPBACK, "localhost"):  # a page of another site reaching us by DNS rebinding
            status, page = HTTPStatus.FORBIDDEN, _message_page("Forbidden", "this viewer answers 127.0.0.1 only")
        else:
            try:
                status, page = self.server.viewer.render(self.path)
            except Exception as exc:  # a page that failed is a page saying so; the server goes on
                status = HTTPStatus.INTERNAL_SERVER_ERROR
                page = _message_page("This page failed", f"{type(exc).__name__}: {exc}")
        data = page.encode("utf-8")
        self.send_response(status)
        for name, value in (("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(data))),
                            ("Content-Security-Policy", f"{POLICY}; frame-ancestors 'none'"), ("X-Content-Type-Options", "nosniff"),
                            ("Referrer-Policy", "no-referrer"), ("Cache-Control", "no-store")):
            self.send_header(name, value)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        """Quiet: a viewer's requests are not news."""


class _ViewerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, viewer: Viewer, port: int) -> None:
        self.viewer = viewer
        super().__init__((LOOPBACK, port), _Handler)


def viewer_server(viewer: Viewer, port: int = 0, *, host: str = LOOPBACK) -> ThreadingHTTPServer:
    """A server of ``viewer``'s pages listening on 127.0.0.1 at ``port`` (0: a free one; its
    ``server_address`` tells which). ``host`` must be 127.0.0.1: the history holds the agent's
    inputs and outputs, so the viewer is never reachable from another machine. Serve with
    ``serve_forever()``; stop with ``shutdown()`` and ``server_close()``."""
    if host != LOOPBACK:
        raise ConfigError(f"host {host!r}: the viewer listens on {LOOPBACK} only")
    try:
        return _ViewerServer(viewer, port)
    except OSError as exc:
        raise ConfigError(f"--port {port}: cannot listen on {LOOPBACK}:{port} ({exc.strerror or exc})") from None


# --- pieces -------------------------------------------------------------------------------------

def _get(by_name: dict[str, CriterionSummary], name: str, field: str) -> float | None:
    found = by_name.get(name)
    return None if found is None else float(getattr(found, field))


def _q(value: str) -> str:
    """``value`` for a URL's path or query, then for an HTML attribute."""
    return _e(quote(value, safe=""))


def _n(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _cards(run: RunInfo) -> str:
    cards = [("Cases", str(run.cases), ""), ("Passed", str(run.passed), "passed"),
             ("Failed", str(run.failed), "failed"), ("Errored", str(run.errored), "errored"),
             ("Pass rate", f"{run.pass_rate:.0%}", ""), ("Mean score", f"{run.mean_score:.2f}", "")]
    items = "".join(f'<div class="card {cls}"><dt>{label}</dt><dd>{value}</dd></div>' for label, value, cls in cards)
    return f'<dl class="cards">{items}</dl>'


def _criteria_summary(criteria: Sequence[CriterionSummary]) -> str:
    if not criteria:
        return ""
    rows = "".join(
        f'<tr><th scope="row">{_e(c.name)}</th><td class="num" data-label="Results">{c.n}</td>'
        f'<td class="num" data-label="Mean">{c.mean:.3f}</td>'
        f'<td class="num" data-label="Pass rate">{c.pass_rate:.0%}</td>'
        f'<td class="num" data-label="Threshold">{_n(c.threshold)}</td>'
        f'<td class="num" data-label="Errored">{c.errors}</td></tr>' for c in criteria)
    return ('<section aria-labelledby="criteria-title"><h2 id="criteria-title">Criteria</h2><div class="scroll">'
            '<table class="criteria stackable"><thead><tr><th scope="col">Criterion</th><th scope="col">Results</th>'
            '<th scope="col">Mean</th><th scope="col">Pass rate</th><th scope="col">Threshold</th>'
            f'<th scope="col">Errored</th></tr></thead><tbody>{rows}</tbody></table></div></section>')


def _runs_form(runs: Sequence[RunInfo]) -> str:
    rows = []
    for index, run in enumerate(runs):
        latency = "–" if run.latency is None else _seconds(run.latency.p50)
        tokens = "–" if run.tokens is None else f"{run.tokens.p50:,.0f}"
        rows.append(
            f'<tr><td data-label="A (baseline)"><input type="radio" name="a" value="{_e(run.id)}" aria-label="A: {_e(run.id)}"'
            f'{" checked" if index == 1 else ""}></td>'
            f'<td data-label="B"><input type="radio" name="b" value="{_e(run.id)}" aria-label="B: {_e(run.id)}"'
            f'{" checked" if index == 0 else ""}></td>'
            f'<th scope="row"><a href="/run/{_q(run.id)}">{_e(run.id)}</a></th>'
            f'<td data-label="When">{run.created_at:%Y-%m-%d %H:%M:%S}</td>'
            f'<td data-label="Command">{_e(run.command)}</td><td data-label="Source">{_e(run.source or "–")}</td>'
            f'<td class="num" data-label="Cases">{run.cases}</td>'
            f'<td class="num" data-label="Pass rate">{run.pass_rate:.0%}</td>'
            f'<td class="num" data-label="Mean">{run.mean_score:.2f}</td>'
            f'<td class="num" data-label="Failures">{run.failures}</td>'
            f'<td class="num" data-label="Time p50">{latency}</td>'
            f'<td class="num" data-label="Tokens p50">{tokens}</td></tr>')
    button = '<p><button type="submit">Compare B against A</button></p>' if len(runs) > 1 else ""
    return ('<section aria-labelledby="runs-title"><h2 id="runs-title">All runs</h2>'
            '<form method="get" action="/compare"><div class="scroll"><table class="runs-table stackable"><thead><tr>'
            '<th scope="col">A</th><th scope="col">B</th><th scope="col">Run</th><th scope="col">When (UTC)</th>'
            '<th scope="col">Command</th><th scope="col">Source</th><th scope="col">Cases</th>'
            '<th scope="col">Pass rate</th><th scope="col">Mean</th><th scope="col">Failures</th>'
            '<th scope="col">Time p50</th><th scope="col">Tokens p50</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>{button}</form></section>')


def _message_page(title: str, message: str) -> str:
    return _page(title, f'<p class="kicker"><a href="/">Runs</a></p><h1>{_e(title)}</h1>'
                        f'<p class="case-error">{_e(message)}</p>')


_VIEWER_CSS = """
.sources a{margin-right:.6rem}.sources a[aria-current]{font-weight:700}
.runs-table td,.runs-table th{white-space:nowrap}
.failures td.reason{min-width:16rem}
.deltas tr.regressed td,.deltas tr.regressed th{color:var(--fail)}
.deltas tr.improved td,.deltas tr.improved th{color:var(--pass)}
.changes{padding-left:1.2rem}.changes li{margin:.2rem 0}
a{color:#0969da}@media (prefers-color-scheme:dark){a{color:#4493f8}}
button{font:inherit;padding:.35rem .9rem;border-radius:6px;border:1px solid var(--line);background:var(--panel);
color:var(--fg);cursor:pointer}
"""


def _page(title: str, body: str) -> str:
    return ('<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">\n'
            f"<title>{_e(title)} · agenteval view</title>\n<style>{PAGE_CSS}{_VIEWER_CSS}</style>\n</head>\n"
            f"<body>\n<main>{body}</main>\n</body>\n</html>\n")
