"""Result models: case status, summary and per-criterion stats, report assertions and files;
accuracy / performance / reliability results (spec page 004)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from agenteval_otel import EvalReport
from agenteval_otel.checks import (
    AccuracyEvaluationResult,
    EvaluationScore,
    PerformanceEvaluationResult,
    PerformanceRunResult,
    ReliabilityEvaluationResult,
    ToolCallCheck,
)
from agenteval_otel.evalsets import Invocation, ToolCall
from agenteval_otel.results import CriterionResult, EvalCaseResult, EvalSummary, InvocationResult
from agenteval_otel.trajectory import Trajectory, TrajectoryStep


def _result(criterion: str, score: float, threshold: float = 0.8, **kw: object) -> CriterionResult:
    return CriterionResult(criterion=criterion, score=score, passed=score >= threshold,
                           threshold=threshold, **kw)  # type: ignore[arg-type]


def _cases() -> list[EvalCaseResult]:
    return [
        EvalCaseResult(eval_id="ok", passed=True, criterion_results=[
            _result("trajectory_match", 1.0), _result("response_match", 0.9, 0.7)]),
        EvalCaseResult(eval_id="bad", passed=False, criterion_results=[
            _result("trajectory_match", 0.5, reason="missing call get_weather"),
            _result("response_match", 0.8, 0.7)]),
        EvalCaseResult(eval_id="boom", passed=False, criterion_results=[
            CriterionResult.failure("trajectory_match", 0.8, "ValueError: broken"),
            _result("response_match", 0.2, 0.7)]),
    ]


def test_case_status() -> None:
    ok, bad, boom = _cases()
    assert [ok.status, bad.status, boom.status] == ["passed", "failed", "errored"]
    assert boom.score == 0.2  # errored criteria are not scored
    assert bad.problems() == [
        "bad: trajectory_match scored 0.50 < threshold 0.80: missing call get_weather"]
    assert boom.problems()[0] == "boom: trajectory_match errored: ValueError: broken"


def test_score_must_be_in_unit_range() -> None:
    with pytest.raises(ValidationError):
        _result("x", 1.5)


def test_summary_and_criterion_stats() -> None:
    summary = EvalSummary.from_results(_cases())
    assert (summary.total_cases, summary.passed_cases, summary.failed_cases, summary.error_cases) == (3, 1, 1, 1)
    assert summary.pass_rate == pytest.approx(1 / 3)
    assert summary.avg_score == pytest.approx((0.95 + 0.65 + 0.2) / 3)
    trajectory = summary.criterion_stats["trajectory_match"]
    assert (trajectory.count, trajectory.passed, trajectory.errors) == (3, 1, 1)
    assert (trajectory.mean, trajectory.min, trajectory.max) == (0.75, 0.5, 1.0)
    assert trajectory.pass_rate == pytest.approx(1 / 3)
    response = summary.criterion_stats["response_match"]
    assert (response.count, response.passed, response.min, response.max) == (3, 2, 0.2, 0.9)


def test_report_assert_passed_names_case_criterion_score_and_reason() -> None:
    report = EvalReport.from_results("set-1", _cases(), eval_set_name="weather")
    with pytest.raises(AssertionError) as err:
        report.assert_passed()
    message = str(err.value)
    assert message.splitlines()[0] == "eval set weather: 1/3 cases passed (1 failed, 1 errored)"
    assert "bad: trajectory_match scored 0.50 < threshold 0.80: missing call get_weather" in message
    assert "boom: trajectory_match errored: ValueError: broken" in message
    EvalReport.from_results("set-1", _cases()[:1]).assert_passed()
    with pytest.raises(AssertionError, match="no eval case was run"):
        EvalReport.from_results("empty", []).assert_passed()


def test_report_round_trip(tmp_path: Path) -> None:
    cases = _cases()
    cases[0].actual_trajectory = [TrajectoryStep.tool("get_weather", {"city": "Paris"})]
    cases[0].trace_ids = ["0af7651916cd43dd8448eb211c80319c"]
    report = EvalReport.from_results("set-1", cases, config_used={"criteria": {}}, duration_seconds=1.5)
    assert EvalReport.load(report.save(tmp_path / "report.json")) == report


class TestAccuracy:
    def test_score_is_validated_to_one_to_ten(self) -> None:
        EvaluationScore(score=1, reasoning="r", is_met=False, critique="c")
        EvaluationScore(score=10, reasoning="r", is_met=True, critique="c")
        for bad in (0, 0.5, 10.5, 11):
            with pytest.raises(ValidationError):
                EvaluationScore(score=bad, reasoning="r", is_met=True, critique="c")
        with pytest.raises(ValidationError):
            EvaluationScore(score=5, reasoning="r", is_met=True)  # type: ignore[call-arg]

    def test_threshold_and_assert_passed(self) -> None:
        scores = [EvaluationScore(score=s, reasoning="r", is_met=s >= 7, critique=f"critique {s}")
                  for s in (8, 9)]
        result = AccuracyEvaluationResult(
            evaluation_scores=scores, average_score=8.5, user_query="What is the capital of France?",
            expected_output="Paris", generated_output="The capital of France is Paris.")
        assert result.passed and result.model_dump()["passed"] is True
        result.assert_passed()
        strict = result.model_copy(update={"threshold": 9.0})
        assert not strict.passed
        with pytest.raises(AssertionError, match=r"accuracy failed: average score 8.50 \(threshold 9.00\)") as err:
            strict.assert_passed()
        assert "critique 8" in str(err.value)

    def test_from_attributes(self) -> None:
        class Judged:
            score, reasoning, is_met, critique = 7.0, "fine", True, "none"

        assert EvaluationScore.model_validate(Judged(), from_attributes=True).score == 7.0


class TestPerformance:
    def _runs(self) -> list[PerformanceRunResult]:
        return [PerformanceRunResult(latency_seconds=i / 100, memory_increase_bytes=1000 + i,
                                     memory_peak_bytes=2000 + i) for i in range(1, 101)]

    def test_statistics_with_percentiles(self) -> None:
        result = PerformanceEvaluationResult.from_runs(self._runs(), warmup_runs=2)
        assert (result.num_iterations, result.warmup_runs) == (100, 2)
        lat = result.latency_stats
        assert set(lat) == {"average", "median", "min", "max", "std_dev", "p95", "p99"}
        assert (lat["min"], lat["max"], lat["p95"], lat["p99"]) == (0.01, 1.0, 0.95, 0.99)
        assert lat["median"] == pytest.approx(0.505)
        assert result.memory_peak_stats["max"] == 2100

    def test_thresholds_and_assert_passed(self) -> None:
        ok = PerformanceEvaluationResult.from_runs(self._runs(), thresholds={"latency.p95": 1.0})
        assert ok.passed
        ok.assert_passed()
        slow = PerformanceEvaluationResult.from_runs(
            self._runs(), thresholds={"latency.p95": 0.5, "memory_peak.max": 5000})
        assert slow.exceeded() == ["latency.p95 = 0.95 exceeds 0.5"]
        with pytest.raises(AssertionError, match="latency.p95 = 0.95 exceeds 0.5"):
            slow.assert_passed()
        with pytest.raises(ValidationError, match=r"unknown performance threshold 'latency.p42'"):
            PerformanceEvaluationResult.from_runs(self._runs(), thresholds={"latency.p42": 1})

    def test_spec_example(self) -> None:
        stats = {"average": 1.5, "median": 1.4, "min": 1.2, "max": 1.8, "std_dev": 0.2}
        result = PerformanceEvaluationResult(
            all_runs=self._runs()[:2], num_iterations=10, warmup_runs=2, latency_stats=stats,
            memory_increase_stats=stats, memory_peak_stats=stats)
        assert result.passed


class TestReliability:
    def test_assert_passed_raises_summary(self) -> None:
        checks = [ToolCallCheck(tool_name="search", was_called=True, times_called=2),
                  ToolCallCheck(tool_name="analyze", was_called=False, times_called=0)]
        result = ReliabilityEvaluationResult(
            passed=False, summary="Missing tool calls: analyze", expected_tool_calls=["search", "analyze"],
            actual_tool_calls=["search", "search"], checks=checks, missing_tool_calls=["analyze"],
            unexpected_tool_calls=[])
        with pytest.raises(AssertionError) as err:
            result.assert_passed()
        assert str(err.value) == "Missing tool calls: analyze"
        assert [c.ok for c in checks] == [True, False]

    def test_passing_result(self) -> None:
        ReliabilityEvaluationResult(
            passed=True, summary="All reliability checks passed.", expected_tool_calls=["search"],
            actual_tool_calls=["search"], checks=[ToolCallCheck(tool_name="search", was_called=True,
                                                                times_called=1)],
            missing_tool_calls=[], unexpected_tool_calls=[]).assert_passed()

    def test_check_can_fail_although_called(self) -> None:
        check = ToolCallCheck(tool_name="pay", was_called=True, times_called=3, passed=False,
                              reason="called 3 times, expected at most 1")
        assert not check.ok


def test_a_turn_result_sets_what_was_expected_beside_what_happened() -> None:
    expected = Invocation(user_content="Weather in Paris?", expected_final_response="Sunny.",
                          expected_tool_trajectory=[ToolCall(name="get_weather", args={"city": "Paris"})],
                          expected_node_order=["plan", "act"])
    actual = Trajectory(trace_id="7e57", span_id="01", trace_ids=["7e57"], final_response="Rainy.",
                        steps=[TrajectoryStep.node("plan"), TrajectoryStep.tool("get_weather", {"city": "Paris"})])
    passed = _result("trajectory_match", 1.0)
    turn = InvocationResult.of_turn("turn-1", actual, expected, [passed, None], user_input="Weather in Paris?")
    assert turn == InvocationResult(
        invocation_id="turn-1", user_input="Weather in Paris?", expected_response="Sunny.", actual_response="Rainy.",
        expected_tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"})],
        actual_tool_calls=actual.tool_calls(), expected_node_order=["plan", "act"], actual_node_order=["plan"],
        criterion_results=[passed], trace_ids=["7e57"], trace_id="7e57", span_id="01")
    bare = InvocationResult.of_turn("7e57:01", actual, None, [], user_input=None)
    assert (bare.expected_response, bare.expected_tool_calls, bare.expected_node_order) == (None, [], [])
