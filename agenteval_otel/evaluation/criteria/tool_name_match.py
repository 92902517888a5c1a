"""``tool_name_match``: the names of the tools called, as a multiset."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from agenteval_otel.evaluation.config import CriterionConfig
from agenteval_otel.evaluation.criteria.registry import Score, criterion
from agenteval_otel.evaluation.models import Invocation

if TYPE_CHECKING:
    from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["tool_name_match"]


@criterion("tool_name_match", default_threshold=1.0)
def tool_name_match(expected: Invocation, actual: Trajectory, config: CriterionConfig) -> Score:
    """Shared names ÷ max(expected, actual) counts: missing and extra calls both cost score."""
    want = Counter(call.name for call in expected.expected_tool_trajectory)
    got = Counter(call.name for call in actual.tool_calls())
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
