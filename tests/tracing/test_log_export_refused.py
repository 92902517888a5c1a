"""OTLP log export to a backend that stores spans only: a logs endpoint answering 404 or 405 (gRPC
UNIMPLEMENTED) costs one warning naming it, then no more requests and no ERROR lines, while spans
still go; any other failure is reported as before. ``OTEL_LOGS_EXPORTER=none`` sends no log
record on every path that builds a logger provider."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult

from agenteval_otel.evaluation._worker import EvaluationWorker
from agenteval_otel.results import TraceExport
from agenteval_otel.traces.receiver import OtlpReceiver
from agenteval_otel.tracing import TracingHandle, configure, providers_for
from agenteval_otel.tracing.destinations import SDK_EXPORT_LOGGERS
from tests.conftest import REPO_ROOT
from tests.evaluation.test_serve_trust import FORBIDDEN, _readable, _trace
from tests.otlp_receiver import Received

EXAMPLE_SET = REPO_ROOT / "examples" / "weather_agent.evalset.json"
EXAMPLE_AGENT = f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent"


class _Backend:
    """What a spans-only backend on 127.0.0.1 was asked: the path of every request, in order."""

    def __init__(self, logs_status: int) -> None:
        self.logs_status = logs_status
        self.paths: list[str] = []
        self.url = ""

    def count(self, path: str) -> int:
        return self.paths.count(path)


@contextmanager
def spans_only_backend(logs_status: int) -> Iterator[_Backend]:
    """OTLP/HTTP on 127.0.0.1: 200 on ``/v1/traces``, ``logs_status`` on ``/v1/logs``."""
    backend = _Backend(logs_status)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            backend.paths.append(self.path)
            self.send_response(200 if self.path == "/v1/traces" else backend.logs_status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    backend.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield backend
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _emit_batches(handle: TracingHandle, batches: int = 3) -> None:
    """One span, and ``batches`` log records each flushed as a batch of its own."""
    assert handle.logger_provider is not None
    logger = handle.logger_provider.get_logger("test")
    for number in range(batches):
        logger.emit(body=f"record {number}", event_name="test.event")
        assert handle.logger_provider.force_flush(5000) in (True, False)
    with handle.provider.get_tracer("test").start_as_current_span("work"):
        pass


def _refusal_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "takes no log records" in r.getMessage()]


def _errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.promise(19)
@pytest.mark.parametrize("status", [404, 405])
def test_a_logs_endpoint_that_takes_no_logs_is_warned_about_once_and_left_alone(
        status: int, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with spans_only_backend(status) as backend:
        handle = providers_for(backend.url.replace("://", "://phoenix:s3cret-key@"))
        _emit_batches(handle)
        assert handle.shutdown(10)
    assert backend.count("/v1/traces") >= 1, "the spans still go"
    assert backend.count("/v1/logs") == 1, f"log export stops after the first answer: {backend.paths}"
    assert _errors(caplog) == []
    [warning] = _refusal_warnings(caplog)
    assert f"{backend.url.replace('://', '://phoenix:***@')}/v1/logs" in warning
    assert f"HTTP {status}" in warning and "log records will not be sent there" in warning
    assert "s3cret-key" not in caplog.text


def test_the_environments_logs_endpoint_is_named_and_left_alone_too(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    caplog.set_level(logging.DEBUG)
    with spans_only_backend(405) as backend:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", backend.url)
        for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
                     "OTEL_LOGS_EXPORTER", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_PROTOCOL"):
            monkeypatch.delenv(name, raising=False)
        handle = configure("refused-logs", set_global=False)
        _emit_batches(handle)
        assert handle.shutdown(10)
    assert backend.count("/v1/traces") >= 1 and backend.count("/v1/logs") == 1, backend.paths
    assert _errors(caplog) == []
    [warning] = _refusal_warnings(caplog)
    assert f"{backend.url}/v1/logs" in warning


def test_a_grpc_endpoint_without_a_logs_service_is_left_alone(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    received = Received()
    # no log callback: its logs service answers UNIMPLEMENTED
    with OtlpReceiver(received.take_spans, http_port=None, grpc_port=0) as receiver:
        endpoint = f"127.0.0.1:{receiver.grpc_port}"
        handle = providers_for(f"grpc://{endpoint}")
        _emit_batches(handle)
        assert handle.shutdown(10)
    assert received.spans, "the spans still go"
    assert _errors(caplog) == []
    [warning] = _refusal_warnings(caplog)
    assert endpoint in warning and "gRPC UNIMPLEMENTED" in warning


def test_other_failures_are_still_reported_and_export_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    for name in SDK_EXPORT_LOGGERS:  # the SDK shows one line of a kind per 20 s: forget the earlier tests' lines
        for sdk_filter in logging.getLogger(name).filters:
            vars(sdk_filter).pop("last_log", None)
    with spans_only_backend(400) as backend:
        handle = providers_for(backend.url)
        _emit_batches(handle, batches=2)
        assert handle.shutdown(10)
    assert backend.count("/v1/logs") == 2, "a failure that is not a refusal does not stop log export"
    assert any("code: 400" in error for error in _errors(caplog))
    assert _refusal_warnings(caplog) == []


def _wait(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _to_target(url: str, tmp_path: Path) -> None:
    handle_export = TraceExport.to_target(url, write="both")
    assert handle_export.logger_provider is not None
    handle_export.logger_provider.get_logger("test").emit(body="a verdict", event_name="test.event")
    handle_export.tracer_provider.get_tracer("test").start_span("verdict").end()
    assert handle_export.shutdown(10)


def _cli(*args: str) -> None:
    """The command line in a process of its own (`run` sets the process's global providers)."""
    proc = subprocess.run([sys.executable, "-m", "agenteval_otel.cli", *args], capture_output=True, text=True,
                          timeout=120, check=False, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert proc.returncode == 0, proc.stderr


def _export_results(url: str, tmp_path: Path) -> None:
    traces = tmp_path / "agenteval-traces.jsonl"  # where `run` writes its traces, in the current directory
    _cli("run", str(EXAMPLE_SET), "--agent", EXAMPLE_AGENT, "--quiet", "--export-results", url, "--as", "both")
    _cli("eval", str(EXAMPLE_SET), "--traces", str(traces), "--quiet",
         "--run-file", str(tmp_path / "eval.jsonl"), "--export-results", url, "--as", "both")


def _serve(url: str, tmp_path: Path) -> None:
    worker = EvaluationWorker(FORBIDDEN, export_target=url, export_as="both", http_port=0,
                              evaluator_options={"settle_s": 0.2, "trace_ttl_s": 300.0}).start()
    try:
        exporter = HttpSpanExporter(endpoint=f"http://127.0.0.1:{worker.receiver.http_port}/v1/traces", timeout=5)
        assert exporter.export([_readable(record) for record in _trace(0)]) is SpanExportResult.SUCCESS
        assert _wait(lambda: worker.evaluator.counters.evaluated == 1)
    finally:
        assert worker.stop(None)


@pytest.mark.parametrize("path", [_to_target, _export_results, _serve], ids=["to_target", "export-results", "serve"])
def test_logs_exporter_none_sends_no_log_record_to_an_export_target(
        path: Callable[[str, Path], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "none")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    with spans_only_backend(200) as backend:
        path(backend.url, tmp_path)
    assert backend.count("/v1/traces") >= 1, "the verdicts' spans go"
    assert backend.count("/v1/logs") == 0, backend.paths


def test_logs_exporter_none_writes_no_log_file_beside_a_target_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "none")
    handle = providers_for(tmp_path / "verdicts.jsonl")
    assert handle.logs_file is None and handle.shutdown(5)
    assert [p.name for p in tmp_path.iterdir()] == ["verdicts.jsonl"]


@pytest.mark.parametrize("command", ["configure", "run"])
def test_logs_exporter_none_in_any_case_sends_no_log_record_from_the_apps_own_set_up(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "NONE")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", raising=False)
    with spans_only_backend(200) as backend:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", backend.url)
        if command == "configure":
            handle = configure("logs-off", set_global=False)
            _emit_batches(handle, batches=1)
            assert handle.shutdown(10)
        else:
            _cli("run", str(EXAMPLE_SET), "--agent", EXAMPLE_AGENT, "--quiet", "--export-results", backend.url)
    assert backend.count("/v1/traces") >= 1
    assert backend.count("/v1/logs") == 0, backend.paths
