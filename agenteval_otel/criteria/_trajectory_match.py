"""``trajectory_match``: expected against actual tool calls, by match type, with argument rules.

Besides the score and the reason, it returns its evidence: one row per expected and per actual
call, aligned as the match type matched them, which every report shows as the tool-call diff.
"""

from __future__ import annotations

from typing import Any

from agenteval_otel.criteria._arguments import args_diff
from agenteval_otel.criteria._config import CriterionConfig, MatchType
from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._registry import Score, criterion
from agenteval_otel.criteria._sequences import SequenceMatch, match_sequences
from agenteval_otel.results import EvidenceRow
from agenteval_otel.trajectory.messages import ToolCall, describe_call

__all__ = ["call_evidence", "trajectory_match"]

def _mismatches(
    expected: list[ToolCall], actual: list[ToolCall], missing: list[int], unexpected: list[int],
    config: CriterionConfig,
) -> tuple[list[tuple[int, int, list[str]]], list[int], list[int]]:
    """Pair leftover expected and actual calls of the same tool: an argument mismatch
    ``(expected index, actual index, differences)``."""
    mismatched: list[tuple[int, int, list[str]]] = []
    left_missing, left_unexpected = list(missing), list(unexpected)
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
        mismatched.append((i, j, args_diff(expected[i].args, actual[j].args, config.arg_match, expected[i].name)))
    return mismatched, left_missing, left_unexpected


def call_evidence(
    want: list[ToolCall], got: list[ToolCall], result: SequenceMatch[Any, Any],
    mismatched: list[tuple[int, int, list[str]]], missing: list[int], unexpected: list[int],
    described: tuple[list[str], list[str]] | None = None,
) -> list[EvidenceRow]:
    """The rows in the order the calls happened; a missing call right after the call before it.
    ``described``: ``describe_call`` of each of ``want`` and ``got``, if made already."""
    want_text, got_text = described or ([describe_call(c) for c in want], [describe_call(c) for c in got])
    row = EvidenceRow
    keyed: list[tuple[tuple[int, int, int], EvidenceRow]] = []
    position = {i: j for i, j in result.pairs} | {i: j for i, j, _ in mismatched}
    for i, j in result.pairs:
        keyed.append(((j, 0, i), row(status="match", expected=want_text[i], actual=got_text[j])))
    for i, j, problems in mismatched:
        keyed.append(((j, 0, i), row(status="mismatch", expected=want_text[i], actual=got_text[j],
                                     note="; ".join(problems))))
    for i in missing:
        before = max((position[k] for k in position if k < i), default=-1)
        keyed.append(((before, 1, i), row(status="missing", expected=want_text[i])))
    for j in unexpected:
        keyed.append(((j, 0, -1), row(status="unexpected", actual=got_text[j])))
    return [row for _, row in sorted(keyed, key=lambda item: item[0])]


@criterion("trajectory_match", aliases=("trajectory",), default_threshold=0.8)
def trajectory_match(ctx: CriterionContext) -> Score | None:
    """Score the turn's tool calls against the expected ones (see ``match_sequences``)."""
    if ctx.expected is None:
        return None
    config = ctx.config
    want = list(ctx.expected.expected_tool_trajectory)
    got = ctx.actual.tool_calls()
    result = match_sequences(
        want, got, config.match_type,
        lambda e, a: e.matches(a, check_args=config.check_args, arg_match=config.arg_match),
    )
    mismatched, missing, unexpected = _mismatches(want, got, result.missing, result.unexpected, config)
    want_text, got_text = [describe_call(c) for c in want], [describe_call(c) for c in got]
    parts = [f"{len(result.pairs)}/{len(want)} expected call(s) matched "
             f"({config.match_type.value}{', arguments checked' if config.check_args else ''})"]
    if missing:
        parts.append("missing: " + ", ".join(want_text[i] for i in missing))
    if unexpected:
        parts.append("unexpected: " + ", ".join(got_text[j] for j in unexpected))
    for i, j, problems in mismatched:
        parts.append(f"argument mismatch {want_text[i]} vs {got_text[j]}: " + "; ".join(problems))
    return Score(
        result.score,
        "; ".join(parts),
        {
            "match_type": config.match_type.value,
            "expected": want_text,
            "actual": got_text,
            "missing": [want_text[i] for i in missing],
            "unexpected": [got_text[j] for j in unexpected],
            "mismatched": [
                {"expected": want_text[i], "actual": got_text[j], "diff": problems}
                for i, j, problems in mismatched
            ],
        },
        call_evidence(want, got, result, mismatched, missing, unexpected, (want_text, got_text)),
    )
