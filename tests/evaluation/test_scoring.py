"""The scorer: plain criteria run without a task of their own, async ones concurrently, each
past its timeout an error; results in config order."""

from __future__ import annotations

import asyncio
import time

import pytest

from agenteval_otel import CriterionConfig, EvalCase, EvalConfig, criterion
from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.evaluation._scoring import Scorer, invocation_key
from agenteval_otel.results._results import EvalCaseResult
from agenteval_otel.trajectory import Trajectory

_TASKS: list[object] = []


@criterion("records_its_task_for_scoring_test")
def _records_task(ctx: CriterionContext) -> float:
    _TASKS.append(asyncio.current_task())
    return 1.0


@criterion("sleeps_for_scoring_test")
async def _sleeps(ctx: CriterionContext) -> float:
    await asyncio.sleep(float(ctx.config.params["seconds"]))
    return 0.5


CONFIG = EvalConfig(criteria={
    "records_its_task_for_scoring_test": CriterionConfig(),
    "sleeps_for_scoring_test": CriterionConfig(threshold=0.4, params={"seconds": 0.2}),
    "response_match": CriterionConfig.response(0.7),
})


def _score(case: EvalCase, turns: list[Trajectory], timeout_s: float | None = None) -> tuple[EvalCaseResult, object]:
    async def scored() -> tuple[EvalCaseResult, object]:
        scorer = Scorer(CONFIG, criterion_timeout_s=timeout_s)
        return await scorer.score_case(case, turns), asyncio.current_task()

    _TASKS.clear()
    return asyncio.run(scored())


def test_a_plain_criterion_runs_in_the_scoring_task() -> None:
    result, caller = _score(EvalCase.single_turn("q", "Sunny.", eval_id="s"), [Trajectory(final_response="Sunny.")])
    assert _TASKS == [caller]
    assert [(r.criterion, r.passed) for r in result.criterion_results] == [
        ("records_its_task_for_scoring_test", True), ("sleeps_for_scoring_test", True), ("response_match", True)]


def test_async_criteria_of_all_turns_run_together() -> None:
    case = EvalCase.multi_turn([("q1", "Sunny."), ("q2", "Sunny."), ("q3", "Sunny.")], eval_id="m")
    started = time.perf_counter()
    result, _ = _score(case, [Trajectory(final_response="Sunny.")] * 3)
    assert time.perf_counter() - started < 0.5  # three turns of 0.2 s each, at once
    assert len(_TASKS) == 3 and result.passed


@pytest.mark.promise(12, 17)
def test_an_async_criterion_past_its_timeout_is_an_error() -> None:
    result, _ = _score(EvalCase.single_turn("q", "Sunny.", eval_id="t"), [Trajectory(final_response="Sunny.")],
                       timeout_s=0.05)
    slept = result.criterion_results[1]
    assert (slept.criterion, slept.error_type) == ("sleeps_for_scoring_test", "TimeoutError")
    assert result.status == "errored" and result.criterion_results[2].passed


def test_an_invocation_without_a_case_is_scored_by_the_reference_free_criteria_only() -> None:
    @criterion("test_scoring_answered", default_threshold=1.0)
    def answered(ctx):
        return bool(ctx.actual.final_response)

    config = EvalConfig.model_validate({"criteria": {"test_scoring_answered": 1.0,
                                                     "tool_trajectory_avg_score": 1.0}})
    actual = Trajectory(trace_id="4bf92f3577b34da6a3ce929d0e0e4736", span_id="00f067aa0ba902b7",
                        final_response="", user_input="Weather?")
    result = asyncio.run(Scorer(config).score_invocation(actual))
    assert result.eval_id == "4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b7"
    assert [r.criterion for r in result.criterion_results] == ["test_scoring_answered"]
    assert result.status == "failed"
    (turn,) = result.invocation_results
    assert (turn.trace_id, turn.span_id, turn.user_input) == (actual.trace_id, actual.span_id, "Weather?")
    assert invocation_key(Trajectory(conversation_id="c1")) == "c1"


def test_an_invocation_matched_to_a_case_turn_is_scored_against_that_turn() -> None:
    config = EvalConfig.model_validate({"criteria": {"exact_match": 1.0}})
    case = EvalCase.multi_turn([("Hi", "Hello!"), ("Weather?", "Sunny.")], eval_id="chat")
    actual = Trajectory(trace_id="4bf92f3577b34da6a3ce929d0e0e4736", span_id="00f067aa0ba902b7",
                        final_response="Sunny.", user_input="Weather?")
    result = asyncio.run(Scorer(config).score_invocation(actual, case=case, turn_index=1))
    assert result.eval_id == "chat" and result.status == "passed"
    assert [r.criterion for r in result.criterion_results] == ["exact_match"]
    (turn,) = result.invocation_results
    assert (turn.invocation_id, turn.expected_response) == (case.conversation[1].invocation_id, "Sunny.")
    assert (turn.trace_id, turn.span_id) == (actual.trace_id, actual.span_id)
