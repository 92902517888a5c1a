"""The judge's part of every report: its cost per criterion and the results it did not score."""

from __future__ import annotations

from agenteval_otel.reports._html import render_html
from agenteval_otel.reports._judge import judge_lines
from agenteval_otel.reports._junit import junit_xml
from agenteval_otel.results._results import CriterionResult, EvalCaseResult, EvalReport, JudgeUsage

NOT_RUN = "the LLM judge did not run: the judge endpoint http://127.0.0.1:9/v1 gave no answer within 1 s"


def _report() -> tuple[EvalReport, JudgeUsage]:
    usage = JudgeUsage(calls=3, cache_hits=2, retries=1, failures=1, input_tokens=360, output_tokens=45,
                       seconds=2.5)
    judged = CriterionResult(criterion="llm_judge", score=0.9, passed=True, threshold=0.7,
                             judge_usage=JudgeUsage(calls=3, cache_hits=2, retries=1, input_tokens=360,
                                                    output_tokens=45, seconds=1.5))
    failed = CriterionResult.failure("llm_judge", 0.7, NOT_RUN, error_type="JudgeTimeoutError").model_copy(
        update={"judge_usage": JudgeUsage(failures=1, seconds=1.0)})
    return EvalReport.from_results("s", [
        EvalCaseResult(eval_id="a", passed=True, criterion_results=[judged]),
        EvalCaseResult(eval_id="b", passed=False, criterion_results=[failed]),
    ]), usage


def test_the_summary_totals_the_judge_per_criterion_and_counts_what_it_did_not_score() -> None:
    report, usage = _report()
    assert report.summary.judge_usage == {"llm_judge": usage}
    assert report.summary.judge_errors == 1 and report.summary.error_cases == 1
    assert judge_lines(report) == [
        "LLM judge · llm_judge: 3 call(s), 2 from cache, 1 retried, 1 failed, 360 in / 45 out tokens, 2.5 s",
        f"LLM judge did not score 1 result(s); those cases are errored, not scored: {NOT_RUN}",
    ]


def test_junit_and_html_carry_the_judge_lines() -> None:
    report, _ = _report()
    xml = junit_xml(report)
    assert '<property name="judge.llm_judge.calls" value="3" />' in xml
    assert '<property name="judge.errors" value="1" />' in xml
    assert "LLM judge did not score 1 result(s)" in xml
    html = render_html(report)
    assert "LLM judge · llm_judge: 3 call(s), 2 from cache" in html and "LLM judge did not score 1" in html


def test_no_judge_no_lines() -> None:
    report = EvalReport.from_results("s", [EvalCaseResult(eval_id="a", passed=True, criterion_results=[
        CriterionResult(criterion="exact_match", score=1.0, passed=True, threshold=1.0)])])
    assert judge_lines(report) == [] and "judge" not in junit_xml(report)


def test_a_result_taken_back_takes_its_judge_work_with_it() -> None:
    from agenteval_otel.results._results import EvalSummary, SummaryTally

    report, _ = _report()
    first, second = report.results
    tally = SummaryTally()
    tally.add(first, 0)
    tally.add(second, 1)
    tally.remove(second)
    assert tally.summary() == EvalSummary.from_results([first])
    assert tally.summary().judge_usage == {"llm_judge": first.criterion_results[0].judge_usage}
    assert tally.summary().judge_errors == 0
    tally.remove(first)
    assert tally.summary().judge_usage == {}
