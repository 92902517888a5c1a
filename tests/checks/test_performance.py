"""PerformanceCheck: warm-up, timed runs without memory tracing, memory runs apart, statistics
and thresholds, over plain functions and real agents traced with @agent/@tool."""

from __future__ import annotations

import asyncio
import math
import random
import sys
import tracemalloc
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import ValidationError

from agenteval_otel import agent, tool
from agenteval_otel.checks import PerformanceCheck, PerformanceEvaluationResult, PerformanceRunResult
from agenteval_otel.checks._performance import describe
from agenteval_otel.errors import ConfigError

MIB = 1024 * 1024


@tool
def lookup(city: str) -> str:
    return f"18°C in {city}"


@agent(name="weather-agent")
def weather_agent(query: str) -> str:
    return lookup(query.split()[-1])


@pytest.fixture(autouse=True)
def untraced_memory() -> Iterator[None]:
    """Every test starts and ends with tracemalloc off."""
    assert not tracemalloc.is_tracing()
    yield
    assert not tracemalloc.is_tracing()


def test_warm_up_runs_are_not_measured_and_only_memory_runs_are_traced() -> None:
    tracing: list[bool] = []

    def probe() -> None:
        tracing.append(tracemalloc.is_tracing())

    result = PerformanceCheck(num_iterations=3, warmup_runs=2).evaluate(probe)
    # 2 warm-up calls and 3 timed calls untraced, then 3 memory calls traced
    assert tracing == [False] * 5 + [True] * 3
    assert (result.num_iterations, result.warmup_runs, len(result.all_runs)) == (3, 2, 3)


def test_memory_kept_and_peak_are_measured_per_run() -> None:
    kept: list[bytearray] = []

    def allocate() -> int:
        kept.append(bytearray(MIB))  # kept: the run's net increase
        scratch = bytearray(4 * MIB)  # freed before returning: only in the peak
        return len(scratch)

    result = PerformanceCheck(num_iterations=3, warmup_runs=1).evaluate(allocate)
    assert len(kept) == 1 + 3 + 3
    for run in result.all_runs:
        assert MIB <= run.memory_increase_bytes < 1.1 * MIB
        assert 5 * MIB <= run.memory_peak_bytes < 5.2 * MIB
        assert run.latency_seconds > 0
    assert result.memory_peak_stats["max"] == max(r.memory_peak_bytes for r in result.all_runs)
    assert result.latency_stats == describe([r.latency_seconds for r in result.all_runs])


def test_arguments_reach_the_target_and_an_object_with_run_is_called_through_it() -> None:
    seen: list[tuple[str, int]] = []

    class Agent:
        def run(self, query: str, *, depth: int) -> str:
            seen.append((query, depth))
            return query

    PerformanceCheck(num_iterations=2, warmup_runs=0).evaluate(Agent(), "hello", depth=2)
    assert seen == [("hello", 2)] * 4


def test_an_async_target_from_sync_and_async_code() -> None:
    async def slow(delay: float) -> str:
        await asyncio.sleep(delay)
        return "done"

    result = PerformanceCheck(num_iterations=2, warmup_runs=1).evaluate(slow, 0.01)
    assert result.latency_stats["min"] >= 0.01

    async def from_a_loop() -> PerformanceEvaluationResult:
        return await PerformanceCheck(num_iterations=2, warmup_runs=0).aevaluate(slow, 0.01)

    assert asyncio.run(from_a_loop()).latency_stats["min"] >= 0.01


def test_a_real_agent_is_measured_with_its_spans(exported: InMemorySpanExporter) -> None:
    result = PerformanceCheck(num_iterations=3, warmup_runs=1, thresholds={"latency.p95": 5.0}).evaluate(
        weather_agent, "weather in Paris")
    result.assert_passed()
    names = [span.name for span in exported.get_finished_spans()]
    assert names.count("execute_tool lookup") == 1 + 3 + 3


def test_percentiles_against_hand_computed_values() -> None:
    values = [float(v) for v in range(1, 21)]
    random.Random(7).shuffle(values)
    stats = describe(values)
    # nearest rank: p95 is the ceil(0.95 * 20) = 19th smallest, p99 the ceil(19.8) = 20th
    assert (stats["p95"], stats["p99"]) == (19.0, 20.0)
    assert (stats["min"], stats["max"], stats["median"], stats["average"]) == (1.0, 20.0, 10.5, 10.5)
    assert stats["std_dev"] == pytest.approx(math.sqrt(35.0))  # sample variance of 1..20 is 35
    small = describe([0.3, 0.1, 0.2])  # with 3 values p95 and p99 are the largest
    assert (small["p95"], small["p99"], small["median"]) == (0.3, 0.3, 0.2)


def _result(**thresholds: float) -> PerformanceEvaluationResult:
    """100 runs: latency 0.01..1.00 s, increase 1..100 KiB, peak 0.1..10 MiB."""
    runs = [PerformanceRunResult(latency_seconds=i / 100, memory_increase_bytes=i * 1024,
                                 memory_peak_bytes=i * MIB // 10) for i in range(1, 101)]
    return PerformanceEvaluationResult.from_runs(
        runs, warmup_runs=2, thresholds={k.replace("__", "."): v for k, v in thresholds.items()})


HEAD = ("performance {} over 100 run(s) after 2 warm-up run(s): latency median 0.505s, p95 0.95s, p99 0.99s, "
        "max 1s; memory peak max 10 MiB, increase max 0.09766 MiB")


@pytest.mark.parametrize(("key", "passing", "failing", "line"), [
    ("latency.average", 0.505, 0.5, "latency.average = 0.505 exceeds 0.5"),
    ("latency.median", 0.6, 0.5, "latency.median = 0.505 exceeds 0.5"),
    ("latency.min", 0.01, 0.005, "latency.min = 0.01 exceeds 0.005"),
    ("latency.max", 1.0, 0.99, "latency.max = 1 exceeds 0.99"),
    ("latency.std_dev", 0.3, 0.25, "latency.std_dev = 0.290115 exceeds 0.25"),
    ("latency.p95", 0.95, 0.9, "latency.p95 = 0.95 exceeds 0.9"),
    ("latency.p99", 0.99, 0.98, "latency.p99 = 0.99 exceeds 0.98"),
    ("memory_peak.p95", 10 * MIB, 9 * MIB, "memory_peak.p95 = 9.96147e+06 exceeds 9.43718e+06"),
    ("memory_increase.max", 102400, 100000, "memory_increase.max = 102400 exceeds 100000"),
    ("memory.peak_mb", 10, 9.5, "memory.peak_mb = 10 exceeds 9.5"),
    ("memory.increase_mb", 0.1, 0.09, "memory.increase_mb = 0.0976562 exceeds 0.09"),
])
def test_each_threshold(key: str, passing: float, failing: float, line: str) -> None:
    ok = _result(**{key.replace(".", "__"): passing})
    assert ok.passed and ok.exceeded() == []
    ok.assert_passed()
    assert ok.summary == HEAD.format("passed")
    bad = _result(**{key.replace(".", "__"): failing})
    assert not bad.passed and bad.exceeded() == [line]
    with pytest.raises(AssertionError) as raised:
        bad.assert_passed()
    assert str(raised.value) == bad.summary == f"{HEAD.format('failed')}; exceeded: {line}"


def test_several_thresholds_exceeded_are_all_in_the_message() -> None:
    bad = _result(latency__p99=0.5, memory__peak_mb=1, latency__min=1)
    assert bad.summary == (f"{HEAD.format('failed')}; exceeded: latency.p99 = 0.99 exceeds 0.5; "
                           "memory.peak_mb = 10 exceeds 1")


def test_a_measured_threshold_failure_carries_the_summary() -> None:
    def allocate() -> int:
        return len(bytearray(4 * MIB))

    result = PerformanceCheck(num_iterations=2, warmup_runs=0, thresholds={"memory.peak_mb": 1}).evaluate(
        allocate)
    assert not result.passed
    assert result.exceeded() == [f"memory.peak_mb = {result.memory_peak_stats['max'] / MIB:.6g} exceeds 1"]
    with pytest.raises(AssertionError) as raised:
        result.assert_passed()
    assert str(raised.value) == result.summary and result.summary.startswith("performance failed over 2 run(s)")


def test_unknown_thresholds_and_bad_settings_are_refused_up_front() -> None:
    with pytest.raises(ConfigError) as raised:
        PerformanceCheck(thresholds={"latency.p90": 1.0})
    assert str(raised.value) == (
        "unknown performance threshold 'latency.p90': expected '<measure>.<statistic>' with measure one of "
        "latency (seconds), memory_increase, memory_peak (bytes) and statistic one of average, median, min, "
        "max, std_dev, p95, p99; or memory.peak_mb / memory.increase_mb (the largest, in MiB)")
    for key in ("memory.p95", "latency", "peak_mb", "memory.peak_gb"):
        with pytest.raises(ConfigError, match="unknown performance threshold"):
            PerformanceCheck(thresholds={key: 1.0})
    with pytest.raises(ConfigError, match="'latency.p95' must be a finite number, got nan"):
        PerformanceCheck(thresholds={"latency.p95": float("nan")})
    with pytest.raises(ValidationError, match="unknown performance threshold 'cpu.max'"):
        _result(cpu__max=1.0)
    with pytest.raises(ConfigError, match="num_iterations must be at least 1, got 0"):
        PerformanceCheck(num_iterations=0)
    with pytest.raises(ConfigError, match="warmup_runs must be 0 or more, got -1"):
        PerformanceCheck(warmup_runs=-1)


@pytest.mark.parametrize(("failing_call", "note"), [
    (2, "raised by warm-up run 2 of 2 of a performance evaluation"),
    (4, "raised by timed run 2 of 3 of a performance evaluation"),
    (7, "raised by memory run 2 of 3 of a performance evaluation"),
])
def test_a_run_that_raises_ends_the_evaluation_with_its_own_exception(failing_call: int, note: str) -> None:
    failure = ValueError("the agent broke")
    calls: list[int] = []

    def flaky() -> None:
        calls.append(1)
        if len(calls) == failing_call:
            raise failure

    with pytest.raises(ValueError) as raised:
        PerformanceCheck(num_iterations=3, warmup_runs=2).evaluate(flaky)
    assert raised.value is failure and len(calls) == failing_call
    if sys.version_info >= (3, 11):  # exceptions take notes from Python 3.11 on
        assert raised.value.__notes__ == [note]
    # the autouse fixture checks that tracemalloc was stopped


def test_memory_tracing_already_on_is_refused() -> None:
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match="tracemalloc is already tracing"):
            PerformanceCheck().evaluate(lambda: None)
        assert tracemalloc.is_tracing()  # the user's tracing is left alone
    finally:
        tracemalloc.stop()


def test_a_sync_target_returning_an_awaitable_is_pointed_to_aevaluate() -> None:
    async def work() -> None:
        return None

    with pytest.raises(ConfigError, match=r"returned an awaitable; measure it with 'await "
                                          r"PerformanceCheck.aevaluate\(...\)'"):
        PerformanceCheck(warmup_runs=1).evaluate(lambda: work())
