"""Acceptance on our own corpus: runs of one weather agent traced by third-party instrumentation
as it really emits them (``tests/data/corpus/<producer>/``, each with the generator script and
pinned versions), read to the ground truth the program recorded outside the trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel.traces.files import read_trajectories
from agenteval_otel.trajectory import StepType, Trajectory

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
RUNS = sorted(CORPUS.glob("*/*.ground_truth.json"))
NAMES_ONLY = {
    "autogen_builtin": "AutoGen's built-in tracing records tool names and call ids, no arguments, results, "
                       "model calls, user input or final answer",
}
"""Producers that record no content: their runs read to the tool names, nothing is made up."""
UNRECORDED = {
    "openai_agents_openinference/run4_failing_tool": "the SDK's default failure handler redacts the exception: "
                                                     "the trace has only a fixed text and a status message",
    "vercel_ai_sdk4/run4_failing_tool": "AI SDK 4 ends a call when a tool throws, so the agent's book tool returns "
                                        "the error text as its result: the trace has that result, no error",
    "logfire_openai_agents/run4_failing_tool": "the SDK's default failure handler redacts the exception: the "
                                               "trace has only its fixed texts and an error status",
}
"""Runs whose trace does not hold what a detail of the ground truth says: that detail is not checked."""


def _files(truth: Path) -> list[Path]:
    stem = truth.name.removesuffix(".ground_truth.json")
    return sorted(truth.parent.glob(f"{stem}.otlp.json*")) + sorted(truth.parent.glob(f"{stem}.logs.json"))


def _turns(truth: dict[str, Any]) -> list[dict[str, Any]]:
    return truth.get("turns", [truth])


def _tool_calls(trajectory: Trajectory) -> list[tuple[str, dict[str, Any]]]:
    return [(s.name, s.args) for s in trajectory.steps if s.step_type is StepType.TOOL]


@pytest.mark.parametrize("truth_path", RUNS, ids=[f"{p.parent.name}/{p.name.split('.')[0]}" for p in RUNS])
def test_run_reads_to_its_ground_truth(truth_path: Path) -> None:
    truth = json.loads(truth_path.read_text())
    trajectories = read_trajectories(_files(truth_path)).trajectories
    turns = _turns(truth)
    assert len(trajectories) == len(turns)
    for trajectory, turn in zip(trajectories, turns, strict=True):
        expected = [(c["tool_name"], c["args"]) for c in turn["expected_tool_trajectory"]]
        if truth_path.parent.name in NAMES_ONLY:
            assert _tool_calls(trajectory) == [(name, {}) for name, _ in expected]
            assert (trajectory.user_input, trajectory.final_response) == (None, None)
            continue
        assert _tool_calls(trajectory) == expected
        assert trajectory.final_response == turn["final_response"]
        assert trajectory.user_input == turn["user_prompt"]
        _assert_details(trajectory, turn, f"{truth_path.parent.name}/{truth_path.name.split('.')[0]}")
        _assert_course(trajectory, turn)


def _assert_course(trajectory: Trajectory, turn: dict[str, Any]) -> None:
    """A graph's nodes, superstep by superstep (in any order within one), and the branches its
    conditional edges took, where the program recorded them."""
    if "node_steps" in turn:
        order = iter(trajectory.node_order())
        for parallel in turn["node_steps"]:
            assert sorted(next(order) for _ in parallel) == sorted(parallel)
        assert next(order, None) is None
    if "branches" in turn:
        assert trajectory.branches() == [(b["condition"], b["taken"]) for b in turn["branches"]]


def _assert_details(trajectory: Trajectory, turn: dict[str, Any], run: str) -> None:
    """Every tool call's id (where the trace has ids), result and error, as the program recorded them."""
    steps = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
    details = turn.get("tool_calls_detail", [])
    assert len(steps) == len(details)
    for step, detail in zip(steps, details, strict=True):
        if step.call_id is not None and "tool_call_id" in detail:
            assert step.call_id == detail["tool_call_id"]
        if run in UNRECORDED:
            continue
        if "error" in detail:
            assert step.error is not None and detail["error"].split(": ", 1)[-1] in step.error
        else:
            assert (step.result, step.error) == (detail["result"], None)


def test_the_corpus_is_there() -> None:
    assert len(RUNS) >= 4


@pytest.mark.parametrize("producer", ["strands_builtin", "langchain_openllmetry"])
def test_tool_results_are_unwrapped_to_what_the_tool_returned(producer: str) -> None:
    truth = json.loads((CORPUS / producer / "run1_sequential.ground_truth.json").read_text())
    (trajectory,) = read_trajectories(_files(CORPUS / producer / "run1_sequential.ground_truth.json")).trajectories
    tools = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
    assert [(s.result, s.call_id) for s in tools] == [
        (c["result"], c["tool_call_id"]) for c in truth["tool_calls_detail"]
    ]


def test_a_session_id_joins_genai_turns_into_one_conversation() -> None:
    truth_path = CORPUS / "strands_builtin" / "run3_multi_turn.ground_truth.json"
    (conversation,) = read_trajectories(_files(truth_path), group="conversation").trajectories
    assert conversation.conversation_id == "corpus-run3_multi_turn"
    assert len(conversation.turns) == 2
