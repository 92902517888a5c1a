"""``tool_name_match``: the names of the tools called, as a multiset."""

from __future__ import annotations

from collections import Counter

from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._registry import Score, criterion
from agenteval_otel.trajectory.steps import StepType

__all__ = ["tool_name_match"]


@criterion("tool_name_match", aliases=("tool_name_match_score",), default_threshold=1.0)
def tool_name_match(ctx: CriterionContext) -> Score | None:
    """Shared names ÷ max(expected, actual) counts: missing and extra calls both cost score."""
    if ctx.expected is None:
        return None
    want = Counter(call.name for call in ctx.expected.expected_tool_trajectory)
    got = Counter(step.name for step in ctx.actual.steps if step.step_type is StepType.TOOL)
    longest = max(sum(want.values()), sum(got.values()))
    shared = sum((want & got).values())
    missing = sorted((want - got).elements())
    extra = sorted((got - want).elements())
    reason = f"{shared}/{longest} tool name(s) shared" if longest else "no tools expected or called"
    if missing:
        reason += f"; missing: {', '.join(missing)}"
    if extra:
        reason += f"; extra: {', '.join(extra)}"
    return Score(shared / longest if longest else 1.0, reason, {"missing": missing, "extra": extra})
