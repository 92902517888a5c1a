"""Google ADK's deterministic criteria, scored exactly as ADK 2.x scores them.

A criterion named in ADK's vocabulary means what it means in ADK, so a ``test_config.json``
threshold keeps its verdicts:

- ``tool_trajectory_avg_score``: each invocation scores 1.0 or 0.0 — EXACT (same length, same
  name and arguments at every position), IN_ORDER (the expected calls found greedily, in order,
  among the actual ones) or ANY_ORDER (each expected call takes the first equal actual call
  left) — averaged over the invocations. Arguments compare with Python ``==`` on the decoded
  values (``{"on": True} == {"on": 1}``; an expected ``{}`` does not match ``{"tz": "UTC"}``; a
  JSON string is not the object it encodes; a call given no ``args`` at all, ADK's ``None``,
  matches no call that has them, not even ``{}``); ``ignore_args`` compares names only.
- ``response_match_score``: ROUGE-1 F-measure with ADK's tokenizer
  (:func:`~agenteval_otel.criteria._rouge.adk_rouge1_f`); a turn with no expected
  response is scored against ``""``.

Our ``trajectory_match`` and ``response_match`` keep their partial credit and argument rules.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from agenteval_otel.criteria._config import MatchType
from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._registry import Score, criterion
from agenteval_otel.criteria._rouge import adk_rouge1_f
from agenteval_otel.criteria._sequences import SequenceMatch
from agenteval_otel.criteria._trajectory_match import call_evidence
from agenteval_otel.trajectory.messages import ToolCall, describe_call

__all__ = ["AdkTrajectorySettings", "response_match_score", "tool_trajectory_avg_score"]


class AdkTrajectorySettings(BaseModel):
    """``tool_trajectory_avg_score`` params: ``ignore_args`` (compare tool names only)."""

    model_config = ConfigDict(extra="forbid")

    ignore_args: bool = False


def _args_of(call: ToolCall) -> dict[str, Any] | None:
    """The call's arguments as ADK holds them: ``None`` for a call given none (no ``args``, as
    an ADK file's call without them loads), never equal to ``{}``."""
    return call.args if "args" in call.model_fields_set else None


def _shown_args(args: dict[str, Any] | None) -> str:
    return "none" if args is None else repr(args)


def _calls_equal(expected: ToolCall, actual: ToolCall, ignore_args: bool) -> bool:
    return actual.name == expected.name and (ignore_args or _args_of(actual) == _args_of(expected))


def _exact(want: list[ToolCall], got: list[ToolCall], ignore_args: bool) -> tuple[bool, list[tuple[int, int]]]:
    pairs = [(i, i) for i in range(min(len(want), len(got))) if _calls_equal(want[i], got[i], ignore_args)]
    return len(want) == len(got) == len(pairs), pairs


def _in_order(want: list[ToolCall], got: list[ToolCall], ignore_args: bool) -> tuple[bool, list[tuple[int, int]]]:
    pairs: list[tuple[int, int]] = []
    for j, call in enumerate(got):
        if len(pairs) < len(want) and _calls_equal(want[len(pairs)], call, ignore_args):
            pairs.append((len(pairs), j))
    return len(pairs) == len(want), pairs


def _any_order(want: list[ToolCall], got: list[ToolCall], ignore_args: bool) -> tuple[bool, list[tuple[int, int]]]:
    left = list(range(len(got)))
    pairs: list[tuple[int, int]] = []
    for i, expected in enumerate(want):
        j = next((j for j in left if _calls_equal(expected, got[j], ignore_args)), None)
        if j is not None:
            left.remove(j)
            pairs.append((i, j))
    return len(pairs) == len(want), pairs


_MATCHERS = {MatchType.EXACT: _exact, MatchType.IN_ORDER: _in_order, MatchType.ANY_ORDER: _any_order}


_ABSENT = object()


def _differing_keys(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    keys = sorted(set(expected) | set(actual))
    return [f"{key}: expected {expected[key]!r}, got {actual[key]!r}" if key in expected and key in actual
            else f"{key}: {'missing' if key in expected else 'not expected'}"
            for key in keys if expected.get(key, _ABSENT) != actual.get(key, _ABSENT)]


def _mismatches(
    want: list[ToolCall], got: list[ToolCall], pairs: list[tuple[int, int]], match_type: MatchType,
) -> tuple[list[tuple[int, int, list[str]]], list[int], list[int]]:
    """Unmatched expected calls paired with an unmatched actual call of the same tool (at the
    same position for EXACT): those differ in their arguments."""
    missing = [i for i in range(len(want)) if i not in {i for i, _ in pairs}]
    unexpected = [j for j in range(len(got)) if j not in {j for _, j in pairs}]
    mismatched: list[tuple[int, int, list[str]]] = []
    for i in list(missing):
        same = [j for j in unexpected if got[j].name == want[i].name
                and (match_type is not MatchType.EXACT or j == i)]
        if same:
            missing.remove(i)
            unexpected.remove(same[0])
            wanted, given = _args_of(want[i]), _args_of(got[same[0]])
            if wanted is None or given is None:
                notes = [f"arguments: expected {_shown_args(wanted)}, got {_shown_args(given)} "
                         "(None is not {} for Google ADK)"]
            else:
                notes = _differing_keys(wanted, given) or ["same call, out of the expected order"]
            mismatched.append((i, same[0], notes))
    return mismatched, missing, unexpected


@criterion("tool_trajectory_avg_score", default_threshold=1.0, settings=AdkTrajectorySettings,
           semantics="adk")
def tool_trajectory_avg_score(ctx: CriterionContext) -> Score | None:
    """1.0 when the turn's tool calls match the expected ones under ``match_type`` as Google ADK
    matches them, else 0.0 (see the module docstring)."""
    if ctx.expected is None:
        return None
    match_type, ignore_args = ctx.config.match_type, bool(ctx.settings_as(AdkTrajectorySettings).ignore_args)
    want, got = list(ctx.expected.expected_tool_trajectory), ctx.actual.tool_calls()
    matched, pairs = _MATCHERS[match_type](want, got, ignore_args)
    mismatched, missing, unexpected = _mismatches(want, got, pairs, match_type)
    rule = f"{match_type.value}, {'names only' if ignore_args else 'names and arguments'}"
    reason = f"tool calls {'match' if matched else 'do not match'} ({rule}, Google ADK rules)"
    if not matched:
        problems = [f"missing: {', '.join(describe_call(want[i]) for i in missing)}"] if missing else []
        problems += [f"unexpected: {', '.join(describe_call(got[j]) for j in unexpected)}"] if unexpected else []
        problems += [f"arguments differ {describe_call(want[i])} vs {describe_call(got[j])}: {'; '.join(notes)}"
                     for i, j, notes in mismatched]
        if match_type is not MatchType.ANY_ORDER and not problems:
            problems.append("calls out of order")
        reason = "; ".join([reason, *problems])
    evidence = call_evidence(want, got, SequenceMatch(1.0 if matched else 0.0, pairs), mismatched, missing,
                             unexpected)
    return Score(
        1.0 if matched else 0.0, reason,
        {"match_type": match_type.value, "ignore_args": ignore_args,
         "expected": [describe_call(c) for c in want], "actual": [describe_call(c) for c in got]},
        evidence,
    )


@criterion("response_match_score", default_threshold=0.8, semantics="adk")
def response_match_score(ctx: CriterionContext) -> Score | None:
    """ROUGE-1 F-measure of the final response as Google ADK computes it; a turn with no
    expected response is scored against ``""`` (0.0)."""
    if ctx.expected is None:
        return None
    reference = ctx.expected.expected_final_response
    want = reference.get_text() if reference is not None else ""
    got = ctx.actual.final_response or ""
    score = adk_rouge1_f(want, got)
    reason = f"ROUGE-1 F {score:.3f} against the expected response (Google ADK tokenizer)"
    if reference is None:
        reason += "; no expected response, scored against an empty one as ADK does"
    return Score(score, reason, {"expected": want, "actual": got})
