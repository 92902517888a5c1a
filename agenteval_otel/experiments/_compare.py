"""Comparing two experiments on the same query set: per-metric deltas, a paired bootstrap
confidence interval, a paired significance test, and the queries whose verdict changed.

Records are paired by ``(query_index, query)``; records with no partner are listed, not
compared. For each metric, only the pairs where both records have a score count: ``mean_a``,
``mean_b`` and ``delta = mean_b - mean_a`` are over those pairs.

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
  says so (:attr:`Comparison.notes`): add queries or repeat runs. No other paired test does
  better at tiny n: the exact sign test and the exact Wilcoxon signed-rank test rest on the same
  2^k equally likely sign assignments and share that floor, and use less of the data (the sign
  test drops the sizes of the differences), so the sign-flip test on the mean stays.

>>> a = ExperimentResult(records=[ExperimentRecord(query_index=i, query=str(i), scores={"m": 0.5},
...                                                passed=True) for i in range(5)])
>>> b = ExperimentResult(records=[ExperimentRecord(query_index=i, query=str(i), scores={"m": 1.0},
...                                                passed=i != 0) for i in range(5)])
>>> comparison = compare(a, b)
>>> delta = comparison.metrics[0]
>>> delta.delta, delta.p_value, delta.test
(0.5, 0.0625, 'sign-flip permutation (exact)')
>>> comparison.notes
['m: with 5 paired queries the smallest possible p-value is 0.0625 > 0.05: no regression can be significant; add queries or repeat runs']
>>> [change.query for change in comparison.newly_failed]
['0']
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from agenteval_otel.experiments._results import ExperimentRecord, ExperimentResult, RecordStatus

__all__ = [
    "EXACT_STATES",
    "Comparison",
    "MetricDelta",
    "VerdictChange",
    "bootstrap_interval",
    "compare",
    "sign_flip_p_value",
    "smallest_p_value",
]

EXACT_STATES = 65_536
_TOLERANCE = 1e-9


class MetricDelta(BaseModel):
    """One metric compared over the ``pairs`` where both experiments scored it."""

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


class VerdictChange(BaseModel):
    """A query whose record passed in one experiment and not in the other."""

    model_config = ConfigDict(extra="forbid")

    query_index: int
    query: str
    status_a: RecordStatus
    status_b: RecordStatus


class Comparison(BaseModel):
    """Experiment B against experiment A (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    source_a: str | None = None
    source_b: str | None = None
    pairs: int
    alpha: float
    resamples: int
    seed: int
    metrics: list[MetricDelta] = Field(default_factory=list)
    newly_failed: list[VerdictChange] = Field(default_factory=list)
    """Passed in A, not in B."""
    newly_passed: list[VerdictChange] = Field(default_factory=list)
    """Passed in B, not in A."""
    only_in_a: list[tuple[int, str]] = Field(default_factory=list)
    only_in_b: list[tuple[int, str]] = Field(default_factory=list)

    @property
    def notes(self) -> list[str]:
        """One line per metric whose pairs are too few for any change to be significant."""
        return [f"{metric.metric}: {metric.note}" for metric in self.metrics if metric.note]

    @property
    def regressions(self) -> list[MetricDelta]:
        """The metrics significantly lower in B."""
        return [metric for metric in self.metrics if metric.regressed]


def _percentile(ordered: Sequence[float], fraction: float) -> float:
    """Linear interpolation between the closest ranks of the sorted ``ordered``."""
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
    return _percentile(means, tail), _percentile(means, 1 - tail)


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


def _metric_delta(metric: str, pairs: Sequence[tuple[ExperimentRecord, ExperimentRecord]], *,
                  resamples: int, seed: int, alpha: float) -> MetricDelta:
    scored = [(a.scores[metric], b.scores[metric]) for a, b in pairs if metric in a.scores and metric in b.scores]
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
                       min_p_value=floor, note=_too_few(differences, floor, alpha))


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


def _too_few(differences: Sequence[float], floor: float, alpha: float) -> str | None:
    if floor < alpha:
        return None
    unchanged = sum(abs(d) <= _TOLERANCE for d in differences)
    pairs = f"{len(differences)} paired queries" + (f" ({unchanged} with the same score)" if unchanged else "")
    return (f"with {pairs} the smallest possible p-value is {floor:.4g} > {alpha:g}: no regression can be "
            "significant; add queries or repeat runs")


def compare(a: ExperimentResult, b: ExperimentResult, *, resamples: int = 2000, seed: int = 0,
            alpha: float = 0.05) -> Comparison:
    """Experiment ``b`` against experiment ``a`` (see the module docstring)."""
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    by_key_b = {record.key: record for record in b.records}
    keys_a = {record.key for record in a.records}
    pairs = [(record, by_key_b[record.key]) for record in a.records if record.key in by_key_b]
    metrics = list(dict.fromkeys([*a.metric_names, *b.metric_names]))
    newly_failed, newly_passed = [], []
    for first, second in pairs:
        if first.status == "passed" and second.status != "passed":
            newly_failed.append(_change(first, second))
        elif second.status == "passed" and first.status != "passed":
            newly_passed.append(_change(first, second))
    return Comparison(
        source_a=a.source, source_b=b.source, pairs=len(pairs), alpha=alpha, resamples=resamples, seed=seed,
        metrics=[_metric_delta(m, pairs, resamples=resamples, seed=seed, alpha=alpha) for m in metrics],
        newly_failed=newly_failed, newly_passed=newly_passed,
        only_in_a=[r.key for r in a.records if r.key not in by_key_b],
        only_in_b=[r.key for r in b.records if r.key not in keys_a],
    )


def _change(a: ExperimentRecord, b: ExperimentRecord) -> VerdictChange:
    return VerdictChange(query_index=a.query_index, query=a.query, status_a=a.status, status_b=b.status)
