"""Offline evaluation: score eval cases against runs recorded earlier, from a ``TraceSource``
(trace files, spans, a Jaeger query, or trajectories you already have; see
:mod:`~agenteval_otel.traces.sources`).

The source is streamed: trace files are read span by span and assembled trace by trace, each
run is matched to its case as it arrives and scored once it is complete (a multi-turn
conversation once it has been idle a while), and only its slim result is kept (a newer run of
the case scores again and replaces it; with ``runs="all"`` each run joins the case's repeated
runs). Memory stays bounded by the open traces and conversations and a few hundred bytes per
case. A run is matched by, in this order: its
``agenteval.eval_id`` (runs made by ``evaluate``), its conversation id equal to a case's
``session_input.thread_id``, or its first user message. A run made by ``evaluate`` for another
eval set (its ``agenteval.eval_set_id`` differs from the eval set's id) matches no case: it is
set aside and counted (``EvalSummary.other_eval_set_runs``), so two eval sets whose runs share
a trace file and case ids are never scored against each other's runs. A multi-turn case takes the whole
conversation (the turns sharing the matched run's conversation id), turn by turn in time order.
A case with no match is reported as errored, never dropped.

Without an eval set, every invocation found is scored with the config's reference-free criteria
(policies such as ``max_tool_calls``, judged qualities such as ``safety``) and reported under its
invocation key, ``{trace_id}:{span_id}`` of its root span. With an eval set and such criteria in
the config, the invocations no case matched are scored so too, after the cases.
"""

from __future__ import annotations

import asyncio
import bisect
import functools
import gc
import itertools
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, NamedTuple

from agenteval_otel.criteria import EvalConfig, require_reference_free
from agenteval_otel.evalsets import EvalCase, EvalSet
from agenteval_otel.evaluation._judging import default_judge
from agenteval_otel.evaluation._scoring import (
    DEFAULT_CRITERION_TIMEOUT_S,
    Scorer,
    aggregate_runs,
    error_result,
    invocation_key,
)
from agenteval_otel.evaluation._sync import run_sync
from agenteval_otel.judge import JudgeClient
from agenteval_otel.results import (
    CaseResults,
    EvalCaseResult,
    EvalReport,
    EvaluationSink,
    HeldResult,
    ReadCoverage,
    ResultCodec,
    SinkGroup,
    SummaryTally,
)
from agenteval_otel.traces.sources import PathLike, TraceSource, TraceSourceLike, trace_source
from agenteval_otel.trajectory.conventions import Reader
from agenteval_otel.trajectory.explain import CoverageTally, counting_coverage
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["CaseRuns", "RunChoice", "aevaluate_traces", "evaluate_traces", "iter_matches"]

_log = logging.getLogger(__name__)

UNMATCHED = "unmatched: no trace found with this eval_id, thread_id or first user message"

def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()

@dataclass(eq=False, slots=True)
class _Run:
    """The turns of one run of a case, as they arrive (let go once it is scored); ``order`` is
    its arrival number, ``start_ns`` the earliest start of its turns seen so far."""

    key: str | None
    turns: list[Trajectory]
    order: int
    start_ns: int | None = None
    extra_repeats: int = 0
    """Once finished: the repeats it held beyond the one scored (latest only)."""

    def __post_init__(self) -> None:
        self.start_ns = min((t.start_ns for t in self.turns if t.start_ns is not None), default=None)

    def add(self, turn: Trajectory) -> None:
        """One more turn of this run."""
        self.turns.append(turn)
        if turn.start_ns is not None and (self.start_ns is None or turn.start_ns < self.start_ns):
            self.start_ns = turn.start_ns

    def is_newer_than(self, other: _Run) -> bool:
        """Whether this run started later (by its turns seen so far; by arrival when a start
        time is missing, or on a tie)."""
        mine, theirs = self.start_ns, other.start_ns
        if mine is None or theirs is None or mine == theirs:
            return self.order > other.order
        return mine > theirs


@dataclass(eq=False, slots=True)
class _Slot:
    """The runs of one case: the latest only (``kept``), or every run (``keep_all``)."""

    case: EvalCase
    keep_all: bool
    kept: _Run | None = None
    offered: int = 0
    set_aside: int = 0
    keyless: _Run | None = None
    """A multi-turn case's turns that carry no conversation id, joined into one run."""
    scored_set_aside: int = 0
    """``set_aside`` when the case's result was last scored."""

    def offer(self, run: _Run) -> _Run | None:
        """Hold ``run``; the run this sets aside, if any (latest only)."""
        self.offered += 1
        if self.keep_all or self.kept is None:
            self.kept = run
            return None
        self.set_aside += 1
        if not run.is_newer_than(self.kept):
            return run
        displaced, self.kept = self.kept, run
        self.set_aside -= displaced.extra_repeats  # its repeats no longer count: the whole run is set aside
        return displaced

    def holds(self, run: _Run) -> bool:
        """Whether ``run`` is still to be scored or kept."""
        return self.keep_all or self.kept is run

    def repeats(self, run: _Run) -> list[list[Trajectory]]:
        """A finished run's repeats, each its turns in time order: the last one only (counting
        the others set aside), or all of them (``keep_all``)."""
        runs = sorted(_split_repeats(self.case, sorted(run.turns, key=lambda t: t.start_ns or 0)),
                      key=lambda turns: turns[0].start_ns or 0)
        run.turns = []  # handed out: the run keeps only what decides which run is newer
        if self.keep_all:
            return runs
        run.extra_repeats = len(runs) - 1
        self.set_aside += run.extra_repeats
        return runs[-1:]


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


class _Index:
    """Where each run may belong: the cases by eval id, thread id and first user message."""

    def __init__(self, cases: Sequence[EvalCase]) -> None:
        self.by_eval_id = {case.eval_id: case for case in cases}
        self.by_thread = {case.session_input.thread_id: case for case in cases
                          if case.session_input and case.session_input.thread_id}
        self.by_first_message: dict[str, EvalCase | list[EvalCase]] = {}
        for case in cases:
            if case.conversation:
                first = _norm(case.conversation[0].user_content.get_text())
                same = self.by_first_message.setdefault(first, case)
                if same is not case:
                    self.by_first_message[first] = [*same, case] if isinstance(same, list) else [same, case]

    def case_for(self, run: Trajectory, slots: Mapping[str, _Slot]) -> EvalCase | None:
        """The case ``run`` starts, if any. Of several cases with the same first user message,
        the one offered fewest runs so far (the first of them on a tie)."""
        if run.eval_id is not None:
            return self.by_eval_id.get(run.eval_id)
        if run.conversation_id is not None:
            case = self.by_thread.get(run.conversation_id)
            if case is not None:
                return case
        same_start = self.by_first_message.get(_norm(run.user_input))
        if same_start is None or isinstance(same_start, EvalCase):
            return same_start

        def offered(case: EvalCase) -> int:
            slot = slots.get(case.eval_id)
            return slot.offered if slot is not None else 0
        return min(same_start, key=offered)


RunChoice = Literal["latest", "all"]
"""Which runs of a case to score when the traces hold several: the most recent, or all."""

MAX_HELD_TURNS = 50_000
"""Unmatched turns kept (by conversation id) in case a later turn of their conversation matches
a multi-turn case; sources are not always in time order (Jaeger returns newest first)."""


CONVERSATION_IDLE_RUNS = 10_000
"""A multi-turn run is complete once this many runs have arrived since its last turn."""
MAX_OPEN_CONVERSATIONS = 10_000
"""Multi-turn runs assembled at once; past this, the one idle longest is complete."""


class _Matcher:
    """Matches a stream of runs to cases, and says when each run to score is complete: a
    single-turn case's run at once, a multi-turn case's conversation when it has been idle for
    ``idle_runs`` runs, when ``max_open`` others are assembled, or when the stream ends. A turn
    of a conversation already complete is let go (counted in ``late_turns``). With
    ``collect_strays``, the turns that match no case (nor one of the ``done`` cases) are put in
    ``strays`` once no later turn can join them to a case; the caller empties it."""

    def __init__(self, cases: Sequence[EvalCase], keep: RunChoice, *,
                 idle_runs: int | None = None, max_open: int | None = None,
                 collect_strays: bool = False, done: Sequence[EvalCase] = (),
                 eval_set_id: str | None = None) -> None:
        if keep not in ("latest", "all"):
            raise ValueError(f"keep must be 'latest' or 'all', got {keep!r}")
        self.keep_all = keep == "all"
        self.eval_set_id = eval_set_id
        self._other_eval_set_keys: set[str] = set()
        self._other_eval_set_keyless = 0
        self.index = _Index(cases)
        self.collect_strays = collect_strays
        self.strays: list[Trajectory] = []
        self._done = _Index(done)
        self._done_keys: set[str] = set()
        self.slots: dict[str, _Slot] = {}
        self.idle_runs = CONVERSATION_IDLE_RUNS if idle_runs is None else idle_runs
        self.max_open = MAX_OPEN_CONVERSATIONS if max_open is None else max_open
        self.late_turns = 0
        self._hold = any(len(case.conversation) > 1 for case in cases)
        self._held: OrderedDict[str, list[Trajectory]] = OrderedDict()
        self._held_count = 0
        self._conversations: dict[str, _Run] = {}
        self._set_aside_keys: set[str] = set()
        self._complete_keys: set[str] = set()
        self._open: OrderedDict[_Run, tuple[_Slot, int]] = OrderedDict()
        """Multi-turn runs being assembled: their slot and the arrival of their last turn."""
        self._arrivals = itertools.count()
        self._seen = 0

    @property
    def other_eval_set_runs(self) -> int:
        """Runs set aside because they were made for another eval set (a conversation counts once)."""
        return len(self._other_eval_set_keys) + self._other_eval_set_keyless

    def _of_another_eval_set(self, turn: Trajectory) -> bool:
        """Whether ``turn`` was made for an eval set other than this one (counted when it is)."""
        if self.eval_set_id is None or turn.eval_set_id in (None, self.eval_set_id):
            return False
        if turn.conversation_id is None:
            self._other_eval_set_keyless += 1
        else:
            self._other_eval_set_keys.add(turn.conversation_id)
        return True

    def slot(self, case: EvalCase) -> _Slot:
        """The slot of ``case``, made when first needed."""
        slot = self.slots.get(case.eval_id)
        if slot is None:
            slot = self.slots[case.eval_id] = _Slot(case, self.keep_all)
        return slot

    def feed(self, run: Trajectory) -> list[tuple[_Slot, _Run]]:
        """Match the turns of ``run``; the runs complete now."""
        self._seen += 1
        complete = []
        for turn in run.turns or [run]:
            finished = self._turn(turn)
            if finished is not None:
                complete.append(finished)
        while self._open:
            oldest, (slot, last) = next(iter(self._open.items()))
            if self._seen - last <= self.idle_runs and len(self._open) <= self.max_open:
                break
            complete.extend(self._complete(oldest))
        return complete

    def close(self) -> list[tuple[_Slot, _Run]]:
        """The stream ended: every run still assembled is complete, in arrival order (and every
        turn still held is a stray)."""
        complete = []
        for run in sorted(self._open, key=lambda r: r.order):
            complete.extend(self._complete(run))
        for turns in self._held.values():
            self._stray(turns)
        self._held.clear()
        self._held_count = 0
        return complete

    def _stray(self, turns: Iterable[Trajectory]) -> None:
        if self.collect_strays:
            self.strays.extend(turns)

    def _complete(self, run: _Run) -> list[tuple[_Slot, _Run]]:
        slot, _ = self._open.pop(run)
        if run.key is not None and self._conversations.get(run.key) is run:
            del self._conversations[run.key]
            self._complete_keys.add(run.key)
        if slot.keyless is run:
            slot.keyless = None
        return [(slot, run)] if slot.holds(run) else []

    def _keep_open(self, slot: _Slot, run: _Run) -> None:
        self._open[run] = (slot, self._seen)
        self._open.move_to_end(run)

    def _turn(self, turn: Trajectory) -> tuple[_Slot, _Run] | None:
        if self._of_another_eval_set(turn):
            return None
        key = turn.conversation_id
        if key is not None and (key in self._set_aside_keys or key in self._done_keys):
            return None
        if key is not None and key in self._conversations:
            current = self._conversations[key]
            slot, _ = self._open[current]
            if turn.eval_id in (None, slot.case.eval_id):
                current.add(turn)
                self._keep_open(slot, current)
                return None
        if key is not None and key in self._complete_keys:
            self.late_turns += 1
            return None
        found = self.index.case_for(turn, self.slots)
        if found is None:
            if self._done.case_for(turn, {}) is not None:  # a run of a case scored already (resumed)
                if key is not None:
                    self._done_keys.add(key)
                    self._held_count -= len(self._held.pop(key, []))
                return None
            if self._hold and key is not None:
                self._held.setdefault(key, []).append(turn)
                self._held.move_to_end(key)
                self._held_count += 1
                while self._held_count > MAX_HELD_TURNS:
                    evicted = self._held.popitem(last=False)[1]
                    self._held_count -= len(evicted)
                    self._stray(evicted)
            else:
                self._stray([turn])
            return None
        slot = self.slot(found)
        multi_turn = len(found.conversation) > 1
        if multi_turn and key is None:
            if slot.keyless is None:
                slot.keyless = _Run(None, [turn], next(self._arrivals))
                self._offer(slot, slot.keyless)
                if slot.holds(slot.keyless):
                    self._keep_open(slot, slot.keyless)
            elif slot.holds(slot.keyless):  # else a newer run replaced it
                slot.keyless.add(turn)
                self._keep_open(slot, slot.keyless)
            return None
        earlier = self._held.pop(key, []) if key is not None else []
        self._held_count -= len(earlier)
        new = _Run(key, [*earlier, turn], next(self._arrivals))
        if multi_turn and key is not None:
            self._conversations[key] = new
            self._keep_open(slot, new)
        self._offer(slot, new)
        if multi_turn or not slot.holds(new):
            return None
        return slot, new

    def _offer(self, slot: _Slot, run: _Run) -> None:
        displaced = slot.offer(run)
        if displaced is None:
            return
        self._open.pop(displaced, None)
        if displaced.key is not None and self._conversations.get(displaced.key) is displaced:
            del self._conversations[displaced.key]
            self._set_aside_keys.add(displaced.key)


def iter_matches(
    cases: Sequence[EvalCase], runs: Iterable[Trajectory], *, keep: RunChoice = "latest",
    eval_set_id: str | None = None,
) -> Iterator[CaseRuns]:
    """Each matched case with its runs, when the stream ends: the most recent run (by start
    time) with ``keep="latest"``, counting the older ones set aside, or every run with
    ``keep="all"``. The kept runs of matched cases are held to the end; runs that match nothing
    are let go (with multi-turn cases in the set, up to ``MAX_HELD_TURNS`` of them are held a
    while). With ``eval_set_id``, runs recorded for another eval set match no case.
    :func:`evaluate_traces` scores each run as it is complete instead.
    """
    matcher = _Matcher(cases, keep, eval_set_id=eval_set_id)
    found: dict[str, list[tuple[tuple[int, int, int], list[Trajectory]]]] = {}

    def collect(complete: list[tuple[_Slot, _Run]]) -> None:
        for slot, run in complete:
            repeats = [((turns[0].start_ns or 0, run.order, i), turns) for i, turns in enumerate(slot.repeats(run))]
            found[slot.case.eval_id] = [*found.get(slot.case.eval_id, []), *repeats] if slot.keep_all else repeats

    for run in runs:
        collect(matcher.feed(run))
    collect(matcher.close())
    for case in cases:
        if case.eval_id in found:
            ordered = sorted(found[case.eval_id], key=lambda item: item[0])
            yield CaseRuns(case, [turns for _, turns in ordered], matcher.slots[case.eval_id].set_aside)


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


MAX_KEPT_TRAJECTORIES = 200
"""Results kept whole, with their actual trajectory, by default: the first failed or errored
cases (every other result is held slim, see :mod:`~agenteval_otel.evaluation.case_results`)."""


class _Results:
    """The results of an offline run as they are scored, replaced when a newer run of a case is:
    each held slim and compressed unless ``keep`` says whole, counted in the summary as they come.
    Reported in the order of ``ids`` (the eval set's cases), then of the invocations scored
    without a case by their root's start time."""

    def __init__(self, ids: Iterable[str], keep: bool | None) -> None:
        self.positions = {eval_id: i for i, eval_id in enumerate(ids)}
        self.starts: dict[str, int] = {}
        """The root start time of each invocation scored without a case (its place in the report)."""
        self.keep = keep
        self.kept = 0
        self.codec = ResultCodec()
        self.tally = SummaryTally()
        self.entries: dict[str, HeldResult] = {}
        self.runs: dict[str, list[tuple[tuple[int, int, int], HeldResult]]] = {}
        """With every run scored: each case's runs so far, in time order."""
        self.set_aside_later: dict[str, int] = {}
        """The cases whose older runs were found after they were scored, with their count."""

    def place(self, eval_id: str) -> int:
        """The position of ``eval_id`` in the report (a new one goes last)."""
        return self.positions.setdefault(eval_id, len(self.positions))

    def _entry(self, result: EvalCaseResult) -> HeldResult:
        whole = self.keep or (self.keep is None and result.status != "passed"
                              and self.kept < MAX_KEPT_TRAJECTORIES)
        self.kept += bool(whole)
        return result if whole else self.codec.encode(result)

    def _result(self, entry: HeldResult) -> EvalCaseResult:
        return self.codec.decode(entry) if isinstance(entry, bytes) else entry

    def put(self, result: EvalCaseResult) -> None:
        """``result`` is its case's result now (replacing an earlier one)."""
        old = self.entries.get(result.eval_id)
        if old is not None:
            self.tally.remove(self._result(old))
            self.kept -= not isinstance(old, bytes)
        self.tally.add(result, self.place(result.eval_id))
        self.entries[result.eval_id] = self._entry(result)

    def with_run(self, eval_id: str, order: tuple[int, int, int], run: EvalCaseResult) -> EvalCaseResult:
        """Every run of the case so far with ``run`` among them, aggregated."""
        runs = self.runs.setdefault(eval_id, [])
        bisect.insort(runs, (order, self.codec.encode(run)), key=lambda item: item[0])
        return aggregate_runs([run if o == order else self._result(e) for o, e in runs])

    def set_aside(self, eval_id: str, count: int) -> None:
        """The case's result counts ``count`` older runs set aside (found after it was scored)."""
        self.put(self._result(self.entries[eval_id]).model_copy(update={"set_aside_runs": count}))
        self.set_aside_later[eval_id] = count

    def include(self, done: Mapping[str, EvalCaseResult]) -> None:
        """Hold the ``done`` results placed in the report (resumed ones, counted already)."""
        for eval_id, result in done.items():
            if eval_id in self.positions and eval_id not in self.entries:
                self.entries[eval_id] = self._entry(result)

    def order(self) -> list[str]:
        """The report's order: the cases (and results resumed) as placed, then the invocations
        scored without a case by their root's start time (ties by key), whatever order their
        scoring finished in."""
        placed = [eval_id for eval_id in self.positions if eval_id not in self.starts]
        return placed + sorted(self.starts, key=lambda key: (self.starts[key], key))

    def report(self, done: Mapping[str, EvalCaseResult]) -> CaseResults:
        """Every result in report order (``done`` ones as they are)."""
        results = CaseResults(codec=self.codec)
        for eval_id in self.order():
            if eval_id in done:
                results.append(done[eval_id])
            elif eval_id in self.entries:
                results.append_entry(eval_id, self.entries[eval_id])
        return results


class _Invocations:
    """Scores the invocations no eval case takes with the reference-free criteria, each under
    its invocation key (``{trace_id}:{span_id}``): the same invocation read again replaces its
    result; invocations without those ids are numbered (``conversation-1#2``)."""

    def __init__(self, scorer: Scorer, held: _Results, stage: SinkGroup, done: Mapping[str, EvalCaseResult]) -> None:
        self.scorer, self.held, self.stage, self.done = scorer, held, stage, done
        self._numbered: dict[str, int] = {}

    def key(self, turn: Trajectory) -> str:
        """The id ``turn`` is reported under."""
        key = invocation_key(turn)
        if turn.trace_id and turn.span_id:
            return key
        number = self._numbered[key] = self._numbered.get(key, 0) + 1
        return key if number == 1 else f"{key}#{number}"

    def to_score(self, turn: Trajectory) -> str | None:
        """The key ``turn`` is scored under, its place in the report taken; ``None`` when a
        resumed run scored it already."""
        key = self.key(turn)
        if key in self.done:
            return None
        if key not in self.held.starts:
            self.held.starts[key] = turn.start_ns or 0
            self.held.place(key)
        return key

    async def score(self, turn: Trajectory, key: str) -> None:
        """Score ``turn`` under ``key``."""
        result = await self.scorer.score_invocation(turn, eval_id=key)
        self.held.put(result)
        self.stage.submit(result)


class _InFlight:
    """The scoring of an offline run: work that waits on nothing (``at_once``: every criterion
    is a built-in synchronous one, such as the policies) is done in place, as it comes, without
    a task; other work runs in tasks, at most ``limit`` at once: :meth:`start` waits for a free
    place first (so the source is read no faster than cases are scored, and memory stays
    bounded). Work on one key (a case) runs after the work on it started before (so a newer run
    of a case is scored after, and replaces, the older one)."""

    def __init__(self, limit: int, *, at_once: bool = False) -> None:
        self.limit = limit
        self.at_once = at_once
        self.tasks: set[asyncio.Task[None]] = set()
        self._last: dict[str, asyncio.Task[None]] = {}

    async def start(self, key: str, work: Callable[[], Awaitable[None]]) -> None:
        """Do ``work()`` now when it waits on nothing and no earlier work on ``key`` is running,
        else run it as a task once fewer than ``limit`` are running."""
        if self.at_once and key not in self._last:
            await work()
            return
        while len(self.tasks) >= self.limit:
            await self._settle(asyncio.FIRST_COMPLETED)
        before = self._last.get(key)
        task = asyncio.ensure_future(self._after(before, work))
        self._last[key] = task
        self.tasks.add(task)
        task.add_done_callback(lambda done: self._last.pop(key, None) if self._last.get(key) is done else None)

    @staticmethod
    async def _after(before: asyncio.Task[None] | None, work: Callable[[], Awaitable[None]]) -> None:
        if before is not None:
            await asyncio.wait([before])  # its failure is raised where it is collected
        await work()

    async def _settle(self, when: str) -> None:
        done, _ = await asyncio.wait(self.tasks, return_when=when)
        self.tasks -= done
        for task in done:
            task.result()  # a scoring task's own failure (criteria failing are results) ends the run

    async def join(self) -> None:
        """Wait for every task."""
        while self.tasks:
            await self._settle(asyncio.ALL_COMPLETED)

    def cancel(self) -> None:
        """Cancel every task still running (the run is interrupted)."""
        for task in self.tasks:
            task.cancel()


DEFAULT_CASE_CONCURRENCY = 16
"""Cases (or invocations) scored at once by default, when the judge's limit asks for no more."""


def case_concurrency(judge: JudgeClient | None) -> int:
    """Cases an offline run scores at once by default: enough to keep the ``judge``'s
    concurrency limit full (twice it, as a case's criteria do other work between judge calls),
    at least ``DEFAULT_CASE_CONCURRENCY``."""
    limit = judge.settings.concurrency if isinstance(judge, JudgeClient) else 0
    return max(DEFAULT_CASE_CONCURRENCY, 2 * limit)


def _config_for(eval_set: EvalSet | None, config: EvalConfig | None) -> EvalConfig:
    """The config to score with; ``ConfigError`` when there is no eval set and no criterion
    that scores without one (see :func:`~agenteval_otel.criteria.require_reference_free`)."""
    if eval_set is not None:
        return config if config is not None else EvalConfig.default_for(eval_set)
    return require_reference_free(config)


async def aevaluate_traces(
    eval_set: EvalSet | None,
    source: TraceSourceLike,
    config: EvalConfig | None = None,
    *,
    done: Mapping[str, EvalCaseResult] | None = None,
    sinks: Sequence[EvaluationSink] = (),
    criterion_timeout_s: float | None = DEFAULT_CRITERION_TIMEOUT_S,
    runs: RunChoice = "latest",
    logs: Sequence[PathLike] = (),
    readers: Sequence[Reader] | None = None,
    keep_trajectories: bool | None = None,
    source_id: str = "traces",
    concurrency: int | None = None,
    judge: JudgeClient | None = None,
) -> EvalReport:
    """Score ``eval_set`` (or, with none, every invocation) against runs read from ``source``
    (see :func:`evaluate_traces`).

    Results in ``done`` are not scored again; each new result goes to the ``sinks`` when scored
    and the report to those with ``finish(report)`` (they are flushed, not shut down).
    """
    started = time.perf_counter()
    config = _config_for(eval_set, config)
    results_stage = SinkGroup(sinks)
    done = dict(done or {})
    with counting_coverage() as coverage:  # counted as the traces are read, from the readings made
        held, other_eval_set_runs = await _score_traces(
            eval_set, trace_source(source, logs), config, results_stage, done=done,
            criterion_timeout_s=criterion_timeout_s, runs=runs, readers=readers, keep_trajectories=keep_trajectories,
            concurrency=concurrency, judge=judge)
    summary = held.tally.summary()
    summary.other_eval_set_runs = other_eval_set_runs
    summary.read_coverage = _read_coverage(coverage)
    report = EvalReport.from_results(
        eval_set.eval_set_id if eval_set is not None else source_id, held.report(done),
        eval_set_name=(eval_set.name or None) if eval_set is not None else None,
        config_used=config.model_dump(mode="json"), summary=summary,
        duration_seconds=time.perf_counter() - started,
    )
    results_stage.finish(report)
    results_stage.force_flush()
    return report


def _read_coverage(tally: CoverageTally) -> ReadCoverage | None:
    """The run's ``ReadCoverage``; ``None`` when no span was read (trajectories given)."""
    if not tally.traces:
        return None
    if tally.spans and tally.unread == tally.spans:
        _log.warning("no reader recognised any of the %d span(s) read: their producer's convention is not "
                     "understood (agenteval trajectory --explain shows each span)", tally.spans)
    elif tally.warnings:
        _log.warning("some trajectories miss what their spans hold: %s (agenteval trajectory --explain shows why)",
                     ", ".join(f"{kind} in {n}" for kind, n in tally.warnings.items()))
    return ReadCoverage(traces=tally.traces, spans=tally.spans, read=dict(tally.read), fallback=dict(tally.fallback),
                        unread=tally.unread, trajectories=tally.trajectories, warnings=dict(tally.warnings))


async def _score_traces(
    eval_set: EvalSet | None,
    traces: TraceSource,
    config: EvalConfig,
    results_stage: SinkGroup,
    *,
    done: dict[str, EvalCaseResult],
    criterion_timeout_s: float | None,
    runs: RunChoice,
    readers: Sequence[Reader] | None,
    keep_trajectories: bool | None,
    concurrency: int | None,
    judge: JudgeClient | None,
) -> tuple[_Results, int]:
    """The work of :func:`aevaluate_traces`: every result scored (and submitted to
    ``results_stage``) held with the summary's tally (the ``done`` ones counted too), and the
    number of runs set aside as another eval set's."""
    if concurrency is not None and concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    judge = judge if judge is not None else default_judge()
    cases_at_once = concurrency or case_concurrency(judge)
    scorer = Scorer(config, judge=judge, criterion_timeout_s=criterion_timeout_s,
                    concurrency=cases_at_once * max(1, len(config.enabled())))
    in_flight = _InFlight(cases_at_once, at_once=scorer.at_once)
    cases = eval_set.eval_cases if eval_set is not None else []
    pending = [case for case in cases if case.eval_id not in done]
    held = _Results([case.eval_id for case in cases], keep_trajectories)
    invocations = _Invocations(scorer, held, results_stage, done) if config.reference_free() else None
    if invocations is not None:
        for eval_id in done:
            held.place(eval_id)  # invocations scored without a case before the run was resumed
    matcher = _Matcher(pending, runs, collect_strays=invocations is not None,
                       done=[case for case in cases if case.eval_id in done],
                       eval_set_id=eval_set.eval_set_id if eval_set is not None else None)

    async def score(slot: _Slot, run: _Run) -> None:
        case = slot.case
        for number, turns in enumerate(slot.repeats(run)):
            result = await scorer.score_case(
                case, turns, missing_turns_reason="the matched conversation has fewer turns")
            result.metrics["matched_turns"] = float(len(turns))
            if slot.keep_all:
                result = held.with_run(case.eval_id, (turns[0].start_ns or 0, run.order, number), result)
            result.set_aside_runs = slot.scored_set_aside = slot.set_aside
            held.put(result)
            results_stage.submit(result)

    async def start(complete: list[tuple[_Slot, _Run]]) -> None:
        for slot, run in complete:
            await in_flight.start(slot.case.eval_id, functools.partial(score, slot, run))
        if invocations is not None and matcher.strays:
            strays, matcher.strays = matcher.strays, []
            for turn in strays:
                key = invocations.to_score(turn)
                if key is not None:
                    await in_flight.start(key, functools.partial(invocations.score, turn, key))

    with _rare_full_collections():
        try:
            for trajectory in traces.trajectories(readers=readers):
                await start(matcher.feed(trajectory))
                await asyncio.sleep(0)  # the cases being scored go on between reads (judge calls out, answers in)
            await start(matcher.close())
            await in_flight.join()
        except Exception:  # the source failed: what is being scored still reaches the sinks
            await in_flight.join()
            raise
        finally:
            in_flight.cancel()  # interrupted: nothing left running
    set_aside = 0
    for eval_id, slot in matcher.slots.items():
        set_aside += slot.set_aside
        if slot.set_aside != slot.scored_set_aside and eval_id in held.entries:
            held.set_aside(eval_id, slot.set_aside)  # older runs found after the case was scored
    if set_aside:
        _log.warning("the traces hold several runs of some cases: scored the latest run of each "
                     "and set %d older run(s) aside (score every run with --all-runs, "
                     "or runs='all')", set_aside)
    if matcher.other_eval_set_runs:
        _log.warning("%d run(s) in the traces were made for another eval set than %r: set aside, "
                     "not matched to its cases", matcher.other_eval_set_runs, matcher.eval_set_id)
    if matcher.late_turns:
        _log.warning("%d turn(s) came after their conversation was scored (no new turn for %d runs "
                     "of the stream): not scored", matcher.late_turns, matcher.idle_runs)
    if eval_set is None and not held.positions:
        _log.warning("no agent invocation found in the traces")
    for case in pending:
        if case.eval_id not in held.entries:
            unmatched = error_result(case, UNMATCHED)
            held.put(unmatched)
            results_stage.submit(unmatched)
    for eval_id, result in done.items():
        if eval_id in held.positions:
            held.tally.add(result, held.positions[eval_id])
    return held, matcher.other_eval_set_runs


def evaluate_traces(
    eval_set: EvalSet | None,
    source: TraceSourceLike,
    config: EvalConfig | None = None,
    *,
    sinks: Sequence[EvaluationSink] = (),
    criterion_timeout_s: float | None = DEFAULT_CRITERION_TIMEOUT_S,
    runs: RunChoice = "latest",
    logs: Sequence[PathLike] = (),
    readers: Sequence[Reader] | None = None,
    keep_trajectories: bool | None = None,
    source_id: str = "traces",
    concurrency: int | None = None,
    judge: JudgeClient | None = None,
) -> EvalReport:
    """Score ``eval_set`` against runs recorded earlier, or, with ``eval_set=None``, every
    invocation recorded with the config's reference-free criteria (policies such as
    ``max_tool_calls``).

    ``source`` is a :class:`~agenteval_otel.traces.TraceSource` (trace files, spans,
    trajectories, a Jaeger query, or your own), or what :func:`~agenteval_otel.traces.trace_source`
    turns into one: a trace file path (OTLP/JSON, OTLP JSON lines, OTLP protobuf, Jaeger JSON), a
    list of them, or ``Trajectory`` or ``SpanRecord`` objects. When the traces hold several runs of a case (every
    ``agenteval run`` appends to the same file), ``runs="latest"`` scores the most recent one
    and counts the older ones in the result's ``set_aside_runs`` (and a warning);
    ``runs="all"`` scores every run as repeated runs (pass@1, pass@k, pass^k in ``metrics``).
    Each run is scored as soon as it is complete (a multi-turn conversation once no new turn
    of it has come for ``CONVERSATION_IDLE_RUNS`` runs), and its case result goes to ``sinks``
    then (again, if a newer run of the case comes later: the last one stands). The report holds
    each result slim, without its actual trajectory, except the first ``MAX_KEPT_TRAJECTORIES``
    failed or errored ones (``keep_trajectories``: ``True`` keeps every trajectory, ``False``
    none); its sinks receive whole results. ``logs``: OTLP/JSON log
    files whose records carry the spans' content, joined to the spans of trace files or of
    ``SpanRecord`` objects (log files among the trace paths are recognised too); a source with no
    spans to join them to (trajectories, a Jaeger query) refuses them with a ``ConfigError``.
    ``readers``: the convention readers (default: the installed ones, then ours). Use
    :func:`aevaluate_traces` inside an event loop.

    Cases (or, without an eval set, invocations) are scored ``concurrency`` at once, and the
    source is read no faster: by default enough to keep the judge's concurrency limit full
    (:func:`case_concurrency`; ``judge``: the client the judge criteria call, by default the one
    the environment configures). The runs of one case are scored one after the other. The
    report lists the eval set's cases in its order, then the invocations scored without a case
    by their root's start time, whatever order their scoring finished in.

    Without an eval set, each invocation is a result of its own, under ``{trace_id}:{span_id}``
    of its root span, in the report named ``source_id``; ``config`` must name a criterion that
    scores without a reference (``ConfigError`` otherwise). With an eval set and such criteria
    in ``config``, the invocations no case matched are scored with them too and reported after
    the cases.

    >>> from agenteval_otel.trajectory import Trajectory, TrajectoryStep
    >>> config = EvalConfig(criteria={"max_tool_calls": {"params": {"limit": 1}}})
    >>> runs = [Trajectory(trace_id="7e57", span_id="01", steps=[TrajectoryStep.tool("search")] * 2)]
    >>> evaluate_traces(None, runs, config).results[0].problems()
    ['7e57:01: max_tool_calls scored 0.00 < threshold 1.00: 2 tool calls > limit 1']
    """
    return run_sync(
        aevaluate_traces(eval_set, source, config, sinks=sinks, criterion_timeout_s=criterion_timeout_s,
                         runs=runs, logs=logs, readers=readers, keep_trajectories=keep_trajectories,
                         source_id=source_id, concurrency=concurrency, judge=judge),
        "aevaluate_traces",
    )
