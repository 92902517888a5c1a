"""``EvaluationWorker``: the evaluation worker ``agenteval serve`` runs behind the Collector.

It receives OTLP (HTTP and gRPC, traces and logs), assembles each trace through the shared trace
buffer, scores every invocation with an :class:`~agenteval_otel.evaluation._online.OnlineEvaluator`
and writes the verdicts beside the judged traces (``gen_ai.evaluation.result`` log records on the
judged spans; evaluation spans in traces of their own too, when asked for).

Nothing it acknowledges is lost silently. With a ``spool`` directory, every batch is written to a
local SQLite spool before the receiver answers 200, and a trace's rows are deleted once the
records of its verdicts are exported (or once it needs none); a worker restarted on the same
spool scores what is left. Verdicts that fail to export are counted (:attr:`EvaluationWorker.health`) and stay in
the spool for the next start. Without a spool, what is unscored at a crash is lost, and the
worker says so when it starts. Several workers behind the Collector's ``load_balancing``
exporter scale evaluation out: it routes by ``gen_ai.conversation.id`` (which every step of a
conversation carries) or by trace id, so every span of a trace reaches the same worker and each
trace is evaluated once, by one of them.

>>> from agenteval_otel.evaluation import CallbackSink, EvalConfig
>>> config = EvalConfig.model_validate({"criteria": {"final_response_present": 1.0}})
>>> worker = EvaluationWorker(config, http_port=0, sinks=[CallbackSink(print)]).start()
>>> worker.receiver.http_port > 0
True
>>> worker.stop(timeout=5)
True
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from agenteval_otel.criteria import EvalConfig
from agenteval_otel.evalsets import EvalSet
from agenteval_otel.evaluation._online import OnlineEvaluator
from agenteval_otel.evaluation._spool import Spool
from agenteval_otel.results import EvaluationSink, ExportMode, TraceExport
from agenteval_otel.traces.receiver import OtlpReceiver
from agenteval_otel.trajectory.logs import LogRecord
from agenteval_otel.trajectory.spans import SpanRecord

__all__ = ["DEFAULT_GRPC_PORT", "DEFAULT_HTTP_PORT", "EvaluationWorker"]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

DEFAULT_HTTP_PORT = 4319
"""``agenteval serve``'s OTLP/HTTP port (the Collector beside it has 4318)."""
DEFAULT_GRPC_PORT = 4320
"""``agenteval serve``'s OTLP/gRPC port (the Collector beside it has 4317)."""
DEFAULT_SETTLE_S = 2.0
"""Seconds a trace must be quiet after its root arrived before it is scored (late children join)."""
_REPLAY_PATIENCE_S = 60.0


class EvaluationWorker:
    """An :class:`~agenteval_otel.traces.receiver.OtlpReceiver` feeding an ``OnlineEvaluator``.

    ``sinks``: where results go; by default a ``TraceExport`` to ``export_target`` (an OTLP URL or
    a file, see ``TraceExport.to_target``) writing what ``export_as`` says (default: the
    ``gen_ai.evaluation.result`` records only) for the evaluation run ``run_id`` (default: the eval
    set's id, else ``"agenteval"``); ``more_sinks`` take the results too (e.g. a ``SummarySink``).
    ``eval_set``: cases whose invocations reference-based criteria score too.
    ``receiver_options`` go to the receiver (limits), ``evaluator_options`` to the evaluator
    (sampling, queue bound, timeouts, ``settle_s``: default :data:`DEFAULT_SETTLE_S`,
    ``max_pending_bytes``). ``spool``: a directory (or a :class:`Spool`) where acknowledged
    batches are kept until their verdicts are exported (``None``: kept in memory only).
    ``start()`` replays the spool and starts receiving; ``stop(timeout)`` stops receiving, then
    scores and exports what was received, within one deadline (``None``: 10 s).
    """

    def __init__(
        self,
        config: EvalConfig,
        *,
        eval_set: EvalSet | None = None,
        sinks: Sequence[EvaluationSink] | None = None,
        export_target: str | None = None,
        export_as: ExportMode = "events",
        run_id: str | None = None,
        host: str = "127.0.0.1",
        http_port: int | None = DEFAULT_HTTP_PORT,
        grpc_port: int | None = None,
        token: str | None = None,
        receiver_options: dict[str, Any] | None = None,
        evaluator_options: dict[str, Any] | None = None,
        spool: Spool | str | os.PathLike[str] | None = None,
        more_sinks: Sequence[EvaluationSink] = (),
    ) -> None:
        self._lock = threading.Lock()
        self._awaiting_export: set[str] = set()  # scored traces whose verdicts are not confirmed yet
        self._confirmed: OrderedDict[str, None] = OrderedDict()  # delivered before they were awaited
        self.spool = spool if isinstance(spool, Spool) or spool is None else Spool(spool)
        self._export: TraceExport | None = None
        if sinks is None and export_target is not None:
            self._export = TraceExport.to_target(
                export_target, eval_set_id=eval_set.eval_set_id if eval_set is not None else None,
                write=export_as, run_id=run_id, on_exported=self._exported)
            sinks = [self._export]
        if more_sinks:
            sinks = [*(sinks if sinks is not None else [TraceExport()]), *more_sinks]
        options = {"settle_s": DEFAULT_SETTLE_S, **(evaluator_options or {})}
        self.evaluator = OnlineEvaluator(config, sinks=sinks, eval_set=eval_set,
                                         on_trace_finished=self._trace_finished, **options)
        self.receiver = OtlpReceiver(self._take_spans, self._take_logs, host=host,
                                     http_port=http_port, grpc_port=grpc_port, token=token,
                                     health=self._evaluator_health, **(receiver_options or {}))
        self._stop_lock = threading.Lock()
        self._stopped: bool | None = None
        self.replayed = 0

    # --- what the receiver hands over ----------------------------------------------------

    def _take_spans(self, records: list[SpanRecord]) -> bool:
        """Spool a batch, then hand it to the evaluator; ``False`` (the sender retries) when
        either refuses it: nothing is acknowledged that is not held."""
        return self._spooled(records, Spool.add_spans, self.evaluator.feed)

    def _take_logs(self, logs: list[LogRecord]) -> bool:
        """Log records, likewise."""
        return self._spooled(logs, Spool.add_logs, self.evaluator.feed_logs)

    def _spooled(self, batch: list[Any], add: Callable[[Spool, list[Any]], list[int] | None],
                 feed: Callable[[list[Any]], bool]) -> bool:
        rows = add(self.spool, batch) if self.spool is not None else []
        if rows is None:
            return False
        if feed(batch):
            return True
        if rows and self.spool is not None:
            self.spool.discard(rows)
        return False

    def _trace_finished(self, trace_id: str, results: int, cut_short: bool) -> None:
        """Every invocation of a fed trace is done: its spool rows go once its verdicts are out
        (rows of a trace that shutdown cut short stay for the next start)."""
        if self.spool is None or cut_short:
            return
        if results == 0 or self._export is None or self._export.delivery is None:
            self.spool.done(trace_id)  # nothing to export, sinks of the caller's, or no records (OTEL_LOGS_EXPORTER=none)
            return
        with self._lock:
            confirmed = trace_id in self._confirmed
            if confirmed:
                del self._confirmed[trace_id]
            else:
                self._awaiting_export.add(trace_id)
        if confirmed:
            self.spool.done(trace_id)

    def _exported(self, trace_ids: set[str]) -> None:
        """The export delivered verdict records of these (judged) traces."""
        if self.spool is None:
            return
        done: list[str] = []
        with self._lock:
            for trace_id in trace_ids:
                if trace_id in self._awaiting_export:
                    self._awaiting_export.discard(trace_id)
                    done.append(trace_id)
                else:
                    self._confirmed[trace_id] = None
                    while len(self._confirmed) > 65_536:
                        self._confirmed.popitem(last=False)
        for trace_id in done:
            self.spool.done(trace_id)

    def _replay(self, deadline: float) -> None:
        """Score what a previous run acknowledged and did not finish (the spool's traces)."""
        if self.spool is None or not self.spool.pending_traces:
            return
        pending = self.spool.pending_traces
        _log.warning("EvaluationWorker: replaying %d trace(s) from the spool %s", pending, self.spool.path)
        for _trace_id, spans, logs in self.spool.replay():
            if logs:
                self.evaluator.feed_logs(logs)
            while spans and not self.evaluator.feed(spans):  # back-pressure: wait for room
                if time.monotonic() > deadline:
                    _log.warning("EvaluationWorker: the spool's replay did not finish; the rest waits "
                                 "in the spool for the next start")
                    return
                time.sleep(0.05)
            self.replayed += 1

    def start(self) -> EvaluationWorker:
        """Replay the spool, then start receiving (the ports are bound when this returns)."""
        if self.spool is None:
            _log.info("EvaluationWorker: no spool; what is acknowledged and unscored at a crash is lost")
        self._replay(time.monotonic() + _REPLAY_PATIENCE_S)
        self.receiver.start()
        return self

    def stop(self, timeout: float | None = 10.0) -> bool:
        """Stop receiving, finish scoring what was received and export it, all within
        ``timeout`` seconds (``None``: 10); whether everything got done. What is not done stays
        in the spool. Idempotent."""
        timeout = 10.0 if timeout is None else max(0.0, float(timeout))
        with self._stop_lock:
            if self._stopped is not None:
                return self._stopped
            deadline = time.monotonic() + timeout
            received = self.receiver.stop(timeout / 4)
            self.evaluator.flush_open_traces()
            flushed = self.evaluator.force_flush(_millis_until(deadline))
            self.evaluator.shutdown(_millis_until(deadline))
            exported = True if self._export is None else self._export.shutdown(
                timeout=max(0.0, deadline - time.monotonic()))
            if self.spool is not None:
                self.spool.close()
            counters = self.evaluator.counters
            delivery = self._export.delivery if self._export is not None else None
            self._stopped = bool(received and flushed and exported and counters.accounted
                                 and (delivery is None or not delivery.lost))
            return self._stopped

    @property
    def health(self) -> dict[str, Any]:
        """The worker's state and counters: ``status`` (``"serving"``, or ``"failing"`` when the
        scoring worker has stopped), the evaluator's counters, what became of the verdicts'
        ``gen_ai.evaluation.result`` records (``"verdicts"``: one per verdict), and the spool's."""
        document: dict[str, Any] = {
            "status": "serving" if self.evaluator.healthy else "failing",
            "evaluator": dataclasses.asdict(self.evaluator.counters),
        }
        delivery = self._export.delivery if self._export is not None else None
        if delivery is not None:
            document["verdicts"] = {**dataclasses.asdict(delivery), "lost": delivery.lost}
        if self.spool is not None:
            document["spool"] = dataclasses.asdict(self.spool.counters)
        return document

    def _evaluator_health(self) -> dict[str, Any]:
        """``GET /health`` shows :attr:`health` under ``"consumer"``."""
        return self.health

    def __enter__(self) -> EvaluationWorker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _millis_until(deadline: float) -> int:
    return max(0, int((deadline - time.monotonic()) * 1000))
