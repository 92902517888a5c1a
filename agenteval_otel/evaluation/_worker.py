"""``EvaluationWorker``: the evaluation worker ``agenteval serve`` runs behind the Collector.

It receives OTLP (HTTP and gRPC, traces and logs), assembles each trace through the shared trace
buffer, scores every invocation with an :class:`~agenteval_otel.evaluation._online.OnlineEvaluator`
and writes the verdicts into the judged traces. Several workers behind the Collector's
``loadbalancing`` exporter (routing by trace id) scale evaluation out: every span of a trace
reaches the same worker, so each trace is evaluated once, by one of them.

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
import threading
import time
from collections.abc import Sequence
from typing import Any

from agenteval_otel.criteria import EvalConfig
from agenteval_otel.evalsets import EvalSet
from agenteval_otel.evaluation._online import OnlineEvaluator
from agenteval_otel.results import EvaluationSink
from agenteval_otel.traces.receiver import OtlpReceiver

__all__ = ["DEFAULT_GRPC_PORT", "DEFAULT_HTTP_PORT", "EvaluationWorker"]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

DEFAULT_HTTP_PORT = 4319
"""``agenteval serve``'s OTLP/HTTP port (the Collector beside it has 4318)."""
DEFAULT_GRPC_PORT = 4320
"""``agenteval serve``'s OTLP/gRPC port (the Collector beside it has 4317)."""


class EvaluationWorker:
    """An :class:`~agenteval_otel.traces.receiver.OtlpReceiver` feeding an ``OnlineEvaluator``.

    ``sinks``: where results go; by default they are written into the judged traces at
    ``export_target`` (an OTLP URL or a file, see ``TraceExport.to_target``), else through the
    global providers. ``eval_set``: cases whose invocations reference-based criteria score too.
    ``receiver_options`` go to the receiver (limits), ``evaluator_options`` to the evaluator
    (sampling, queue bound, timeouts). ``start()`` returns the worker; ``stop(timeout)`` stops
    receiving, then scores and exports what was received, within one deadline.
    """

    def __init__(
        self,
        config: EvalConfig,
        *,
        eval_set: EvalSet | None = None,
        sinks: Sequence[EvaluationSink] | None = None,
        export_target: str | None = None,
        host: str = "127.0.0.1",
        http_port: int | None = DEFAULT_HTTP_PORT,
        grpc_port: int | None = None,
        token: str | None = None,
        receiver_options: dict[str, Any] | None = None,
        evaluator_options: dict[str, Any] | None = None,
    ) -> None:
        self._export = None
        if sinks is None and export_target is not None:
            from agenteval_otel.results import TraceExport

            self._export = TraceExport.to_target(
                export_target, eval_set_id=eval_set.eval_set_id if eval_set is not None else None)
            sinks = [self._export]
        self.evaluator = OnlineEvaluator(config, sinks=sinks, eval_set=eval_set, **(evaluator_options or {}))
        self.receiver = OtlpReceiver(self.evaluator.feed, self.evaluator.feed_logs, host=host,
                                     http_port=http_port, grpc_port=grpc_port, token=token,
                                     health=self._evaluator_health, **(receiver_options or {}))
        self._stop_lock = threading.Lock()
        self._stopped: bool | None = None

    def start(self) -> EvaluationWorker:
        """Start receiving (the ports are bound when this returns)."""
        self.receiver.start()
        return self

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop receiving, finish scoring what was received and export it, all within
        ``timeout`` seconds; whether everything got done. Idempotent."""
        with self._stop_lock:
            if self._stopped is not None:
                return self._stopped
            deadline = time.monotonic() + timeout
            received = self.receiver.stop(timeout / 4)
            flushed = self.evaluator.force_flush(_millis_until(deadline))
            self.evaluator.shutdown(_millis_until(deadline))
            exported = True if self._export is None else self._export.shutdown(
                timeout=max(0.0, deadline - time.monotonic()))
            counters = self.evaluator.counters
            self._stopped = bool(received and flushed and exported and counters.accounted)
            return self._stopped

    def _evaluator_health(self) -> dict[str, Any]:
        """The evaluator's counters (``GET /health`` shows them under ``"consumer"``)."""
        return {"evaluator": dataclasses.asdict(self.evaluator.counters)}

    def __enter__(self) -> EvaluationWorker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _millis_until(deadline: float) -> int:
    return max(0, int((deadline - time.monotonic()) * 1000))
