"""Repeated runs of a case (``--all-runs``, ``num_runs``): the failure line and the diff speak of
the same run, and the line gives every run's score."""

from __future__ import annotations

import pytest

from agenteval_otel.evalsets import ToolCall
from agenteval_otel.evaluation import aggregate_runs
from agenteval_otel.reports import print_report
from agenteval_otel.results import CriterionResult, EvalCaseResult, EvalReport, InvocationResult


def _run(score: float, called: str, reason: str) -> EvalCaseResult:
    verdict = CriterionResult(criterion="trajectory_match", score=score, passed=score >= 0.8, threshold=0.8,
                              reason=reason)
    turn = InvocationResult(invocation_id="turn-1", user_input="Weather in Paris?",
                            expected_tool_calls=[ToolCall(name="get_weather")],
                            actual_tool_calls=[ToolCall(name=called)], criterion_results=[verdict])
    return EvalCaseResult(eval_id="weather", passed=score >= 0.8, criterion_results=[verdict],
                          invocation_results=[turn])


def test_the_failure_line_and_the_diff_refer_to_the_same_failing_run(capsys: pytest.CaptureFixture[str]) -> None:
    runs = [_run(1.0, "get_weather", ""), _run(0.0, "get_time", "missing get_weather; unexpected get_time"),
            _run(1.0, "get_weather", "")]
    merged = aggregate_runs(runs)
    (line,) = merged.problems()
    assert line == ("weather: trajectory_match scored 0.67 < threshold 0.80: runs scored 1.00, 0.00, 1.00; "
                    "run 2 of 3: missing get_weather; unexpected get_time")
    assert merged.invocation_results == runs[1].invocation_results  # the diff is run 2's
    print_report(EvalReport.from_results("weather-set", [merged]))
    printed = capsys.readouterr().out
    assert "get_time" in printed and "run 2 of 3: missing get_weather" in printed
