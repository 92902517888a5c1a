"""Simulations: an agent run over a query set, one :class:`SimulationRecord` per query.

A simulation file is JSON Lines: one record per query, appended (and flushed) as each query
finishes, so an interrupted run keeps what it did and a resumed run skips it.

>>> from agenteval_otel.experiments import QuerySet, simulate
>>> records = simulate(my_agent, QuerySet.load("queries.jsonl"), out="run.jsonl")  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import logging
import time
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry.trace import TracerProvider
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agenteval_otel.errors import SimulationLoadError
from agenteval_otel.evalsets import ToolCall
from agenteval_otel.evaluation import (
    Agent,
    AgentCaller,
    AgentTurn,
    Message,
    ScriptedTurns,
    abandoned_agent_threads,
    agent_thread_cpu,
    capture_for,
    converse,
)
from agenteval_otel.experiments._progress import ProgressFile
from agenteval_otel.experiments._queries import Query, QuerySet
from agenteval_otel.loading import read_jsonl, validation_message
from agenteval_otel.trajectory import Trajectory, TrajectoryStep

__all__ = ["DEFAULT_TIMEOUT_S", "SimulationRecord", "asimulate", "simulate"]

_log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 300.0
"""How long one query may run by default, in seconds."""


class SimulationRecord(BaseModel):
    """What one run of the agent on one query gave: its reply or error, its cost, its trace.

    ``duration_seconds`` is wall time from the call to the reply; ``cpu_seconds`` and
    ``peak_memory_bytes`` are described at :func:`simulate`. ``trajectory`` is the run's steps
    as read from its trace, ``tool_calls`` the tool steps among them.
    """

    model_config = ConfigDict(extra="forbid")

    query_index: int = Field(ge=0)
    """The query's position in the query set (0-based)."""
    query: str
    """The query's content."""
    ground_truth: Any | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    response: str | None = None
    error: str | None = None
    """The error's message when the run failed or timed out, else ``None``."""
    error_type: str | None = None
    """The error's class name (``TimeoutError`` for a run past its deadline)."""
    duration_seconds: float = 0.0
    cpu_seconds: float = 0.0
    peak_memory_bytes: int | None = None
    trace_id: str | None = None
    trajectory: list[TrajectoryStep] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    agent: str | None = None
    """The agent's name."""
    started_at: float | None = None
    """When the run started, in seconds since the Unix epoch."""

    @property
    def failed(self) -> bool:
        """Whether the run raised or timed out."""
        return self.error_type is not None or self.error is not None

    @classmethod
    def load_jsonl(cls, path: str | Path) -> list[SimulationRecord]:
        """The records of a simulation file, in file order; a line that is not JSON or not a
        record raises :class:`SimulationLoadError` naming the file, the line and the field."""
        records = []
        for number, data in read_jsonl(path, SimulationLoadError, "a simulation record"):
            try:
                records.append(cls.model_validate(data))
            except ValidationError as exc:
                raise SimulationLoadError(validation_message(f"{path}: line {number}", exc)) from None
        return records


def _key(index: int, content: str) -> tuple[int, str]:
    return index, content


def _open_run_file(file: ProgressFile[SimulationRecord], *, resume: bool,
                   query_set: QuerySet) -> list[SimulationRecord]:
    """Start writing a run's file; with ``resume``, first the records already there, each of a
    query of ``query_set`` (see :class:`ProgressFile` for the lines that cannot be read)."""
    known = {_key(index, query.content) for index, query in enumerate(query_set)}

    def check(number: int, record: SimulationRecord) -> None:
        if _key(record.query_index, record.query) not in known:
            raise SimulationLoadError(
                f"{file.path}: line {number}: query {record.query_index} ({record.query!r}) is not in "
                "this query set; expected a run of the same query set (or start over without resume)")

    return file.open(resume=resume, check=check)


@contextmanager
def _peak_memory(measure: bool) -> Iterator[list[int | None]]:
    """``[peak]``: the most memory Python allocated above the starting level inside the block
    (``tracemalloc``), or ``[None]`` when not measured."""
    found: list[int | None] = [None]
    if not measure:
        yield found
        return
    started_here = not tracemalloc.is_tracing()
    if started_here:
        tracemalloc.start()
    tracemalloc.reset_peak()
    baseline = tracemalloc.get_traced_memory()[0]
    try:
        yield found
    finally:
        found[0] = max(0, tracemalloc.get_traced_memory()[1] - baseline)
        if started_here:
            tracemalloc.stop()


async def _run_one(
    caller: AgentCaller, index: int, query: Query, *, simulation_id: str, timeout_s: float | None,
    measure_memory: bool, provider: TracerProvider | None,
) -> SimulationRecord:
    capture = capture_for(provider)
    thread_id = f"{simulation_id}-{index}-{uuid.uuid4().hex[:8]}"

    async def play(message: str, history: list[Message], turn_index: int) -> tuple[Trajectory, str | None]:
        turn = AgentTurn(user_input=message, thread_id=thread_id, history=list(history), eval_id=f"query-{index}",
                         turn_index=turn_index)
        return await capture.run_turn(caller, turn, eval_set_id=simulation_id)

    record = SimulationRecord(query_index=index, query=query.content, ground_truth=query.ground_truth,
                              metadata=dict(query.metadata), agent=caller.name, started_at=time.time())
    process_cpu = time.process_time()
    started = time.perf_counter()
    with agent_thread_cpu() as thread_cpu, _peak_memory(measure_memory) as peak, \
            abandoned_agent_threads() as abandoned:
        try:
            # the turn loop eval cases use, with the query as the one scripted user message
            conversation = await asyncio.wait_for(converse(ScriptedTurns([query.content]), play), timeout_s)
            (trajectory,) = conversation.turns
            reply = conversation.messages[-1]["content"] or None
        except asyncio.TimeoutError:
            still = "; the agent was still running and its thread was abandoned" if abandoned else ""
            record.error, record.error_type = f"timed out after {timeout_s:g} s{still}", "TimeoutError"
        except Exception as exc:
            record.error, record.error_type = str(exc) or repr(exc), type(exc).__name__
        else:
            record.response = reply
            record.trace_id = trajectory.trace_id or (trajectory.trace_ids[0] if trajectory.trace_ids else None)
            record.trajectory = list(trajectory.steps)
            record.tool_calls = trajectory.tool_calls()
    record.duration_seconds = time.perf_counter() - started
    record.cpu_seconds = sum(thread_cpu) if thread_cpu else time.process_time() - process_cpu
    record.peak_memory_bytes = peak[0]
    return record


async def asimulate(
    agent: Agent,
    query_set: QuerySet,
    *,
    out: str | Path,
    concurrency: int = 4,
    resume: bool = True,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    measure_memory: bool = True,
    simulation_id: str | None = None,
    tracer_provider: TracerProvider | None = None,
    on_record: Callable[[SimulationRecord], None] | None = None,
) -> list[SimulationRecord]:
    """Run ``agent`` (see :mod:`agenteval_otel.experiments._agents`) once per query of
    ``query_set``, at most ``concurrency`` at a time; the records of every query, in query order.

    Each run is a trace of its own, captured like an eval case's turn (its root ``invoke_agent``
    span tagged ``agenteval.eval_set_id`` = ``simulation_id`` (default: ``out``'s name) and
    ``agenteval.eval_id`` = ``query-<index>``), its trajectory read back live. A run that raises
    or passes ``timeout_s`` is recorded with its error (``error_type`` = the exception's class,
    ``TimeoutError``) and the simulation goes on; the trace id and trajectory of such a run are
    not recorded (its spans are in the trace all the same).

    Each record is appended to ``out`` as its query finishes and flushed, then ``on_record`` is
    called with it. With ``resume``, the queries already in ``out`` (same index and content) are
    skipped; a record of a query not in ``query_set`` raises :class:`SimulationLoadError`; a
    byte order mark, a last line cut short, and lines of NUL bytes or that are not records are
    skipped with one warning naming the file and the lines, and the file is rewritten without
    them (:mod:`agenteval_otel.experiments._progress`).

    ``cpu_seconds`` is, for a sync agent (run in a thread of its own), that thread's CPU time
    (``time.thread_time``), exact under any concurrency but without threads the agent starts;
    for an async agent, the process's CPU time over the run (``time.process_time``), which
    includes the runs it overlaps when ``concurrency > 1``. ``peak_memory_bytes`` is the peak of
    Python allocations over the run (``tracemalloc``) when ``measure_memory`` and
    ``concurrency == 1``, else ``None`` (overlapping runs share one peak). Memory tracing slows
    Python code down: for latency figures, run with ``measure_memory=False``.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if timeout_s is not None and timeout_s <= 0:
        raise ValueError(f"timeout_s must be positive, got {timeout_s}")
    caller = AgentCaller(agent)
    path = Path(out)
    simulation_id = simulation_id or path.stem
    file = ProgressFile(path, SimulationRecord)
    done = _open_run_file(file, resume=resume, query_set=query_set)
    try:
        finished = {_key(r.query_index, r.query) for r in done}
        pending = [(i, q) for i, q in enumerate(query_set) if _key(i, q.content) not in finished]
        limit = asyncio.Semaphore(concurrency)
        measure = measure_memory and concurrency == 1

        async def run(index: int, query: Query) -> SimulationRecord:
            async with limit:
                return await _run_one(caller, index, query, simulation_id=simulation_id, timeout_s=timeout_s,
                                      measure_memory=measure, provider=tracer_provider)

        records = list(done)
        tasks = [asyncio.ensure_future(run(index, query)) for index, query in pending]
        try:
            for next_done in asyncio.as_completed(tasks):
                record = await next_done
                file.write(record)
                records.append(record)
                if on_record is not None:
                    on_record(record)
        finally:
            for task in tasks:
                task.cancel()
    finally:
        file.close()
    return sorted(records, key=lambda r: r.query_index)


def simulate(agent: Agent, query_set: QuerySet, *, out: str | Path, **options: Any) -> list[SimulationRecord]:
    """:func:`asimulate` from synchronous code (not from inside a running event loop)."""
    return asyncio.run(asimulate(agent, query_set, out=out, **options))
