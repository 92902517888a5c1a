"""What the backend-native sinks (``PhoenixAnnotations``, ``MlflowAssessments``) share, against
servers on 127.0.0.1 that misbehave: each request has one deadline, flush and shutdown keep
theirs, the queue is bounded, credentials a server echoes are masked, a judged verdict is named
as the judge's; and ``export_sink`` / ``--export-results`` refuse malformed backend targets in
one line."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel.cli import main
from agenteval_otel.errors import ConfigError
from agenteval_otel.judge import JudgeUsage
from agenteval_otel.results import (
    CriterionResult,
    EvalCaseResult,
    InvocationResult,
    MlflowAssessments,
    PhoenixAnnotations,
    TraceExport,
    export_sink,
)
from agenteval_otel.results._annotations import Verdict, exchange
from agenteval_otel.results._mlflow import feedback
from agenteval_otel.results._phoenix import annotation
from tests.otlp_receiver import hanging_endpoint
from tests.shared_data import REPO_ROOT

KEY = "sk-" + "a1b2c3d4e5f6" * 4
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


def _result(count: int = 1) -> EvalCaseResult:
    verdicts = [CriterionResult(criterion=f"rule_{n}", score=1.0, passed=True, threshold=1.0) for n in range(count)]
    return EvalCaseResult(eval_id="case_1", passed=True, criterion_results=verdicts, invocation_results=[
        InvocationResult(invocation_id="i1", trace_id=TRACE_ID, span_id="00f067aa0ba902b7",
                         criterion_results=verdicts)])


SINKS = [pytest.param(lambda url, **kw: PhoenixAnnotations(url, api_key=KEY, **kw), id="phoenix"),
         pytest.param(lambda url, **kw: MlflowAssessments(url, token=KEY, **kw), id="mlflow")]


@pytest.fixture
def trickling_server() -> Iterator[str]:
    """A server on 127.0.0.1 that answers every request with a status line and headers, then
    one byte of body every 0.1 s (no socket timeout ever fires on it)."""
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)

    def answer(connection: socket.socket) -> None:
        with connection:
            try:
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
                while not stop.wait(0.1):
                    connection.sendall(b" ")
            except OSError:  # the client hung up
                pass

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=answer, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


@pytest.mark.promise(20)
def test_one_deadline_covers_the_whole_request(trickling_server: str) -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="^no complete answer within 0.5 s$"):
        exchange("POST", trickling_server + "/v1/span_annotations", body={"data": []}, timeout=0.5)
    assert time.monotonic() - started < 1.0


@pytest.mark.promise(7, 20, 23)
@pytest.mark.parametrize("make", SINKS)
def test_a_server_that_never_finishes_costs_one_deadline_per_request_and_shutdown_keeps_its_own(  # type: ignore[no-untyped-def]
    make, trickling_server: str
) -> None:
    sink = make(trickling_server, timeout=0.5)
    sink.submit(_result(3))
    started = time.monotonic()
    assert sink.force_flush(timeout=3) is False  # the batch failed within its request's deadline
    assert time.monotonic() - started < 1.5 and (sink.failed, sink.exported) == (3, 0)
    slow = make(trickling_server, timeout=30)
    slow.submit(_result())
    started = time.monotonic()
    assert slow.shutdown(timeout=1) is False
    assert time.monotonic() - started < 1.5
    assert slow.shutdown(timeout=1) is False  # idempotent
    slow.submit(_result())  # after shutdown: dropped and counted
    assert slow.counters.dropped == 1


@pytest.mark.promise(6)
def test_the_queue_is_bounded_and_overflow_is_dropped_counted_and_warned_once(caplog: pytest.LogCaptureFixture) -> None:
    with hanging_endpoint() as url:
        sink = PhoenixAnnotations(url, api_key="", max_queue=2, batch_size=1, timeout=30)
        sink.submit(_result())
        deadline = time.monotonic() + 5
        while sink._queue.waiting:  # the thread took the first verdict and waits on it
            assert time.monotonic() < deadline
            time.sleep(0.01)
        with caplog.at_level(logging.WARNING, logger="agenteval_otel"):
            started = time.monotonic()
            for _ in range(10):
                sink.submit(_result(3))
            assert time.monotonic() - started < 0.5  # never blocks
        counters = sink.counters
        assert (counters.received, counters.queued, counters.dropped) == (31, 3, 28)
        assert len([r for r in caplog.records if "dropped" in r.getMessage()]) == 1
        sink.shutdown(timeout=0.2)


class EchoingGateway(BaseHTTPRequestHandler):
    """A gateway in front of a backend that is down, which quotes the request's credentials back."""

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        token = self.headers.get("Authorization", "").partition(" ")[2]
        body = f'{{"detail": "upstream down; credentials {token} not checked"}}'.encode()
        self.send_response(502)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def echoing_gateway() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoingGateway)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.mark.promise(19, 23)
@pytest.mark.parametrize("make", SINKS)
def test_credentials_a_server_echoes_are_masked(make, echoing_gateway: str, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    with caplog.at_level(logging.DEBUG, logger="agenteval_otel"):
        sink = make(echoing_gateway.replace("//", "//admin:s3cret-pass@"))
        sink.submit(_result(2))
        assert sink.shutdown(timeout=5) is False
    assert sink.failed == 2
    warning = next(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert "HTTP 502" in warning and "upstream down; credentials *** not checked" in warning
    assert "admin:***@127.0.0.1" in warning
    shown = caplog.text + repr(sink)
    assert KEY not in shown and KEY[-12:] not in shown and "s3cret-pass" not in shown


def test_a_judged_verdict_is_the_judge_s_and_an_errored_one_says_so() -> None:
    judged = CriterionResult(criterion="helpful", score=0.25, passed=False, threshold=0.5, reason="vague",
                             details={"judge_model": "qwen2.5"}, judge_usage=JudgeUsage(calls=1))
    errored = CriterionResult.failure("tone", 0.5, "judge timed out", error_type="JudgeTimeoutError")
    verdict, failure = (Verdict.of(v, trace_id=TRACE_ID.upper(), span_id="00F067AA0BA902B7", run_id="r")
                        for v in (judged, errored))
    assert annotation(verdict)["annotator_kind"] == "LLM" and annotation(verdict)["span_id"] == "00f067aa0ba902b7"
    assert annotation(verdict)["metadata"]["agenteval.evaluation.judge_model"] == "qwen2.5"
    assert feedback(verdict)["source"] == {"source_type": "LLM_JUDGE", "source_id": "qwen2.5"}
    assert feedback(verdict, "score")["feedback"] == {"value": 0.25}
    assert feedback(failure)["feedback"] == {"error": {"error_code": "JudgeTimeoutError",
                                                       "error_message": "judge timed out"}}
    assert annotation(failure)["result"] == {"label": "fail", "score": 0.0, "explanation": "judge timed out"}
    assert annotation(failure)["metadata"]["error.type"] == "JudgeTimeoutError"


def test_export_sink_picks_the_sink_by_scheme(tmp_path: Path) -> None:
    sinks = [export_sink("phoenix+http://127.0.0.1:9", api_key=""), export_sink("mlflow+https://mlflow.example"),
             export_sink(tmp_path / "verdicts.jsonl")]
    assert [type(sink) for sink in sinks] == [PhoenixAnnotations, MlflowAssessments, TraceExport]
    assert sinks[1].base_url == "https://mlflow.example"
    for sink in sinks:
        sink.shutdown(timeout=1)


@pytest.mark.parametrize(("target", "said"), [
    ("phoenix+localhost:6006", "phoenix+localhost:6006: expected phoenix+http://HOST:PORT or "
                               "phoenix+https://HOST:PORT"),
    ("mlflow+http://u:pw@h:5000?experiment_id=1", "mlflow+http://u:***@h:5000?experiment_id=1: MLflow targets "
                                                   "take no query or fragment (the judged spans' ids say where "
                                                   "the verdicts go)"),
])
def test_a_bad_backend_target_is_one_line_exit_2(
    target: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError) as raised:
        export_sink(target)
    assert str(raised.value) == said
    (tmp_path / "traces.jsonl").write_text("")
    evalset = str(REPO_ROOT / "examples" / "weather_agent.evalset.json")
    assert main(["eval", evalset, "--traces", str(tmp_path / "traces.jsonl"), "--export-results",
                 str(tmp_path / "verdicts.jsonl"), "--export-results", target, "--quiet"]) == 2
    assert capsys.readouterr().err == f"agenteval: error: --export-results {said}\n"


class StallingMlflow(BaseHTTPRequestHandler):
    """An MLflow that holds every trace asked for, takes the first assessment, then stops answering."""

    created = 0

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook
        asked = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if self.path.endswith("/batchGetInfos"):
            answer: dict[str, Any] = {"trace_infos": [{"trace_id": t, "assessments": []} for t in asked["trace_ids"]]}
        else:
            type(self).created += 1
            if type(self).created > 1:
                time.sleep(5)
                return
            answer = {"assessment": {"assessment_id": "a-1"}}
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.mark.promise(20, 23)
def test_mlflow_stops_a_batch_at_the_first_request_without_answer_and_counts_what_went() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), StallingMlflow)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        sink = MlflowAssessments(f"http://127.0.0.1:{server.server_address[1]}", token="", timeout=0.5)
        sink.submit(_result(5))
        started = time.monotonic()
        assert sink.force_flush(timeout=5) is False
        assert time.monotonic() - started < 1.5  # one request's deadline, not four
        assert (sink.exported, sink.failed) == (1, 4)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
