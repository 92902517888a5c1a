"""Paired statistics for comparing two runs item by item (experiments' queries, eval runs' cases).

Only the pairs where both sides have a score count: ``mean_a``, ``mean_b`` and
``delta = mean_b - mean_a`` are over those pairs.

- **Confidence interval**: paired bootstrap, percentile method: the pairs' differences are
  resampled with replacement ``resamples`` times (``random.Random(seed)``, so a seed gives the
  same interval every time) and the 2.5th and 97.5th percentiles of the resampled means are
  the 95% interval.
- **Significance**: a two-sided paired sign-flip permutation test of the mean difference: under
  "A and B are exchangeable", each difference's sign is equally likely, and ``p_value`` is the
  share of the 2^n sign assignments whose mean is at least as far from 0 as the one observed.
  It is computed exactly (over the distribution of sums, which stays small for scores on a
  scale such as 0, 0.25, ..., 1); when that distribution would pass ``EXACT_STATES`` sums it
  is estimated from ``resamples`` random sign assignments, and ``test`` says which.
- **Too few pairs**: with ``k`` pairs whose scores differ, the smallest p-value the test can give
  is ``2 / 2^k`` (every difference of one sign), so with 5 pairs it is 0.0625 and nothing can be
  significant at 0.05. ``min_p_value`` holds it and, when it does not reach ``alpha``, ``note``
  says so. No other paired test does better at tiny n: the exact sign test and the exact
  Wilcoxon signed-rank test rest on the same 2^k equally likely sign assignments and share that
  floor, and use less of the data, so the sign-flip test on the mean stays.

>>> delta = metric_delta("m", [(0.5, 1.0)] * 5)
>>> delta.delta, delta.p_value, delta.test
(0.5, 0.0625, 'sign-flip permutation (exact)')
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "EXACT_STATES",
    "BaselineComparison",
    "CaseChange",
    "CriterionDelta",
    "MetricDelta",
    "bootstrap_interval",
    "metric_delta",
    "percentile",
    "sign_flip_p_value",
    "smallest_p_value",
]

EXACT_STATES = 65_536
_TOLERANCE = 1e-9


class MetricDelta(BaseModel):
    """One metric compared over the ``pairs`` where both sides scored it."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    pairs: int
    mean_a: float | None
    mean_b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    test: str
    significant: bool
    """``p_value < alpha``."""
    min_p_value: float | None = None
    """The smallest p-value the test could give for these pairs (see the module docstring)."""
    note: str | None = None
    """Set when ``min_p_value`` does not reach ``alpha``: no change of this metric can be significant."""

    @property
    def regressed(self) -> bool:
        """B is significantly lower than A (scores read higher-is-better)."""
        return self.significant and self.delta is not None and self.delta < 0


def percentile(ordered: Sequence[float], fraction: float) -> float:
    """Linear interpolation between the closest ranks of the sorted, non-empty ``ordered``.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 0.5)
    2.5
    """
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def bootstrap_interval(differences: Sequence[float], *, resamples: int = 2000, seed: int = 0,
                       confidence: float = 0.95) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of ``differences`` (at least one)."""
    if not differences:
        raise ValueError("no difference to resample")
    rng = random.Random(seed)
    n = len(differences)
    means = sorted(sum(rng.choices(differences, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    return percentile(means, tail), percentile(means, 1 - tail)


def _exact_sum_distribution(values: Sequence[float]) -> dict[float, int] | None:
    """How many sign assignments give each sum of ``±values``; ``None`` past ``EXACT_STATES`` sums."""
    counts: dict[float, int] = {0.0: 1}
    for value in values:
        following: dict[float, int] = {}
        for total, count in counts.items():
            for signed in (total + value, total - value):
                key = round(signed, 9)
                following[key] = following.get(key, 0) + count
        if len(following) > EXACT_STATES:
            return None
        counts = following
    return counts


def sign_flip_p_value(differences: Sequence[float], *, resamples: int = 2000,
                      seed: int = 0) -> tuple[float, str]:
    """The two-sided p-value of the paired sign-flip permutation test of ``differences``, and
    the test's name (exact, or Monte Carlo when the exact distribution is too large)."""
    nonzero = [d for d in differences if abs(d) > _TOLERANCE]  # a zero is the same under either sign
    observed = abs(sum(nonzero))
    if not nonzero:
        return 1.0, "sign-flip permutation (exact)"
    distribution = _exact_sum_distribution(nonzero)
    if distribution is not None:
        extreme = sum(count for total, count in distribution.items() if abs(total) >= observed - _TOLERANCE)
        return extreme / 2 ** len(nonzero), "sign-flip permutation (exact)"
    rng = random.Random(seed)
    extreme = 0
    for _ in range(resamples):
        total = sum(d if rng.random() < 0.5 else -d for d in nonzero)
        extreme += abs(total) >= observed - _TOLERANCE
    return (extreme + 1) / (resamples + 1), f"sign-flip permutation (Monte Carlo, {resamples} resamples)"


def smallest_p_value(differences: Sequence[float], *, resamples: int | None = None) -> float:
    """The smallest p-value :func:`sign_flip_p_value` can give for as many differences as these
    that are not zero, ``k``: ``2 / 2^k``, and, for a Monte Carlo estimate from ``resamples``
    sign assignments, no less than ``1 / (resamples + 1)``.

    >>> smallest_p_value([0.5, -0.25, 0.5, 1.0, 0.25]), smallest_p_value([0.5] * 6 + [0.0])
    (0.0625, 0.03125)
    """
    changed = sum(abs(d) > _TOLERANCE for d in differences)
    floor = min(1.0, 2.0 ** (1 - changed))
    return max(floor, 1 / (resamples + 1)) if resamples is not None else floor


def metric_delta(metric: str, scored: Sequence[tuple[float, float]], *, resamples: int = 2000, seed: int = 0,
                 alpha: float = 0.05, unit: str = "queries") -> MetricDelta:
    """``metric`` compared over ``scored``, its ``(a, b)`` scores of each pair scored on both
    sides; ``unit`` names the pairs in the note (``queries``, ``cases``)."""
    if not scored:
        return MetricDelta(metric=metric, pairs=0, mean_a=None, mean_b=None, delta=None, ci_low=None,
                           ci_high=None, p_value=None, test="no pair scored in both", significant=False)
    differences = [b - a for a, b in scored]
    low, high = bootstrap_interval(differences, resamples=resamples, seed=seed)
    p_value, test = sign_flip_p_value(differences, resamples=resamples, seed=seed)
    floor = smallest_p_value(differences, resamples=resamples if "Monte Carlo" in test else None)
    return MetricDelta(metric=metric, pairs=len(scored), mean_a=statistics.fmean(a for a, _ in scored),
                       mean_b=statistics.fmean(b for _, b in scored), delta=statistics.fmean(differences),
                       ci_low=low, ci_high=high, p_value=p_value, test=test, significant=p_value < alpha,
                       min_p_value=floor, note=_too_few(differences, floor, alpha, unit))


def _too_few(differences: Sequence[float], floor: float, alpha: float, unit: str) -> str | None:
    if floor < alpha:
        return None
    unchanged = sum(abs(d) <= _TOLERANCE for d in differences)
    pairs = f"{len(differences)} paired {unit}" + (f" ({unchanged} with the same score)" if unchanged else "")
    return (f"with {pairs} the smallest possible p-value is {floor:.4g} > {alpha:g}: no regression can be "
            "significant; add queries or repeat runs")


class CriterionDelta(BaseModel):
    """One criterion of a run against its baseline, over the cases scored in both: its mean
    score, and its pass rate (each case's verdict read as 1 or 0), each with the paired statistics."""

    model_config = ConfigDict(extra="forbid")

    criterion: str
    mean: MetricDelta
    pass_rate: MetricDelta


class CaseChange(BaseModel):
    """A case whose verdict changed from the baseline to this run (``passed``, ``failed``, ``errored``)."""

    model_config = ConfigDict(extra="forbid")

    eval_id: str
    status_a: str
    status_b: str


class BaselineComparison(BaseModel):
    """A run (B) against a baseline run (A) of the same eval set, paired case by case (``eval_id``)."""

    model_config = ConfigDict(extra="forbid")

    baseline_run_id: str
    baseline_created_at: str
    pairs: int
    alpha: float
    criteria: list[CriterionDelta] = Field(default_factory=list)
    newly_failed: list[CaseChange] = Field(default_factory=list)
    """Passed in the baseline, not in this run."""
    newly_passed: list[CaseChange] = Field(default_factory=list)
    """Passed in this run, not in the baseline."""
    only_in_baseline: int = 0
    only_in_run: int = 0

    @property
    def notes(self) -> list[str]:
        """One line per criterion whose pairs are too few for any change of its mean to be significant."""
        return [f"{delta.criterion}: {delta.mean.note}" for delta in self.criteria if delta.mean.note]
