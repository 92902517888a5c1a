"""What the backend-native verdict sinks share: one verdict as a backend sees it, the background
delivery (a bounded queue, batches, one thread, counted outcomes) and one HTTP exchange with one
deadline.

A :class:`Verdict` is one criterion's result on one judged root span, identified by (trace id,
span id, criterion, evaluation run id): the sinks upsert on that identity, so exporting the same
verdict twice leaves one. :class:`VerdictDelivery` is the base of ``PhoenixAnnotations`` and
``MlflowAssessments``: ``submit`` only queues (never blocks, never raises; past ``max_queue`` the
verdict is dropped and counted), a daemon thread sends batches of up to ``batch_size`` verdicts
through the subclass's ``_send``, and ``counters`` says how many were ``exported``, ``failed`` or
``dropped`` and how many are still ``queued``. The first failure of each kind is logged as a
warning, credentials masked; later ones are counted.

>>> from agenteval_otel.results._results import CriterionResult
>>> verdict = Verdict.of(CriterionResult(criterion="max_turns", score=1.0, passed=True, threshold=1.0),
...                      trace_id="4bf92f3577b34da6a3ce929d0e0e4736", span_id="00f067aa0ba902b7",
...                      run_id="nightly", eval_id="case_1")
>>> verdict.label, verdict.judged, verdict.metadata["agenteval.evaluation.run_id"]
('pass', False, 'nightly')
"""

from __future__ import annotations

import http.client
import json
import logging
import re
import socket
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenteval_otel import semconv as attr
from agenteval_otel.errors import mask_url, redact_secrets
from agenteval_otel.results._batching import BatchQueue, DeliveryCounters
from agenteval_otel.results._export import PACKAGE_VERSION, _evaluated, evaluation_attributes, evaluation_id
from agenteval_otel.results._results import CriterionResult, EvalCaseResult

__all__ = ["DEFAULT_RUN_ID", "RUN_ID_KEY", "ExportFailure", "Verdict", "VerdictDelivery", "exchange"]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

RUN_ID_KEY = attr.EVAL_RUN_ID
"""The metadata key of the evaluation run a verdict belongs to."""
DEFAULT_RUN_ID = "agenteval"
"""The evaluation run id when neither ``run_id`` nor ``eval_set_id`` is given."""
DEFAULT_TIMEOUT_S = 30.0
MAX_BODY_BYTES = 8 * 1024 * 1024
"""The largest answer read from a backend."""
_HEX_IDS = re.compile(r"[0-9a-f]{32}:[0-9a-f]{16}")


@dataclass(frozen=True, slots=True)
class Verdict:
    """One criterion's result on one judged root span, as the backends take it.

    ``judged``: the LLM judge was asked (annotator kind LLM), else the verdict came from code;
    ``explanation``: the reason or the error, cleaned by the content policy in force; ``metadata``:
    our provenance (run id, eval set and case ids, threshold, evaluator version, judge model,
    ``error.type``).
    """

    trace_id: str
    span_id: str
    criterion: str
    run_id: str
    score: float
    passed: bool
    judged: bool
    explanation: str | None = None
    error_type: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``pass`` or ``fail``."""
        return attr.EVALUATION_PASS if self.passed else attr.EVALUATION_FAIL

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What makes two verdicts the same one: (trace id, span id, criterion, run id)."""
        return self.trace_id, self.span_id, self.criterion, self.run_id

    @classmethod
    def of(cls, result: CriterionResult, *, trace_id: str, span_id: str, run_id: str, eval_id: str | None = None,
           eval_set_id: str | None = None, evaluator_version: str | None = PACKAGE_VERSION,
           judge_model: str | None = None) -> Verdict:
        """The verdict of ``result`` on the root span ``span_id`` of trace ``trace_id``."""
        found = evaluation_attributes(result, eval_id=eval_id, eval_set_id=eval_set_id,
                                      evaluator_version=evaluator_version, judge_model=judge_model)
        metadata = {key: value for key, value in found.items()
                    if key.startswith("agenteval.") and key not in (attr.EVALUATION_MARKER, attr.EVAL_CRITERION)}
        metadata[RUN_ID_KEY] = run_id
        metadata[attr.EVAL_EVALUATION_ID] = evaluation_id(trace_id, span_id, result.criterion, run_id).id
        if attr.ERROR_TYPE in found:
            metadata[attr.ERROR_TYPE] = found[attr.ERROR_TYPE]
        usage = result.judge_usage
        return cls(trace_id=trace_id.lower(), span_id=span_id.lower(), criterion=result.criterion, run_id=run_id,
                   score=float(result.score), passed=result.passed,
                   judged=bool(usage is not None and usage.used) or attr.EVAL_JUDGE_MODEL in found,
                   explanation=found.get(attr.GEN_AI_EVALUATION_EXPLANATION), error_type=found.get(attr.ERROR_TYPE),
                   metadata=metadata)


class ExportFailure(Exception):
    """A batch (or the rest of it) could not be exported; the message says why, credentials masked."""


def exchange(method: str, url: str, *, body: Any = None, headers: Mapping[str, str] = {},  # noqa: B006 - read only
             timeout: float = 10.0) -> tuple[int, Any]:
    """One HTTP request with JSON in and out, within one deadline of ``timeout`` seconds for
    connecting, sending and the whole answer (past it the socket is shut down, which ends a read
    still waiting). Returns the status and the decoded answer (its text when it is not JSON).

    Raises ``OSError`` (``TimeoutError`` past the deadline) when there is no complete answer.
    """
    parts = urllib.parse.urlsplit(url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.hostname or "", parts.port, timeout=timeout)
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        if connection.sock is not None:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    payload = None if body is None else json.dumps(body).encode()
    sent = {"Accept": "application/json", **({"Content-Type": "application/json"} if payload is not None else {}),
            **headers}
    try:
        connection.request(method, (parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
                           body=payload, headers=sent)
        response = connection.getresponse()
        data = response.read(MAX_BODY_BYTES + 1)
        if expired.is_set():  # a socket shut down mid-answer reads as its end
            raise TimeoutError
        if len(data) > MAX_BODY_BYTES:
            raise OSError(f"the answer is over {MAX_BODY_BYTES} bytes")
        if response.length:  # announced more than it sent
            raise http.client.IncompleteRead(data, response.length)
        status = response.status
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set():
            raise TimeoutError(f"no complete answer within {timeout:g} s") from None
        raise OSError(str(exc) or type(exc).__name__) from None
    finally:
        timer.cancel()
        connection.close()
    text = data.decode("utf-8", "replace")
    try:
        return status, json.loads(text) if text else None
    except ValueError:
        return status, text


class VerdictDelivery:
    """The base of the backend-native sinks (see the module docs).

    ``base_url``: the backend's http(s) URL; ``secrets``: the credentials to mask in every message;
    ``run_id``: the evaluation run the verdicts belong to (``None``: ``eval_set_id``, else
    ``"agenteval"``); ``timeout``: each request's one deadline in seconds. Subclasses set
    ``backend`` (the name in messages) and implement ``_send``.
    """

    backend = "backend"

    def __init__(
        self,
        base_url: str,
        *,
        secrets: Sequence[str | None] = (),
        run_id: str | None = None,
        eval_set_id: str | None = None,
        evaluator_version: str | None = None,
        judge_model: str | None = None,
        timeout: float = 10.0,
        max_queue: int = 10_000,
        batch_size: int = 100,
        delay_s: float = 0.5,
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"base_url must be an http(s) URL, got {mask_url(base_url)!r}")
        if timeout <= 0 or max_queue < 1 or batch_size < 1 or delay_s <= 0:
            raise ValueError("timeout and delay_s must be positive, max_queue and batch_size at least 1")
        self.base_url = base_url.rstrip("/")
        self.shown_url = mask_url(self.base_url)
        self.run_id = run_id or eval_set_id or DEFAULT_RUN_ID
        self.eval_set_id = eval_set_id
        self.evaluator_version = evaluator_version or PACKAGE_VERSION
        self.judge_model = judge_model
        self.timeout = timeout
        self._secrets = tuple(secret for secret in secrets if secret)
        self._shutdown_result: bool | None = None
        self._warned: set[str] = set()
        self._queue: BatchQueue[Verdict] = BatchQueue(self._deliver, name=type(self).__name__, max_queue=max_queue,
                                                      batch_size=batch_size, delay_s=delay_s, warn=self._warn_once)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.shown_url!r}, run_id={self.run_id!r})"

    @property
    def counters(self) -> DeliveryCounters:
        """What became of the verdicts submitted so far (a snapshot)."""
        return self._queue.counters

    @property
    def exported(self) -> int:
        """Verdicts the backend accepted."""
        return self.counters.exported

    @property
    def failed(self) -> int:
        """Verdicts the backend refused or could not be reached for."""
        return self.counters.failed

    @property
    def dropped(self) -> int:
        """Verdicts dropped: the queue was full, the sink shut down, or its deadline passed first."""
        return self.counters.dropped

    def submit(self, result: EvalCaseResult) -> None:
        """Queue the verdicts of ``result`` on the root spans of its invocations (those that name
        no trace or root span, or malformed ids, are skipped). Never blocks and never raises."""
        try:
            verdicts = [Verdict.of(verdict, trace_id=invocation.trace_id or "", span_id=invocation.span_id or "",
                                   run_id=self.run_id, eval_id=run.eval_id, eval_set_id=self.eval_set_id,
                                   evaluator_version=self.evaluator_version, judge_model=self.judge_model)
                        for run, invocation in _evaluated(result) for verdict in invocation.criterion_results
                        if _HEX_IDS.fullmatch(f"{invocation.trace_id}:{invocation.span_id}".lower())]
        except Exception:  # noqa: BLE001 - a sink never raises into the run
            _log.warning("%r: could not read the verdicts of %s", self, result.eval_id, exc_info=True)
            return
        self._queue.put(verdicts)

    def _deliver(self, batch: list[Verdict]) -> int:
        """How many verdicts of ``batch`` the backend took; never raises."""
        try:
            return self._send(batch)
        except ExportFailure as exc:
            self._warn_failure(str(exc))
        except Exception as exc:  # noqa: BLE001 - counted and logged, never raised
            self._warn_failure(f"{self.shown_url}: {type(exc).__name__}: {exc}")
        return 0

    def _send(self, batch: list[Verdict]) -> int:
        """Send ``batch``; how many of its verdicts the backend took (the rest failed). Raises
        ``ExportFailure`` when none was."""
        raise NotImplementedError

    def _request(self, method: str, path: str, body: Any = None, headers: Mapping[str, str] = {}) -> tuple[int, Any]:  # noqa: B006
        """One request to ``base_url + path``; ``ExportFailure`` (masked) when there is no answer."""
        try:
            return exchange(method, self.base_url + path, body=body, headers=headers, timeout=self.timeout)
        except OSError as exc:
            raise ExportFailure(self._clean(f"{self.shown_url}{path}: cannot reach {self.backend} ({exc})")) from None

    def _refusal(self, path: str, status: int, answer: Any) -> str:
        """What to say of an HTTP error answer (the server's own words, shortened and masked)."""
        if status in (401, 403):
            said = f"{self.backend} refused the credentials" if self._secrets else \
                f"{self.backend} wants credentials and none were given"
        else:
            said = json.dumps(answer)[:300] if not isinstance(answer, str) else answer[:300]
        return self._clean(f"{self.shown_url}{path}: HTTP {status}: {said}")

    def _clean(self, message: str) -> str:
        return redact_secrets(message.replace(self.base_url, self.shown_url), self._secrets)

    def _warn_failure(self, message: str) -> None:
        self._warn_once("failed", f"verdicts could not be exported: {self._clean(message)} "
                                  "(further failures are counted, not logged)")

    def _warn_once(self, kind: str, message: str) -> None:
        first = kind not in self._warned
        self._warned.add(kind)
        _log.log(logging.WARNING if first else logging.DEBUG, "%r: %s", self, message)

    def force_flush(self, timeout: float | None = None) -> bool:
        """Send everything queued within ``timeout`` seconds; whether it was sent and nothing
        submitted so far failed or was dropped."""
        flushed = self._queue.flush(DEFAULT_TIMEOUT_S if timeout is None else timeout)
        return flushed and not self._queue.counters.lost

    def shutdown(self, timeout: float | None = None) -> bool:
        """Flush within ``timeout`` seconds, count what is left as dropped and stop; later
        submissions are dropped. Idempotent; whether every verdict was exported."""
        if self._shutdown_result is None:
            finished = self._queue.close(DEFAULT_TIMEOUT_S if timeout is None else timeout)
            self._shutdown_result = finished and not self._queue.counters.lost
        return self._shutdown_result
