from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel import semconv as attr
from agenteval_otel.errors import SimulationLoadError
from agenteval_otel.experiments import Query, QuerySet, SimulationRecord, load_runner, simulate
from agenteval_otel.tracing import configure, release_provider

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def traced() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handle = configure(tracer_provider=provider, set_global=False)
    yield provider, exporter
    release_provider(provider)
    handle.shutdown(timeout=5)


class Interrupted(BaseException):
    """Stops a run as a kill would (a ``KeyboardInterrupt`` raised in a task also stops its event loop)."""


def _queries(*texts: str) -> QuerySet:
    return QuerySet([Query(content=text, ground_truth=f"gt {i}", metadata={"i": i}) for i, text in enumerate(texts)])


def test_each_query_is_traced_and_recorded_with_its_trajectory(
        tmp_path: Path, traced: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    provider, exporter = traced
    agent = load_runner(f"{EXAMPLES / 'weather_agent.py'}:weather_agent")
    out = tmp_path / "run.jsonl"
    records = simulate(agent, _queries("Weather in Paris?", "How warm is Tokyo in Fahrenheit?", "Hello"),
                       out=out, tracer_provider=provider, concurrency=2)
    assert [r.query_index for r in records] == [0, 1, 2]
    assert records == sorted(SimulationRecord.load_jsonl(out), key=lambda r: r.query_index)
    paris, tokyo, hello = records
    assert paris.response == "It is 18°C and sunny in Paris."
    assert (paris.ground_truth, paris.metadata) == ("gt 0", {"i": 0})
    assert [(c.name, c.args) for c in paris.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert [c.name for c in tokyo.tool_calls] == ["get_weather", "celsius_to_fahrenheit"]
    assert hello.tool_calls == [] and hello.error is None
    assert any(step.name == "plan" for step in paris.trajectory)
    trace_ids = {format(s.context.trace_id, "032x") for s in exporter.get_finished_spans()}
    assert {r.trace_id for r in records} <= trace_ids and len({r.trace_id for r in records}) == 3
    tagged = {s.attributes.get(attr.EVAL_ID) for s in exporter.get_finished_spans()}
    assert {"query-0", "query-1", "query-2"} <= tagged
    assert all(r.duration_seconds > 0 and r.cpu_seconds >= 0 and r.agent for r in records)
    assert all(r.peak_memory_bytes is None for r in records)  # overlapping runs share one peak


@pytest.mark.promise(12, 17)
def test_errors_and_timeouts_are_recorded_and_the_run_goes_on(
        tmp_path: Path, traced: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    def agent(query: str) -> str:
        if query == "boom":
            raise ValueError("no such city")
        if query == "slow":
            time.sleep(1.0)
        return query.upper()

    records = simulate(agent, _queries("a", "boom", "slow", "b"), out=tmp_path / "run.jsonl",
                       tracer_provider=traced[0], timeout_s=0.3)
    assert [(r.response, r.error_type) for r in records] == [
        ("A", None), (None, "ValueError"), (None, "TimeoutError"), ("B", None)]
    assert records[1].error == "no such city" and records[1].failed
    assert records[2].error is not None and records[2].error.startswith("timed out after 0.3 s")
    assert 0.3 <= records[2].duration_seconds < 0.9


async def test_no_more_than_concurrency_queries_run_at_once(
        tmp_path: Path, traced: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    from agenteval_otel.experiments import asimulate

    running = peak = 0

    async def agent(query: str) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05)
        running -= 1
        return query

    records = await asimulate(agent, _queries(*"abcdef"), out=tmp_path / "run.jsonl", concurrency=2,
                              tracer_provider=traced[0])
    assert [r.response for r in records] == list("abcdef")
    assert peak == 2


def test_cpu_time_is_the_agents_own_and_memory_is_measured_one_at_a_time(
        tmp_path: Path, traced: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    def agent(query: str) -> str:
        if query == "busy":
            end = time.thread_time() + 0.1
            while time.thread_time() < end:
                pass
        elif query == "idle":
            time.sleep(0.2)
        else:
            block = bytearray(8_000_000)
            del block
        return query

    records = simulate(agent, _queries("busy", "idle", "big"), out=tmp_path / "run.jsonl", concurrency=1,
                       tracer_provider=traced[0])
    busy, idle, big = records
    assert busy.cpu_seconds >= 0.1
    assert idle.duration_seconds >= 0.2 and idle.cpu_seconds < 0.05
    assert big.peak_memory_bytes is not None and big.peak_memory_bytes >= 8_000_000
    assert idle.peak_memory_bytes is not None and idle.peak_memory_bytes < 2_000_000


@pytest.mark.promise(14)
def test_an_interrupted_run_resumes_where_it_stopped(
        tmp_path: Path, traced: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    calls: list[str] = []
    stop_at = {"c"}
    lock = threading.Lock()

    def agent(query: str) -> str:
        with lock:
            calls.append(query)
        if query in stop_at:
            raise Interrupted
        return query * 2

    out = tmp_path / "run.jsonl"
    queries = _queries("a", "b", "c", "d")
    with pytest.raises(Interrupted):
        simulate(agent, queries, out=out, concurrency=1, tracer_provider=traced[0])
    assert [r.query for r in SimulationRecord.load_jsonl(out)] == ["a", "b"]
    with out.open("a") as handle:  # a record cut short by the kill
        handle.write('{"query_index": 2, "query": "c", "resp')
    stop_at.clear()
    calls.clear()
    records = simulate(agent, queries, out=out, concurrency=1, tracer_provider=traced[0])
    assert calls == ["c", "d"]
    assert [r.response for r in records] == ["aa", "bb", "cc", "dd"]
    assert [r.query for r in SimulationRecord.load_jsonl(out)] == ["a", "b", "c", "d"]
    calls.clear()
    simulate(agent, queries, out=out, resume=False, concurrency=1, tracer_provider=traced[0])
    assert calls == ["a", "b", "c", "d"] and len(SimulationRecord.load_jsonl(out)) == 4


def test_resuming_a_run_of_another_query_set_is_refused(
        tmp_path: Path, traced: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    out = tmp_path / "run.jsonl"
    simulate(str.upper, _queries("a", "b"), out=out, tracer_provider=traced[0])
    with pytest.raises(SimulationLoadError, match=r"run.jsonl: line \d: query \d .* is not in this query set"):
        simulate(str.upper, _queries("x", "y"), out=out, tracer_provider=traced[0])
    assert len(SimulationRecord.load_jsonl(out)) == 2


@pytest.mark.promise(14)
def test_a_run_with_a_bom_a_nul_filled_line_and_a_garbage_line_resumes(
        tmp_path: Path, traced: tuple[TracerProvider, InMemorySpanExporter], caplog: pytest.LogCaptureFixture) -> None:
    def agent(query: str) -> str:
        if query == "c":
            raise Interrupted
        return query * 2

    out = tmp_path / "run.jsonl"
    queries = _queries("a", "b", "c", "d", "e")
    with pytest.raises(Interrupted):
        simulate(agent, queries, out=out, concurrency=1, tracer_provider=traced[0])
    first, second = out.read_bytes().splitlines(keepends=True)  # what a crash and a stray editor leave
    out.write_bytes(b"\xef\xbb\xbf" + first + b"\x00" * 512 + b"\n" + b"<<<<<<< HEAD\n" + second)
    with caplog.at_level("WARNING"):
        records = simulate(str.upper, queries, out=out, concurrency=1, tracer_provider=traced[0])
    warnings = [r.getMessage() for r in caplog.records if r.name.startswith("agenteval_otel.experiments")]
    assert warnings == [f"{out}: skipped 2 unreadable line(s) (line 2: NUL bytes; line 3: not JSON); "
                        "resuming without them"]
    assert [r.response for r in records] == ["aa", "bb", "C", "D", "E"]  # a and b were not run again
    assert [r.query for r in SimulationRecord.load_jsonl(out)] == ["a", "b", "c", "d", "e"]
    assert not out.read_bytes().startswith(b"\xef\xbb\xbf") and b"\x00" not in out.read_bytes()
