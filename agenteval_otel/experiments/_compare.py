"""Comparing two experiments on the same query set: per-metric deltas, a paired bootstrap
confidence interval, a paired significance test, and the queries whose verdict changed.

Records are paired by ``(query_index, query)``; records with no partner are listed, not
compared. For each metric, only the pairs where both records have a score count: ``mean_a``,
``mean_b`` and ``delta = mean_b - mean_a`` are over those pairs. The statistics (a paired
bootstrap 95% interval, an exact or Monte Carlo sign-flip permutation test, and the note when
the pairs are too few for any change to be significant: :attr:`Comparison.notes`) are the
results stage's paired ones, shared with ``agenteval run|eval --baseline``; their module
(``agenteval_otel.results.metric_delta``) says how each is computed.

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

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from agenteval_otel.experiments._results import ExperimentRecord, ExperimentResult, RecordStatus
from agenteval_otel.results import (
    EXACT_STATES,
    MetricDelta,
    bootstrap_interval,
    metric_delta,
    sign_flip_p_value,
    smallest_p_value,
)

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


def _metric_delta(metric: str, pairs: Sequence[tuple[ExperimentRecord, ExperimentRecord]], *,
                  resamples: int, seed: int, alpha: float) -> MetricDelta:
    scored = [(a.scores[metric], b.scores[metric]) for a, b in pairs if metric in a.scores and metric in b.scores]
    return metric_delta(metric, scored, resamples=resamples, seed=seed, alpha=alpha)


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
