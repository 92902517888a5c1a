"""``trajectory_match``: expected against actual tool calls, by match type, with argument rules."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agenteval_otel.evaluation.arguments import args_diff
from agenteval_otel.evaluation.config import CriterionConfig, MatchType
from agenteval_otel.evaluation.criteria.registry import Score, criterion
from agenteval_otel.evaluation.criteria.sequences import match_sequences
from agenteval_otel.evaluation.models import Invocation, ToolCall

if TYPE_CHECKING:
    from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["describe_call", "trajectory_match"]

_MAX_ARGS_TEXT = 120


def describe_call(call: ToolCall) -> str:
    """``name(args)`` for reasons and reports."""
    if not call.args:
        return f"{call.name}()"
    text = json.dumps(call.args, sort_keys=True, ensure_ascii=False, default=str)
    if len(text) > _MAX_ARGS_TEXT:
        text = text[: _MAX_ARGS_TEXT - 1] + "…"
    return f"{call.name}({text})"


def _mismatches(
    expected: list[ToolCall], actual: list[ToolCall], missing: list[int], unexpected: list[int],
    config: CriterionConfig,
) -> tuple[list[dict[str, Any]], list[int], list[int]]:
    """Pair leftover expected and actual calls of the same tool: an argument mismatch."""
    mismatched, left_missing, left_unexpected = [], list(missing), list(unexpected)
    if not config.check_args:
        return mismatched, left_missing, left_unexpected
    for i in missing:
        same_name = [j for j in left_unexpected if actual[j].name == expected[i].name]
        if config.match_type is MatchType.EXACT:
            same_name = [j for j in same_name if j == i]
        if not same_name:
            continue
        j = same_name[0]
        left_missing.remove(i)
        left_unexpected.remove(j)
        mismatched.append({
            "expected": describe_call(expected[i]),
            "actual": describe_call(actual[j]),
            "diff": args_diff(expected[i].args, actual[j].args, config.arg_match, expected[i].name),
        })
    return mismatched, left_missing, left_unexpected


@criterion("trajectory_match", default_threshold=0.8)
def trajectory_match(expected: Invocation, actual: Trajectory, config: CriterionConfig) -> Score:
    """Score the turn's tool calls against the expected ones (see ``match_sequences``)."""
    want = list(expected.expected_tool_trajectory)
    got = list(actual.tool_calls())
    result = match_sequences(
        want, got, config.match_type,
        lambda e, a: e.matches(a, check_args=config.check_args, arg_match=config.arg_match),
    )
    mismatched, missing, unexpected = _mismatches(
        want, got, result.missing, result.unexpected, config)
    parts = [f"{len(result.pairs)}/{len(want)} expected call(s) matched "
             f"({config.match_type.value}{', arguments checked' if config.check_args else ''})"]
    if missing:
        parts.append("missing: " + ", ".join(describe_call(want[i]) for i in missing))
    if unexpected:
        parts.append("unexpected: " + ", ".join(describe_call(got[j]) for j in unexpected))
    for m in mismatched:
        parts.append(f"argument mismatch {m['expected']} vs {m['actual']}: " + "; ".join(m["diff"]))
    return Score(
        result.score,
        "; ".join(parts),
        {
            "match_type": config.match_type.value,
            "expected": [describe_call(c) for c in want],
            "actual": [describe_call(c) for c in got],
            "missing": [describe_call(want[i]) for i in missing],
            "unexpected": [describe_call(got[j]) for j in unexpected],
            "mismatched": mismatched,
        },
    )
