"""Acceptance: every run read from its ``*.otlp.json`` equals its ground truth.

Each run under the shared ``traces/generated/<producer>/`` was produced by real third-party
instrumentation, each of our own weather runs by our decorators; ``*.ground_truth.json`` records
what the agent really did, outside the trace.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel.traces import read_spans
from agenteval_otel.trajectory import StepType, Trajectory, build_trajectories
from tests.shared_data import SHARED_DATA, shared_params
from tests.weather_runs import RUNS

GENERATED = SHARED_DATA / "traces" / "generated"


def _shared_runs() -> Iterator[Any]:
    for truth in sorted(GENERATED.glob("*/*.ground_truth.json")):
        trace = truth.with_name(truth.name.replace(".ground_truth.json", ".otlp.json"))
        yield pytest.param(
            truth.relative_to(GENERATED), trace.relative_to(GENERATED), id=f"{truth.parent.name}/{trace.name}"
        )


def _truth(shared_data: Path, truth_path: Path) -> dict[str, Any]:
    return json.loads((shared_data / "traces" / "generated" / truth_path).read_text())


def _turns(truth: dict[str, Any]) -> list[dict[str, Any]]:
    return truth.get("turns", [truth])


def _trajectories(shared_data: Path, trace: Path) -> list[Trajectory]:
    return build_trajectories(read_spans(shared_data / "traces" / "generated" / trace), group="invocation")


def _assert_tool_calls(trajectory: Trajectory, expected: list[dict[str, Any]]) -> None:
    steps = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
    assert [s.name for s in steps] == [e["tool_name"] for e in expected]
    assert [s.args for s in steps] == [e["args"] for e in expected]


def _check_against_truth(trajectories: list[Trajectory], truth: dict[str, Any]) -> None:
    turns = _turns(truth)
    assert len(trajectories) == len(turns)
    for trajectory, turn in zip(trajectories, turns, strict=True):
        _assert_tool_calls(trajectory, turn["expected_tool_trajectory"])
        assert trajectory.final_response == turn["final_response"]
        assert trajectory.user_input == turn.get("user_prompt")
        if "node_steps" in turn:
            order = iter(trajectory.node_order())
            for parallel in turn["node_steps"]:
                assert sorted(next(order) for _ in parallel) == sorted(parallel)
            assert next(order, None) is None
        elif "node_order" in turn:
            assert trajectory.node_order() == turn["node_order"]
        if "branches" in turn:
            assert trajectory.branches() == [(b["condition"], b["taken"]) for b in turn["branches"]]


def _check_call_details(trajectories: list[Trajectory], truth: dict[str, Any]) -> int:
    """Checks every recorded tool call id, result and error; returns how many calls were checked."""
    checked = 0
    for trajectory, turn in zip(trajectories, _turns(truth), strict=True):
        details = turn.get("tool_calls_detail")
        if not details:
            continue
        steps = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
        assert len(steps) == len(details)
        for step, detail in zip(steps, details, strict=True):
            if "tool_call_id" in detail:
                assert step.call_id == detail["tool_call_id"]
            if "result" in detail:
                assert step.result == detail["result"]
            if "error" in detail:
                assert detail["error"].split(": ", 1)[1] in (step.error or "")
            checked += 1
    return checked


@pytest.mark.parametrize("run", list(RUNS))
def test_own_run_matches_ground_truth(weather_runs: Path, run: str) -> None:
    truth = json.loads((weather_runs / f"{run}.ground_truth.json").read_text())
    trajectories = build_trajectories(read_spans(weather_runs / f"{run}.otlp.json"), group="invocation")
    _check_against_truth(trajectories, truth)
    assert _check_call_details(trajectories, truth) == sum(
        len(turn["tool_calls_detail"]) for turn in _turns(truth))


@pytest.mark.parametrize(("truth_path", "trace_path"), shared_params(_shared_runs(), width=2))
def test_run_matches_ground_truth(shared_data: Path, truth_path: Path, trace_path: Path) -> None:
    _check_against_truth(_trajectories(shared_data, trace_path), _truth(shared_data, truth_path))


@pytest.mark.parametrize(("truth_path", "trace_path"), shared_params(_shared_runs(), width=2))
def test_tool_call_ids_and_results_match_where_recorded(
    shared_data: Path, truth_path: Path, trace_path: Path
) -> None:
    _check_call_details(_trajectories(shared_data, trace_path), _truth(shared_data, truth_path))


def test_own_runs_in_one_file_come_in_order(weather_runs: Path) -> None:
    trajectories = build_trajectories(read_spans(weather_runs / "all_runs.otlp.json"))
    truths = [json.loads((weather_runs / f"{run}.ground_truth.json").read_text()) for run in list(RUNS)[:3]]
    assert [t.final_response for t in trajectories] == [truth["final_response"] for truth in truths]
    assert [[c.name for c in t.tool_calls()] for t in trajectories] == [
        [c["tool_name"] for c in truth["expected_tool_trajectory"]] for truth in truths
    ]


def test_own_conversation_joins_its_traces(weather_runs: Path) -> None:
    truth = json.loads((weather_runs / "run4_multi_turn.ground_truth.json").read_text())
    (conversation,) = build_trajectories(read_spans(weather_runs / "run4_multi_turn.otlp.json"),
                                         group="conversation")
    assert len(conversation.trace_ids) == 2 and conversation.conversation_id == "weather-thread-1"
    assert [t.user_input for t in conversation.turns] == [turn["user_prompt"] for turn in truth["turns"]]
    assert conversation.final_response == truth["turns"][-1]["final_response"]
    assert conversation.messages[0].role == "user" and conversation.messages[-1].role == "assistant"


def test_own_token_usage_sums_the_model_calls(weather_runs: Path) -> None:
    (trajectory,) = build_trajectories(read_spans(weather_runs / "run1_sequential_two_tools.otlp.json"))
    assert (trajectory.usage.input_tokens, trajectory.usage.output_tokens) == (60 + 70 + 80, 10 + 10 + 16)
    assert trajectory.duration_s is not None and trajectory.duration_s > 0


def test_one_file_with_four_runs_gives_them_in_order(shared_data: Path) -> None:
    folder = shared_data / "traces" / "generated" / "pydantic_ai"
    trajectories = build_trajectories(read_spans(folder / "all_runs.otlp.json"))
    truths = [json.loads(p.read_text()) for p in sorted(folder.glob("run*.ground_truth.json"))]
    assert [t.final_response for t in trajectories] == [truth["final_response"] for truth in truths]
    assert [[c.name for c in t.tool_calls()] for t in trajectories] == [
        [c["tool_name"] for c in truth["expected_tool_trajectory"]] for truth in truths
    ]


def test_multi_turn_conversation_joins_its_traces(shared_data: Path) -> None:
    path = shared_data / "traces" / "generated" / "google_adk_semconv_content" / "run3_multi_turn.otlp.json"
    truth = json.loads(path.with_name("run3_multi_turn.ground_truth.json").read_text())
    (conversation,) = build_trajectories(read_spans(path), group="conversation")
    assert len(conversation.trace_ids) == 2
    assert [t.user_input for t in conversation.turns] == [turn["user_prompt"] for turn in truth["turns"]]
    assert conversation.final_response == truth["turns"][-1]["final_response"]
    expected = [c["tool_name"] for turn in truth["turns"] for c in turn["expected_tool_trajectory"]]
    assert [c.name for c in conversation.tool_calls()] == expected
    assert conversation.messages[0].role == "user" and conversation.messages[-1].role == "assistant"


def test_token_usage_sums_the_model_calls(shared_data: Path) -> None:
    path = shared_data / "traces" / "generated" / "otel_v2_latest" / "run1_sequential_two_tools.otlp.json"
    (trajectory,) = build_trajectories(read_spans(path))
    assert (trajectory.usage.input_tokens, trajectory.usage.output_tokens) == (60 + 70 + 80, 36)
    assert trajectory.duration_s is not None and trajectory.duration_s > 0
