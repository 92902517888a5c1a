"""Performance evaluation results: latency and memory over repeated runs.

Latency runs are timed without memory tracing; memory is measured in separate runs.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, computed_field

__all__ = ["PerformanceEvaluationResult", "PerformanceRunResult", "describe"]


class PerformanceRunResult(BaseModel):
    """The raw measurements of one run."""

    model_config = ConfigDict(from_attributes=True, extra="forbid")

    latency_seconds: float = Field(ge=0)
    memory_increase_bytes: int
    memory_peak_bytes: int = Field(ge=0)


def _percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of already sorted values."""
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return float(sorted_values[rank - 1])


def describe(values: Sequence[float]) -> dict[str, float]:
    """average, median, min, max, std_dev, p95 and p99 of ``values``."""
    if not values:
        raise ValueError("no values to describe")
    ordered = sorted(values)
    return {
        "average": statistics.fmean(ordered),
        "median": statistics.median(ordered),
        "min": float(ordered[0]),
        "max": float(ordered[-1]),
        "std_dev": statistics.stdev(ordered) if len(ordered) > 1 else 0.0,
        "p95": _percentile(ordered, 0.95),
        "p99": _percentile(ordered, 0.99),
    }


_STATS_FIELDS = {
    "latency": "latency_stats",
    "memory_increase": "memory_increase_stats",
    "memory_peak": "memory_peak_stats",
}


class PerformanceEvaluationResult(BaseModel):
    """Statistics over every measured run.

    ``thresholds`` maps ``"<measure>.<statistic>"`` (measure: latency, memory_increase,
    memory_peak; statistic: average, median, min, max, std_dev, p95, p99) to the highest value
    that passes, e.g. ``{"latency.p95": 2.0}``.
    """

    model_config = ConfigDict(from_attributes=True, extra="forbid")

    all_runs: list[PerformanceRunResult]
    num_iterations: int
    warmup_runs: int
    latency_stats: dict[str, float]
    memory_increase_stats: dict[str, float]
    memory_peak_stats: dict[str, float]
    thresholds: dict[str, float] = Field(default_factory=dict)

    @classmethod
    def from_runs(
        cls,
        runs: Sequence[PerformanceRunResult],
        *,
        warmup_runs: int = 0,
        thresholds: Mapping[str, float] | None = None,
    ) -> PerformanceEvaluationResult:
        """The statistics of ``runs``."""
        return cls(
            all_runs=list(runs),
            num_iterations=len(runs),
            warmup_runs=warmup_runs,
            latency_stats=describe([r.latency_seconds for r in runs]),
            memory_increase_stats=describe([r.memory_increase_bytes for r in runs]),
            memory_peak_stats=describe([r.memory_peak_bytes for r in runs]),
            thresholds=dict(thresholds or {}),
        )

    def exceeded(self) -> list[str]:
        """One line per threshold the statistics exceed."""
        lines = []
        for key, limit in self.thresholds.items():
            measure, _, stat = key.partition(".")
            field = _STATS_FIELDS.get(measure)
            stats: dict[str, float] = getattr(self, field) if field else {}
            if stat not in stats:
                lines.append(f"{key}: unknown statistic; expected e.g. 'latency.p95'")
            elif stats[stat] > limit:
                lines.append(f"{key} = {stats[stat]:.6g} exceeds {limit:.6g}")
        return lines

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """Whether every statistic stays within its threshold."""
        return not self.exceeded()

    @property
    def summary(self) -> str:
        """One line on latency and, if any, the thresholds exceeded."""
        lat = self.latency_stats
        head = (
            f"performance over {self.num_iterations} run(s): latency median "
            f"{lat['median']:.4f}s, p95 {lat.get('p95', lat['max']):.4f}s, max {lat['max']:.4f}s"
        )
        problems = self.exceeded()
        return head if not problems else head + "; " + "; ".join(problems)

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` with the summary if a threshold is exceeded."""
        __tracebackhide__ = True  # pytest shows the caller's line, not this one
        if not self.passed:
            raise AssertionError(self.summary)
