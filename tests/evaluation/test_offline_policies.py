"""Stored traces scored with policies: every invocation with no eval set, and the invocations no
case matched beside an eval set's cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval_otel import EvalCase, EvalConfig, EvalSet, evaluate_traces
from agenteval_otel.errors import ConfigError
from agenteval_otel.evaluation._offline import aevaluate_traces
from agenteval_otel.evaluation._sync import run_sync
from agenteval_otel.results._results import EvalCaseResult
from agenteval_otel.results._run_file import RunFile
from agenteval_otel.results._sinks import CallbackSink
from agenteval_otel.traces import read_spans
from agenteval_otel.trajectory import TrajectoryStep
from agenteval_otel.trajectory.trajectory import Trajectory
from tests.conftest import REPO_ROOT
from tests.ground_truth import ground_truth_eval_set

POLICIES = EvalConfig.load(REPO_ROOT / "examples" / "production_policies.json")
FAILED_TOOL = "get_weather failed at step 1: ValueError: unknown city: Atlantis"


def _files(folder: Path) -> list[Path]:
    """Each run once (``all_runs.otlp.json`` repeats three of them)."""
    return sorted(p for p in folder.glob("*.otlp.json") if p.name != "all_runs.otlp.json")


def _problems(results: list[EvalCaseResult]) -> list[str]:
    return [line for result in results for line in result.problems()]


def test_every_invocation_is_scored_with_no_eval_set(weather_runs: Path) -> None:
    seen: list[EvalCaseResult] = []
    report = evaluate_traces(None, _files(weather_runs), POLICIES, sinks=[CallbackSink(seen.append)])
    results = list(report.results)
    assert len(results) == 7  # six runs, one of them a conversation of two turns
    assert report.eval_set_id == "traces" and report.eval_set_name is None
    assert [r.eval_id for r in seen] == [r.eval_id for r in results]
    for result in results:
        assert result.eval_id == f"{result.trace_id}:{result.span_id}"
        assert result.invocation_results[0].span_id == result.span_id
        assert [r.criterion for r in result.criterion_results] == list(POLICIES.criteria)
    failed = [r for r in results if r.status != "passed"]
    assert len(failed) == 1 and _problems(failed) == [
        f"{failed[0].eval_id}: no_tool_errors scored 0.00 < threshold 1.00: {FAILED_TOOL}"]
    assert (report.summary.total_cases, report.summary.passed_cases) == (7, 6)
    assert report.summary.criterion_stats["no_tool_errors"].passed == 6


def test_an_invocation_read_twice_is_one_result(weather_runs: Path) -> None:
    once = evaluate_traces(None, _files(weather_runs), POLICIES)
    twice = evaluate_traces(None, sorted(weather_runs.glob("*.otlp.json")), POLICIES, source_id="weather")
    assert [r.eval_id for r in twice.results] == [r.eval_id for r in once.results]
    assert twice.eval_set_id == "weather" and twice.summary.total_cases == 7


def test_spans_and_trajectories_are_sources_too(weather_runs: Path) -> None:
    spans = [span for file in _files(weather_runs) for span in read_spans(file)]
    assert evaluate_traces(None, spans, POLICIES).summary.total_cases == 7
    no_ids = [Trajectory(steps=[TrajectoryStep.tool("delete_database")], final_response="done"),
              Trajectory(final_response="hi")]
    config = EvalConfig(criteria={"forbidden_tools": {"params": {"tools": ["delete_database"]}}})
    report = evaluate_traces(None, no_ids, config)
    assert [(r.eval_id, r.status) for r in report.results] == [("invocation", "failed"), ("invocation#2", "passed")]
    assert "forbidden tool delete_database called at step 1" in report.results[0].problems()[0]


def test_without_a_criterion_that_needs_no_reference_it_is_a_clear_error(weather_runs: Path) -> None:
    with pytest.raises(ConfigError, match="needs a config naming criteria that need no reference: .*max_tool_calls"):
        evaluate_traces(None, _files(weather_runs))
    reference_based = EvalConfig(criteria={"trajectory_match": 0.8, "response_match": 0.7})
    with pytest.raises(ConfigError, match=r"no criterion of the config \(trajectory_match, response_match\)"):
        evaluate_traces(None, _files(weather_runs), reference_based)


def test_with_an_eval_set_unmatched_invocations_are_scored_after_the_cases(weather_runs: Path) -> None:
    eval_set = ground_truth_eval_set(weather_runs)
    kept = {"run1_sequential_two_tools", "run4_multi_turn"}
    eval_set.eval_cases = [case for case in eval_set.eval_cases if case.eval_id in kept]
    config = EvalConfig.model_validate({"criteria": {"trajectory_match": 1.0, **POLICIES.model_dump()["criteria"]}})
    report = evaluate_traces(eval_set, _files(weather_runs), config)
    results = list(report.results)
    assert [r.eval_id for r in results[:2]] == ["run1_sequential_two_tools", "run4_multi_turn"]
    cases, extras = results[:2], results[2:]
    assert all(r.status == "passed" for r in cases)
    assert {r.criterion for r in cases[0].criterion_results} == set(config.criteria)
    assert len(extras) == 4  # runs 2, 3, 5 and 6; both turns of run 4 belong to its case
    for extra in extras:
        assert extra.eval_id == f"{extra.trace_id}:{extra.span_id}"
        assert {r.criterion for r in extra.criterion_results} == set(POLICIES.criteria)
    assert _problems(extras) == [f"{extras[-1].eval_id}: no_tool_errors scored 0.00 < threshold 1.00: {FAILED_TOOL}"]
    assert report.summary.total_cases == 6


def test_with_an_eval_set_and_no_policy_nothing_changes(weather_runs: Path) -> None:
    eval_set = ground_truth_eval_set(weather_runs)
    eval_set.eval_cases = eval_set.eval_cases[:2]
    report = evaluate_traces(eval_set, _files(weather_runs))
    assert [r.eval_id for r in report.results] == [case.eval_id for case in eval_set.eval_cases]


def test_a_held_turn_of_an_unmatched_conversation_is_scored_at_the_end() -> None:
    """With a multi-turn case, unmatched turns with a conversation id wait for a later turn that
    could join them to the case; at the end of the stream they are scored on their own."""
    case = EvalCase.multi_turn([("Hi", "Hello"), ("Bye", "Goodbye")], eval_id="chat")
    eval_set = EvalSet(eval_set_id="s", eval_cases=[case])
    turns = [Trajectory(conversation_id="c1", user_input="Hi", final_response="Hello", trace_id="t1", span_id="a"),
             Trajectory(conversation_id="other", user_input="Weather?", trace_id="t9", span_id="b", final_response=None),
             Trajectory(conversation_id="c1", user_input="Bye", final_response="Goodbye", trace_id="t2", span_id="c")]
    config = EvalConfig(criteria={"response_match": 0.7, "final_response_present": {}})
    report = evaluate_traces(eval_set, turns, config)
    assert [(r.eval_id, r.status) for r in report.results] == [("chat", "passed"), ("t9:b", "failed")]


@pytest.mark.promise(14)
def test_a_resumed_run_scores_only_the_invocations_left(weather_runs: Path, tmp_path: Path) -> None:
    first = evaluate_traces(None, _files(weather_runs)[:2], POLICIES)
    path = tmp_path / "run.jsonl"
    with RunFile(path, "traces", POLICIES) as run_file:
        run_file.open(resume=False)
        for result in first.results:
            run_file.submit(result)
    with RunFile(path, "traces", POLICIES) as run_file:
        done = run_file.open(resume=True)
        scored: list[EvalCaseResult] = []
        report = run_sync(aevaluate_traces(None, _files(weather_runs), POLICIES, done=done,
                                           sinks=[CallbackSink(scored.append)]), "test")
    assert {r.eval_id for r in scored}.isdisjoint(done)
    assert len(scored) == 7 - len(done) and report.summary.total_cases == 7
    assert [r.eval_id for r in report.results][:len(done)] == list(done)


@pytest.mark.promise(14)
def test_a_resumed_run_does_not_score_the_runs_of_done_cases_as_invocations(weather_runs: Path) -> None:
    eval_set = ground_truth_eval_set(weather_runs)
    eval_set.eval_cases = [case for case in eval_set.eval_cases
                           if case.eval_id in {"run1_sequential_two_tools", "run4_multi_turn"}]
    config = EvalConfig.model_validate({"criteria": {"trajectory_match": 1.0, **POLICIES.model_dump()["criteria"]}})
    first = evaluate_traces(eval_set, _files(weather_runs), config)
    done = {r.eval_id: r for r in first.results if r.eval_id == "run4_multi_turn"}  # both turns scored
    scored: list[EvalCaseResult] = []
    report = run_sync(aevaluate_traces(eval_set, _files(weather_runs), config, done=done,
                                       sinks=[CallbackSink(scored.append)]), "test")
    assert [r.eval_id for r in scored][0] == "run1_sequential_two_tools"
    assert len(scored) == 5  # the other case and the four invocations no case matched, not run 4's turns
    assert [r.eval_id for r in report.results] == [r.eval_id for r in first.results]


def test_the_example_policies_score_every_trace_of_the_openai_example(tmp_path: Path) -> None:
    """Tool calls read from the model's messages have no duration: the per-tool latency budget
    does not apply to them, and the rest of the policies score."""
    import os
    import subprocess
    import sys

    pytest.importorskip("agenteval_instrumentation_openai")
    sys.path.insert(0, str(REPO_ROOT / "examples"))
    try:
        from openai_server import serve
    finally:
        sys.path.remove(str(REPO_ROOT / "examples"))
    traces = tmp_path / "agenteval-traces.jsonl"
    with serve() as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "local",
               "AGENTEVAL_TRACES_FILE": str(traces)}
        env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
        subprocess.run([sys.executable, str(REPO_ROOT / "examples" / "openai_agent.py"), "Weather in Paris?"],
                       env=env, cwd=tmp_path, check=True, capture_output=True, timeout=60)
    report = evaluate_traces(None, traces, POLICIES)
    (result,) = report.results
    assert _problems([result]) == [] and result.status == "passed"
    (latency,) = [r for r in result.criterion_results if r.criterion == "latency_budget"]
    assert "per-tool budget not applicable to get_weather at step" in latency.reason


def _tasks_started(config: EvalConfig, runs: list[Trajectory]) -> tuple[int, int]:
    """The tasks an offline run over ``runs`` starts, and the results it reports."""
    import asyncio

    started = 0

    def counting(loop: asyncio.AbstractEventLoop, coro, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal started
        started += 1
        return asyncio.Task(coro, loop=loop, **kwargs)

    async def run() -> int:
        loop = asyncio.get_running_loop()
        loop.set_task_factory(counting)
        try:
            return len((await aevaluate_traces(None, runs, config)).results)
        finally:
            loop.set_task_factory(None)

    results = asyncio.run(run())
    return started, results


def test_policies_are_scored_in_place_and_judged_criteria_in_tasks() -> None:
    runs = [Trajectory(trace_id=f"{n:032x}", span_id=f"{n:016x}", steps=[TrajectoryStep.tool("search")] * n)
            for n in range(1, 31)]
    assert _tasks_started(POLICIES, runs) == (0, 30)  # no task per invocation
    judged = EvalConfig(criteria={**POLICIES.criteria, "safety": {}})
    tasks, results = _tasks_started(judged, runs)
    assert results == 30 and tasks >= 30  # a criterion that waits (the judge) keeps its task and bound
