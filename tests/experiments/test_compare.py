"""Comparing experiments: the paired sign-flip test against a published value, the bootstrap's
determinism under a seed, pairing, and the queries whose verdict changed."""

from __future__ import annotations

import itertools
import random

import pytest

from agenteval_otel.experiments import ExperimentRecord, ExperimentResult, compare
from agenteval_otel.experiments._compare import bootstrap_interval, sign_flip_p_value

# Darwin's Zea mays: the 15 differences (cross- minus self-fertilised heights, in eighths of an
# inch) of Fisher's "The Design of Experiments" (1935), §21: 863 of the 2^15 sign assignments give
# a sum at least as large, so the two-sided p-value is 1726 / 32768.
DARWIN = [49, -67, 8, 16, 6, 23, 28, 41, 14, 29, 56, 24, 75, 60, -48]


def test_the_exact_sign_flip_test_gives_fishers_published_p_value_for_darwins_data() -> None:
    p_value, test = sign_flip_p_value(DARWIN)
    assert p_value == 1726 / 32768
    assert test == "sign-flip permutation (exact)"
    # and the same as enumerating every sign assignment
    observed = abs(sum(DARWIN))
    extreme = sum(abs(sum(s * d for s, d in zip(signs, DARWIN))) >= observed
                  for signs in itertools.product((1, -1), repeat=len(DARWIN)))
    assert extreme == 1726


def test_zero_differences_and_all_equal_differences() -> None:
    assert sign_flip_p_value([0.0, 0.0]) == (1.0, "sign-flip permutation (exact)")
    assert sign_flip_p_value([0.25, 0.0, 0.25, 0.25, 0.25, 0.25])[0] == 2 / 32  # zeros change no sum


def test_too_many_distinct_sums_fall_back_to_a_seeded_monte_carlo_estimate() -> None:
    rng = random.Random(7)
    differences = [rng.uniform(-0.2, 0.6) for _ in range(40)]
    p_value, test = sign_flip_p_value(differences, resamples=500, seed=3)
    assert test == "sign-flip permutation (Monte Carlo, 500 resamples)"
    assert p_value == sign_flip_p_value(differences, resamples=500, seed=3)[0]
    assert 1 / 501 <= p_value < 0.05


def test_the_bootstrap_interval_is_the_same_for_the_same_seed_and_brackets_the_mean() -> None:
    first = bootstrap_interval(DARWIN, resamples=1000, seed=11)
    assert first == bootstrap_interval(DARWIN, resamples=1000, seed=11)
    assert first != bootstrap_interval(DARWIN, resamples=1000, seed=12)
    assert first[0] < sum(DARWIN) / len(DARWIN) < first[1]
    assert bootstrap_interval([0.25] * 6) == (0.25, 0.25)


def _experiment(rows: list[tuple[int, str, float | None, bool]], source: str) -> ExperimentResult:
    records = []
    for index, query, score, passed in rows:
        if score is None:
            records.append(ExperimentRecord(query_index=index, query=query, error="grader: down"))
        else:
            records.append(ExperimentRecord(query_index=index, query=query, scores={"helpfulness": score},
                                            metric_passed={"helpfulness": passed}, passed=passed))
    return ExperimentResult(records=records, source=source)


def test_compare_pairs_by_query_lists_unpaired_ones_and_the_verdicts_that_changed_both_ways() -> None:
    a = _experiment([(0, "dogs?", 1.0, True), (1, "parking?", 0.25, False), (2, "wifi?", 0.75, True),
                     (3, "pool?", 0.5, True), (4, "old?", 1.0, True)], "a.jsonl")
    b = _experiment([(0, "dogs?", 0.25, False), (1, "parking?", 1.0, True), (2, "wifi?", 0.75, True),
                     (3, "pool?", None, False), (5, "new?", 1.0, True)], "b.jsonl")
    comparison = compare(a, b, resamples=500, seed=1)
    assert comparison.pairs == 4
    (delta,) = comparison.metrics
    assert delta.pairs == 3  # query 3 errored in B: no score to pair
    assert (delta.mean_a, delta.mean_b) == (2.0 / 3, 2.0 / 3)
    assert delta.delta == 0.0
    assert delta.p_value == 1.0 and not delta.significant and not delta.regressed
    assert [(c.query, c.status_a, c.status_b) for c in comparison.newly_failed] == [
        ("dogs?", "passed", "failed"), ("pool?", "passed", "errored")]
    assert [(c.query, c.status_a, c.status_b) for c in comparison.newly_passed] == [
        ("parking?", "failed", "passed")]
    assert comparison.only_in_a == [(4, "old?")] and comparison.only_in_b == [(5, "new?")]
    assert comparison == compare(a, b, resamples=500, seed=1)


def test_a_significant_drop_is_a_regression() -> None:
    a = _experiment([(i, f"q{i}", 1.0, True) for i in range(8)], "a")
    b = _experiment([(i, f"q{i}", 0.5, False) for i in range(8)], "b")
    (delta,) = compare(a, b).metrics
    assert delta.delta == -0.5 and delta.p_value == 2 / 256
    assert delta.significant and delta.regressed
    assert (delta.ci_low, delta.ci_high) == (-0.5, -0.5)
    assert compare(b, a).regressions == []


def test_bad_arguments_are_refused() -> None:
    a = _experiment([(0, "q", 1.0, True)], "a")
    with pytest.raises(ValueError, match="resamples"):
        compare(a, a, resamples=0)
    with pytest.raises(ValueError, match="alpha"):
        compare(a, a, alpha=1.5)


def _scored(scores: list[float]) -> ExperimentResult:
    return ExperimentResult(records=[ExperimentRecord(query_index=i, query=f"q{i}", scores={"m": score},
                                                      passed=score >= 0.5) for i, score in enumerate(scores)])


def test_too_few_pairs_for_any_change_to_be_significant_are_said_so() -> None:
    five = compare(_scored([1.0] * 5), _scored([0.0] * 5))  # the largest drop 5 pairs can show
    (delta,) = five.metrics
    assert (delta.p_value, delta.min_p_value, delta.regressed) == (0.0625, 0.0625, False)
    assert five.notes == ["m: with 5 paired queries the smallest possible p-value is 0.0625 > 0.05: no regression "
                          "can be significant; add queries or repeat runs"]
    unchanged = compare(_scored([1.0] * 6 + [0.5, 0.5]), _scored([0.0] * 6 + [0.5, 0.5]))
    assert unchanged.notes == []  # 6 pairs changed: 0.03125 < 0.05, a regression can be found
    assert unchanged.regressions and unchanged.metrics[0].min_p_value == 0.03125
    strict = compare(_scored([1.0] * 6 + [0.5, 0.5]), _scored([0.0] * 6 + [0.5, 0.5]), alpha=0.01)
    assert strict.notes == ["m: with 8 paired queries (2 with the same score) the smallest possible p-value is "
                            "0.03125 > 0.01: no regression can be significant; add queries or repeat runs"]
