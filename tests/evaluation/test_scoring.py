"""The scorer: the user's plain criteria run in daemon threads, async ones on the event loop,
all concurrently, each past its timeout an error; results in config order."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agenteval_otel import CriterionConfig, EvalCase, EvalConfig, EvalSetBuilder, Score, criterion
from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.evaluation._scoring import Scorer, invocation_key
from agenteval_otel.results._results import EvalCaseResult
from agenteval_otel.trajectory import Trajectory
from tests.conftest import REPO_ROOT

_THREADS: list[threading.Thread] = []


@criterion("records_its_thread_for_scoring_test")
def _records_thread(ctx: CriterionContext) -> float:
    _THREADS.append(threading.current_thread())
    return 1.0


@criterion("sleeps_for_scoring_test")
async def _sleeps(ctx: CriterionContext) -> float:
    await asyncio.sleep(float(ctx.config.params["seconds"]))
    return 0.5


CONFIG = EvalConfig(criteria={
    "records_its_thread_for_scoring_test": CriterionConfig(),
    "sleeps_for_scoring_test": CriterionConfig(threshold=0.4, params={"seconds": 0.2}),
    "response_match": CriterionConfig.response(0.7),
})


def _score(case: EvalCase, turns: list[Trajectory], timeout_s: float | None = None) -> tuple[EvalCaseResult, object]:
    async def scored() -> tuple[EvalCaseResult, object]:
        scorer = Scorer(CONFIG, criterion_timeout_s=timeout_s)
        return await scorer.score_case(case, turns), asyncio.current_task()

    _THREADS.clear()
    return asyncio.run(scored())


def test_a_plain_criterion_of_the_user_runs_in_a_daemon_thread_of_its_own() -> None:
    result, _ = _score(EvalCase.single_turn("q", "Sunny.", eval_id="s"), [Trajectory(final_response="Sunny.")])
    (thread,) = _THREADS
    assert thread is not threading.main_thread() and thread.daemon
    assert [(r.criterion, r.passed) for r in result.criterion_results] == [
        ("records_its_thread_for_scoring_test", True), ("sleeps_for_scoring_test", True), ("response_match", True)]


def test_async_criteria_of_all_turns_run_together() -> None:
    case = EvalCase.multi_turn([("q1", "Sunny."), ("q2", "Sunny."), ("q3", "Sunny.")], eval_id="m")
    started = time.perf_counter()
    result, _ = _score(case, [Trajectory(final_response="Sunny.")] * 3)
    assert time.perf_counter() - started < 0.5  # three turns of 0.2 s each, at once
    assert len(_THREADS) == 3 and result.passed


@pytest.mark.promise(12, 17)
def test_an_async_criterion_past_its_timeout_is_an_error() -> None:
    result, _ = _score(EvalCase.single_turn("q", "Sunny.", eval_id="t"), [Trajectory(final_response="Sunny.")],
                       timeout_s=0.05)
    slept = result.criterion_results[1]
    assert (slept.criterion, slept.error_type) == ("sleeps_for_scoring_test", "TimeoutError")
    assert result.status == "errored" and result.criterion_results[2].passed


@criterion("sleeps_in_sync_code_for_scoring_test")
def _sleeps_in_sync_code(ctx: CriterionContext) -> float:
    time.sleep(float(ctx.config.params["seconds"]))
    return 1.0


@criterion("also_sleeps_in_sync_code_for_scoring_test")
def _also_sleeps_in_sync_code(ctx: CriterionContext) -> float:
    time.sleep(float(ctx.config.params["seconds"]))
    return 1.0


@criterion("measures_the_event_loop_for_scoring_test")
async def _measures_the_loop(ctx: CriterionContext) -> Score:
    """How late the event loop wakes this criterion up, at most, over five 50 ms sleeps."""
    late = 0.0
    for _ in range(5):
        started = time.perf_counter()
        await asyncio.sleep(0.05)
        late = max(late, time.perf_counter() - started - 0.05)
    return Score(1.0, details={"late_s": late})


@pytest.mark.promise(17)
def test_hung_sync_criteria_are_given_up_on_time_and_never_block_the_event_loop() -> None:
    sleep = CriterionConfig(params={"seconds": 5})
    config = EvalConfig(criteria={"sleeps_in_sync_code_for_scoring_test": sleep,
                                  "also_sleeps_in_sync_code_for_scoring_test": sleep,
                                  "measures_the_event_loop_for_scoring_test": CriterionConfig()})
    cases = [EvalCase.single_turn("q", "Sunny.", eval_id=f"case-{i}") for i in range(2)]

    async def scored() -> list[EvalCaseResult]:
        scorer = Scorer(config, criterion_timeout_s=0.5)
        return list(await asyncio.gather(*(scorer.score_case(case, [Trajectory(final_response="Sunny.")])
                                           for case in cases)))

    started = time.perf_counter()
    results = asyncio.run(scored())
    took = time.perf_counter() - started
    assert took < 1.5  # not 4 x 5 s in turn, nor 5 s for the slowest
    for result in results:
        slow_a, slow_b, measured = result.criterion_results
        for slow in (slow_a, slow_b):
            assert (slow.error or "").endswith(f"criterion {slow.criterion!r} did not finish within 0.5 s; it was "
                                               "still running and its thread was abandoned")
            assert slow.error_type == "TimeoutError"
        assert measured.passed and measured.details["late_s"] < 0.1  # the loop went on meanwhile


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


SLEEPY_CRITERIA = '''
import time

from agenteval_otel import criterion


@criterion("sleepy_for_cli_test", reference_free=True)
def sleepy(ctx):
    time.sleep(30)
    return 1.0
'''


@pytest.mark.promise(17)
@pytest.mark.parametrize("command", ["run", "eval"])
def test_the_cli_timeout_bounds_a_hung_sync_criterion(command: str, tmp_path: Path) -> None:
    (tmp_path / "sleepy.py").write_text(SLEEPY_CRITERIA)
    (tmp_path / "agent.py").write_text("def agent(query: str) -> str:\n    return 'Sunny.'\n")
    (tmp_path / "config.json").write_text('{"criteria": {"sleepy_for_cli_test": {}}}')
    EvalSetBuilder.quick(("q", "Sunny.")).save(tmp_path / "one.evalset.json")
    trace = REPO_ROOT / "tests" / "data" / "corpus" / "crewai_openinference" / "run1_sequential.otlp.json"
    inputs = ["one.evalset.json", "--agent", "agent.py:agent"] if command == "run" else ["--traces", str(trace)]
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "agenteval_otel.cli", command, *inputs, "--config", "config.json", "--criteria-module",
         "sleepy.py", "--timeout", "0.5", "--report", "report.json", "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    took = time.perf_counter() - started
    assert proc.returncode == 1, proc.stderr
    assert took < 10  # not 30 s
    (result,) = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["results"]
    (sleepy,) = result["criterion_results"]
    assert sleepy["error_type"] == "TimeoutError" and "did not finish within 0.5 s" in sleepy["error"]
