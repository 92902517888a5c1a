"""``OnlineEvaluator`` inside a real SDK pipeline: our decorators' spans scored as their invocations
end, spans fed from a real third-party trace, sampling, bounds, failures and the shutdown deadline."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel import semconv as attr
from agenteval_otel.criteria import CriterionContext, EvalConfig, Score, criterion
from agenteval_otel.evalsets import EvalCase, EvalSet, SessionInput
from agenteval_otel.evaluation._online import OnlineEvaluator, trace_sampled
from agenteval_otel.results import CallbackSink, CriterionResult, EvalCaseResult
from agenteval_otel.traces.files import read_spans, read_trajectories
from agenteval_otel.tracing import agent, routed_to, tool
from agenteval_otel.trajectory import SpanRecord, Trajectory

RELEASE = threading.Event()
"""Lets ``online_blocked`` finish."""


@criterion("online_answered", default_threshold=1.0)
def online_answered(ctx: CriterionContext) -> Score:
    answered = bool(ctx.actual.final_response)
    return Score(1.0 if answered else 0.0, "a final response" if answered else "no final response")


@criterion("online_used_tools", default_threshold=1.0)
def online_used_tools(ctx: CriterionContext) -> bool:
    return bool(ctx.actual.tool_calls())


@criterion("online_raises")
def online_raises(ctx: CriterionContext) -> float:
    raise RuntimeError("the policy store is down")


@criterion("online_hangs")
async def online_hangs(ctx: CriterionContext) -> float:
    await asyncio.Event().wait()  # never set: a judge that never answers
    return 1.0


@criterion("online_slow_judge")
async def online_slow_judge(ctx: CriterionContext) -> float:
    await asyncio.sleep(0.2)
    return 1.0


@criterion("online_blocked")
async def online_blocked(ctx: CriterionContext) -> float:
    while not RELEASE.is_set():
        await asyncio.sleep(0.01)
    return 1.0


@tool
def get_weather(city: str) -> dict[str, Any]:
    return {"city": city, "temp_c": 18}


@agent(name="weather", conversation_id_arg="thread_id")
def weather_agent(question: str, thread_id: str | None = None) -> str:
    city = question.rstrip("?").rsplit(" ", 1)[-1]
    return f"It is {get_weather(city)['temp_c']} C in {city}."


def verdict(result: EvalCaseResult, name: str) -> CriterionResult | None:
    return next((r for r in result.criterion_results if r.criterion == name), None)


def config(*names: str) -> EvalConfig:
    return EvalConfig(criteria={name: {} for name in names})


class Pipeline:
    """A real ``TracerProvider`` with the evaluator and an in-memory exporter side by side."""

    def __init__(self, evaluator: OnlineEvaluator) -> None:
        self.evaluator = evaluator
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.provider.add_span_processor(evaluator)

    def run(self, question: str, thread_id: str | None = None) -> str:
        with routed_to(self.provider):
            return weather_agent(question, thread_id=thread_id)

    def agent_spans(self) -> list[tuple[str, str]]:
        """(trace id, span id) of every agent span, in the order they ended."""
        return [(format(s.context.trace_id, "032x"), format(s.context.span_id, "016x"))
                for s in self.exporter.get_finished_spans() if s.name.startswith("invoke_agent")]


@pytest.fixture
def results() -> list[EvalCaseResult]:
    return []


@pytest.fixture
def pipelines() -> Iterator[list[Pipeline]]:
    made: list[Pipeline] = []
    yield made
    for pipeline in made:
        pipeline.evaluator.shutdown(2000)
        pipeline.provider.shutdown()


@pytest.fixture
def pipeline_of(pipelines: list[Pipeline], results: list[EvalCaseResult]) -> Any:
    def make(*names: str, **options: Any) -> Pipeline:
        options.setdefault("sinks", [CallbackSink(results.append)])
        made = Pipeline(OnlineEvaluator(config(*names), **options))
        pipelines.append(made)
        return made

    return make


def wait_until(condition: Any, timeout_s: float = 3.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


def test_live_invocations_are_scored_under_their_root_span(pipeline_of: Any, results: list[EvalCaseResult]) -> None:
    pipeline = pipeline_of("online_answered", "online_used_tools")
    assert pipeline.run("Weather in Paris?") == "It is 18 C in Paris."
    assert pipeline.run("Weather in Oslo?") == "It is 18 C in Oslo."
    assert pipeline.evaluator.force_flush(5000)
    assert sorted((r.trace_id, r.span_id) for r in results) == sorted(pipeline.agent_spans())
    for result in results:
        assert result.passed and [c.criterion for c in result.criterion_results] == [
            "online_answered", "online_used_tools"]
        invocation = result.invocation_results[0]
        assert (invocation.trace_id, invocation.span_id) == (result.trace_id, result.span_id)
        assert invocation.actual_tool_calls[0].name == "get_weather"
    counters = pipeline.evaluator.counters
    assert (counters.received, counters.evaluated, counters.errored, counters.dropped) == (2, 2, 0, 0)
    assert counters.accounted


def test_sample_rate_zero_scores_nothing_and_counts_it(pipeline_of: Any, results: list[EvalCaseResult]) -> None:
    pipeline = pipeline_of("online_answered", sample_rate=0.0)
    for city in ("Paris", "Oslo", "Rome"):
        pipeline.run(f"Weather in {city}?")
    assert pipeline.evaluator.force_flush(5000)
    assert results == []
    counters = pipeline.evaluator.counters
    assert (counters.received, counters.sampled_out, counters.evaluated) == (3, 3, 0) and counters.accounted


def trajectories(count: int) -> list[Trajectory]:
    return [Trajectory(trace_id=f"{index:032x}", span_id=f"{index:016x}", user_input="Hi", final_response="Hello")
            for index in range(1, count + 1)]


def test_sampling_is_by_trace_id_globally_and_per_criterion(pipeline_of: Any, results: list[EvalCaseResult]) -> None:
    pipeline = pipeline_of("online_answered", "online_used_tools", sample_rate=0.5,
                           criterion_sample_rates={"online_used_tools": 0.3})
    runs = trajectories(200)
    assert all(pipeline.evaluator.submit(run) for run in runs)
    assert pipeline.evaluator.force_flush(5000)
    sampled = {t.trace_id for t in runs if trace_sampled(t.trace_id, 0.5)}
    assert {r.trace_id for r in results} == sampled and 60 < len(sampled) < 140
    with_tools = {r.trace_id for r in results if verdict(r, "online_used_tools") is not None}
    assert with_tools == {t for t in sampled if trace_sampled(t, 0.3, salt="online_used_tools")}
    assert 0 < len(with_tools) < len(sampled)
    assert all(verdict(r, "online_answered") is not None for r in results)
    counters = pipeline.evaluator.counters
    assert counters.sampled_out == 200 - len(sampled) and counters.evaluated == len(sampled)

    # another worker decides every trace the same way
    again: list[EvalCaseResult] = []
    other = pipeline_of("online_answered", "online_used_tools", sample_rate=0.5, sinks=[CallbackSink(again.append)],
                        criterion_sample_rates={"online_used_tools": 0.3})
    for run in runs:
        other.evaluator.submit(run)
    assert other.evaluator.force_flush(5000)
    assert {(r.trace_id, len(r.criterion_results)) for r in again} == {
        (r.trace_id, len(r.criterion_results)) for r in results}


def test_a_criterion_sampled_at_zero_never_runs(pipeline_of: Any, results: list[EvalCaseResult]) -> None:
    pipeline = pipeline_of("online_answered", "online_raises", criterion_sample_rates={"online_raises": 0.0})
    pipeline.run("Weather in Paris?")
    assert pipeline.evaluator.force_flush(5000)
    assert [[c.criterion for c in r.criterion_results] for r in results] == [["online_answered"]]


def test_bad_arguments_fail_at_construction() -> None:
    sinks = [CallbackSink(print)]
    with pytest.raises(ValueError, match="sample rates"):
        OnlineEvaluator(config("online_answered"), sinks=sinks, sample_rate=1.5)
    with pytest.raises(ValueError, match="does not enable"):
        OnlineEvaluator(config("online_answered"), sinks=sinks, criterion_sample_rates={"online_raises": 0.5})
    with pytest.raises(ValueError, match="no criterion"):
        OnlineEvaluator(EvalConfig(), sinks=sinks)


def test_a_full_queue_drops_and_counts_with_one_warning(
    pipeline_of: Any, results: list[EvalCaseResult], caplog: pytest.LogCaptureFixture
) -> None:
    RELEASE.clear()
    pipeline = pipeline_of("online_blocked", max_queue=2, concurrency=1)
    evaluator = pipeline.evaluator
    try:
        pipeline.run("Weather in Paris?")
        wait_until(lambda: evaluator.counters.in_progress == 1)
        with caplog.at_level(logging.WARNING, logger="agenteval_otel.evaluation._online"):
            started = time.perf_counter()
            for index in range(9):
                assert pipeline.run(f"Weather in City{index}?") == f"It is 18 C in City{index}."
            assert time.perf_counter() - started < 2.0  # the app never waited for the worker
            wait_until(lambda: evaluator.counters.received == 10)
        counters = evaluator.counters
        assert (counters.in_progress, counters.queued, counters.dropped) == (1, 2, 7) and counters.accounted
        assert len([r for r in caplog.records if "dropped" in r.getMessage()]) == 1
        # a receiver's batch is refused while the queue is full: the sender is told to retry
        span = SpanRecord(trace_id="12" * 16, span_id="34" * 8, parent_id=None, name="invoke_agent")
        assert evaluator.feed([span]) is False and evaluator.counters.refused_batches == 1
    finally:
        RELEASE.set()
    assert evaluator.force_flush(5000)
    counters = evaluator.counters
    assert (counters.evaluated, counters.dropped, len(results)) == (3, 7, 3) and counters.accounted


def test_a_raising_criterion_and_a_raising_sink_become_counted_errors(pipeline_of: Any) -> None:
    kept: list[EvalCaseResult] = []

    def broken(result: EvalCaseResult) -> None:
        raise OSError("the results store is down")

    pipeline = pipeline_of("online_answered", "online_raises", sinks=[CallbackSink(broken), CallbackSink(kept.append)])
    assert pipeline.run("Weather in Paris?") == "It is 18 C in Paris."  # the app's call is untouched
    assert pipeline.evaluator.force_flush(5000)
    [result] = kept
    assert result.status == "errored" and verdict(result, "online_answered").passed  # type: ignore[union-attr]
    failed = verdict(result, "online_raises")
    assert failed is not None and failed.error_type == "RuntimeError" and "policy store" in (failed.error or "")
    counters = pipeline.evaluator.counters
    assert (counters.errored, counters.evaluated, counters.sink_errors) == (1, 0, 1) and counters.accounted


def test_a_judge_past_its_timeout_gives_an_error_result(pipeline_of: Any, results: list[EvalCaseResult]) -> None:
    pipeline = pipeline_of("online_answered", "online_hangs", criterion_timeout_s=0.3)
    pipeline.run("Weather in Paris?")
    assert pipeline.evaluator.force_flush(5000)
    [result] = results
    hung = verdict(result, "online_hangs")
    assert hung is not None and hung.error_type == "TimeoutError"
    assert pipeline.evaluator.counters.errored == 1


def test_flush_and_shutdown_keep_their_deadline_with_a_hanging_judge(
    pipeline_of: Any, results: list[EvalCaseResult], caplog: pytest.LogCaptureFixture
) -> None:
    pipeline = pipeline_of("online_hangs")
    evaluator = pipeline.evaluator
    pipeline.run("Weather in Paris?")
    pipeline.run("Weather in Oslo?")
    started = time.monotonic()
    assert evaluator.force_flush(300) is False
    assert 0.25 < time.monotonic() - started < 1.0
    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="agenteval_otel.evaluation._online"):
        evaluator.shutdown(400)
    assert 0.35 < time.monotonic() - started < 1.2
    evaluator.shutdown(400)  # idempotent: at once
    assert time.monotonic() - started < 1.3
    counters = evaluator.counters
    assert (counters.received, counters.dropped, counters.evaluated) == (2, 2, 0) and counters.accounted
    assert len([r for r in caplog.records if r.getMessage().startswith("OnlineEvaluator: received=2")]) == 1
    # later work is dropped and counted, never raised
    assert pipeline.run("Weather in Rome?") == "It is 18 C in Rome."
    assert evaluator.submit(trajectories(1)[0]) is False
    assert evaluator.feed([]) is False
    assert evaluator.counters.dropped == 3 and results == []


def test_our_processor_never_raises_into_the_app(pipeline_of: Any) -> None:
    evaluator = pipeline_of("online_answered").evaluator
    evaluator.on_end("not a span")  # type: ignore[arg-type]
    assert evaluator.submit("not a trajectory") is False  # type: ignore[arg-type]
    assert evaluator.feed([object()]) is False  # type: ignore[list-item]


def test_a_registered_case_makes_reference_based_criteria_apply(
    pipeline_of: Any, results: list[EvalCaseResult]
) -> None:
    pipeline = pipeline_of("online_answered", "trajectory_match")
    pipeline.evaluator.register_case(EvalCase.single_turn(
        "Weather in Paris?", expected_tools=["get_weather"], eval_id="paris"))
    pipeline.run("Weather in Paris?")
    pipeline.run("Weather in Oslo?")
    assert pipeline.evaluator.force_flush(5000)
    by_input = {r.invocation_results[0].user_input: r for r in results}
    paris, oslo = by_input["Weather in Paris?"], by_input["Weather in Oslo?"]
    assert paris.eval_id == "paris" and verdict(paris, "trajectory_match") is not None
    assert paris.invocation_results[0].expected_tool_calls[0].name == "get_weather"
    assert verdict(oslo, "trajectory_match") is None and verdict(oslo, "online_answered") is not None


def test_a_case_of_the_eval_set_matches_by_conversation_id(pipeline_of: Any, results: list[EvalCaseResult]) -> None:
    case = EvalCase.single_turn("Anything new?", "It is 18 C in Lyon.", eval_id="thread-case",
                                session_input=SessionInput(thread_id="thread-7"))
    pipeline = pipeline_of("exact_match", eval_set=EvalSet(eval_set_id="live", eval_cases=[case]))
    pipeline.run("Weather in Lyon?", thread_id="thread-7")
    assert pipeline.evaluator.force_flush(5000)
    [result] = results
    assert result.eval_id == "thread-case" and result.passed and verdict(result, "exact_match") is not None


def test_fed_third_party_spans_are_scored_under_their_invocation(
    shared_data: Path, pipeline_of: Any, results: list[EvalCaseResult]
) -> None:
    path = shared_data / "traces" / "generated" / "openinference" / "run1_sequential_two_tools.otlp.json"
    records = list(read_spans(path))
    evaluator = pipeline_of("online_answered", "online_used_tools").evaluator
    # a receiver's batches; the last holds the root, listed before the spans under it (as in the file)
    assert records[0].parent_id is None
    assert evaluator.feed(records[1:3]) and evaluator.feed([records[0], *records[3:]])
    marked = SpanRecord(trace_id="ab" * 16, span_id="cd" * 8, parent_id=None, name="evaluation online_answered",
                        attributes={attr.EVALUATION_MARKER: True, "agenteval.step.type": "agent"})
    assert evaluator.feed([marked])  # our own evaluation spans are never evaluated
    assert evaluator.force_flush(5000)
    [expected] = read_trajectories([path]).trajectories
    [result] = results
    assert (result.trace_id, result.span_id) == (expected.trace_id, expected.span_id)
    assert expected.span_id in {r.span_id for r in records if r.parent_id is None}
    invocation = result.invocation_results[0]
    assert result.passed and invocation.user_input == expected.user_input
    assert invocation.actual_tool_calls == expected.tool_calls() and len(expected.tool_calls()) == 2
    counters = evaluator.counters
    assert (counters.received, counters.evaluated, counters.dropped_traces) == (1, 1, 0)


def test_feed_refuses_a_batch_past_its_bounds(pipeline_of: Any) -> None:
    evaluator = pipeline_of("online_answered", max_pending_spans=4).evaluator
    batch = [SpanRecord(trace_id="ef" * 16, span_id=f"{index:016x}", parent_id="1" * 16, name="step")
             for index in range(5)]
    assert evaluator.feed(batch) is False
    counters = evaluator.counters
    assert (counters.refused_batches, counters.dropped_spans) == (1, 5)
