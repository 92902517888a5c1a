"""Performance evaluation: latency and memory of a function or agent over repeated runs.

After ``warmup_runs`` untimed calls, ``num_iterations`` calls are timed with nothing else going
on (memory tracing off), then ``num_iterations`` more are measured with ``tracemalloc``: the
statistics of each measure never pay for the other's instrument.

>>> result = PerformanceCheck(num_iterations=5, warmup_runs=1,
...                               thresholds={"latency.p95": 1.0}).evaluate(sorted, [3, 1, 2])
>>> result.passed, result.num_iterations, len(result.all_runs)
(True, 5, 5)
"""

from __future__ import annotations

import gc
import inspect
import math
import statistics
import time
import tracemalloc
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator

from agenteval_otel.errors import ConfigError
from agenteval_otel.evaluation import entry_point, is_async_callable, run_sync

__all__ = ["PerformanceEvaluationResult", "PerformanceCheck", "PerformanceRunResult", "describe",
           "parse_threshold"]

MIB = 1024 * 1024
"""Bytes in a MiB, the unit of the ``memory.*_mb`` thresholds."""


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


_MEASURES = {
    "latency": "latency_stats",
    "memory_increase": "memory_increase_stats",
    "memory_peak": "memory_peak_stats",
}
_STATISTICS = ("average", "median", "min", "max", "std_dev", "p95", "p99")
_SHORTHANDS = {
    "memory.peak_mb": ("memory_peak_stats", "max", MIB),
    "memory.increase_mb": ("memory_increase_stats", "max", MIB),
}


def parse_threshold(key: str) -> tuple[str, str, float]:
    """The statistics field, the statistic and the unit (bytes or seconds per unit of the
    threshold) a threshold key names; :class:`ConfigError` for a key that names none."""
    if key in _SHORTHANDS:
        return _SHORTHANDS[key]
    measure, _, statistic = key.partition(".")
    if measure in _MEASURES and statistic in _STATISTICS:
        return _MEASURES[measure], statistic, 1.0
    raise ConfigError(
        f"unknown performance threshold {key!r}: expected '<measure>.<statistic>' with measure one of "
        f"latency (seconds), memory_increase, memory_peak (bytes) and statistic one of "
        f"{', '.join(_STATISTICS)}; or memory.peak_mb / memory.increase_mb (the largest, in MiB)")


def _checked_thresholds(thresholds: Mapping[str, float]) -> dict[str, float]:
    for key, limit in thresholds.items():
        parse_threshold(key)
        if not isinstance(limit, (int, float)) or isinstance(limit, bool) or not math.isfinite(limit):
            raise ConfigError(f"performance threshold {key!r} must be a finite number, got {limit!r}")
    return dict(thresholds)


def _stat(stats: Mapping[str, float], name: str, unit: float = 1.0) -> str:
    return f"{stats[name] / unit:.4g}" if name in stats else "n/a"


class PerformanceEvaluationResult(BaseModel):
    """Statistics over every measured run.

    ``all_runs[i]`` pairs the latency of timed run *i* with the memory of memory run *i*.
    ``thresholds`` maps ``"<measure>.<statistic>"`` (measure: latency in seconds,
    memory_increase or memory_peak in bytes; statistic: average, median, min, max, std_dev, p95,
    p99) or ``memory.peak_mb`` / ``memory.increase_mb`` (the largest over the runs, in MiB) to
    the highest value that passes, e.g. ``{"latency.p95": 2.0, "memory.peak_mb": 50}``.
    """

    model_config = ConfigDict(from_attributes=True, extra="forbid")

    all_runs: list[PerformanceRunResult]
    num_iterations: int
    warmup_runs: int
    latency_stats: dict[str, float]
    memory_increase_stats: dict[str, float]
    memory_peak_stats: dict[str, float]
    thresholds: dict[str, float] = Field(default_factory=dict)

    @field_validator("thresholds")
    @classmethod
    def _known_thresholds(cls, thresholds: dict[str, float]) -> dict[str, float]:
        return _checked_thresholds(thresholds)

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
        """One line per threshold the statistics exceed (or lack)."""
        lines = []
        for key, limit in self.thresholds.items():
            field, statistic, unit = parse_threshold(key)
            stats: dict[str, float] = getattr(self, field)
            if statistic not in stats:
                lines.append(f"{key}: {field} has no {statistic!r}")
            elif stats[statistic] / unit > limit:
                lines.append(f"{key} = {stats[statistic] / unit:.6g} exceeds {limit:.6g}")
        return lines

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """Whether every statistic stays within its threshold."""
        return not self.exceeded()

    @property
    def summary(self) -> str:
        """One line: the verdict, latency and memory, and the thresholds exceeded."""
        lat, peak, increase = self.latency_stats, self.memory_peak_stats, self.memory_increase_stats
        text = (
            f"performance {'passed' if self.passed else 'failed'} over {self.num_iterations} run(s) after "
            f"{self.warmup_runs} warm-up run(s): latency median {_stat(lat, 'median')}s, p95 {_stat(lat, 'p95')}s, "
            f"p99 {_stat(lat, 'p99')}s, max {_stat(lat, 'max')}s; memory peak max {_stat(peak, 'max', MIB)} MiB, "
            f"increase max {_stat(increase, 'max', MIB)} MiB"
        )
        problems = self.exceeded()
        return text if not problems else f"{text}; exceeded: {'; '.join(problems)}"

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` whose message is the summary if a threshold is exceeded."""
        __tracebackhide__ = True  # pytest shows the caller's line, not this one
        if not self.passed:
            raise AssertionError(self.summary)


class PerformanceCheck:
    """Measures the latency and memory of a function or agent over repeated runs.

    ``target`` is a sync or async callable, or an object with ``arun``/``run``; each run calls it
    with the ``*args`` and ``**kwargs`` given to :meth:`evaluate`. The target is called
    ``warmup_runs`` times untimed, ``num_iterations`` times timed (wall clock, memory tracing
    off), then ``num_iterations`` times under ``tracemalloc`` for the memory it keeps
    (``memory_increase_bytes``) and its peak, both relative to the start of the run. A sync
    target runs on the calling thread, nothing but its call between the clock readings (from
    :meth:`aevaluate`, on the event loop's thread).

    ``thresholds`` (see :class:`PerformanceEvaluationResult`) decide ``passed``; an unknown key
    is a :class:`ConfigError` here. A run that raises ends the evaluation: its exception
    propagates unchanged, with a note naming the run. ``tracemalloc`` already tracing when the
    evaluation starts is refused (the timed runs would be traced, then its traces cleared).
    """

    def __init__(self, *, num_iterations: int = 10, warmup_runs: int = 2,
                 thresholds: Mapping[str, float] | None = None) -> None:
        if num_iterations < 1:
            raise ConfigError(f"num_iterations must be at least 1, got {num_iterations!r}")
        if warmup_runs < 0:
            raise ConfigError(f"warmup_runs must be 0 or more, got {warmup_runs!r}")
        self.num_iterations = num_iterations
        self.warmup_runs = warmup_runs
        self.thresholds = _checked_thresholds(thresholds or {})

    def evaluate(self, target: Any, /, *args: Any, **kwargs: Any) -> PerformanceEvaluationResult:
        """Measure ``target(*args, **kwargs)``; an async target runs on an event loop of its own
        (``await aevaluate`` inside a running one)."""
        fn = entry_point(target)
        if is_async_callable(fn):
            return run_sync(self.aevaluate(target, *args, **kwargs), "PerformanceCheck.aevaluate")

        def call() -> Any:
            result = fn(*args, **kwargs)
            if inspect.isawaitable(result):
                if inspect.iscoroutine(result):
                    result.close()
                raise ConfigError(f"{target!r} returned an awaitable; measure it with "
                                  "'await PerformanceCheck.aevaluate(...)'")
            return result

        return _complete(self._measure(call))

    async def aevaluate(self, target: Any, /, *args: Any, **kwargs: Any) -> PerformanceEvaluationResult:
        """Measure ``target(*args, **kwargs)``, awaiting what it returns when awaitable."""
        fn = entry_point(target)
        return await self._measure(lambda: fn(*args, **kwargs))

    async def _measure(self, call: Callable[[], Any]) -> PerformanceEvaluationResult:
        """The three phases over ``call``: never suspends unless ``call`` returns an awaitable."""
        if tracemalloc.is_tracing():
            raise ConfigError("tracemalloc is already tracing: the timed runs would be traced too; "
                              "stop it (tracemalloc.stop()) before a performance evaluation")
        position = _Position()
        try:
            for _ in position.runs("warm-up", self.warmup_runs):
                result = call()
                if inspect.isawaitable(result):
                    await result
            latencies: list[float] = []
            for _ in position.runs("timed", self.num_iterations):
                start = time.perf_counter()
                result = call()
                if inspect.isawaitable(result):
                    await result
                latencies.append(time.perf_counter() - start)
            memory: list[tuple[int, int]] = []
            tracemalloc.start()
            try:
                for _ in position.runs("memory", self.num_iterations):
                    gc.collect()
                    tracemalloc.reset_peak()
                    before = tracemalloc.get_traced_memory()[0]
                    result = call()
                    if inspect.isawaitable(result):
                        result = await result
                    current, peak = tracemalloc.get_traced_memory()
                    del result
                    memory.append((current - before, max(0, peak - before)))
            finally:
                tracemalloc.stop()
        except ConfigError:
            raise
        except Exception as error:
            add_note = getattr(error, "add_note", None)  # Python 3.11+
            if add_note is not None:
                add_note(f"raised by {position} of a performance evaluation")
            raise
        runs = [PerformanceRunResult(latency_seconds=latency, memory_increase_bytes=increase,
                                     memory_peak_bytes=peak)
                for latency, (increase, peak) in zip(latencies, memory)]
        return PerformanceEvaluationResult.from_runs(runs, warmup_runs=self.warmup_runs, thresholds=self.thresholds)


class _Position:
    """Which run of which phase is under way, to name it when a run raises."""

    def __init__(self) -> None:
        self.phase, self.index, self.total = "", 0, 0

    def runs(self, phase: str, total: int) -> Iterator[int]:
        self.phase, self.total = phase, total
        for self.index in range(total):
            yield self.index

    def __str__(self) -> str:
        return f"{self.phase} run {self.index + 1} of {self.total}"


def _complete(coroutine: Coroutine[Any, Any, PerformanceEvaluationResult]) -> PerformanceEvaluationResult:
    """The result of a coroutine that never suspends, without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("a performance measurement of a sync target suspended")
