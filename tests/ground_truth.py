"""Eval cases built from the ground truth recorded beside the shared generated traces."""

from __future__ import annotations

import json
from pathlib import Path

from agenteval_otel import EvalCase, EvalSet, ToolCall
from agenteval_otel.evalsets import Invocation, MessageContent


def _invocation(turn: dict, index: int) -> Invocation:
    return Invocation(
        invocation_id=f"turn{index + 1}",
        user_content=MessageContent.user(turn["user_prompt"]),
        expected_tool_trajectory=[ToolCall(name=c["tool_name"], args=c.get("args") or {})
                                  for c in turn["expected_tool_trajectory"]],
        expected_final_response=MessageContent.assistant(turn["final_response"]),
    )


def ground_truth_case(path: Path) -> EvalCase:
    """The case of one ``*.ground_truth.json`` (one turn, or its ``turns`` in order)."""
    truth = json.loads(path.read_text())
    turns = truth.get("turns") or [truth]
    return EvalCase(eval_id=path.name.removesuffix(".ground_truth.json"),
                    conversation=[_invocation(t, i) for i, t in enumerate(turns)])


def ground_truth_eval_set(folder: Path) -> EvalSet:
    """Every run of a producer's folder as an eval set."""
    return EvalSet(eval_set_id=folder.name, eval_cases=[
        ground_truth_case(p) for p in sorted(folder.glob("*.ground_truth.json"))])
