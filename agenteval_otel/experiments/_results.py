"""An experiment's results: one graded record per query of a simulation run, per-metric
statistics, and their JSONL file.

The file holds one :class:`ExperimentRecord` per line, in query order, then one summary line
``{"summary": {...}}``; while an experiment runs, the records are appended as they are graded
and the summary line is not there yet (an :class:`ExperimentSummary`: counts and per-metric statistics, for
readers such as ``jq``). Loading reads the records back and recomputes the statistics from them;
a line that cannot be read is an :class:`~agenteval_otel.errors.ExperimentLoadError` naming the
file and the line.

>>> result = ExperimentResult(records=[
...     ExperimentRecord(query_index=0, query="a", scores={"helpfulness": 1.0},
...                      metric_passed={"helpfulness": True}, passed=True),
...     ExperimentRecord(query_index=1, query="b", scores={"helpfulness": 0.25},
...                      metric_passed={"helpfulness": False})])
>>> stats = result.summary.metrics["helpfulness"]
>>> stats.mean, stats.count, stats.pass_rate
(0.625, 2, 0.5)
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenteval_otel.errors import ExperimentLoadError
from agenteval_otel.experiments._progress import replace_atomically
from agenteval_otel.loading import read_jsonl, validation_message
from agenteval_otel.results import CriterionStats, EvalSummary

__all__ = ["ExperimentRecord", "ExperimentResult", "ExperimentSummary", "MetricStats", "is_summary_line",
           "metric_stats"]

RecordStatus = Literal["passed", "failed", "errored"]


class ExperimentRecord(BaseModel):
    """One query of a simulation run, graded.

    ``scores``: metric name → score (a grader's metrics, or the criteria's names);
    ``metric_passed``: whether each metric reached its threshold; ``passed``: every metric did
    and nothing errored. ``error`` / ``error_type``: why the record could not be (fully) graded
    (the agent's run failed, the grader failed, a criterion errored); the metrics that were
    scored keep their scores. ``reasons``: each metric's reason, when it gave one; ``reply``:
    the grader's raw reply.
    """

    model_config = ConfigDict(extra="forbid")

    query_index: int
    query: str
    ground_truth: Any = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    response: str | None = None
    trace_id: str | None = None
    duration_seconds: float = 0.0
    scores: dict[str, float] = Field(default_factory=dict)
    metric_passed: dict[str, bool] = Field(default_factory=dict)
    reasons: dict[str, str] = Field(default_factory=dict)
    reply: str | None = None
    passed: bool = False
    error: str | None = None
    error_type: str | None = None

    @property
    def status(self) -> RecordStatus:
        """``errored`` when an error is set, else ``passed`` or ``failed``."""
        if self.error is not None:
            return "errored"
        return "passed" if self.passed else "failed"

    @property
    def key(self) -> tuple[int, str]:
        """What pairs this record with the same query in another experiment."""
        return self.query_index, self.query


class MetricStats(BaseModel):
    """One metric over the records that have a score for it.

    ``std_dev`` is the sample standard deviation (n − 1; 0.0 for one score); ``pass_rate`` is
    the share of those records where the metric reached its threshold.
    """

    model_config = ConfigDict(extra="forbid")

    metric: str
    count: int
    passed: int
    mean: float
    median: float
    std_dev: float
    min: float
    max: float
    pass_rate: float


def is_summary_line(line: bytes) -> bool:
    """Whether ``line`` of an experiment file is its summary line (not a record)."""
    return line.lstrip().startswith(b'{"summary"')


def metric_stats(metric: str, scores: Sequence[float], passed: Sequence[bool]) -> MetricStats:
    """The statistics of ``scores`` (at least one), ``passed`` saying which reached the threshold."""
    if not scores:
        raise ValueError(f"metric {metric!r}: no score to summarise")
    return MetricStats(
        metric=metric, count=len(scores), passed=sum(passed), mean=statistics.fmean(scores),
        median=statistics.median(scores), std_dev=statistics.stdev(scores) if len(scores) > 1 else 0.0,
        min=min(scores), max=max(scores), pass_rate=sum(passed) / len(scores))


class ExperimentSummary(BaseModel):
    """Counts of records (``total = passed + failed + errored``) and each metric's statistics."""

    model_config = ConfigDict(extra="forbid")

    total: int
    passed: int
    failed: int
    errored: int
    metrics: dict[str, MetricStats] = Field(default_factory=dict)
    source: str | None = None
    graded_by: str | None = None


class ExperimentResult(BaseModel):
    """The records of an experiment, in query order; ``source`` names the simulation run graded
    and ``graded_by`` the grader or the criteria."""

    model_config = ConfigDict(extra="forbid")

    records: list[ExperimentRecord] = Field(default_factory=list)
    source: str | None = None
    graded_by: str | None = None

    @property
    def passed(self) -> bool:
        """Whether every record passed (and there is at least one)."""
        return bool(self.records) and all(r.status == "passed" for r in self.records)

    @property
    def metric_names(self) -> list[str]:
        """Every metric scored, in the order first seen."""
        return list(dict.fromkeys(name for record in self.records for name in record.scores))

    @property
    def summary(self) -> ExperimentSummary:
        """Counts and per-metric statistics, computed from the records."""
        statuses = [record.status for record in self.records]
        metrics = {}
        for name in self.metric_names:
            scored = [r for r in self.records if name in r.scores]
            metrics[name] = metric_stats(name, [r.scores[name] for r in scored],
                                         [r.metric_passed.get(name, False) for r in scored])
        return ExperimentSummary(total=len(statuses), passed=statuses.count("passed"),
                                 failed=statuses.count("failed"), errored=statuses.count("errored"),
                                 metrics=metrics, source=self.source, graded_by=self.graded_by)

    def eval_summary(self) -> EvalSummary:
        """The experiment as a run's summary (what the run history records): records as cases,
        metrics as criteria.

        >>> ExperimentResult(records=[ExperimentRecord(query_index=0, query="a", scores={"m": 0.5},
        ...                                            passed=True)]).eval_summary().criterion_stats["m"].mean
        0.5
        """
        summary = self.summary
        case_means = [statistics.fmean(r.scores.values()) for r in self.records if r.scores]
        return EvalSummary(
            total_cases=summary.total, passed_cases=summary.passed, failed_cases=summary.failed,
            error_cases=summary.errored, pass_rate=summary.passed / summary.total if summary.total else 0.0,
            avg_score=statistics.fmean(case_means) if case_means else 0.0,
            criterion_stats={name: CriterionStats(count=m.count, passed=m.passed, mean=m.mean, min=m.min, max=m.max,
                                                  pass_rate=m.pass_rate) for name, m in summary.metrics.items()})

    # --- JSONL ------------------------------------------------------------------------------------
    def jsonl_lines(self) -> Iterable[str]:
        """The file's lines (see the module docstring), each ending with a newline."""
        for record in self.records:
            yield record.model_dump_json() + "\n"
        yield json.dumps({"summary": self.summary.model_dump(mode="json")}) + "\n"

    def write_jsonl(self, path: str | Path) -> Path:
        """Write the records and the summary line to ``path``, whole or not at all; returns the path."""
        target = Path(path)
        replace_atomically(target, "".join(self.jsonl_lines()).encode())
        return target

    @classmethod
    def load_jsonl(cls, path: str | Path) -> ExperimentResult:
        """The experiment in a file written by :meth:`write_jsonl`; ``ExperimentLoadError``
        naming the file, the line and what was expected."""
        records: list[ExperimentRecord] = []
        summary: dict[str, Any] = {}
        for number, data in read_jsonl(path, ExperimentLoadError, "a graded record"):
            if set(data) == {"summary"}:
                summary = data["summary"] if isinstance(data["summary"], dict) else {}
                continue
            try:
                record = ExperimentRecord.model_validate(data)
            except ValidationError as exc:
                raise ExperimentLoadError(validation_message(f"{path}: line {number}", exc)) from None
            bad = [name for name, score in record.scores.items() if not math.isfinite(score)]
            if bad:
                raise ExperimentLoadError(f"{path}: line {number}: scores.{bad[0]}: expected a finite number")
            records.append(record)
        if not records:
            raise ExperimentLoadError(f"{path}: no record in it (expected one JSON object per graded query, "
                                      "as written by 'agenteval experiment run')")
        source, graded_by = summary.get("source"), summary.get("graded_by")
        return cls(records=records, source=source if isinstance(source, str) else None,
                   graded_by=graded_by if isinstance(graded_by, str) else None)
