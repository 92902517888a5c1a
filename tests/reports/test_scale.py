"""Reports that scale: a run of 20,000 invocations makes an HTML report under 5 MB that headless
Chromium renders (how fast is measured by ``bench/report_render.py``, target 1 s), and a JSON
report that keeps the aggregates, the first failures in full and counts for the rest, through the
CLI's options too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval_otel.cli import main
from agenteval_otel.reports import ReportFile, ReportLimits, write_html
from agenteval_otel.results import CriterionResult, EvalCaseResult, EvalReport, InvocationResult
from tests.browser import chromium
from tests.conftest import REPO_ROOT

CASES = 20_000
FAILED_EVERY = 50  # 400 failed cases


def _case(i: int) -> EvalCaseResult:
    failed = i % FAILED_EVERY == 7
    trajectory = CriterionResult(criterion="trajectory_match", score=0.5 if failed else 1.0, passed=not failed,
                                 threshold=0.8, reason="expected get_weather(city='Paris'), got get_weather()"
                                 if failed else "")
    response = CriterionResult(criterion="response_match", score=0.55 + (i % 40) / 100, passed=True, threshold=0.5)
    turn = InvocationResult(invocation_id=f"turn-{i}", user_input=f"Weather in city {i}?",
                            actual_response="Sunny, 21°C.", expected_response="Sunny, 21°C.",
                            criterion_results=[trajectory, response],
                            trace_id=f"{i:032x}", span_id=f"{i:016x}")
    return EvalCaseResult(eval_id=f"weather-{i:05d}", passed=not failed, criterion_results=[trajectory, response],
                          invocation_results=[turn], trace_id=turn.trace_id, span_id=turn.span_id,
                          metrics={"duration_s": 0.4 + (i % 97) / 50, "input_tokens": 300.0 + i % 211,
                                   "output_tokens": 40.0 + i % 37})


@pytest.fixture(scope="module")
def big_report() -> EvalReport:
    return EvalReport.from_results("weather", [_case(i) for i in range(CASES)], eval_set_name="weather at scale")


def test_a_report_of_20000_invocations_is_small_and_renders(
    big_report: EvalReport, tmp_path: Path
) -> None:
    tags = {f"weather-{i:05d}": ["paris" if i % 2 else "tokyo", *(["smoke"] if i % 5 == 0 else [])]
            for i in range(CASES)}
    path = write_html(big_report, tmp_path / "report.html", tags=tags)
    assert path.stat().st_size < 5_000_000
    text = path.read_text(encoding="utf-8")
    assert text.count('<details class="case') == 20  # the first 20 failures in full
    assert "20,000 cases: the first 20 failed or errored cases are listed in full; 19,600 passed, " \
           "380 failed counted, not listed" in text
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(path.as_uri(), wait_until="load")
        assert page.locator("svg.plot").count() == 5  # two histograms, tags, latency, tokens
        assert page.locator("#summary-title + dl .card.failed dd").inner_text() == "400"


def test_the_json_report_keeps_aggregates_and_the_first_failures(big_report: EvalReport, tmp_path: Path) -> None:
    sink = ReportFile(tmp_path / "report.json", "json", limits=ReportLimits(full_failures=5),
                      tags={"weather-00007": ["paris"]})
    sink.finish(big_report)
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert [case["eval_id"] for case in data["results"]] == [f"weather-{i:05d}" for i in (7, 57, 107, 157, 207)]
    assert data["omitted"] == {"passed": 19_600, "failed": 395, "errored": 0}
    assert data["summary"]["total_cases"] == CASES and data["summary"]["failed_cases"] == 400
    assert data["summary"]["criterion_stats"]["trajectory_match"]["passed"] == 19_600
    criteria = data["distributions"]["criteria"]
    assert criteria["trajectory_match"]["histogram"] == [0] * 5 + [400] + [0] * 3 + [19_600]
    assert criteria["response_match"]["count"] == CASES and criteria["response_match"]["p50"] == pytest.approx(0.745)
    assert data["distributions"]["tags"] == {"paris": {"passed": 0, "cases": 1}}
    assert data["distributions"]["latency_s"]["count"] == CASES
    assert (tmp_path / "report.json").stat().st_size < 100_000
    again = EvalReport.load(tmp_path / "report.json")  # still a report the library reads
    assert len(again.results) == 5 and again.omitted == data["omitted"]


def test_a_small_report_lists_every_case(tmp_path: Path) -> None:
    report = EvalReport.from_results("weather", [_case(i) for i in range(30)])
    sink = ReportFile(tmp_path / "report.json", "json")
    sink.finish(report)
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert len(data["results"]) == 30 and data["omitted"] is None and data["distributions"] is None
    page = write_html(report, tmp_path / "report.html").read_text(encoding="utf-8")
    assert page.count('<details class="case') == 30 and 'class="omitted"' not in page


def test_the_cli_limits_the_reports_and_writes_csv(tmp_path: Path) -> None:
    trace = REPO_ROOT / "tests" / "data" / "corpus" / "crewai_openinference" / "run1_sequential.otlp.json"
    out = {kind: tmp_path / f"report.{kind}" for kind in ("json", "html", "csv")}
    code = main(["eval", "--traces", str(trace), "--config", str(REPO_ROOT / "examples" / "production_policies.json"),
                 "--quiet", "--run-file", str(tmp_path / "run.jsonl"), "--report", str(out["json"]),
                 "--html", str(out["html"]), "--csv", str(out["csv"]),
                 "--report-full-cases", "0", "--report-full-failures", "0"])
    assert code == 0
    data = json.loads(out["json"].read_text(encoding="utf-8"))
    assert data["results"] == [] and data["omitted"] == {"passed": 1, "failed": 0, "errored": 0}
    assert "1 cases: no case failed or errored; 1 passed counted, not listed" in out["html"].read_text("utf-8")
    assert out["csv"].read_text(encoding="utf-8").startswith("eval_id,invocation,criterion,score,")


def test_a_negative_limit_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--traces", str(tmp_path / "t.json"), "--report-full-failures", "-1"]) == 2
    assert capsys.readouterr().err == ("agenteval eval: error: --report-full-failures -1: expected a whole number "
                                       "of at least 0 (see agenteval eval --help)\n")


def test_the_console_shows_the_first_failures_in_full_and_counts_the_rest(big_report: EvalReport) -> None:
    from io import StringIO

    from rich.console import Console

    from agenteval_otel.reports import print_report

    out = StringIO()
    print_report(big_report, Console(file=out, width=120), report_files=["report.json"])
    text = out.getvalue()
    assert len(text.encode()) < 100_000
    assert text.count("weather-") < 200 and "weather-00007" in text and "weather-19957" not in text
    assert "... and 380 more failed or errored cases not shown (see report.json; --show-failures N|all)" in text
    everything = StringIO()
    print_report(big_report, Console(file=everything, width=120), show_failures=None)
    assert "weather-19957" in everything.getvalue() and "more failed or errored" not in everything.getvalue()
