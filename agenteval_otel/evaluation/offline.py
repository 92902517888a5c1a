"""Offline evaluation: score eval cases against runs recorded earlier, from trace files, a Jaeger
query, or trajectories you already have.

The source is streamed: trace files are read span by span and assembled trace by trace, and
each run is matched to its case as it arrives; only the run kept for each case is held until the
stream ends (the most recent one, or every one with ``runs="all"``), so memory stays bounded by
the open traces and one run per case. A run is matched by, in this order: its
``agenteval.eval_id`` (runs made by ``evaluate``), its conversation id equal to a case's
``session_input.thread_id``, or its first user message. A multi-turn case takes the whole
conversation (the turns sharing the matched run's conversation id), turn by turn in time order.
A case with no match is reported as errored, never dropped.
"""

from __future__ import annotations

import gc
import itertools
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, Union

from agenteval_otel.evaluation.config import EvalConfig
from agenteval_otel.evaluation.models import EvalCase, EvalSet
from agenteval_otel.evaluation.results import EvalCaseResult, EvalReport
from agenteval_otel.evaluation.scoring import (
    DEFAULT_CRITERION_TIMEOUT_S,
    Scorer,
    aggregate_runs,
    error_result,
)
from agenteval_otel.evaluation.sinks import EvaluationSink, SinkGroup
from agenteval_otel.evaluation.sync import run_sync
from agenteval_otel.traces.files import spans_with_logs
from agenteval_otel.trajectory.assemble import iter_trajectories
from agenteval_otel.trajectory.conventions import Reader
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["CaseRuns", "RunChoice", "TraceSource", "aevaluate_traces", "evaluate_traces", "iter_matches"]

_log = logging.getLogger(__name__)

PathLike = Union[str, "os.PathLike[str]"]
TraceSource = Union[PathLike, Sequence[PathLike], Iterable[Trajectory], Iterable[SpanRecord]]
UNMATCHED = "unmatched: no trace found with this eval_id, thread_id or first user message"

def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()

@dataclass
class _Run:
    """The turns of one run of a case, as they arrive; ``order`` is its arrival number."""

    key: str | None
    turns: list[Trajectory]
    order: int

    def is_newer_than(self, other: _Run) -> bool:
        """Whether this run started later (by its turns seen so far; by arrival when a start
        time is missing, or on a tie)."""
        mine = min((t.start_ns for t in self.turns if t.start_ns is not None), default=None)
        theirs = min((t.start_ns for t in other.turns if t.start_ns is not None), default=None)
        if mine is None or theirs is None or mine == theirs:
            return self.order > other.order
        return mine > theirs


@dataclass
class _Slot:
    """The runs held for one case: the latest only, or every run (``keep_all``)."""

    case: EvalCase
    keep_all: bool
    runs: list[_Run] = field(default_factory=list)
    offered: int = 0
    set_aside: int = 0
    keyless: _Run | None = None
    """A multi-turn case's turns that carry no conversation id, joined into one run."""

    def offer(self, run: _Run) -> _Run | None:
        """Hold ``run``; the run this sets aside, if any (latest only)."""
        self.offered += 1
        if self.keep_all or not self.runs:
            self.runs.append(run)
            return None
        self.set_aside += 1
        if run.is_newer_than(self.runs[0]):
            self.runs[0], run = run, self.runs[0]
        return run

    def result(self) -> CaseRuns:
        """The case with its runs in time order, each run's turns in time order."""
        runs: list[list[Trajectory]] = []
        for run in self.runs:
            runs.extend(_split_repeats(self.case, sorted(run.turns, key=lambda t: t.start_ns or 0)))
        runs.sort(key=lambda turns: turns[0].start_ns or 0)
        set_aside = self.set_aside
        if not self.keep_all and len(runs) > 1:
            set_aside += len(runs) - 1
            runs = runs[-1:]
        return CaseRuns(self.case, runs, set_aside)


def _split_repeats(case: EvalCase, turns: list[Trajectory]) -> list[list[Trajectory]]:
    """A conversation holding more turns than ``case`` has, cut into runs where the case's first
    user message comes again (several runs that shared one conversation id)."""
    if len(turns) <= max(1, len(case.conversation)):
        return [turns]
    first = _norm(case.conversation[0].user_content.get_text())
    runs: list[list[Trajectory]] = []
    for turn in turns:
        if not runs or _norm(turn.user_input) == first:
            runs.append([])
        runs[-1].append(turn)
    return runs


class CaseRuns(NamedTuple):
    """A case and the runs found for it, oldest first (each run: its turns in time order);
    ``set_aside``: older runs found and not kept."""

    case: EvalCase
    runs: list[list[Trajectory]]
    set_aside: int = 0


@dataclass
class _Index:
    """Where each run may belong: the cases by eval id, thread id and first user message."""

    by_eval_id: dict[str, EvalCase]
    by_thread: dict[str, EvalCase]
    by_first_message: dict[str, list[EvalCase]]

    @classmethod
    def of(cls, cases: Sequence[EvalCase]) -> _Index:
        by_first: dict[str, list[EvalCase]] = {}
        for case in cases:
            if case.conversation:
                by_first.setdefault(_norm(case.conversation[0].user_content.get_text()), []).append(case)
        return cls(
            by_eval_id={case.eval_id: case for case in cases},
            by_thread={case.session_input.thread_id: case for case in cases
                       if case.session_input and case.session_input.thread_id},
            by_first_message=by_first,
        )

    def case_for(self, run: Trajectory, slots: Mapping[str, _Slot]) -> EvalCase | None:
        """The case ``run`` starts, if any. Of several cases with the same first user message,
        the one offered fewest runs so far (the first of them on a tie)."""
        if run.eval_id is not None:
            return self.by_eval_id.get(run.eval_id)
        if run.conversation_id is not None:
            case = self.by_thread.get(run.conversation_id)
            if case is not None:
                return case
        same_start = self.by_first_message.get(_norm(run.user_input), ())
        return min(same_start, key=lambda c: slots[c.eval_id].offered, default=None)


RunChoice = Literal["latest", "all"]
"""Which runs of a case to score when the traces hold several: the most recent, or all."""

MAX_HELD_TURNS = 50_000
"""Unmatched turns kept (by conversation id) in case a later turn of their conversation matches
a multi-turn case; sources are not always in time order (Jaeger returns newest first)."""


def iter_matches(
    cases: Sequence[EvalCase], runs: Iterable[Trajectory], *, keep: RunChoice = "latest"
) -> Iterator[CaseRuns]:
    """Each matched case with its runs, when the stream ends: the most recent run (by start
    time) with ``keep="latest"``, counting the older ones set aside, or every run with
    ``keep="all"``. Only the kept runs of matched cases are held; runs that match nothing are
    let go (with multi-turn cases in the set, up to ``MAX_HELD_TURNS`` of them are held a while).
    """
    if keep not in ("latest", "all"):
        raise ValueError(f"keep must be 'latest' or 'all', got {keep!r}")
    index = _Index.of(cases)
    slots = {case.eval_id: _Slot(case, keep_all=keep == "all") for case in cases}
    hold = any(len(case.conversation) > 1 for case in cases)
    held: OrderedDict[str, list[Trajectory]] = OrderedDict()
    held_count = 0
    conversations: dict[str, tuple[_Slot, _Run]] = {}
    set_aside_keys: set[str] = set()
    arrivals = itertools.count()
    for run in runs:
        for turn in run.turns or [run]:
            key = turn.conversation_id
            if key is not None and key in set_aside_keys:
                continue
            if key is not None and key in conversations:
                slot, current = conversations[key]
                if turn.eval_id in (None, slot.case.eval_id):
                    current.turns.append(turn)
                    continue
            found = index.case_for(turn, slots)
            if found is None:
                if hold and key is not None:
                    held.setdefault(key, []).append(turn)
                    held.move_to_end(key)
                    held_count += 1
                    while held_count > MAX_HELD_TURNS:
                        held_count -= len(held.popitem(last=False)[1])
                continue
            slot = slots[found.eval_id]
            if len(found.conversation) > 1 and key is None:
                if slot.keyless is None:
                    slot.keyless = _Run(None, [turn], next(arrivals))
                    slot.offer(slot.keyless)
                elif any(kept is slot.keyless for kept in slot.runs):  # else a newer run replaced it
                    slot.keyless.turns.append(turn)
                continue
            earlier = held.pop(key, []) if key is not None else []
            held_count -= len(earlier)
            new = _Run(key, [*earlier, turn], next(arrivals))
            if len(found.conversation) > 1 and key is not None:
                conversations[key] = (slot, new)
            displaced = slot.offer(new)
            if displaced is not None and displaced.key is not None and displaced.key in conversations:
                del conversations[displaced.key]
                set_aside_keys.add(displaced.key)
    for slot in slots.values():
        if slot.runs:
            yield slot.result()

def _runs(
    source: TraceSource, logs: Sequence[PathLike] = (), readers: Sequence[Reader] | None = None
) -> Iterator[Trajectory]:
    """Trajectories from any source, streamed (log records of ``logs`` joined to trace files' spans)."""
    if isinstance(source, (str, os.PathLike)):
        source = [source]
    items = iter(source)  # type: ignore[arg-type]
    first = next(items, None)
    if first is None:
        return
    items = itertools.chain([first], items)
    if isinstance(first, Trajectory):
        yield from items  # type: ignore[misc]
    elif isinstance(first, SpanRecord):
        yield from iter_trajectories(items, group="invocation", readers=readers)  # type: ignore[arg-type]
    else:
        _, spans = spans_with_logs(items, logs)  # type: ignore[arg-type]
        yield from iter_trajectories(spans, group="invocation", readers=readers)

@contextmanager
def _rare_full_collections() -> Iterator[None]:
    """A long offline run keeps every case's result, and each full garbage collection walks all
    of them again; make full collections rare for the run, then restore the thresholds."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], max(thresholds[2], _FULL_COLLECTION_EVERY))
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


_FULL_COLLECTION_EVERY = 1000
"""Generation-1 collections between full ones during an offline run (CPython's default: 10)."""


async def aevaluate_traces(
    eval_set: EvalSet,
    source: TraceSource,
    config: EvalConfig | None = None,
    *,
    done: Mapping[str, EvalCaseResult] | None = None,
    sinks: Sequence[EvaluationSink] = (),
    criterion_timeout_s: float | None = DEFAULT_CRITERION_TIMEOUT_S,
    runs: RunChoice = "latest",
    logs: Sequence[PathLike] = (),
    readers: Sequence[Reader] | None = None,
) -> EvalReport:
    """Score ``eval_set`` against runs read from ``source`` (see :func:`evaluate_traces`).

    Cases in ``done`` are not scored again; each new result goes to the ``sinks`` when scored
    and the report to those with ``finish(report)`` (they are flushed, not shut down).
    """
    started = time.perf_counter()
    config = config if config is not None else EvalConfig.default_for(eval_set)
    scorer = Scorer(config, criterion_timeout_s=criterion_timeout_s)
    results_stage = SinkGroup(sinks)
    scored: dict[str, EvalCaseResult] = dict(done or {})
    pending = [case for case in eval_set.eval_cases if case.eval_id not in scored]
    set_aside = 0
    with _rare_full_collections():
        for case, case_runs, older in iter_matches(pending, _runs(source, logs, readers), keep=runs):
            results = []
            for turns in case_runs:
                one = await scorer.score_case(
                    case, turns, missing_turns_reason="the matched conversation has fewer turns")
                one.metrics["matched_turns"] = float(len(turns))
                results.append(one)
            result = aggregate_runs(results)
            result.set_aside_runs = older
            set_aside += older
            scored[case.eval_id] = result
            results_stage.submit(result)
    if set_aside:
        _log.warning("the traces hold several runs of some cases: scored the latest run of each "
                     "and set %d older run(s) aside (score every run with --all-runs, "
                     "or runs='all')", set_aside)
    for case in pending:
        if case.eval_id not in scored:
            scored[case.eval_id] = error_result(case, UNMATCHED)
            results_stage.submit(scored[case.eval_id])
    results = [scored[case.eval_id] for case in eval_set.eval_cases]
    report = EvalReport.from_results(
        eval_set.eval_set_id, results, eval_set_name=eval_set.name or None,
        config_used=config.model_dump(mode="json"),
        duration_seconds=time.perf_counter() - started,
    )
    results_stage.finish(report)
    results_stage.force_flush()
    return report

def evaluate_traces(
    eval_set: EvalSet,
    source: TraceSource,
    config: EvalConfig | None = None,
    *,
    sinks: Sequence[EvaluationSink] = (),
    criterion_timeout_s: float | None = DEFAULT_CRITERION_TIMEOUT_S,
    runs: RunChoice = "latest",
    logs: Sequence[PathLike] = (),
    readers: Sequence[Reader] | None = None,
) -> EvalReport:
    """Score ``eval_set`` against runs recorded earlier.

    ``source`` is a trace file path (OTLP/JSON, OTLP JSON lines, OTLP protobuf, Jaeger JSON), a
    list of them, or ``Trajectory`` or ``SpanRecord`` objects (for example the spans
    ``JaegerClient.find_traces`` returns). When the traces hold several runs of a case (every
    ``agenteval run`` appends to the same file), ``runs="latest"`` scores the most recent one
    and counts the older ones in the result's ``set_aside_runs`` (and a warning);
    ``runs="all"`` scores every run as repeated runs (pass@1, pass@k, pass^k in ``metrics``).
    Each case result also goes to ``sinks`` once the source is read. ``logs``: OTLP/JSON log
    files whose records carry the spans' content (log files among the trace paths are recognised
    too); ``readers``: the convention readers (default: the installed ones, then ours). Use
    :func:`aevaluate_traces` inside an event loop.
    """
    return run_sync(
        aevaluate_traces(eval_set, source, config, sinks=sinks, criterion_timeout_s=criterion_timeout_s,
                         runs=runs, logs=logs, readers=readers),
        "aevaluate_traces",
    )
