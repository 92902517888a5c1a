"""Reports that scale: what a report file keeps of a large run, and the aggregates it keeps.

Up to ``ReportLimits.full_cases`` cases a report lists every case in full. Above it the HTML and
JSON reports keep the summary, each criterion's statistics and the distributions (scores per
criterion, pass rate per tag, latency and tokens), list the first ``full_failures`` failed or
errored cases in full, and count the rest (passed cases are counted, never listed).

>>> from agenteval_otel.results import EvalCaseResult, EvalReport
>>> cases = [EvalCaseResult(eval_id=f"c{i}", passed=i % 3 != 0) for i in range(9)]
>>> small = scaled_report(EvalReport.from_results("s", cases), ReportLimits(full_cases=4, full_failures=2))
>>> [case.eval_id for case in small.results], small.omitted
(['c0', 'c3'], {'passed': 6, 'failed': 1, 'errored': 0})
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenteval_otel.reports._plots import bin_counts, percentiles
from agenteval_otel.results import EvalCaseResult, EvalReport

__all__ = ["DEFAULT_FULL_CASES", "DEFAULT_FULL_FAILURES", "ReportLimits", "scaled_report"]

DEFAULT_FULL_CASES = 500
DEFAULT_FULL_FAILURES = 20
SCORE_BINS = 10
_PERCENTILES = (50, 90, 95, 99)

CaseTags = Mapping[str, Sequence[str]]
"""The tags of each eval case, by eval id (from the eval set; results do not carry them)."""


@dataclass(frozen=True)
class ReportLimits:
    """How much of a run a report file lists: every case up to ``full_cases`` cases; above,
    the first ``full_failures`` failed or errored cases in full and counts for the rest."""

    full_cases: int = DEFAULT_FULL_CASES
    full_failures: int = DEFAULT_FULL_FAILURES

    def __post_init__(self) -> None:
        for name in ("full_cases", "full_failures"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be 0 or more, got {getattr(self, name)}")

    def lists_all(self, cases: int) -> bool:
        """Whether a report of ``cases`` cases lists every one of them."""
        return cases <= self.full_cases


@dataclass
class Aggregates:
    """What the plots of a report show, gathered one case at a time: each criterion's scores,
    each tag's cases passed and run, and each case's agent time and tokens."""

    tags: CaseTags = field(default_factory=dict)
    scores: dict[str, array[float]] = field(default_factory=dict)
    thresholds: dict[str, Counter[float]] = field(default_factory=dict)
    tag_cases: dict[str, list[int]] = field(default_factory=dict)
    latency_s: array[float] = field(default_factory=lambda: array("d"))
    tokens: array[float] = field(default_factory=lambda: array("d"))

    def add(self, case: EvalCaseResult) -> None:
        """Count ``case`` in."""
        for r in case.criterion_results:
            self.thresholds.setdefault(r.criterion, Counter())[r.threshold] += 1
            if r.error is None:
                self.scores.setdefault(r.criterion, array("d")).append(r.score)
        for tag in self.tags.get(case.eval_id, ()):
            tally = self.tag_cases.setdefault(tag, [0, 0])
            tally[0] += case.status == "passed"
            tally[1] += 1
        latency = case_latency(case)
        if latency is not None:
            self.latency_s.append(latency)
        tokens = case_tokens(case)
        if tokens is not None:
            self.tokens.append(tokens)

    def threshold(self, criterion: str) -> float | None:
        """The threshold ``criterion`` was scored against (the most common one, should they vary)."""
        counts = self.thresholds.get(criterion)
        return counts.most_common(1)[0][0] if counts else None

    def as_data(self) -> dict[str, Any]:
        """The distributions as JSON data: per criterion the score histogram (``SCORE_BINS``
        bins from 0 to 1) and percentiles, per tag the cases passed and run, and the
        percentiles of agent time (seconds) and tokens per case."""
        def spread(values: Sequence[float]) -> dict[str, float]:
            found = percentiles(values, _PERCENTILES)
            return {"count": len(values), **({"min": min(values), "max": max(values)} if values else {}),
                    **{f"p{int(k)}": v for k, v in found.items()}}

        return {
            "criteria": {name: {"histogram": bin_counts(values, SCORE_BINS, 0.0, 1.0)[0], **spread(values)}
                         for name, values in self.scores.items()},
            "tags": {tag: {"passed": passed, "cases": total} for tag, (passed, total) in self.tag_cases.items()},
            "latency_s": spread(self.latency_s),
            "tokens": spread(self.tokens),
        }


def case_latency(case: EvalCaseResult) -> float | None:
    """The agent's time on ``case`` in seconds (its turns' spans), else the case's own time."""
    if "duration_s" in case.metrics:
        return case.metrics["duration_s"]
    return case.duration_seconds or None


def case_tokens(case: EvalCaseResult) -> float | None:
    """The model tokens (input and output) ``case`` used, if they were counted."""
    if "input_tokens" not in case.metrics and "output_tokens" not in case.metrics:
        return None
    return case.metrics.get("input_tokens", 0.0) + case.metrics.get("output_tokens", 0.0)


def scaled_report(report: EvalReport, limits: ReportLimits, tags: CaseTags | None = None) -> EvalReport:
    """``report`` as a report file keeps it: itself up to ``limits.full_cases`` cases; above, a
    copy listing the first ``limits.full_failures`` failed or errored cases, with ``omitted``
    (the cases counted, not listed, by status) and ``distributions`` (:meth:`Aggregates.as_data`)
    set. Each case result is read once."""
    if limits.lists_all(len(report.results)):
        return report
    aggregates = Aggregates(tags or {})
    listed: list[EvalCaseResult] = []
    omitted = {"passed": 0, "failed": 0, "errored": 0}
    for case in report.results:
        aggregates.add(case)
        if case.status != "passed" and len(listed) < limits.full_failures:
            listed.append(case)
        else:
            omitted[case.status] += 1
    return report.model_copy(update={"results": listed, "omitted": omitted,
                                     "distributions": aggregates.as_data()})
