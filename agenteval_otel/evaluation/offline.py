"""Offline evaluation: score eval cases against runs recorded earlier, from trace files, a Jaeger
query, or trajectories you already have.

The source is streamed: trace files are read span by span and assembled trace by trace, and
each run is matched to its case as it arrives, so memory stays bounded by the open traces and
the conversations of multi-turn cases. A run is matched by, in this order: its
``agenteval.eval_id`` (runs made by ``evaluate``), its conversation id equal to a case's
``session_input.thread_id``, or its first user message. A multi-turn case takes the whole
conversation (the turns sharing the matched run's conversation id), turn by turn in time order.
A case with no match is reported as errored, never dropped.
"""

from __future__ import annotations

import gc
import itertools
import os
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Union

from agenteval_otel.evaluation.config import EvalConfig
from agenteval_otel.evaluation.models import EvalCase, EvalSet
from agenteval_otel.evaluation.results import EvalCaseResult, EvalReport
from agenteval_otel.evaluation.scoring import DEFAULT_CRITERION_TIMEOUT_S, Scorer, error_result
from agenteval_otel.evaluation.sinks import EvaluationSink, SinkGroup
from agenteval_otel.evaluation.sync import run_sync
from agenteval_otel.traces.files import spans_with_logs
from agenteval_otel.trajectory.assemble import iter_trajectories
from agenteval_otel.trajectory.conventions import Reader
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["TraceSource", "aevaluate_traces", "evaluate_traces", "iter_matches"]

PathLike = Union[str, "os.PathLike[str]"]
TraceSource = Union[PathLike, Sequence[PathLike], Iterable[Trajectory], Iterable[SpanRecord]]
UNMATCHED = "unmatched: no trace found with this eval_id, thread_id or first user message"

def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()

@dataclass
class _Index:
    """Where each run may belong: the cases by eval id, thread id and first user message."""

    by_eval_id: dict[str, EvalCase]
    by_thread: dict[str, EvalCase]
    by_first_message: dict[str, list[EvalCase]]
    taken: set[str] = field(default_factory=set)

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

    def case_for(self, run: Trajectory) -> EvalCase | None:
        """The untaken case ``run`` starts, if any."""
        if run.eval_id is not None:
            case = self.by_eval_id.get(run.eval_id)
            return case if case is not None and case.eval_id not in self.taken else None
        if run.conversation_id is not None:
            case = self.by_thread.get(run.conversation_id)
            if case is not None and case.eval_id not in self.taken:
                return case
        for case in self.by_first_message.get(_norm(run.user_input), ()):
            if case.eval_id not in self.taken:
                return case
        return None

MAX_HELD_TURNS = 50_000
"""Unmatched turns kept (by conversation id) in case a later turn of their conversation matches
a multi-turn case; sources are not always in time order (Jaeger returns newest first)."""

def iter_matches(
    cases: Sequence[EvalCase], runs: Iterable[Trajectory]
) -> Iterator[tuple[EvalCase, list[Trajectory]]]:
    """Each matched case with its turns, as soon as they are known: a single-turn case when its
    run arrives, a multi-turn case when the stream ends. Runs that match nothing are let go
    (with multi-turn cases in the set, up to ``MAX_HELD_TURNS`` of them are held a while)."""
    index = _Index.of(cases)
    hold = any(len(case.conversation) > 1 for case in cases)
    held: OrderedDict[str, list[Trajectory]] = OrderedDict()
    held_count = 0
    conversations: dict[str, tuple[EvalCase, list[Trajectory]]] = {}
    multi_turn: list[tuple[EvalCase, list[Trajectory]]] = []
    for run in runs:
        for turn in run.turns or [run]:
            key = turn.conversation_id
            if key is not None and key in conversations:
                case, turns = conversations[key]
                if turn.eval_id in (None, case.eval_id):
                    turns.append(turn)
                    continue
            found = index.case_for(turn)
            if found is None:
                if hold and key is not None:
                    held.setdefault(key, []).append(turn)
                    held.move_to_end(key)
                    held_count += 1
                    while held_count > MAX_HELD_TURNS:
                        held_count -= len(held.popitem(last=False)[1])
                continue
            index.taken.add(found.eval_id)
            if len(found.conversation) <= 1:
                yield found, [turn]
                continue
            earlier = held.pop(key, []) if key is not None else []
            held_count -= len(earlier)
            entry = (found, [*earlier, turn])
            multi_turn.append(entry)
            if key is not None:
                conversations[key] = entry
    for case, turns in multi_turn:
        yield case, sorted(turns, key=lambda t: t.start_ns or 0)

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
    logs: Sequence[PathLike] = (),
    readers: Sequence[Reader] | None = None,
) -> EvalReport:
    """Score ``eval_set`` against runs read from ``source`` (see :func:`evaluate_traces`).

    Cases in ``done`` are not scored again; each new result goes to the ``sinks`` when scored
    and the report to those with ``finish(report)`` (they are flushed, not shut down).
    """
    started = time.perf_counter()
    config = config if config is not None else EvalConfig.default(include_judge=False)
    scorer = Scorer(config, criterion_timeout_s=criterion_timeout_s)
    results_stage = SinkGroup(sinks)
    scored: dict[str, EvalCaseResult] = dict(done or {})
    pending = [case for case in eval_set.eval_cases if case.eval_id not in scored]
    with _rare_full_collections():
        for case, turns in iter_matches(pending, _runs(source, logs, readers)):
            result = await scorer.score_case(
                case, turns, missing_turns_reason="the matched conversation has fewer turns")
            result.metrics["matched_turns"] = float(len(turns))
            scored[case.eval_id] = result
            results_stage.submit(result)
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
    logs: Sequence[PathLike] = (),
    readers: Sequence[Reader] | None = None,
) -> EvalReport:
    """Score ``eval_set`` against runs recorded earlier.

    ``source`` is a trace file path (OTLP/JSON, OTLP JSON lines, OTLP protobuf, Jaeger JSON), a
    list of them, or ``Trajectory`` or ``SpanRecord`` objects (for example the spans
    ``JaegerClient.find_traces`` returns). Each case result also goes to ``sinks`` as soon as it
    is scored. ``logs``: OTLP/JSON log files whose records carry the spans' content (log files
    among the trace paths are recognised too); ``readers``: the convention readers (default: the
    installed ones, then ours). Use :func:`aevaluate_traces` inside an event loop.
    """
    return run_sync(
        aevaluate_traces(eval_set, source, config, sinks=sinks, criterion_timeout_s=criterion_timeout_s,
                         logs=logs, readers=readers),
        "aevaluate_traces",
    )
