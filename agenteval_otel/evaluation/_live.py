"""Live evaluation: run an agent over an eval set, capture every turn's trace, score the cases.

>>> from agenteval_otel import EvalSetBuilder
>>> def agent(query: str) -> str:
...     return "Hi!"
>>> report = evaluate(EvalSetBuilder.quick(("Hello", "Hi!")), agent=agent)
>>> report.summary.passed_cases
1
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from typing import Any

from opentelemetry.trace import TracerProvider

from agenteval_otel.criteria import EvalConfig
from agenteval_otel.errors import UserSimulatorError
from agenteval_otel.evalsets import EvalCase, EvalSet
from agenteval_otel.evaluation._agents import Agent, AgentCaller, AgentTurn, abandoned_agent_threads
from agenteval_otel.evaluation._capture import OpenRoot, capture_for, evaluation_tags
from agenteval_otel.evaluation._scoring import (
    DEFAULT_CRITERION_TIMEOUT_S,
    Scorer,
    aggregate_runs,
    error_result,
)
from agenteval_otel.evaluation._sync import run_sync
from agenteval_otel.evaluation._turns import Conversation, SimulatedUser, UserTurns, converse, turns_for
from agenteval_otel.judge import JudgeClient
from agenteval_otel.results import (
    AgentFailure,
    EvalCaseResult,
    EvalReport,
    EvaluationSink,
    SinkGroup,
    TraceExport,
    verdict_attributes,
)
from agenteval_otel.tracing import routed_to
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["LiveRunner", "aevaluate", "evaluate"]


class LiveRunner:
    """Runs ``agent`` over eval sets and scores it with ``config``.

    ``config`` defaults to the criteria that need no judge (``trajectory_match`` 0.8,
    ``response_match`` 0.7), or Google ADK's defaults for an eval set read from an ADK file
    (``EvalConfig.default_for``). ``concurrency`` cases run at once; a case taking longer than
    ``timeout_s`` is errored. ``num_runs > 1`` runs every case that many times and reports
    pass@k and pass^k. ``tags`` keeps only the cases that carry one of them. Spans go to
    ``tracer_provider`` (our decorators' too, for the length of a run; default: the provider
    ``configure()`` set up, else the global one). ``judge``: the LLM judge of judged criteria
    (default: the one the environment configures, see ``AGENTEVAL_JUDGE_BASE_URL``), which
    also plays the user of ``conversation_scenario`` cases (a :class:`SimulatedUser` set up by the
    config's ``user_simulator_config``; cases with a conversation replay it, see
    :mod:`~agenteval_otel.evaluation._turns`). Each turn's root span takes its verdicts as attributes before it ends, and with
    ``export_results`` (the default) every verdict is also written as a ``gen_ai.evaluation.result``
    log record on its turn's root span (see ``TraceExport``), for the evaluation run ``run_id``
    (default: the eval set's id), through the global logger provider: the turn's trace itself is
    left as it ended.
    """

    def __init__(
        self,
        agent: Agent,
        config: EvalConfig | None = None,
        *,
        concurrency: int = 4,
        timeout_s: float | None = 300.0,
        num_runs: int = 1,
        tags: Sequence[str] = (),
        tracer_provider: TracerProvider | None = None,
        criterion_timeout_s: float | None = DEFAULT_CRITERION_TIMEOUT_S,
        judge: JudgeClient | None = None,
        export_results: bool = True,
        run_id: str | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        if num_runs < 1:
            raise ValueError(f"num_runs must be at least 1, got {num_runs}")
        if timeout_s is not None and timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.caller = AgentCaller(agent)
        self.config = config if config is not None else EvalConfig.default(include_judge=False)
        self._config_given = config is not None
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.num_runs = num_runs
        self.tags = set(tags)
        self._provider = tracer_provider
        self.criterion_timeout_s = criterion_timeout_s
        self.judge = judge
        self.export_results = export_results
        self.run_id = run_id

    def selected(self, eval_set: EvalSet) -> list[EvalCase]:
        """The cases this evaluator runs (after the tags filter)."""
        if not self.tags:
            return list(eval_set.eval_cases)
        return [case for case in eval_set.eval_cases if self.tags & set(case.tags)]

    async def _converse(self, case: EvalCase, eval_set_id: str, roots: list[OpenRoot],
                        user: UserTurns) -> Conversation[Trajectory]:
        capture = capture_for(self._provider)
        session = case.session_input
        thread_id = (session.thread_id if session and session.thread_id
                     else f"{case.eval_id}-{uuid.uuid4().hex[:12]}")

        async def play(message: str, history: list[dict[str, str]], index: int) -> tuple[Trajectory, str | None]:
            turn = AgentTurn(user_input=message, thread_id=thread_id, history=history,
                             session=session, eval_id=case.eval_id, turn_index=index)
            return await capture.run_turn(self.caller, turn, eval_set_id=eval_set_id, roots=roots)

        with evaluation_tags(eval_set_id, case.eval_id):  # the simulated user's calls too
            return await converse(user, play)

    async def _run_case(self, case: EvalCase, eval_set_id: str, scorer: Scorer) -> EvalCaseResult:
        """Run and score ``case``; each turn's root span stays open until the case is scored and
        takes its verdicts as attributes (``agenteval.evaluation.{criterion}.score``/``.label``)."""
        roots: list[OpenRoot] = []
        try:
            result = await self._run_and_score(case, eval_set_id, scorer, roots)
            for root, invocation in zip(roots, result.invocation_results):
                root.close(verdict_attributes(invocation.criterion_results))
            return result
        finally:
            for root in roots:
                root.close()

    async def _run_and_score(
        self, case: EvalCase, eval_set_id: str, scorer: Scorer, roots: list[OpenRoot]
    ) -> EvalCaseResult:
        started = time.perf_counter()
        user = turns_for(case, scorer.config.user_simulator_config, scorer.judge)
        try:
            with abandoned_agent_threads() as abandoned:
                conversation = await asyncio.wait_for(self._converse(case, eval_set_id, roots, user),
                                                      self.timeout_s)
        except asyncio.TimeoutError:
            still_running = "; the agent was still running and its thread was abandoned" if abandoned else ""
            return error_result(case, f"timed out after {self.timeout_s:g} s{still_running}",
                                time.perf_counter() - started, error_type="TimeoutError")
        except UserSimulatorError as exc:
            return error_result(case, str(exc), time.perf_counter() - started,
                                error_type=type(exc.__cause__ or exc).__name__)
        except Exception as exc:
            failure = AgentFailure.of(exc)
            return error_result(case, f"the agent raised {failure.message}", time.perf_counter() - started,
                                error_type=failure.error_type, traceback=failure.traceback)
        if isinstance(user, SimulatedUser):
            return await scorer.score_simulated(case, conversation.turns, ended_by=conversation.ended_by,
                                                duration_seconds=time.perf_counter() - started)
        return await scorer.score_case(case, conversation.turns, duration_seconds=time.perf_counter() - started)

    async def aevaluate(
        self,
        eval_set: EvalSet,
        *,
        done: Mapping[str, EvalCaseResult] | None = None,
        sinks: Sequence[EvaluationSink] = (),
    ) -> EvalReport:
        """Run and score every selected case; the report of the run.

        Cases in ``done`` (results of an earlier, interrupted run) are not run again. Each
        new case result goes to every sink as soon as it is scored, and the report to those
        with ``finish(report)`` at the end (a sink that raises is logged and left out, never
        the run); the sinks are flushed, not shut down (they are the caller's).
        """
        started = time.perf_counter()
        done = dict(done or {})
        gate = asyncio.Semaphore(self.concurrency)
        config = self.config if self._config_given else EvalConfig.default_for(eval_set)
        scorer = Scorer(config, judge=self.judge, criterion_timeout_s=self.criterion_timeout_s)
        exports = ([TraceExport(capture_for(self._provider).provider, eval_set_id=eval_set.eval_set_id,
                                run_id=self.run_id)]
                   if self.export_results else [])
        results_stage = SinkGroup([*sinks, *exports])

        async def one_run(case: EvalCase) -> EvalCaseResult:
            async with gate:
                return await self._run_case(case, eval_set.eval_set_id, scorer)

        async def all_runs(case: EvalCase) -> EvalCaseResult:
            if case.eval_id in done:
                return done[case.eval_id]
            runs = await asyncio.gather(*(one_run(case) for _ in range(self.num_runs)))
            result = aggregate_runs(runs)
            results_stage.submit(result)
            return result

        routing = routed_to(self._provider) if self._provider is not None else nullcontext()
        with routing:  # our decorators' spans go where the turns are captured
            results = await asyncio.gather(*(all_runs(case) for case in self.selected(eval_set)))
        report = EvalReport.from_results(
            eval_set.eval_set_id, results, eval_set_name=eval_set.name or None,
            config_used=config.model_dump(mode="json"),
            duration_seconds=time.perf_counter() - started,
        )
        results_stage.finish(report)
        results_stage.force_flush()
        return report

    def evaluate(self, eval_set: EvalSet, *, sinks: Sequence[EvaluationSink] = ()) -> EvalReport:
        """:meth:`aevaluate` from synchronous code."""
        return run_sync(self.aevaluate(eval_set, sinks=sinks), "aevaluate")


async def aevaluate(
    eval_set: EvalSet,
    agent: Agent,
    config: EvalConfig | None = None,
    *,
    sinks: Sequence[EvaluationSink] = (),
    **options: Any,
) -> EvalReport:
    """Run ``agent`` over ``eval_set`` and score it; each result also goes to ``sinks``
    (options as for :class:`LiveRunner`)."""
    return await LiveRunner(agent, config, **options).aevaluate(eval_set, sinks=sinks)


def evaluate(
    eval_set: EvalSet,
    agent: Agent,
    config: EvalConfig | None = None,
    *,
    sinks: Sequence[EvaluationSink] = (),
    **options: Any,
) -> EvalReport:
    """Run ``agent`` over ``eval_set`` and score it; each result also goes to ``sinks``
    (options as for :class:`LiveRunner`)."""
    return LiveRunner(agent, config, **options).evaluate(eval_set, sinks=sinks)
