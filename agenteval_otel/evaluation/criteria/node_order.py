"""``node_order``: expected against actual graph node visits, by match type."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenteval_otel.evaluation.config import CriterionConfig
from agenteval_otel.evaluation.criteria.registry import Score, criterion
from agenteval_otel.evaluation.criteria.sequences import match_sequences
from agenteval_otel.evaluation.models import Invocation

if TYPE_CHECKING:
    from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["node_order"]


@criterion("node_order", default_threshold=1.0)
def node_order(expected: Invocation, actual: Trajectory, config: CriterionConfig) -> Score | None:
    """Score the visited nodes; does not apply to a turn that expects no node order."""
    want = list(expected.expected_node_order)
    if not want:
        return None
    got = list(actual.node_order())
    result = match_sequences(want, got, config.match_type, lambda e, a: e == a)
    reason = (f"{len(result.pairs)}/{len(want)} expected node(s) matched "
              f"({config.match_type.value}): expected {want}, visited {got}")
    return Score(result.score, reason, {
        "match_type": config.match_type.value,
        "expected": want,
        "actual": got,
        "missing": [want[i] for i in result.missing],
        "unexpected": [got[j] for j in result.unexpected],
    })
