"""EXACT / IN_ORDER / ANY_ORDER sequence matching, on hand-checked cases."""

from __future__ import annotations

import pytest

from agenteval_otel.criteria import MatchType
from agenteval_otel.criteria._sequences import match_sequences


def _eq(a: str, b: str) -> bool:
    return a == b


@pytest.mark.parametrize(
    ("match_type", "expected", "actual", "score", "missing", "unexpected"),
    [
        # EXACT: positional matches / max length; extra calls cost score
        (MatchType.EXACT, "", "", 1.0, [], []),
        (MatchType.EXACT, "ab", "ab", 1.0, [], []),
        (MatchType.EXACT, "ab", "abc", 2 / 3, [], [2]),
        (MatchType.EXACT, "abc", "ab", 2 / 3, [2], []),
        (MatchType.EXACT, "ab", "ba", 0.0, [0, 1], [0, 1]),
        (MatchType.EXACT, "", "a", 0.0, [], [0]),
        # IN_ORDER: longest common subsequence / len(expected); interleaving allowed
        (MatchType.IN_ORDER, "abc", "xaybzc", 1.0, [], [0, 2, 4]),
        (MatchType.IN_ORDER, "ab", "ba", 0.5, [0], [1]),
        (MatchType.IN_ORDER, "", "abc", 1.0, [], [0, 1, 2]),
        (MatchType.IN_ORDER, "aa", "a", 0.5, [1], []),
        # ANY_ORDER: multiset / len(expected)
        (MatchType.ANY_ORDER, "abc", "cba", 1.0, [], []),
        (MatchType.ANY_ORDER, "aab", "ab", 2 / 3, [1], []),
        (MatchType.ANY_ORDER, "ab", "bxa", 1.0, [], [1]),
        (MatchType.ANY_ORDER, "", "", 1.0, [], []),
    ],
)
def test_hand_checked(match_type: MatchType, expected: str, actual: str, score: float,
                      missing: list[int], unexpected: list[int]) -> None:
    result = match_sequences(list(expected), list(actual), match_type, _eq)
    assert result.score == pytest.approx(score)
    assert result.missing == missing
    assert result.unexpected == unexpected


def test_any_order_uses_a_maximum_matching() -> None:
    """A greedy pass would give the first actual item to the looser expectation and lose one."""
    expected = ["any", "x"]
    actual = ["x", "y"]

    def same(e: str, a: str) -> bool:
        return e == "any" or e == a

    result = match_sequences(expected, actual, MatchType.ANY_ORDER, same)
    assert result.score == 1.0 and result.pairs == [(0, 1), (1, 0)]
