"""Evaluation spans and records (``agenteval.evaluation``) are never evaluated themselves: they are
no steps, and a trace holding only them yields no trajectory, live or read from files."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider

from agenteval_otel.results._export import TraceExport
from agenteval_otel.results._results import CriterionResult, EvalCaseResult, InvocationResult
from agenteval_otel.traces.files import read_trajectories
from agenteval_otel.tracing import agent, logs_file_for, providers_for, routed_to, tool
from agenteval_otel.trajectory.processor import TrajectoryProcessor
from agenteval_otel.trajectory.trajectory import Trajectory

VERDICT = CriterionResult(criterion="max_tool_calls", score=1.0, passed=True, threshold=1.0)


def _verdicts_for(trace_id: str, span_id: str) -> EvalCaseResult:
    return EvalCaseResult(eval_id="run", passed=True, invocation_results=[
        InvocationResult(invocation_id="run", trace_id=trace_id, span_id=span_id, criterion_results=[VERDICT])])


@tool
def get_weather(city: str) -> str:
    return "sunny"


@agent(name="weather")
def weather(query: str) -> str:
    return f"It is {get_weather('Paris')}."


def test_live_evaluation_spans_are_no_steps_and_make_no_trajectory() -> None:
    delivered: list[Trajectory] = []
    provider = TracerProvider()
    processor = TrajectoryProcessor(delivered.append, group="trace", skip_empty=False)
    provider.add_span_processor(processor)
    with routed_to(provider):
        weather("weather in Paris?")
    assert processor.force_flush(5000)
    [run] = delivered
    assert run.trace_id is not None and run.span_id is not None
    export = TraceExport(provider, write="both")
    export.submit(_verdicts_for(run.trace_id, run.span_id))  # a root of a trace of its own, linked
    export.submit(_verdicts_for("1" * 32, "2" * 16))  # a trace holding nothing else
    assert processor.force_flush(5000)
    processor.shutdown(5000)
    assert export.exported == 2
    assert delivered == [run]
    assert processor.dropped_traces == 0


def test_read_from_files_evaluation_spans_and_records_change_no_trajectory(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    handle = providers_for(traces)
    with routed_to(handle.provider):
        weather("weather in Paris?")
    assert handle.shutdown(timeout=5)
    [before] = read_trajectories([traces]).trajectories
    assert before.trace_id is not None and before.span_id is not None

    results = tmp_path / "results.jsonl"
    for target in (traces, results):  # appended to the traces themselves, and to a file of their own
        export = TraceExport.to_target(target, write="both")
        export.submit(_verdicts_for(before.trace_id, before.span_id))
        assert export.shutdown(timeout=5)
    both = read_trajectories([traces, logs_file_for(traces)]).trajectories
    assert [t.model_dump() for t in both] == [before.model_dump()]
    assert read_trajectories([results, logs_file_for(results)]).trajectories == []
    assert [t.model_dump() for t in read_trajectories([traces, results]).trajectories] == [before.model_dump()]
