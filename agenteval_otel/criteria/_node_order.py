"""``node_order``: expected against actual graph node visits, by match type."""

from __future__ import annotations

from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._registry import Score, criterion
from agenteval_otel.criteria._sequences import match_sequences
from agenteval_otel.results import EvidenceRow

__all__ = ["node_order"]


@criterion("node_order", aliases=("node_order_score",), default_threshold=1.0)
def node_order(ctx: CriterionContext) -> Score | None:
    """Score the visited nodes; does not apply to a turn that expects no node order."""
    config = ctx.config
    want = list(ctx.expected.expected_node_order) if ctx.expected is not None else []
    if not want:
        return None
    got = list(ctx.actual.node_order())
    result = match_sequences(want, got, config.match_type, lambda e, a: e == a)
    reason = (f"{len(result.pairs)}/{len(want)} expected node(s) matched "
              f"({config.match_type.value}): expected {want}, visited {got}")
    return Score(result.score, reason, {
        "match_type": config.match_type.value,
        "expected": want,
        "actual": got,
        "missing": [want[i] for i in result.missing],
        "unexpected": [got[j] for j in result.unexpected],
    }, _rows(want, got, result.pairs, result.missing, result.unexpected))


def _rows(
    want: list[str], got: list[str], pairs: list[tuple[int, int]], missing: list[int], unexpected: list[int]
) -> list[EvidenceRow]:
    """Visited nodes in order, each matched with its expectation; missing ones after the node
    matched before them."""
    position = dict(pairs)
    keyed = [((j, 0, i), EvidenceRow(status="match", expected=want[i], actual=got[j])) for i, j in pairs]
    keyed += [((j, 0, -1), EvidenceRow(status="unexpected", actual=got[j])) for j in unexpected]
    keyed += [((max((position[k] for k in position if k < i), default=-1), 1, i),
               EvidenceRow(status="missing", expected=want[i])) for i in missing]
    return [row for _, row in sorted(keyed, key=lambda item: item[0])]
