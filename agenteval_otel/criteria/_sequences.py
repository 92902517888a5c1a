"""Matching an expected sequence against an actual one under EXACT, IN_ORDER or ANY_ORDER.

Shared by the tool-trajectory and node-order criteria. Items are compared with a ``same``
predicate, so arguments rules live with the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from agenteval_otel.criteria._config import MatchType

__all__ = ["SequenceMatch", "match_sequences"]

E = TypeVar("E")
A = TypeVar("A")


@dataclass(frozen=True)
class SequenceMatch(Generic[E, A]):
    """The outcome: a score in [0, 1], the matched index pairs, and what was left over."""

    score: float
    pairs: list[tuple[int, int]] = field(default_factory=list)
    """(expected index, actual index) of every matched item."""
    missing: list[int] = field(default_factory=list)
    """Indexes of expected items that were not matched."""
    unexpected: list[int] = field(default_factory=list)
    """Indexes of actual items that matched nothing."""


def _exact(expected: Sequence[E], actual: Sequence[A], same: Callable[[E, A], bool]) -> SequenceMatch[E, A]:
    longest = max(len(expected), len(actual))
    if longest == 0:
        return SequenceMatch(1.0)
    pairs = [(i, i) for i in range(min(len(expected), len(actual))) if same(expected[i], actual[i])]
    matched_e = {i for i, _ in pairs}
    return SequenceMatch(
        score=len(pairs) / longest,
        pairs=pairs,
        missing=[i for i in range(len(expected)) if i not in matched_e],
        unexpected=[j for j in range(len(actual)) if j not in matched_e],
    )


def _in_order(expected: Sequence[E], actual: Sequence[A], same: Callable[[E, A], bool]) -> SequenceMatch[E, A]:
    """Longest common subsequence, expected items against actual ones."""
    n, m = len(expected), len(actual)
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if same(expected[i], actual[j]):
                table[i][j] = table[i + 1][j + 1] + 1
            else:
                table[i][j] = max(table[i + 1][j], table[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if same(expected[i], actual[j]) and table[i][j] == table[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return _result(pairs, n, m)


def _any_order(expected: Sequence[E], actual: Sequence[A], same: Callable[[E, A], bool]) -> SequenceMatch[E, A]:
    """Maximum bipartite matching, so one actual item never serves two expected ones."""
    candidates = [[j for j in range(len(actual)) if same(e, actual[j])] for e in expected]
    owner: dict[int, int] = {}

    def assign(i: int, seen: set[int]) -> bool:
        for j in candidates[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or assign(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(expected)):
        assign(i, set())
    pairs = sorted((i, j) for j, i in owner.items())
    return _result(pairs, len(expected), len(actual))


def _result(pairs: list[tuple[int, int]], n: int, m: int) -> SequenceMatch[E, A]:
    matched_e = {i for i, _ in pairs}
    matched_a = {j for _, j in pairs}
    return SequenceMatch(
        score=len(pairs) / n if n else 1.0,
        pairs=pairs,
        missing=[i for i in range(n) if i not in matched_e],
        unexpected=[j for j in range(m) if j not in matched_a],
    )


_MATCHERS = {MatchType.EXACT: _exact, MatchType.IN_ORDER: _in_order, MatchType.ANY_ORDER: _any_order}


def match_sequences(
    expected: Sequence[E],
    actual: Sequence[A],
    match_type: MatchType,
    same: Callable[[E, A], bool],
) -> SequenceMatch[E, A]:
    """Match ``expected`` against ``actual``.

    EXACT: positional matches ÷ max(len(expected), len(actual)); both empty = 1.0.
    IN_ORDER: expected items matched in order (longest common subsequence) ÷ len(expected).
    ANY_ORDER: expected items matched as a multiset ÷ len(expected). Nothing expected = 1.0.
    """
    return _MATCHERS[match_type](expected, actual, same)
