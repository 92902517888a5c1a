"""Scoring eval cases against the trajectories of their turns: per invocation, then per case,
then over repeated runs.

Live and offline runs both end here (through a ``Scorer``), so a case is scored the same way
however its trajectories were captured. Efficiency figures read from the trace are reported on
every case.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
import statistics
from collections.abc import Awaitable, Sequence
from typing import Any

from pydantic import BaseModel

from agenteval_otel.criteria import (
    CriterionConfig,
    CriterionContext,
    EvalConfig,
    get_criterion,
    start_criterion,
)
from agenteval_otel.evalsets import EvalCase, Invocation
from agenteval_otel.evaluation._agents import is_async_callable
from agenteval_otel.evaluation._judging import default_judge
from agenteval_otel.evaluation._sync import in_daemon_thread
from agenteval_otel.judge import JudgeClient, JudgeUsage
from agenteval_otel.results import CriterionResult, EvalCaseResult, InvocationResult
from agenteval_otel.trajectory.steps import StepType
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["Scorer", "aggregate_runs", "efficiency", "error_result", "invocation_key", "score_case"]


def efficiency(turns: Sequence[Trajectory]) -> dict[str, float]:
    """Tool calls, model calls, tokens and duration over the turns of a case."""
    durations = [t.duration_s for t in turns if t.duration_s is not None]
    return {
        "turns": float(len(turns)),
        "tool_calls": float(sum(1 for t in turns for s in t.steps if s.step_type is StepType.TOOL)),
        "model_calls": float(sum(
            1 for t in turns for s in t.steps
            if s.step_type is StepType.MESSAGE and s.name == "assistant")),
        "input_tokens": float(sum(t.usage.input_tokens for t in turns)),
        "output_tokens": float(sum(t.usage.output_tokens for t in turns)),
        "duration_s": float(sum(durations)),
    }


def score_case(
    name: str,
    invocation_ids: list[str],
    results: list[CriterionResult | None],
    config: CriterionConfig,
) -> CriterionResult | None:
    """One criterion's case result: the mean over the invocations it applied to (each
    invocation's own result, with its evidence, stays on its ``InvocationResult``).

    An error on any invocation makes the case result an error. ``None`` if it applied to none.
    """
    applied = [(inv_id, r) for inv_id, r in zip(invocation_ids, results) if r is not None]
    if not applied:
        return None
    usage = JudgeUsage.total(r.judge_usage for _, r in applied)
    errors = [(inv_id, r) for inv_id, r in applied if r.error]
    if errors:
        first = errors[0][1]
        return CriterionResult.failure(
            name, config.threshold, "; ".join(f"{inv_id}: {r.error}" for inv_id, r in errors),
            error_type=first.error_type, traceback=first.traceback, semantics=first.semantics,
        ).model_copy(update={"judge_usage": usage})
    score = sum(r.score for _, r in applied) / len(applied)  # summed in turn order, as ADK does
    if len(applied) == 1:
        only = applied[0][1]
        reason, details = only.reason, dict(only.details)
    else:
        reason = "; ".join(f"turn {i + 1}: {r.reason}" for i, (_, r) in enumerate(applied)
                           if r.reason and not r.passed)
        details = {}
    return CriterionResult(criterion=name, score=score, passed=score >= config.threshold,
                           threshold=config.threshold, reason=reason, details=details,
                           semantics=applied[0][1].semantics, judge_usage=usage)


def invocation_key(trajectory: Trajectory) -> str:
    """The id an invocation found in traces is reported under when no eval case names it:
    ``{trace_id}:{span_id}`` of its root span (what a trace viewer finds it by), else its
    conversation id, else ``"invocation"``.

    >>> invocation_key(Trajectory(trace_id="4bf92f3577b34da6a3ce929d0e0e4736", span_id="00f067aa0ba902b7"))
    '4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b7'
    """
    if trajectory.trace_id:
        return f"{trajectory.trace_id}:{trajectory.span_id}" if trajectory.span_id else trajectory.trace_id
    return trajectory.conversation_id or "invocation"


def _settings_of(name: str, config: CriterionConfig) -> BaseModel | None:
    """The criterion's ``params`` validated by its settings model, once per run; ``None`` when it
    has none or they do not validate (the criterion is then errored with the reason when it runs)."""
    try:
        return get_criterion(name).parse_settings(config.params)
    except Exception:  # noqa: BLE001 - reported per invocation by start_criterion
        return None


def _in_a_thread(name: str) -> bool:
    """Whether criterion ``name`` is the user's synchronous code, run in a daemon thread of its
    own: not an async criterion (those run on the event loop), not a built-in one (ours run on
    the loop too: pure functions of the trajectory, called too often to pay a thread each)."""
    try:
        fn = get_criterion(name).fn
    except Exception:  # noqa: BLE001 - an unknown criterion is reported when it runs
        return False
    return not is_async_callable(fn) and not _built_in(fn)


def _built_in(fn: object) -> bool:
    return getattr(fn, "__module__", "").startswith("agenteval_otel.")


def _at_once(name: str) -> bool:
    """Whether criterion ``name`` gives its result when called: built-in and synchronous (an
    unknown one too: it is errored at once)."""
    try:
        fn = get_criterion(name).fn
    except Exception:  # noqa: BLE001 - an unknown criterion is reported when it runs
        return True
    return _built_in(fn) and not is_async_callable(fn)


DEFAULT_CRITERION_TIMEOUT_S = 300.0
DEFAULT_SCORING_CONCURRENCY = 16


class Scorer:
    """Scores turns and cases with the enabled criteria of ``config``.

    At most ``concurrency`` criteria run at once; one still running after ``criterion_timeout_s``
    becomes an error result. The user's synchronous criteria run in daemon threads, so one that
    sleeps or hangs never blocks the event loop (other cases and async criteria go on) and is
    abandoned past the limit; async and built-in criteria run on the loop. ``judge`` is handed
    to criteria in their context (default: the judge the environment configures, see
    :func:`~agenteval_otel.evaluation._judging.default_judge`, or none); each criterion's judge
    calls are counted in its result's ``judge_usage``. Make one per run (it binds to the running
    event loop, and its judge's concurrency limit holds over the run).
    """

    def __init__(
        self,
        config: EvalConfig,
        *,
        judge: JudgeClient | None = None,
        concurrency: int = DEFAULT_SCORING_CONCURRENCY,
        criterion_timeout_s: float | None = DEFAULT_CRITERION_TIMEOUT_S,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        if criterion_timeout_s is not None and criterion_timeout_s <= 0:
            raise ValueError(f"criterion_timeout_s must be positive, got {criterion_timeout_s}")
        self.config = config
        self.criteria = config.enabled()
        self._settings = {name: _settings_of(name, criterion) for name, criterion in self.criteria.items()}
        self._threaded = {name: _in_a_thread(name) for name in self.criteria}
        self.at_once = all(_at_once(name) for name in self.criteria)
        """Whether every criterion gives its result when called (built-in, synchronous ones, such
        as the policies): a turn is then scored without waiting on anything, so a caller awaits
        it in place rather than in a task of its own."""
        self.judge = judge if judge is not None else default_judge()
        self.criterion_timeout_s = criterion_timeout_s
        self._gate = asyncio.Semaphore(concurrency)

    async def _gated(self, started: Awaitable[CriterionResult | None]) -> CriterionResult | None:
        async with self._gate:
            return await started

    async def _in_thread(self, name: str, context: CriterionContext) -> CriterionResult | None:
        """Sync criterion ``name`` in a daemon thread, given up on (an error result) past the
        criterion time limit."""
        call = functools.partial(start_criterion, name, context, timeout_s=self.criterion_timeout_s)
        try:
            started = await asyncio.wait_for(in_daemon_thread(call, f"agenteval criterion {name}"),
                                             self.criterion_timeout_s)
        except asyncio.TimeoutError:
            return CriterionResult.failure(
                name, context.config.threshold,
                f"criterion {name!r} did not finish within {self.criterion_timeout_s:g} s; it was still "
                "running and its thread was abandoned", error_type="TimeoutError",
                semantics=get_criterion(name).semantics)
        return await started if inspect.isawaitable(started) else started

    def _judge_for(self, name: str) -> tuple[JudgeClient | None, JudgeUsage | None]:
        """The judge a criterion's context gets, counting its calls in the usage returned."""
        if not isinstance(self.judge, JudgeClient):
            return self.judge, None
        usage = JudgeUsage()
        return self.judge.recording(usage, name), usage

    async def score_turn(
        self,
        actual: Trajectory,
        expected: Invocation | None = None,
        *,
        case: EvalCase | None = None,
        turn_index: int = 0,
        previous_turns: Sequence[Trajectory] = (),
    ) -> list[CriterionResult | None]:
        """Every enabled criterion on one turn, in config order (``None`` where one does not
        apply); ``expected`` is ``None`` for reference-free scoring. A result whose ``details``
        are not JSON data is errored (:meth:`CriterionResult.with_json_details`)."""
        previous = tuple(previous_turns)
        results: list[Any] = []
        usages: list[JudgeUsage | None] = []
        for name, config in self.criteria.items():
            judge, usage = self._judge_for(name)
            context = CriterionContext(actual=actual, expected=expected, config=config, case=case,
                                       turn_index=turn_index, previous_turns=previous, judge=judge,
                                       settings=self._settings[name])
            results.append(self._in_thread(name, context) if self._threaded[name]
                           else start_criterion(name, context, timeout_s=self.criterion_timeout_s))
            usages.append(usage)
        waiting = [index for index, result in enumerate(results) if inspect.isawaitable(result)]
        if waiting:  # async and threaded criteria run concurrently, at most ``concurrency`` at once
            done = await asyncio.gather(*(self._gated(results[index]) for index in waiting))
            for index, result in zip(waiting, done):
                results[index] = result
        for index, usage in enumerate(usages):
            if usage is not None and usage.used and results[index] is not None:
                results[index] = results[index].model_copy(update={"judge_usage": usage})
        return [result.with_json_details() if result is not None else None for result in results]

    async def score_invocation(
        self,
        actual: Trajectory,
        *,
        eval_id: str | None = None,
        duration_seconds: float = 0.0,
        case: EvalCase | None = None,
        turn_index: int = 0,
    ) -> EvalCaseResult:
        """Score one invocation found in traces (production traces, online): with no ``case``
        the reference-free criteria apply, those that need an expected invocation give ``None``
        and are left out; with the ``case`` it was matched to, its turn ``turn_index`` is the
        expected invocation and every criterion applies. The result is reported under
        ``eval_id`` (default: the case's id, else :func:`invocation_key`) with one
        ``InvocationResult`` carrying the invocation's trace and root span ids, where its
        verdicts are exported to."""
        expected = case.conversation[turn_index] if case is not None and case.conversation else None
        results = [r for r in await self.score_turn(actual, expected, case=case, turn_index=turn_index)
                   if r is not None]
        key = eval_id or (case.eval_id if case is not None else invocation_key(actual))
        return EvalCaseResult(
            eval_id=key,
            name=case.name if case is not None and case.name else actual.agent_name,
            passed=all(r.passed for r in results),
            criterion_results=results,
            duration_seconds=duration_seconds,
            actual_trajectory=list(actual.steps),
            actual_response=actual.final_response,
            trace_ids=list(actual.trace_ids),
            trace_id=actual.trace_id,
            span_id=actual.span_id,
            invocation_results=[InvocationResult.of_turn(
                expected.invocation_id if expected is not None else key, actual, expected, results,
                user_input=actual.user_input)],
            metrics=efficiency([actual]),
        )

    async def score_case(
        self,
        case: EvalCase,
        turns: Sequence[Trajectory],
        *,
        duration_seconds: float = 0.0,
        missing_turns_reason: str = "no trajectory was captured for this turn",
    ) -> EvalCaseResult:
        """Score ``case`` against one trajectory per turn (a missing turn scores as empty)."""
        actual_turns = [turns[i] if i < len(turns) else Trajectory() for i in range(len(case.conversation))]
        result = await self._score_turns(case, list(case.conversation), actual_turns, turns,
                                         [inv.invocation_id for inv in case.conversation], duration_seconds)
        missing = len(case.conversation) - len(turns)
        if missing <= 0:
            return result
        return result.model_copy(update={
            "passed": False,
            "error": f"{missing} of {len(case.conversation)} turn(s) missing: {missing_turns_reason}"})

    async def score_simulated(
        self,
        case: EvalCase,
        turns: Sequence[Trajectory],
        *,
        ended_by: str,
        duration_seconds: float = 0.0,
    ) -> EvalCaseResult:
        """Score the turns a simulated user played for ``case``: there is no expected turn, so the
        reference-free criteria score each turn (with the turns before it in their context), and
        the case is errored when none applies. Invocations are reported as ``turn-1``, ``turn-2``
        ...; ``metrics`` adds ``user_ended`` (1.0 when the simulated user ended the conversation,
        0.0 when the turn limit did). ``ended_by`` is ``"user"`` or ``"turn_limit"``."""
        result = await self._score_turns(case, [None] * len(turns), list(turns), turns,
                                         [f"turn-{index + 1}" for index in range(len(turns))], duration_seconds)
        result.metrics["user_ended"] = 1.0 if ended_by == "user" else 0.0
        if result.criterion_results:
            return result
        return result.model_copy(update={
            "passed": False,
            "error": "no criterion of the config applies to a simulated-user conversation (it has no expected "
                     "turns): add reference-free criteria (policies such as final_response_present, or judged "
                     "ones such as safety or rubric_based)"})

    async def _score_turns(
        self,
        case: EvalCase,
        expected_turns: Sequence[Invocation | None],
        actual_turns: Sequence[Trajectory],
        turns: Sequence[Trajectory],
        invocation_ids: list[str],
        duration_seconds: float,
    ) -> EvalCaseResult:
        """Score each of ``actual_turns`` against its expected turn (``None``: reference-free),
        then the case; ``turns`` are the trajectories really captured."""
        scored = [
            self.score_turn(actual, expected, case=case, turn_index=index, previous_turns=actual_turns[:index])
            for index, (expected, actual) in enumerate(zip(expected_turns, actual_turns))
        ]
        per_turn = [await scored[0]] if len(scored) == 1 else await asyncio.gather(*scored)
        case_results = []
        for index, (name, criterion_config) in enumerate(self.criteria.items()):
            result = score_case(name, invocation_ids, [turn[index] for turn in per_turn], criterion_config)
            if result is not None:
                case_results.append(result)
        return EvalCaseResult(
            eval_id=case.eval_id,
            name=case.name or None,
            passed=all(r.passed for r in case_results),
            criterion_results=case_results,
            duration_seconds=duration_seconds,
            actual_trajectory=[step for t in turns for step in t.steps],
            actual_response=turns[-1].final_response if turns else None,
            trace_ids=list(dict.fromkeys(tid for t in turns for tid in t.trace_ids)),
            trace_id=turns[0].trace_id if turns else None,
            span_id=turns[0].span_id if turns else None,
            invocation_results=[
                InvocationResult.of_turn(
                    invocation_id, actual, inv, results,
                    user_input=inv.user_content.get_text() if inv is not None else actual.user_input)
                for invocation_id, inv, actual, results in zip(invocation_ids, expected_turns, actual_turns,
                                                               per_turn)
            ],
            metrics=efficiency(turns),
        )


def error_result(
    case: EvalCase,
    error: str,
    duration_seconds: float = 0.0,
    *,
    error_type: str | None = None,
    traceback: str | None = None,
) -> EvalCaseResult:
    """A case that could not be run or matched: errored, nothing scored."""
    return EvalCaseResult(eval_id=case.eval_id, name=case.name or None, passed=False,
                          error=error, error_type=error_type, traceback=traceback,
                          duration_seconds=duration_seconds)


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

    Criterion scores are averaged over the runs (each run's own result is in ``run_results``);
    a criterion that failed gives every run's score and the reason of the first run it failed in,
    named, and the turns shown (``invocation_results``) are those of the first run that did not
    pass, so a report's diff and failure line speak of the same run. ``metrics`` adds ``runs``, ``passed_runs``,
    ``pass@1``, ``pass@k`` and ``pass^k`` (k = number of runs) and the efficiency figures averaged.
    """
    if len(runs) == 1:
        return runs[0]
    n = len(runs)
    c = sum(1 for r in runs if r.status == "passed")
    by_name: dict[str, list[CriterionResult]] = {}
    numbers: dict[str, list[int]] = {}
    for number, run in enumerate(runs, start=1):
        for result in run.criterion_results:
            by_name.setdefault(result.criterion, []).append(result)
            numbers.setdefault(result.criterion, []).append(number)
    criterion_results = []
    for name, results in by_name.items():
        errored = [r for r in results if r.error]
        threshold = results[0].threshold
        usage = JudgeUsage.total(r.judge_usage for r in results)
        if errored:
            criterion_results.append(CriterionResult.failure(
                name, threshold, f"{len(errored)}/{len(results)} run(s) errored: {errored[0].error}",
                error_type=errored[0].error_type, traceback=errored[0].traceback,
                semantics=errored[0].semantics).model_copy(update={"judge_usage": usage}))
            continue
        score = statistics.fmean(r.score for r in results)
        failed = [(number, r) for number, r in zip(numbers[name], results) if not r.passed]
        reason = ""
        if failed:
            number, first = failed[0]
            reason = (f"runs scored {', '.join(f'{r.score:.2f}' for r in results)}; run {number} of {n}"
                      + (f": {first.reason}" if first.reason else f" scored {first.score:.2f}"))
        criterion_results.append(CriterionResult(
            criterion=name, score=score, passed=all(r.passed for r in results),
            threshold=threshold, reason=reason, semantics=results[0].semantics,
            judge_usage=usage))
    metrics: dict[str, float] = {}
    for key in runs[0].metrics:
        metrics[key] = statistics.fmean(r.metrics.get(key, 0.0) for r in runs)
    metrics.update({"runs": float(n), "passed_runs": float(c), "pass@1": c / n,
                    "pass@k": _pass_at(n, c, n), "pass^k": _pass_all(n, c, n)})
    errored_runs = [r for r in runs if r.error]
    first_error = errored_runs[0] if errored_runs else None
    shown = next((run for run in runs if run.status != "passed"), runs[0])
    return runs[0].model_copy(update={
        "invocation_results": shown.invocation_results,
        "passed": c == n,
        "criterion_results": criterion_results,
        "error": (f"{len(errored_runs)}/{n} run(s) errored: {first_error.error}"
                  if first_error is not None else None),
        "error_type": first_error.error_type if first_error is not None else None,
        "traceback": first_error.traceback if first_error is not None else None,
        "duration_seconds": sum(r.duration_seconds for r in runs),
        "metrics": metrics,
        "run_results": list(runs),
    })
