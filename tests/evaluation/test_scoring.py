"""The scorer: plain criteria run without a task of their own, async ones concurrently, each
past its timeout an error; results in config order."""

from __future__ import annotations

import asyncio
import time

from agenteval_otel import CriterionConfig, EvalCase, EvalConfig, criterion
from agenteval_otel.evaluation.criteria.context import CriterionContext
from agenteval_otel.evaluation.results import EvalCaseResult
from agenteval_otel.evaluation.scoring import Scorer
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


def test_an_async_criterion_past_its_timeout_is_an_error() -> None:
    result, _ = _score(EvalCase.single_turn("q", "Sunny.", eval_id="t"), [Trajectory(final_response="Sunny.")],
                       timeout_s=0.05)
    slept = result.criterion_results[1]
    assert (slept.criterion, slept.error_type) == ("sleeps_for_scoring_test", "TimeoutError")
    assert result.status == "errored" and result.criterion_results[2].passed
