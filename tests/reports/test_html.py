"""The HTML report: a self-contained page, escaped text, the score chart and the trajectory diffs,
checked in the markup and in headless Chromium."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from agenteval_otel import EvalReport
from agenteval_otel.reports._html import render_html, write_html
from agenteval_otel.results._results import CriterionResult, EvalCaseResult
from tests.browser import chromium
from tests.reports.conftest import IMG, SCRIPT, SECRET, held_slim

# Case order in the report: run1 failed, run2 failed, run3 passed, ghost errored, hostile errored.
RUN1, RUN2, RUN3, GHOST, HOSTILE = (f"case-{n}" for n in range(1, 6))


class _Tags(HTMLParser):
    """Every start tag of a page with its attributes, and the case (``<details id>``) it is in."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None], str | None]] = []
        self.styles: list[str] = []
        self._case: str | None = None
        self._in_style = False
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "details":
            self._case = found.get("id")
        self._in_style = tag == "style"
        self.tags.append((tag, found, self._case))

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)
            self._in_style = False

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [a for t, a, _ in self.tags if t == tag and all(a.get(k) == v for k, v in attrs.items())]

    def diff_statuses(self, case: str) -> list[str | None]:
        return [a["data-status"] for t, a, c in self.tags if t == "tr" and c == case
                and "data-status" in a]


@pytest.fixture(scope="module")
def page(report: EvalReport) -> str:
    return render_html(report)


@pytest.fixture(scope="module")
def tags(page: str) -> _Tags:
    return _Tags(page)


def test_write_html_writes_the_page(report: EvalReport, tmp_path: Path) -> None:
    path = write_html(report, tmp_path / "out" / "report.html")
    assert path == tmp_path / "out" / "report.html"
    text = path.read_text(encoding="utf-8")
    assert text == render_html(report)
    assert text.startswith("<!doctype html>") and text.rstrip().endswith("</html>")
    assert "<title>weather runs · evaluation report</title>" in text
    assert len(text.encode()) < 100_000


def test_page_loads_nothing_and_runs_nothing(page: str, tags: _Tags) -> None:
    linked = [(tag, name, value) for tag, attrs, _ in tags.tags for name, value in attrs.items()
              if name in {"src", "href", "srcset", "action", "xlink:href", "poster", "data"}]
    assert linked and all(name == "href" and (value or "").startswith("#case-")
                          for _, name, value in linked), linked
    assert not {t for t, _, _ in tags.tags} & {"script", "link", "img", "iframe", "object", "embed",
                                                 "audio", "video", "source", "base", "form"}
    assert not [(t, a) for t, a, _ in tags.tags for name in a if name.startswith("on")]
    assert not re.search(r"(?:src|href)\s*=\s*[\"']?(?:[a-z]+:|//)", page)
    style = "".join(tags.styles)
    assert style and "@import" not in page and "url(" not in style and "@font-face" not in style
    policy = tags.find("meta", **{"http-equiv": "Content-Security-Policy"})
    assert policy and "default-src 'none'" in (policy[0]["content"] or "")


def test_hostile_text_is_shown_escaped(page: str, tags: _Tags) -> None:
    assert SCRIPT not in page and IMG not in page and "<i>" not in page and "<b>" not in page
    escaped_script = "&lt;script&gt;window.__pwned = 1&lt;/script&gt;"
    # in the user input, a tool argument (expected and actual), the diff note, a node name,
    # a criterion error, and the case table
    assert page.count(escaped_script) >= 6
    assert "Weather in " + escaped_script + "?" in page
    assert "&lt;img src=&quot;x&quot; onerror=&quot;window.__pwned = 2&quot;&gt;" in page
    assert [t for t, _, c in tags.tags if c == HOSTILE and t in {"script", "img", "i", "b"}] == []


def test_header_and_summary(report: EvalReport, page: str, tags: _Tags) -> None:
    s = report.summary
    assert (s.total_cases, s.passed_cases, s.failed_cases, s.error_cases) == (5, 1, 2, 2)
    assert "<h1>weather runs " in page and "<code>weather</code>" in page
    assert f'datetime="{report.created_at.isoformat()}"' in page
    cards = dict(re.findall(r'<div class="card[^"]*"><dt>([^<]+)</dt><dd>([^<]+)</dd>', page))
    assert cards == {"Cases": "5", "Passed": "1", "Failed": "2", "Errored": "2",
                     "Pass rate": "20%", "Mean score": f"{s.avg_score:.2f}"}
    assert tags.find("div", **{"class": "stack", "aria-label": "1 passed, 2 failed, 2 errored"})


def test_score_chart_per_criterion(report: EvalReport, page: str) -> None:
    assert page.count('<svg class="score-chart"') == 1
    groups = dict(re.findall(r'<g class="criterion" data-criterion="([^"]+)">(.*?)</g>', page))
    assert list(groups) == ["trajectory_match", "response_match", "llm_judge"]
    trajectory = report.summary.criterion_stats["trajectory_match"]
    assert trajectory.mean < 0.8 and trajectory.pass_rate == 0.25
    assert f'class="bar low" x="0" y="25" width="{trajectory.mean * 100:.1f}%"' in groups["trajectory_match"]
    assert f">{trajectory.mean:.2f}</text>" in groups["trajectory_match"]
    assert 'class="bar rate" x="0" y="47" width="25.0%"' in groups["trajectory_match"]
    assert 'class="threshold" x1="80.0%"' in groups["trajectory_match"]
    assert 'class="bar ok"' in groups["response_match"] and 'x1="70.0%"' in groups["response_match"]
    # the judge never scored: no mean bar, a dash, and the error counted
    assert "bar ok" not in groups["llm_judge"] and "bar low" not in groups["llm_judge"]
    assert ">—</text>" in groups["llm_judge"] and "1 errored" in groups["llm_judge"]


def test_cases_table_scores_against_thresholds_with_reasons(page: str) -> None:
    rows = re.findall(r'<tr class="status-(\w+)"><th scope="row"><a href="#(case-\d)">(.*?)</tr>', page)
    assert [(status, anchor) for status, anchor, _ in rows] == [
        ("failed", RUN1), ("failed", RUN2), ("passed", RUN3), ("errored", GHOST), ("errored", HOSTILE)]
    run1 = rows[0][2]
    assert 'class="score fail" data-label="trajectory_match">0.67<span class="thr"> / 0.80</span>' in run1
    assert 'class="score pass" data-label="response_match">1.00<span class="thr"> / 0.70</span>' in run1
    assert "missing: book_flight()" in run1
    assert "error: unmatched: no trace found" in rows[3][2]
    assert '<td class="score error" data-label="llm_judge">' in rows[4][2]


def test_trajectory_diff_rows(tags: _Tags, page: str) -> None:
    assert tags.diff_statuses(RUN1) == ["match", "match", "missing"]
    assert tags.diff_statuses(RUN2) == ["mismatch", "match"]
    assert tags.diff_statuses(RUN3) == ["match", "match"]
    assert tags.diff_statuses(GHOST) == []
    assert tags.diff_statuses(HOSTILE) == ["unexpected"]
    missing = re.search(r'<tr class="diff-row diff-missing".*?</tr>', page)
    assert missing and "<code>book_flight()</code>" in missing.group()
    assert "argument &#x27;city&#x27;: expected" in page          # the mismatch note
    assert "No turn was scored." in page and "unmatched: no trace found" in page
    assert '<span class="tag differs">node_order failed</span>' in page  # the hostile case's node order


def test_failed_and_errored_cases_start_open(tags: _Tags) -> None:
    cases = {a["id"]: ("open" in a, a["class"]) for a in tags.find("details") if a.get("id")}
    assert cases == {RUN1: (True, "case status-failed"), RUN2: (True, "case status-failed"),
                     RUN3: (False, "case status-passed"), GHOST: (True, "case status-errored"),
                     HOSTILE: (True, "case status-errored")}


def test_repeated_run_metrics(page: str) -> None:
    metrics = dict(re.findall(r"<div><dt>([^<]+)</dt><dd>([^<]+)</dd></div>", page))
    assert {k: metrics[k] for k in ("Runs", "pass@1", "pass@k", "pass^k")} == {
        "Runs": "3", "pass@1": "33%", "pass@k": "100%", "pass^k": "0%"}


def test_an_agent_exception_shows_its_traceback(live_report: EvalReport) -> None:
    page = render_html(live_report)
    crashed = _Tags(page).find("details", **{"class": "traceback"})
    assert len(crashed) == 1
    block = page[page.index('<details class="traceback">'):]
    block = block[:block.index("</details>")]
    assert "Traceback (most recent call last)" in block and ", in _crash" in block
    assert "&lt;b&gt;down&lt;/b&gt;" in block and "<b>down" not in page
    assert SECRET not in page and "[REDACTED]" in block


def test_empty_report() -> None:
    page = render_html(EvalReport.from_results("nothing", []))
    assert "No case was run." in page and "No criterion was scored." in page
    assert "<svg" not in page and "<details" not in page


def test_page_in_headless_chromium(report: EvalReport, tmp_path: Path) -> None:
    path = write_html(report, tmp_path / "report.html")
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        requests: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(path.as_uri(), wait_until="load")

        # the hostile text is text: nothing ran, no element was made from it
        assert page.evaluate("() => window.__pwned") is None
        assert page.locator("script, img, iframe, object, embed, link").count() == 0
        assert page.locator(f"#{HOSTILE} .user-input .text").inner_text() == f"Weather in {SCRIPT}?"

        chart = page.locator("svg.score-chart")
        assert chart.is_visible()
        box = chart.bounding_box()
        assert box and box["width"] > 300 and box["height"] > 100
        bar = page.locator('g[data-criterion="trajectory_match"] rect.bar.low').bounding_box()
        assert bar and 0 < bar["width"] < box["width"]

        rows = page.locator(f"#{RUN1} tr.diff-row")
        assert rows.count() == 3 and all(rows.nth(i).is_visible() for i in range(3))
        assert "book_flight()" in page.locator(f"#{RUN1} tr.diff-missing").inner_text()
        colours = {status: page.eval_on_selector(
            f"tr.diff-{status} td", "td => getComputedStyle(td).backgroundColor")
            for status in ("match", "mismatch", "missing", "unexpected")}
        assert len(set(colours.values())) == 4, colours

        passed_row = page.locator(f"#{RUN3} tr.diff-row").first
        assert not passed_row.is_visible()
        page.locator(f"#{RUN3} > summary").click()
        assert passed_row.is_visible()

        shot = page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        assert shot.startswith(b"\x89PNG") and (tmp_path / "report.png").stat().st_size > 10_000

        page.set_viewport_size({"width": 360, "height": 800})
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
        narrow = chart.bounding_box()
        assert narrow and 0 < narrow["width"] <= 360 and narrow["height"] > 100
        assert page.locator(f"#{RUN1} tr.diff-missing").is_visible()
        page.screenshot(path=str(tmp_path / "report-narrow.png"), full_page=True)
    assert errors == []
    assert requests == [path.as_uri()]


def test_criteria_scored_by_another_tools_rules_say_so() -> None:
    adk = CriterionResult(criterion="tool_trajectory_avg_score", score=0.0, passed=False, threshold=1.0,
                          semantics="adk")
    ours = CriterionResult(criterion="trajectory_match", score=0.5, passed=False, threshold=0.8)
    page = render_html(EvalReport.from_results("s", [EvalCaseResult(eval_id="c", passed=False,
                                                                     criterion_results=[adk, ours])]))
    assert 'tool_trajectory_avg_score <span class="semantics">(adk rules)</span>' in page
    assert "trajectory_match <span" not in page


def test_each_slim_case_result_is_read_once(report: EvalReport, tmp_path: Path) -> None:
    slim, codec = held_slim(report)
    text = write_html(slim, tmp_path / "report.html").read_text(encoding="utf-8")
    assert codec.decoded == len(report.results)
    assert text == render_html(slim.model_copy(update={"results": list(slim.results)}))
    assert text.count('<details class="case ') == len(report.results)
