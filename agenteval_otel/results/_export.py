"""``TraceExport``: verdicts written back beside the traces they judge, without changing them.

For every invocation of a submitted case result that names its trace and root span, and each of
its criterion results, a ``gen_ai.evaluation.result`` event goes out: a log record through the
OpenTelemetry Logs API carrying the judged root span's trace and span id, with the GenAI
evaluation attributes (``gen_ai.evaluation.name``, ``.score.value``, ``.score.label`` =
``pass``/``fail``, ``.explanation``; ``error.type`` when the criterion could not score) and our
provenance (``agenteval.evaluation.criterion``, ``.threshold``, ``.evaluator_version``,
``.judge_model``, ``.id``, ``.run_id``, ``agenteval.eval_set_id``, ``agenteval.eval_id``). A log
record does not stretch a trace: the judged trace's start and end stay what the agent made them.

With ``write="spans"`` (or ``"both"``: spans and records) each verdict is also an evaluation span
``evaluation {criterion}`` with the same attributes (ERROR status when the criterion could not
score). It is written after the fact, so it is the root of **a trace of its own**, one per
verdict, stamped with the time of the evaluation and carrying a **span link** to the judged span;
it is never a child in the judged trace, whose extent therefore never changes. (A live run's
verdicts also go on its turn's still-open root span as attributes: see :func:`verdict_attributes`.)

A verdict's identity is (judged trace id, judged span id, criterion, evaluation run id):
:func:`evaluation_id` derives from it the ``agenteval.evaluation.id`` of the record and, through
an export's own providers (:meth:`TraceExport.to_target`), the trace and span ids of its
evaluation span, so exporting the same verdicts twice writes the same ids. Everything carries
``agenteval.evaluation`` = true, so the trajectory layer never evaluates it. The explanation is
cleaned by the content policy in force (redaction patterns, truncation).

>>> from opentelemetry.sdk.trace import TracerProvider
>>> from agenteval_otel.results._results import CriterionResult, EvalCaseResult, InvocationResult
>>> verdict = CriterionResult(criterion="max_tool_calls", score=1.0, passed=True, threshold=1.0)
>>> result = EvalCaseResult(eval_id="case_1", passed=True, invocation_results=[InvocationResult(
...     invocation_id="i1", trace_id="4bf92f3577b34da6a3ce929d0e0e4736", span_id="00f067aa0ba902b7",
...     criterion_results=[verdict])])
>>> export = TraceExport(TracerProvider(), write="spans", run_id="nightly")
>>> export.submit(result)
>>> export.exported
1
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Final, Literal, get_args

from opentelemetry import _logs, trace
from opentelemetry._logs import LoggerProvider, SeverityNumber
from opentelemetry.context import Context
from opentelemetry.sdk._logs.export import LogRecordExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    TracerProvider,
)

from agenteval_otel import semconv as attr
from agenteval_otel.errors import mask_url
from agenteval_otel.results._delivery import DeliveryCounters, DeliveryProcessor, ExportedCallback
from agenteval_otel.results._results import CriterionResult, EvalCaseResult, InvocationResult
from agenteval_otel.tracing import TracingHandle, active_policy, current_provider, providers_for
from agenteval_otel.tracing.conventions import with_conventions

__all__ = ["EXPORT_MODES", "ExportMode", "TraceExport", "VerdictId", "evaluation_attributes", "evaluation_id",
           "verdict_attributes"]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

SCOPE = "agenteval_otel.evaluation"
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_RUN_ID: Final = "agenteval"
"""The evaluation run id of an export given neither a run id nor an eval set id."""

ExportMode = Literal["events", "spans", "both"]
"""What an export writes per verdict: ``gen_ai.evaluation.result`` log records only
(``events``), evaluation spans in traces of their own too (``spans``, ``both``: the record is
always written)."""
EXPORT_MODES: tuple[str, ...] = get_args(ExportMode)

try:
    PACKAGE_VERSION: str | None = metadata.version("agenteval-otel")
except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
    PACKAGE_VERSION = None


def _evaluated(result: EvalCaseResult) -> Iterator[tuple[EvalCaseResult, InvocationResult]]:
    """The invocations of ``result`` (of each repeated run, when it has several) that name the
    trace and root span they were read from."""
    for run in result.run_results or [result]:
        for invocation in run.invocation_results:
            if invocation.trace_id and invocation.span_id:
                yield run, invocation


def _parent(trace_id: str, span_id: str) -> SpanContext | None:
    """The judged root span as a remote, sampled span context; ``None`` for malformed ids."""
    try:
        context = SpanContext(int(trace_id, 16), int(span_id, 16), is_remote=True,
                              trace_flags=TraceFlags(TraceFlags.SAMPLED))
    except ValueError:
        return None
    return context if context.is_valid else None


@dataclass(frozen=True, slots=True)
class VerdictId:
    """A verdict's stable ids (see :func:`evaluation_id`): ``id``, the ``agenteval.evaluation.id``
    string, and ``trace_id`` / ``span_id``, those of its evaluation span's own trace."""

    id: str
    trace_id: int
    span_id: int


def evaluation_id(trace_id: str, span_id: str, criterion: str, run_id: str) -> VerdictId:
    """The ids of the verdict on ``criterion`` of the judged span ``span_id`` of ``trace_id`` in the
    evaluation run ``run_id``: a BLAKE2b digest of the four, so the same verdict has the same ids
    in every export (hex ids compared case-insensitively).

    >>> a = evaluation_id("4BF92F3577B34DA6A3CE929D0E0E4736", "00f067aa0ba902b7", "response_match", "nightly")
    >>> a == evaluation_id("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "response_match", "nightly")
    True
    >>> a == evaluation_id("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "response_match", "weekly")
    False
    >>> len(a.id), a.trace_id > 0 and a.span_id > 0
    (48, True)
    """
    parts = json.dumps([trace_id.lower(), span_id.lower(), criterion, run_id]).encode()
    digest = hashlib.blake2b(parts, digest_size=24, person=b"agenteval-eval").digest()
    return VerdictId(digest.hex(), int.from_bytes(digest[:16], "big") or 1, int.from_bytes(digest[16:], "big") or 1)


class _PresetIds(IdGenerator):
    """An id generator that hands out the trace and span id set (per thread) just before a span
    starts, and random ids otherwise: an export's own tracer provider writes every evaluation span
    with the ids :func:`evaluation_id` gives it."""

    def __init__(self) -> None:
        self._random = RandomIdGenerator()
        self._next = threading.local()

    def preset(self, trace_id: int, span_id: int) -> None:
        """The ids of the next span this thread starts (as the root of a trace of its own)."""
        self._next.trace_id, self._next.span_id = trace_id, span_id

    def generate_trace_id(self) -> int:
        """The preset trace id, else a random one."""
        found: int | None = getattr(self._next, "trace_id", None)
        self._next.trace_id = None
        return found if found is not None else self._random.generate_trace_id()

    def generate_span_id(self) -> int:
        """The preset span id, else a random one."""
        found: int | None = getattr(self._next, "span_id", None)
        self._next.span_id = None
        return found if found is not None else self._random.generate_span_id()


def evaluation_attributes(
    verdict: CriterionResult,
    *,
    eval_id: str | None = None,
    eval_set_id: str | None = None,
    evaluator_version: str | None = None,
    judge_model: str | None = None,
) -> dict[str, Any]:
    """The attributes of one verdict's evaluation span and ``gen_ai.evaluation.result`` record.

    >>> from agenteval_otel.results._results import CriterionResult
    >>> a = evaluation_attributes(CriterionResult(criterion="latency_budget", score=0.0, passed=False,
    ...                                           threshold=1.0, reason="took 12 s"))
    >>> a["gen_ai.evaluation.score.label"], a["gen_ai.evaluation.explanation"]
    ('fail', 'took 12 s')
    """
    found: dict[str, Any] = {
        attr.EVALUATION_MARKER: True,
        attr.GEN_AI_EVALUATION_NAME: verdict.criterion,
        attr.GEN_AI_EVALUATION_SCORE_VALUE: float(verdict.score),
        attr.GEN_AI_EVALUATION_SCORE_LABEL: attr.EVALUATION_PASS if verdict.passed else attr.EVALUATION_FAIL,
        attr.EVAL_CRITERION: verdict.criterion,
        attr.EVAL_THRESHOLD: float(verdict.threshold),
    }
    explanation = verdict.error or verdict.reason
    if explanation:
        found[attr.GEN_AI_EVALUATION_EXPLANATION] = active_policy().clean_error(explanation)
    if verdict.error:
        found[attr.ERROR_TYPE] = verdict.error_type or "CriterionError"
    if evaluator_version:
        found[attr.EVAL_EVALUATOR_VERSION] = evaluator_version
    model = verdict.details.get("judge_model")
    if not model and verdict.judge_usage is not None and verdict.judge_usage.used:
        model = judge_model
    if model:
        found[attr.EVAL_JUDGE_MODEL] = str(model)
    if eval_set_id:
        found[attr.EVAL_SET_ID] = eval_set_id
    if eval_id:
        found[attr.EVAL_ID] = eval_id
    return found


def verdict_attributes(verdicts: Iterable[CriterionResult]) -> dict[str, Any]:
    """The verdicts as attributes of the judged span itself (a live turn's root span):
    ``agenteval.evaluation.{criterion}.score`` and ``.label`` (``pass``/``fail``).

    >>> from agenteval_otel.results._results import CriterionResult
    >>> verdict_attributes([CriterionResult(criterion="response_match", score=0.5, passed=False, threshold=0.7)])
    {'agenteval.evaluation.response_match.score': 0.5, 'agenteval.evaluation.response_match.label': 'fail'}
    """
    found: dict[str, Any] = {}
    for verdict in verdicts:
        found[attr.EVAL_VERDICT_SCORE.format(criterion=verdict.criterion)] = float(verdict.score)
        found[attr.EVAL_VERDICT_LABEL.format(criterion=verdict.criterion)] = (
            attr.EVALUATION_PASS if verdict.passed else attr.EVALUATION_FAIL)
    return found


class TraceExport:
    """An ``EvaluationSink`` writing each verdict beside the trace it judges (see the module docs).

    ``tracer_provider`` / ``logger_provider``: where the evaluation spans and log records go
    (``None``: the provider our steps use — the one ``configure()`` set up, else the global one —
    and the global logger provider). ``write``: ``"events"`` (the default: log records only),
    ``"spans"`` or ``"both"`` (evaluation spans in traces of their own as well as the records).
    ``run_id`` names the evaluation run, part of every verdict's identity (default: ``eval_set_id``,
    else ``"agenteval"``). The evaluation spans' ids are those of :func:`evaluation_id` when the
    export owns its providers (:meth:`to_target`); a caller's tracer provider gives them ids of
    its own id generator (the records' ``agenteval.evaluation.id`` is stable either way).
    ``evaluator_version`` defaults to this package's version; ``eval_set_id`` is provenance the
    case results do not carry; ``judge_model`` names the judge's model on verdicts that called
    the judge without naming it in their details (judged criteria name the model they called
    there). ``exported`` counts the verdicts written, ``skipped`` the invocations that named no
    trace or root span. Never raises from ``submit``: a failure is logged and counted in
    ``errors``. ``shutdown`` flushes the providers (and shuts them down when this export owns
    them) within one deadline; later submissions are dropped. Raises ``ValueError`` for a
    ``write`` it does not know.
    """

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        logger_provider: LoggerProvider | None = None,
        *,
        write: ExportMode = "events",
        run_id: str | None = None,
        evaluator_version: str | None = None,
        eval_set_id: str | None = None,
        judge_model: str | None = None,
    ) -> None:
        if write not in EXPORT_MODES:
            raise ValueError(f"write must be one of {', '.join(EXPORT_MODES)}; got {write!r}")
        self.write: ExportMode = write
        self.run_id = run_id or eval_set_id or DEFAULT_RUN_ID
        self.tracer_provider = tracer_provider if tracer_provider is not None else current_provider()
        self.logger_provider = logger_provider if logger_provider is not None else _logs.get_logger_provider()
        self.evaluator_version = evaluator_version or PACKAGE_VERSION
        self.eval_set_id = eval_set_id
        self.judge_model = judge_model
        self._tracer = self.tracer_provider.get_tracer(SCOPE, PACKAGE_VERSION)
        ids = getattr(self.tracer_provider, "id_generator", None)
        self._ids = ids if isinstance(ids, _PresetIds) else None
        self._logger = self.logger_provider.get_logger(SCOPE, PACKAGE_VERSION)
        self._owned: TracingHandle | None = None
        self._delivery: DeliveryProcessor | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._shutdown_result: bool | None = None
        self.exported = 0
        self.skipped = 0
        self.errors = 0

    @classmethod
    def to_target(cls, target: str | os.PathLike[str], *, on_exported: ExportedCallback | None = None,
                  **options: Any) -> TraceExport:
        """An export of its own to ``target``: an OTLP endpoint URL (``http(s)://`` over
        http/protobuf to ``/v1/traces`` and ``/v1/logs``; ``grpc://`` or
        ``OTEL_EXPORTER_OTLP_PROTOCOL=grpc`` over gRPC; headers and timeout from the standard
        variables) or a file path, where the spans are appended as OTLP/JSON lines and the log
        records to the file beside it (``x.jsonl`` → ``x.logs.jsonl``). It owns its providers and
        shuts them down; its evaluation spans take the ids of :func:`evaluation_id`. An endpoint
        that is down costs a background export, never the caller. What became of every verdict's
        ``gen_ai.evaluation.result`` record (one per verdict, whatever ``write`` says) is counted
        in :attr:`delivery`; ``on_exported`` is told the hex ids of the judged traces whose
        records were delivered. ``options`` as for the constructor.

        Raises ``OSError`` when the file cannot be opened for appending.
        """
        processors: list[DeliveryProcessor] = []

        def delivery(exporter: LogRecordExporter) -> DeliveryProcessor:
            processors.append(DeliveryProcessor(exporter, on_exported=on_exported))
            return processors[-1]

        handle = providers_for(target, log_processor=delivery, id_generator=_PresetIds())
        export = cls(handle.provider, handle.logger_provider, **options)
        export._owned = handle
        export._delivery = processors[0] if processors else None  # none with OTEL_LOGS_EXPORTER=none
        if not processors and export.write == "events":
            _log.warning("OTEL_LOGS_EXPORTER=none turns off the gen_ai.evaluation.result records, the only "
                         "thing written with write='events' (--as events): no verdict goes to %s; "
                         "write='spans' (--as spans) sends evaluation spans", mask_url(os.fspath(target)))
        return export

    @property
    def delivery(self) -> DeliveryCounters | None:
        """What became of the verdicts' ``gen_ai.evaluation.result`` records of an export
        :meth:`to_target` built (exported, failed, dropped, queued); ``None`` for an export to
        providers of the caller's."""
        return None if self._delivery is None else self._delivery.counters

    def submit(self, result: EvalCaseResult) -> None:
        """Write the verdicts of ``result`` beside the traces of its invocations."""
        if self._closed:
            _log.debug("TraceExport: a result submitted after shutdown was dropped")
            return
        try:
            for run, invocation in _evaluated(result):
                self._export_invocation(run, invocation)
            self.skipped += sum(1 for run in result.run_results or [result] for inv in run.invocation_results
                                if not (inv.trace_id and inv.span_id))
        except Exception:
            self.errors += 1
            _log.warning("TraceExport: could not export the verdicts of %s", result.eval_id, exc_info=True)

    def _export_invocation(self, run: EvalCaseResult, invocation: InvocationResult) -> None:
        assert invocation.trace_id is not None and invocation.span_id is not None
        judged = _parent(invocation.trace_id, invocation.span_id)
        if judged is None:
            self.skipped += 1
            return
        context = trace.set_span_in_context(NonRecordingSpan(judged))
        for verdict in invocation.criterion_results:
            ids = evaluation_id(invocation.trace_id, invocation.span_id, verdict.criterion, self.run_id)
            attributes = evaluation_attributes(
                verdict, eval_id=run.eval_id, eval_set_id=self.eval_set_id,
                evaluator_version=self.evaluator_version, judge_model=self.judge_model)
            attributes[attr.EVAL_EVALUATION_ID] = ids.id
            attributes[attr.EVAL_RUN_ID] = self.run_id
            now = time.time_ns()
            if self.write != "events":
                self._evaluation_span(verdict, ids, judged, attributes, now)
            self._logger.emit(
                timestamp=now, context=context, event_name=attr.GEN_AI_EVALUATION_RESULT_EVENT,
                severity_number=SeverityNumber.WARN if verdict.error else SeverityNumber.INFO,
                attributes=attributes)
            self.exported += 1

    def _evaluation_span(self, verdict: CriterionResult, ids: VerdictId, judged: SpanContext,
                         attributes: dict[str, Any], now: int) -> None:
        """The verdict as the root span of a trace of its own, linked to the judged span."""
        if self._ids is not None:
            self._ids.preset(ids.trace_id, ids.span_id)
        span = self._tracer.start_span(f"evaluation {verdict.criterion}", context=Context(), kind=SpanKind.INTERNAL,
                                       attributes=with_conventions(attributes), links=[Link(judged)], start_time=now)
        if verdict.error:
            span.set_status(Status(StatusCode.ERROR, attributes.get(attr.GEN_AI_EVALUATION_EXPLANATION)))
        span.end(end_time=now)

    def force_flush(self, timeout: float | None = None) -> bool:
        """Export what was submitted within ``timeout`` seconds; whether that worked."""
        if self._owned is not None:
            return self._owned.force_flush(DEFAULT_TIMEOUT_S if timeout is None else timeout)
        deadline = time.monotonic() + (DEFAULT_TIMEOUT_S if timeout is None else timeout)
        ok = True
        for provider in (self.tracer_provider, self.logger_provider):
            flush = getattr(provider, "force_flush", None)
            if flush is not None:
                ok = flush(max(0, int((deadline - time.monotonic()) * 1000))) is not False and ok
        return ok

    def shutdown(self, timeout: float | None = None) -> bool:
        """Flush within ``timeout`` seconds, then drop later submissions; the providers are shut
        down when this export owns them. Idempotent."""
        with self._lock:
            if self._shutdown_result is not None:
                return self._shutdown_result
            self._closed = True
            if self._owned is not None:
                self._shutdown_result = self._owned.shutdown(DEFAULT_TIMEOUT_S if timeout is None else timeout)
            else:
                self._shutdown_result = self.force_flush(timeout)
            return self._shutdown_result
