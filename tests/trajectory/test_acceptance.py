"""Acceptance: every generated run read from its ``*.otlp.json`` equals its ground truth.

Each run under ``traces/generated/<producer>/`` was produced by real third-party
instrumentation; ``*.ground_truth.json`` records what the agent really did, outside the trace.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel.traces import read_spans
from agenteval_otel.trajectory import StepType, Trajectory, build_trajectories

GENERATED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "traces" / "generated"


def _runs() -> Iterator[Any]:
    truths = sorted(GENERATED.glob("*/*.ground_truth.json"))
    if not truths:  # the tests then fail through the shared_data fixture, or here
        yield pytest.param(None, None, id="no-generated-runs")
    for truth in truths:
        trace = truth.with_name(truth.name.replace(".ground_truth.json", ".otlp.json"))
        yield pytest.param(
            truth.relative_to(GENERATED), trace.relative_to(GENERATED), id=f"{truth.parent.name}/{trace.name}"
        )


def _truth(shared_data: Path, truth_path: Path | None) -> dict[str, Any]:
    if truth_path is None:
        pytest.fail(f"no generated runs under {shared_data / 'traces' / 'generated'}")
    return json.loads((shared_data / "traces" / "generated" / truth_path).read_text())


def _turns(truth: dict[str, Any]) -> list[dict[str, Any]]:
    return truth.get("turns", [truth])


def _trajectories(shared_data: Path, trace: Path) -> list[Trajectory]:
    return build_trajectories(read_spans(shared_data / "traces" / "generated" / trace), group="invocation")


def _assert_tool_calls(trajectory: Trajectory, expected: list[dict[str, Any]]) -> None:
    steps = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
    assert [s.name for s in steps] == [e["tool_name"] for e in expected]
    for step, call in zip(steps, expected, strict=True):
        if "raw_args" in step.metadata:
            # OpenInference records a one-key dict of a string as the bare string, and no tool
            # definition was in the trace to name the key: the value is what was captured.
            assert not step.args and [step.metadata["raw_args"]] == list(call["args"].values())
        else:
            assert step.args == call["args"]


@pytest.mark.parametrize(("truth_path", "trace_path"), list(_runs()))
def test_run_matches_ground_truth(shared_data: Path, truth_path: Path, trace_path: Path) -> None:
    truth = _truth(shared_data, truth_path)
    trajectories = _trajectories(shared_data, trace_path)
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


@pytest.mark.parametrize(("truth_path", "trace_path"), list(_runs()))
def test_tool_call_ids_and_results_match_where_recorded(
    shared_data: Path, truth_path: Path, trace_path: Path
) -> None:
    truth = _truth(shared_data, truth_path)
    for trajectory, turn in zip(_trajectories(shared_data, trace_path), _turns(truth), strict=True):
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
