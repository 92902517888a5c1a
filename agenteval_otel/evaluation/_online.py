"""``OnlineEvaluator``: scores agent invocations while the app runs, off the app's thread.

It is a span processor. Its app-thread work is a ``TrajectoryProcessor``'s: ``on_end`` appends the
ended span to a bounded intake and returns. When an invocation's local root span ends, its
trajectory is sampled and put on a bounded queue; a worker thread with an event loop of its own
scores it with a :class:`~agenteval_otel.evaluation._scoring.Scorer` (the reference-free criteria
always; reference-based ones when a registered case matches the invocation by eval id,
conversation id or user input) and hands the result to its sinks (by default ``TraceExport``: a
``gen_ai.evaluation.result`` record per verdict on the judged span). An OTLP receiver hands it spans through :meth:`feed` (and log records through :meth:`feed_logs`); stored or
hand-made trajectories go through :meth:`submit`.

Every invocation is accounted for in :attr:`OnlineEvaluator.counters`: evaluated, errored (a
criterion raised or timed out, or scoring failed: the result says why), sampled out, or dropped
and counted (queue full, after shutdown, unfinished at the shutdown deadline), one warning per
kind. Sampling is deterministic by trace id, so every worker decides a trace the same way. Spans
carrying the evaluation marker are never evaluated. Nothing raises into the app. An async
criterion (a judge call) that hangs is cut off by its timeout; a sync criterion or a sink that
never returns holds the worker, so later invocations wait, then are dropped and counted, and
shutdown still keeps its deadline.

>>> from opentelemetry.sdk.trace import TracerProvider
>>> from agenteval_otel.evaluation import CallbackSink, EvalConfig
>>> config = EvalConfig(criteria={"exact_match": 1.0})
>>> evaluator = OnlineEvaluator(config, sinks=[CallbackSink(print)], sample_rate=0.5)
>>> TracerProvider().add_span_processor(evaluator)
>>> evaluator.shutdown(1000)
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from agenteval_otel.criteria import EvalConfig, canonical_criterion_name
from agenteval_otel.evalsets import EvalCase, EvalSet
from agenteval_otel.evaluation._judging import default_judge
from agenteval_otel.evaluation._scoring import Scorer, invocation_key
from agenteval_otel.judge import JudgeClient
from agenteval_otel.results import AgentFailure, EvalCaseResult, EvaluationSink, SinkGroup
from agenteval_otel.semconv import EVALUATION_MARKER
from agenteval_otel.trajectory import Trajectory, TrajectoryProcessor
from agenteval_otel.trajectory.conventions import Reader
from agenteval_otel.trajectory.logs import LogRecord
from agenteval_otel.trajectory.spans import SpanRecord, record_size

__all__ = ["OnlineCounters", "OnlineEvaluator", "TraceFinishedCallback", "default_memory_budget", "trace_sampled"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

DEFAULT_TIMEOUT_MILLIS = 30000
DEFAULT_MAX_QUEUE = 1024
"""Invocations waiting to be scored, at most; more are dropped and counted."""
MIN_ASSEMBLY_QUEUE = 512
"""Traces whose root has ended waiting to be assembled, at least (``max_queue`` when larger)."""
FED_OPEN_TRACES = 262_144
"""Traces held open at once, at most: fed spans are bounded in bytes, this only backs that up."""
DEFAULT_CONCURRENCY = 8
"""Invocations scored at once on the worker's event loop."""
DEFAULT_CRITERION_TIMEOUT_S = 60.0
"""An async criterion (a judge call) still running after this long becomes an error result."""
_COUNTED = " (further drops are counted, not logged)"

TraceFinishedCallback = Callable[[str, int, bool], object]
"""Called with a fed trace's hex id, the number of results handed to the sinks for it, and
whether shutdown cut it short (its spans are worth keeping for a restart), once every invocation
of it is scored, sampled out or given up."""


def default_memory_budget() -> int:
    """Bytes of spans a worker holds at most by default: an eighth of the machine's memory,
    between 256 MiB and 2 GiB (1 GiB where the memory cannot be read)."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 1 << 30
    return max(256 << 20, min(2 << 30, physical // 8))


def trace_sampled(trace_id: str | None, rate: float, salt: str = "") -> bool:
    """Whether the trace ``trace_id`` falls within ``rate`` (0 to 1): a hash of the id, so every
    process decides a trace the same way; ``salt`` draws an independent decision (one per criterion).

    >>> trace_sampled("4bf92f3577b34da6a3ce929d0e0e4736", 1.0), trace_sampled("4bf92f3577b34da6a3ce929d0e0e4736", 0.0)
    (True, False)
    """
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    digest = hashlib.blake2b(f"{salt}:{(trace_id or '').lower()}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") < rate * 2**64


@dataclass(frozen=True, slots=True)
class OnlineCounters:
    """A snapshot of what became of the invocations an ``OnlineEvaluator`` received.

    ``received == sampled_out + queued + in_progress + evaluated + errored + dropped`` at any
    moment (:attr:`accounted`). Assembly counts whole traces and spans lost before they became
    invocations: ``dropped_traces`` (a root that never arrived within the time-to-live, too many
    open, still open at shutdown), ``dropped_spans`` and ``refused_batches`` (batches :meth:`feed`
    refused because the intake was full: the sender may retry them).
    """

    received: int = 0
    """Invocations handed to the evaluator (assembled from spans, or submitted)."""
    sampled_out: int = 0
    queued: int = 0
    """Waiting to be scored."""
    in_progress: int = 0
    evaluated: int = 0
    """Scored, every criterion gave a verdict; its result went to the sinks."""
    errored: int = 0
    """Scored with an error (a criterion raised or timed out, or scoring failed); to the sinks too."""
    dropped: int = 0
    """Queue full, received after shutdown, or not finished by the shutdown deadline."""
    sink_errors: int = 0
    """Sink calls that raised (each sink is isolated; the evaluator goes on)."""
    refused_batches: int = 0
    dropped_traces: int = 0
    dropped_spans: int = 0
    late_spans: int = 0
    """Fed spans of a trace already scored (they came after the settle window); dropped."""
    pending_bytes: int = 0
    """Estimated bytes of fed spans held, from acceptance until their trace is scored."""

    @property
    def accounted(self) -> bool:
        """Whether every invocation received is in exactly one state."""
        return self.received == (self.sampled_out + self.queued + self.in_progress + self.evaluated
                                 + self.errored + self.dropped)

    def __str__(self) -> str:
        return ", ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))


def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


class _Cases:
    """Registered cases by eval id, conversation (thread) id and each turn's user input."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_eval_id: dict[str, EvalCase] = {}
        self._by_thread: dict[str, EvalCase] = {}
        self._by_input: dict[str, tuple[EvalCase, int]] = {}

    def add(self, case: EvalCase) -> None:
        with self._lock:
            self._by_eval_id[case.eval_id] = case
            if case.session_input is not None and case.session_input.thread_id:
                self._by_thread[case.session_input.thread_id] = case
            for index, invocation in enumerate(case.conversation):
                self._by_input[_norm(invocation.user_content.get_text())] = (case, index)

    def match(self, trajectory: Trajectory) -> tuple[EvalCase, int] | None:
        """The case and turn ``trajectory`` is a run of: by eval id or conversation id (the turn
        whose user input it has, or the only one), else by its user input alone."""
        text = _norm(trajectory.user_input)
        with self._lock:
            if not (self._by_eval_id or self._by_thread):
                return None
            case = self._by_eval_id.get(trajectory.eval_id or "") or self._by_thread.get(
                trajectory.conversation_id or "")
            by_input = self._by_input.get(text) if text else None
        if case is None:
            return by_input
        if by_input is not None and by_input[0] is case:
            return by_input
        return (case, 0) if len(case.conversation) == 1 else None


@dataclass(eq=False, slots=True)
class _Job:
    trajectory: Trajectory
    criteria: tuple[str, ...]
    fed_trace: str | None = None


@dataclass(eq=False, slots=True)
class _FedTrace:
    """A fed trace from acceptance to the end of its scoring: its bytes and open invocations."""

    size: int = 0
    jobs: int = 0
    results: int = 0
    assembled: bool = False
    cut_short: bool = False


class OnlineEvaluator(SpanProcessor):
    """Scores each agent invocation as its local root span ends (or as :meth:`feed` and
    :meth:`submit` hand it in), on a worker thread, and hands the results to ``sinks``.

    ``config``: the criteria (reference-free ones score every invocation; reference-based ones
    the invocations matched to a case of ``eval_set`` or :meth:`register_case`). ``sinks``:
    where results go (default: ``[TraceExport()]``, a ``gen_ai.evaluation.result`` log record
    per verdict on the judged span). ``sample_rate``: the share of traces scored;
    ``criterion_sample_rates``: per criterion, the share of those it scores (e.g.
    ``{"llm_judge": 0.1}``), both by trace id. ``max_queue`` bounds the invocations waiting to
    be scored (and, when above 512, the traces waiting to be assembled), ``concurrency`` the invocations scored at
    once; an async criterion past ``criterion_timeout_s`` errors.
    ``judge``: the judge client criteria get (default: the environment's). ``readers``,
    ``trace_ttl_s`` and ``max_pending_spans`` go to the assembling ``TrajectoryProcessor``.

    Fed spans (:meth:`feed`) may come in any order: a trace is scored once its root has arrived
    and no span of it has come for ``settle_s`` seconds, or at ``trace_ttl_s``.
    ``max_pending_bytes`` bounds the estimated bytes of fed spans held until their trace is
    scored (default: :func:`default_memory_budget`): a batch that would pass it is refused.
    ``on_trace_finished`` is told when every invocation of a fed trace is done.
    Bad arguments raise ``ValueError`` here; nothing raises later.
    """

    def __init__(
        self,
        config: EvalConfig,
        *,
        sinks: Iterable[EvaluationSink] | None = None,
        eval_set: EvalSet | None = None,
        sample_rate: float = 1.0,
        criterion_sample_rates: Mapping[str, float] | None = None,
        max_queue: int = DEFAULT_MAX_QUEUE,
        concurrency: int = DEFAULT_CONCURRENCY,
        criterion_timeout_s: float | None = DEFAULT_CRITERION_TIMEOUT_S,
        judge: JudgeClient | None = None,
        readers: Sequence[Reader] | None = None,
        trace_ttl_s: float = 300.0,
        max_pending_spans: int = 65_536,
        settle_s: float = 0.0,
        max_pending_bytes: int | None = None,
        on_trace_finished: TraceFinishedCallback | None = None,
    ) -> None:
        rates = dict(criterion_sample_rates or {})
        for rate in (sample_rate, *rates.values()):
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"sample rates must be within [0, 1], got {rate!r}")
        if max_queue < 1 or concurrency < 1:
            raise ValueError("max_queue and concurrency must be at least 1")
        if max_pending_bytes is not None and max_pending_bytes < 1:
            raise ValueError(f"max_pending_bytes must be at least 1, got {max_pending_bytes!r}")
        if criterion_timeout_s is not None and criterion_timeout_s <= 0:
            raise ValueError(f"criterion_timeout_s must be positive, got {criterion_timeout_s!r}")
        self.config = config
        enabled = config.enabled()
        self._criteria = tuple(enabled)
        if not enabled:
            raise ValueError("the config enables no criterion: there is nothing to score")
        self._rates: dict[str, float] = {}
        for name, rate in rates.items():
            canonical = canonical_criterion_name(name)
            if canonical not in enabled:
                raise ValueError(f"criterion_sample_rates names {name!r}, which the config does not enable")
            self._rates[canonical] = rate
        self.sample_rate = sample_rate
        self._judge = judge if judge is not None else default_judge()
        self._criterion_timeout_s = criterion_timeout_s
        self._scorers: dict[tuple[str, ...], Scorer] = {}
        self._cases = _Cases()
        for case in eval_set.eval_cases if eval_set is not None else ():
            self._cases.add(case)
        if sinks is None:
            from agenteval_otel.results import TraceExport

            sinks = [TraceExport()]
        self._sinks = SinkGroup(sinks)
        self._max_queue = max_queue
        self._concurrency = concurrency
        # shared between the feeding threads and the worker, under ``_lock``
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._queue: deque[_Job] = deque()
        self._in_progress: set[_Job] = set()
        self._counts = {"received": 0, "sampled_out": 0, "evaluated": 0, "errored": 0, "dropped": 0}
        self._refused_batches = 0
        self._max_bytes = default_memory_budget() if max_pending_bytes is None else max_pending_bytes
        self._pending_bytes = 0
        self._fed: dict[str, _FedTrace] = {}  # by hex trace id, under ``_lock``
        self._on_trace_finished = on_trace_finished
        self._crashed = False
        self._warned: set[str] = set()
        self._closed = False  # later invocations are dropped
        self._shut_down = False
        self._stopping = False  # the worker ends once nothing is left
        # the worker: an event loop of its own, woken through ``call_soon_threadsafe``
        self._loop = asyncio.new_event_loop()
        self._wakeup = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._worker = threading.Thread(target=self._run, name="OnlineEvaluator", daemon=True)
        # skip_empty=False: an invocation recorded with content capture off is scored, as offline
        self._assembly = TrajectoryProcessor(
            self._offer, group="invocation", readers=readers, trace_ttl_s=trace_ttl_s,
            max_pending_spans=max_pending_spans, max_queued_traces=max(max_queue, MIN_ASSEMBLY_QUEUE),
            settle_s=settle_s, skip_empty=False, on_trace_done=self._trace_assembled,
            max_open_traces=FED_OPEN_TRACES,
        )
        self._worker.start()

    # --- intake --------------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Queue ``span`` for assembly (a lock-free append). Never raises, never blocks."""
        self._assembly.on_end(span)

    def feed(self, records: Iterable[SpanRecord]) -> bool:
        """Take spans decoded by a receiver; a trace is scored when its root has arrived and it
        has settled (see the class docs). Our own evaluation spans are left out.

        Thread-safe and never blocks. ``False`` when the batch was refused (it would pass the
        byte budget, the intake or the queue of invocations waiting to be scored is full, or the
        evaluator is shut down): counted in ``refused_batches``, and the receiver answers so that
        the sender retries."""
        sizes: dict[str, int] = {}
        taken = False
        try:
            batch = list(records)
            if not all(isinstance(record, SpanRecord) for record in batch):
                raise TypeError("feed takes SpanRecords")
            batch = [record for record in batch if not record.attributes.get(EVALUATION_MARKER)]
            for record in batch:
                sizes[record.trace_id] = sizes.get(record.trace_id, 0) + record_size(record)
            size = sum(sizes.values())
            with self._lock:
                if self._pending_bytes + size > self._max_bytes and self._pending_bytes:
                    self._warn_once("bytes", f"fed spans hold about {self._pending_bytes} bytes of the "
                                    f"{self._max_bytes} allowed; batches are refused until traces are scored")
                    self._refused_batches += 1
                    return False
                self._reserve(sizes)
            roots = sum(1 for record in batch if record.is_local_root)
            waiting = len(self._queue) + self._assembly.waiting_traces  # back-pressure, not drops
            taken = (waiting == 0 or waiting + roots <= self._max_queue) and self._assembly.feed(batch)
        except Exception:  # noqa: BLE001 - never raise into the receiver
            logger.exception("OnlineEvaluator: could not take a batch of spans")
        if not taken:
            with self._lock:
                self._refused_batches += 1
                self._unreserve(sizes)
        return taken

    def _reserve(self, sizes: Mapping[str, int]) -> None:
        """Charge fed spans' bytes to their traces; under ``_lock``."""
        for trace_id, size in sizes.items():
            state = self._fed.get(trace_id)
            if state is None:
                state = self._fed[trace_id] = _FedTrace()
            state.size += size
            self._pending_bytes += size

    def _unreserve(self, sizes: Mapping[str, int]) -> None:
        """Give back what :meth:`_reserve` charged for a refused batch; under ``_lock``."""
        for trace_id, size in sizes.items():
            state = self._fed.get(trace_id)
            if state is not None:
                state.size -= size
                self._pending_bytes -= size
                if not (state.size or state.jobs or state.results):
                    del self._fed[trace_id]

    def _trace_assembled(self, trace_id: str, delivered: bool) -> None:
        """The assembly is done with a fed trace: every invocation of it has been offered, or it
        was dropped."""
        with self._lock:
            state = self._fed.get(trace_id)
            if state is None:
                return
            state.assembled = True
            state.cut_short |= not delivered and self._shut_down
            finished = self._finished(trace_id, state)
        if finished is not None:
            self._tell_finished(trace_id, *finished)

    def _finished(self, trace_id: str, state: _FedTrace) -> tuple[int, bool] | None:
        """Release a fed trace whose invocations are all done: the results it gave and whether
        shutdown cut it short, else ``None``; under ``_lock``."""
        if not state.assembled or state.jobs:
            return None
        del self._fed[trace_id]
        self._pending_bytes -= state.size
        return state.results, state.cut_short

    def _tell_finished(self, trace_id: str, results: int, cut_short: bool) -> None:
        if self._on_trace_finished is not None:
            try:
                self._on_trace_finished(trace_id, results, cut_short)
            except Exception:  # noqa: BLE001 - the consumer's failure must not stop scoring
                self._warn_once("finished", "OnlineEvaluator: the on_trace_finished callback raised")

    def feed_logs(self, logs: Iterable[LogRecord]) -> bool:
        """Take log records decoded by a receiver (the GenAI events carrying content): each joins
        its span when the span's trace is assembled (see ``TrajectoryProcessor.feed_logs``).
        Thread-safe, never blocks, never raises; ``False`` after shutdown."""
        return self._assembly.feed_logs(logs)

    def submit(self, trajectory: Trajectory) -> bool:
        """Score an invocation assembled elsewhere. ``False`` when it was dropped (queue full,
        shut down, not a trajectory), counted; ``True`` when queued or sampled out. Never raises."""
        if not isinstance(trajectory, Trajectory):
            self._warn_once("type", f"OnlineEvaluator.submit takes a Trajectory, got {type(trajectory).__name__}")
            return False
        return self._offer(trajectory)

    def register_case(self, case: EvalCase) -> None:
        """Score later invocations that match ``case`` (by eval id, the conversation id of its
        session, or a turn's user input) with the reference-based criteria too."""
        self._cases.add(case)

    def _offer(self, trajectory: Trajectory) -> bool:
        try:
            criteria = self._sampled_criteria(trajectory.trace_id)
            with self._lock:
                counts = self._counts
                counts["received"] += 1
                if self._closed:
                    counts["dropped"] += 1
                    self._warn_once("closed", "an invocation arrived after OnlineEvaluator.shutdown; dropped"
                                    + _COUNTED)
                    return False
                if not criteria:
                    counts["sampled_out"] += 1
                    return True
                fed = self._fed.get(trajectory.trace_id or "")
                if len(self._queue) >= self._max_queue and fed is None:  # fed ones are bounded in bytes
                    counts["dropped"] += 1
                    self._warn_once("queue", f"more than {self._max_queue} invocations wait to be scored; "
                                    "invocations are dropped" + _COUNTED)
                    return False
                if fed is not None:
                    fed.jobs += 1
                self._queue.append(_Job(trajectory, criteria, trajectory.trace_id if fed is not None else None))
            self._wake()
            return True
        except Exception:  # noqa: BLE001 - never raise into the caller
            logger.exception("OnlineEvaluator: could not take an invocation")
            return False

    def _sampled_criteria(self, trace_id: str | None) -> tuple[str, ...]:
        """The criteria that score this trace: none when it is sampled out."""
        if not trace_sampled(trace_id, self.sample_rate):
            return ()
        rates = self._rates
        return tuple(name for name in self._criteria
                     if name not in rates or trace_sampled(trace_id, rates[name], salt=name))

    def _warn_once(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            logger.warning(message)

    # --- the worker ----------------------------------------------------------------------

    def _wake(self) -> None:
        try:
            self._loop.call_soon_threadsafe(self._wakeup.set)
        except RuntimeError:  # the loop has closed: nothing left to wake
            pass

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        except BaseException:  # noqa: BLE001 - logged; the counters keep what was lost, health tells
            self._crashed = True
            logger.exception("OnlineEvaluator: the worker stopped")
        finally:
            self._loop.close()

    @property
    def healthy(self) -> bool:
        """Whether the scoring worker is running (or has stopped because it was shut down)."""
        return not self._crashed and (self._worker.is_alive() or self._shut_down)

    def _next(self) -> _Job | None:
        with self._lock:
            if not self._queue:
                return None
            job = self._queue.popleft()
            self._in_progress.add(job)
            return job

    async def _serve(self) -> None:
        wakeup, tasks = self._wakeup, self._tasks
        while True:
            wakeup.clear()
            while len(tasks) < self._concurrency:
                job = self._next()
                if job is None:
                    break
                task = asyncio.ensure_future(self._evaluate(job))
                tasks.add(task)
                task.add_done_callback(self._task_done)
            if self._stopping and not tasks:
                with self._lock:
                    if not self._queue:
                        return
            await wakeup.wait()

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._wakeup.set()

    def _scorer(self, criteria: tuple[str, ...]) -> Scorer:
        scorer = self._scorers.get(criteria)
        if scorer is None:
            enabled = self.config.enabled()
            subset = self.config.model_copy(update={"criteria": {name: enabled[name] for name in criteria}})
            scorer = self._scorers[criteria] = Scorer(  # ``concurrency`` invocations, every criterion of each
                subset, judge=self._judge, concurrency=self._concurrency * len(criteria),
                criterion_timeout_s=self._criterion_timeout_s)
        return scorer

    async def _evaluate(self, job: _Job) -> None:
        trajectory, started = job.trajectory, time.perf_counter()
        try:
            match = self._cases.match(trajectory)
            case, turn = match if match is not None else (None, 0)
            result = await self._scorer(job.criteria).score_invocation(trajectory, case=case, turn_index=turn)
        except asyncio.CancelledError:
            raise
        except BaseException as error:  # noqa: BLE001 - even SystemExit from user code is a result
            failure = AgentFailure.of(error)
            result = EvalCaseResult(
                eval_id=invocation_key(trajectory), name=trajectory.agent_name, passed=False,
                error=f"could not score the invocation: {failure.message}", error_type=failure.error_type,
                traceback=failure.traceback, trace_ids=list(trajectory.trace_ids), trace_id=trajectory.trace_id,
                span_id=trajectory.span_id)
        result = result.model_copy(update={"duration_seconds": time.perf_counter() - started})
        with self._lock:
            if job not in self._in_progress:  # given up at the shutdown deadline: counted as dropped
                return
        try:
            self._sinks.submit(result)
        except BaseException:  # noqa: BLE001 - a sink that raises anything is counted, never fatal
            logger.exception("OnlineEvaluator: a sink raised")
        with self._lock:
            if job in self._in_progress:
                self._in_progress.discard(job)
                self._counts["errored" if result.errored else "evaluated"] += 1
                self._idle.notify_all()
        self._job_done(job, results=1)

    def _job_done(self, job: _Job, results: int) -> None:
        """An invocation of a fed trace is scored (``results`` = 1) or given up (0)."""
        if job.fed_trace is None:
            return
        with self._lock:
            state = self._fed.get(job.fed_trace)
            if state is None:
                return
            state.jobs -= 1
            state.results += results
            state.cut_short |= not results
            finished = self._finished(job.fed_trace, state)
        if finished is not None:
            self._tell_finished(job.fed_trace, *finished)

    # --- counters, flush and shutdown ----------------------------------------------------

    def flush_open_traces(self) -> None:
        """Score every fed trace whose root has arrived now, without waiting out ``settle_s``
        (call it once the senders have stopped)."""
        self._assembly.settle()

    @property
    def counters(self) -> OnlineCounters:
        """A snapshot of the counters (see :class:`OnlineCounters`)."""
        dropped_traces, dropped_spans = self._assembly.dropped_traces, self._assembly.dropped_spans
        with self._lock:
            return OnlineCounters(
                **self._counts, queued=len(self._queue), in_progress=len(self._in_progress),
                sink_errors=sum(self._sinks.errors.values()), refused_batches=self._refused_batches,
                dropped_traces=dropped_traces, dropped_spans=dropped_spans,
                late_spans=self._assembly.late_spans, pending_bytes=self._pending_bytes)

    def _wait_idle(self, deadline: float) -> bool:
        with self._idle:
            while self._queue or self._in_progress:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._idle.wait(remaining)
            return True

    def force_flush(self, timeout_millis: int | None = DEFAULT_TIMEOUT_MILLIS) -> bool:
        """Score every invocation whose root span has ended and flush the sinks, within one
        deadline (``None``: 30 s); ``False`` if that did not finish in time."""
        deadline = _deadline(timeout_millis)
        ok = self._assembly.force_flush(_millis_left(deadline))
        ok = self._wait_idle(deadline) and ok
        return self._sinks.force_flush(_seconds_left(deadline)) and ok

    def shutdown(self, timeout_millis: int | None = DEFAULT_TIMEOUT_MILLIS) -> None:
        """Score what is queued, shut the sinks down and stop, within one overall deadline
        (``None``: 30 s). What is unfinished at the deadline is dropped and counted; later
        spans and invocations are dropped. Logs the counters once. Idempotent."""
        with self._lock:
            if self._shut_down:
                return
            self._shut_down = True
        deadline = _deadline(timeout_millis)
        self._assembly.shutdown(_millis_left(deadline))
        with self._lock:
            self._closed = True
        if not self._wait_idle(deadline):
            with self._lock:
                given_up = [*self._queue, *self._in_progress]
                abandoned = len(given_up)
                self._counts["dropped"] += abandoned
                self._queue.clear()
                self._in_progress.clear()
            for job in given_up:
                self._job_done(job, results=0)
            logger.warning("OnlineEvaluator.shutdown: %d invocation(s) not scored by the deadline; dropped",
                           abandoned)
        self._stopping = True
        try:
            self._loop.call_soon_threadsafe(self._cancel_tasks)
        except RuntimeError:  # the loop has closed already
            pass
        self._sinks.shutdown(_seconds_left(deadline))
        self._worker.join(_seconds_left(deadline))
        counters = self.counters
        lost = counters.dropped or counters.dropped_traces or counters.errored or counters.sink_errors
        logger.log(logging.WARNING if lost else logging.INFO, "OnlineEvaluator: %s", counters)

    def _cancel_tasks(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._wakeup.set()


def _deadline(timeout_millis: int | None) -> float:
    return time.monotonic() + (DEFAULT_TIMEOUT_MILLIS if timeout_millis is None else timeout_millis) / 1000


def _seconds_left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def _millis_left(deadline: float) -> int:
    return int(_seconds_left(deadline) * 1000)
