"""Scoring one eval case against the trajectories of its turns: per invocation, then per case.

Live and offline runs both end here, so a case is scored the same way however its trajectories
were captured. Efficiency figures read from the trace are reported on every case.
"""

from __future__ import annotations

import asyncio
import math
import statistics
from collections.abc import Sequence

from agenteval_otel.evaluation.config import CriterionConfig, EvalConfig
from agenteval_otel.evaluation.criteria import score_case, score_invocation
from agenteval_otel.evaluation.models import EvalCase, Invocation
from agenteval_otel.evaluation.results import (
    CriterionResult,
    EvalCaseResult,
    InvocationResult,
)
from agenteval_otel.trajectory.steps import StepType
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["aggregate_runs", "efficiency", "error_result", "score_eval_case"]


def efficiency(turns: Sequence[Trajectory]) -> dict[str, float]:
    """Tool calls, model calls, tokens and duration over the turns of a case."""
    durations = [t.duration_s for t in turns if t.duration_s is not None]
    return {
        "turns": float(len(turns)),
        "tool_calls": float(sum(len(t.tool_calls()) for t in turns)),
        "model_calls": float(sum(
            1 for t in turns for s in t.steps
            if s.step_type is StepType.MESSAGE and s.name == "assistant")),
        "input_tokens": float(sum(t.usage.input_tokens for t in turns)),
        "output_tokens": float(sum(t.usage.output_tokens for t in turns)),
        "duration_s": float(sum(durations)),
    }


async def _score_turn(
    invocation: Invocation, actual: Trajectory, criteria: dict[str, CriterionConfig]
) -> list[CriterionResult | None]:
    return list(await asyncio.gather(*(
        score_invocation(name, invocation, actual, config) for name, config in criteria.items()
    )))


async def score_eval_case(
    case: EvalCase,
    turns: Sequence[Trajectory],
    config: EvalConfig,
    *,
    duration_seconds: float = 0.0,
    missing_turns_reason: str = "no trajectory was captured for this turn",
) -> EvalCaseResult:
    """Score ``case`` against one trajectory per turn (a missing turn scores as empty)."""
    criteria = config.enabled()
    actual_turns = [turns[i] if i < len(turns) else Trajectory() for i in range(len(case.conversation))]
    per_turn = await asyncio.gather(*(
        _score_turn(inv, actual, criteria) for inv, actual in zip(case.conversation, actual_turns)
    ))
    invocation_ids = [inv.invocation_id for inv in case.conversation]
    case_results = []
    for index, (name, criterion_config) in enumerate(criteria.items()):
        result = score_case(name, invocation_ids, [turn[index] for turn in per_turn],
                            criterion_config)
        if result is not None:
            case_results.append(result)
    missing = len(case.conversation) - len(turns)
    error = f"{missing} of {len(case.conversation)} turn(s) missing: {missing_turns_reason}" \
        if missing > 0 else None
    return EvalCaseResult(
        eval_id=case.eval_id,
        name=case.name or None,
        passed=error is None and all(r.passed for r in case_results),
        criterion_results=case_results,
        error=error,
        duration_seconds=duration_seconds,
        actual_trajectory=[step for t in turns for step in t.steps],
        actual_response=turns[-1].final_response if turns else None,
        trace_ids=list(dict.fromkeys(tid for t in turns for tid in t.trace_ids)),
        invocation_results=[
            InvocationResult(
                invocation_id=inv.invocation_id,
                user_input=inv.user_content.get_text(),
                expected_response=(inv.expected_final_response.get_text()
                                   if inv.expected_final_response else None),
                actual_response=actual.final_response,
                expected_tool_calls=list(inv.expected_tool_trajectory),
                actual_tool_calls=actual.tool_calls(),
                expected_node_order=list(inv.expected_node_order),
                actual_node_order=actual.node_order(),
                criterion_results=[r for r in results if r is not None],
                trace_ids=list(actual.trace_ids),
            )
            for inv, actual, results in zip(case.conversation, actual_turns, per_turn)
        ],
        metrics=efficiency(turns),
    )


def error_result(case: EvalCase, error: str, duration_seconds: float = 0.0) -> EvalCaseResult:
    """A case that could not be run or matched: errored, nothing scored."""
    return EvalCaseResult(eval_id=case.eval_id, name=case.name or None, passed=False,
                          error=error, duration_seconds=duration_seconds)


def _pass_at(n: int, c: int, k: int) -> float:
    """Chance that at least one of k runs drawn from n passes (c passed)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _pass_all(n: int, c: int, k: int) -> float:
    """Chance that all of k runs drawn from n pass (c passed)."""
    return math.comb(c, k) / math.comb(n, k)


def aggregate_runs(runs: Sequence[EvalCaseResult]) -> EvalCaseResult:
    """One result from repeated runs of a case: the case passes only if every run passed.

    Criterion scores are averaged over the runs; ``metrics`` adds ``runs``, ``passed_runs``,
    ``pass@1``, ``pass@k`` and ``pass^k`` (k = number of runs) and the efficiency figures averaged.
    """
    if len(runs) == 1:
        return runs[0]
    n = len(runs)
    c = sum(1 for r in runs if r.status == "passed")
    by_name: dict[str, list[CriterionResult]] = {}
    for run in runs:
        for result in run.criterion_results:
            by_name.setdefault(result.criterion, []).append(result)
    criterion_results = []
    for name, results in by_name.items():
        errors = [r.error for r in results if r.error]
        threshold = results[0].threshold
        per_run = [{"score": r.score, "passed": r.passed, **({"error": r.error} if r.error else {})}
                   for r in results]
        if errors:
            failed = CriterionResult.failure(name, threshold, f"{len(errors)}/{len(results)} run(s) "
                                             f"errored: {errors[0]}")
            failed.details["runs"] = per_run
            criterion_results.append(failed)
            continue
        score = statistics.fmean(r.score for r in results)
        reasons = [r.reason for r in results if r.reason and not r.passed]
        details = {"runs": per_run, **({"reason": reasons[0]} if reasons else {})}
        criterion_results.append(CriterionResult(
            criterion=name, score=score, passed=all(r.passed for r in results),
            threshold=threshold, details=details))
    metrics: dict[str, float] = {}
    for key in runs[0].metrics:
        metrics[key] = statistics.fmean(r.metrics.get(key, 0.0) for r in runs)
    metrics.update({"runs": float(n), "passed_runs": float(c), "pass@1": c / n,
                    "pass@k": _pass_at(n, c, n), "pass^k": _pass_all(n, c, n)})
    errored = [r.error for r in runs if r.error]
    first = runs[0]
    return first.model_copy(update={
        "passed": c == n,
        "criterion_results": criterion_results,
        "error": f"{len(errored)}/{n} run(s) errored: {errored[0]}" if errored else None,
        "duration_seconds": sum(r.duration_seconds for r in runs),
        "metrics": metrics,
        "run_results": list(runs),
    })
