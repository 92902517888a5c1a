"""Model calls traced one per trace (LiteLLM's callback) joined into their turns."""

from __future__ import annotations

from pathlib import Path

from agenteval_otel.traces import read_spans
from agenteval_otel.trajectory import StepType, build_trajectories
from agenteval_otel.trajectory.chains import ModelCallChains

LITELLM = Path(__file__).resolve().parents[1] / "data" / "corpus" / "litellm_otel"


def test_a_turn_of_three_model_call_traces_is_one_trajectory() -> None:
    spans = list(read_spans(LITELLM / "run1_sequential.otlp.json"))
    assert len(build_trajectories(spans, group="trace")) == 3
    (turn,) = build_trajectories(spans)
    assert len(turn.trace_ids) == 3
    assert [(s.name, s.call_id) for s in turn.steps if s.step_type is StepType.TOOL] == [
        ("search_flights", "call_1"), ("book", "call_3")]
    assert turn.usage.input_tokens == sum(t.usage.input_tokens for t in build_trajectories(spans, group="trace"))


def test_a_new_user_message_starts_a_new_turn() -> None:
    turns = build_trajectories(read_spans(LITELLM / "run3_multi_turn.otlp.json"))
    assert [t.user_input for t in turns] == [
        "Which flights go from Zürich to São Paulo on 2026-12-01 or 2026-12-03?", "Book the one on 2026-12-03, please."]


def test_a_failure_reported_to_the_model_is_the_calls_error() -> None:
    (turn,) = build_trajectories(read_spans(LITELLM / "run4_failing_tool.otlp.json"))
    failed, *rest = [s for s in turn.steps if s.step_type is StepType.TOOL]
    assert (failed.name, failed.result, failed.error) == ("book", None, "Error: unknown flight: LX99")
    assert [(s.name, s.error) for s in rest] == [("search_flights", None), ("book", None)]


def test_calls_held_for_a_continuation_are_bounded() -> None:
    calls = build_trajectories(read_spans(LITELLM / "run2_parallel.otlp.json"), group="trace")
    chains = ModelCallChains(max_open=0)
    let_go = [t for call in calls for t in chains.add(call)]
    assert [t.trace_id for t in let_go] == [t.trace_id for t in calls] and chains.flush() == []
