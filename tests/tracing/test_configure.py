"""``configure()``: where spans go, and a handle whose flush and shutdown keep their deadlines."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from agenteval_otel.traces import read_otlp_json
from agenteval_otel.tracing import OtlpJsonFileExporter, configure, tool
from agenteval_otel.tracing.configure import TRACES_FILE_ENV
from agenteval_otel.tracing.destinations import FailFastSpanExporter

REPO = Path(__file__).resolve().parents[2]
_ENV = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_TRACES_EXPORTER",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    TRACES_FILE_ENV,
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No exporter settings leak in; the current directory is a fresh one."""
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


class HangingExporter(SpanExporter):
    """Blocks every export until released: a backend that never answers."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.release.wait(10)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.release.wait(10)


def test_default_is_an_otlp_json_lines_file_in_the_current_directory(tmp_path: Path, traced_agent: ModuleType) -> None:
    handle = configure("weather-service", set_global=False)
    assert handle.traces_file == Path("agenteval-traces.jsonl")
    assert [type(e) for e in handle.exporters] == [OtlpJsonFileExporter]

    traced_agent.run_agent("What is the weather in Paris?", thread_id="t")
    assert handle.shutdown(timeout=5) is True

    records = list(read_otlp_json(tmp_path / "agenteval-traces.jsonl"))
    assert len(records) == 9
    assert {r.resource["service.name"] for r in records} == {"weather-service"}
    root = next(r for r in records if r.parent_id is None)
    assert root.name == "invoke_agent weather-agent"
    assert root.attributes["agenteval.agent.output"] == "It is 21°C and clear in Paris."
    assert {r.scope_name for r in records} == {"agenteval_otel"}


def test_traces_file_from_the_environment_and_from_the_argument(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TRACES_FILE_ENV, str(tmp_path / "from-env.jsonl"))
    from_env = configure(set_global=False)
    assert from_env.traces_file == tmp_path / "from-env.jsonl"
    from_env.shutdown(timeout=1)
    handle = configure(traces_file=tmp_path / "from-arg.jsonl", set_global=False)
    assert handle.traces_file == tmp_path / "from-arg.jsonl"

    @tool
    def ping() -> str:
        return "pong"

    ping()
    handle.shutdown(timeout=5)
    assert [r.name for r in read_otlp_json(tmp_path / "from-arg.jsonl")] == ["execute_tool ping"]


def _unwrapped(exporter: Any) -> Any:
    """An OTLP exporter without its fail-fast wrapper (other exporters as they are)."""
    assert not isinstance(exporter, (HttpExporter, GrpcExporter)), "an OTLP exporter without its wrapper"
    return exporter.exporter if isinstance(exporter, FailFastSpanExporter) else exporter


def test_otlp_http_when_the_environment_names_an_endpoint(monkeypatch: pytest.MonkeyPatch, http_receiver: Any) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", http_receiver.endpoint)
    handle = configure("svc", set_global=False)
    assert [type(_unwrapped(e)) for e in handle.exporters] == [HttpExporter]
    assert handle.traces_file is None

    @tool
    def ping() -> str:
        return "pong"

    ping()
    assert handle.force_flush(timeout=5) is True
    assert http_receiver.received.wait(5)
    assert http_receiver.names == ["execute_tool ping"]
    assert not Path("agenteval-traces.jsonl").exists()
    handle.shutdown(timeout=5)


def test_otlp_grpc_when_the_protocol_says_so(monkeypatch: pytest.MonkeyPatch, grpc_receiver: Any) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", grpc_receiver.endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
    handle = configure("svc", set_global=False)
    assert [type(_unwrapped(e)) for e in handle.exporters] == [GrpcExporter]

    @tool
    def ping() -> str:
        return "pong"

    ping()
    assert handle.force_flush(timeout=5) is True
    assert grpc_receiver.received.wait(5)
    assert grpc_receiver.names == ["execute_tool ping"]
    handle.shutdown(timeout=5)


def test_unsupported_protocol_falls_back_to_http_with_a_log(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, closed_port: int
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    with caplog.at_level(logging.WARNING, logger="agenteval_otel.tracing.configure"):
        handle = configure(set_global=False)
    assert [type(_unwrapped(e)) for e in handle.exporters] == [HttpExporter]
    assert len(caplog.records) == 1
    handle.shutdown(timeout=1)


def test_otlp_and_an_explicit_file_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, closed_port: int) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    handle = configure(traces_file=tmp_path / "copy.jsonl", set_global=False)
    assert [type(_unwrapped(e)) for e in handle.exporters] == [HttpExporter, OtlpJsonFileExporter]
    handle.shutdown(timeout=1)


def test_traces_exporter_none_turns_export_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    handle = configure(set_global=False)
    assert handle.exporters == () and handle.traces_file is None
    handle.shutdown(timeout=1)


@pytest.mark.promise(1)
def test_an_unwritable_traces_file_is_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="agenteval_otel.tracing.configure"):
        handle = configure(traces_file=tmp_path / "missing-dir" / "t.jsonl", set_global=False)
    assert handle.exporters == () and handle.traces_file is None
    assert len(caplog.records) == 1

    @tool
    def still_works() -> int:
        return 1

    assert still_works() == 1
    handle.shutdown(timeout=1)


@pytest.mark.promise(7)
def test_force_flush_and_shutdown_keep_their_deadlines() -> None:
    exporter = HangingExporter()
    handle = configure(exporter=exporter, set_global=False)

    @tool
    def ping() -> str:
        return "pong"

    try:
        ping()
        started = time.monotonic()
        assert handle.force_flush(timeout=0.3) is False
        assert time.monotonic() - started < 1.0

        started = time.monotonic()
        assert handle.shutdown(timeout=0.3) is False
        assert time.monotonic() - started < 1.0

        started = time.monotonic()
        assert handle.shutdown(timeout=5) is False  # idempotent: the first result, at once
        assert handle.force_flush(timeout=5) is False
        assert time.monotonic() - started < 0.2
        assert ping() == "pong"  # later work is dropped, never raised
    finally:
        exporter.release.set()


def test_bad_arguments_fail_at_set_up() -> None:
    with pytest.raises(TypeError):
        configure(exporter="stdout", set_global=False)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        configure(span_processors=[object()], set_global=False)  # type: ignore[list-item]
    with pytest.raises(TypeError):
        configure(content_policy={"capture": False}, set_global=False)  # type: ignore[arg-type]


def test_a_new_user_sees_traces_with_no_collector(tmp_path: Path) -> None:
    """A fresh interpreter: configure(), run, exit. The file is written at exit, and the provider is global."""
    script = textwrap.dedent(
        """
        from opentelemetry import trace
        from agenteval_otel.tracing import configure, tool

        handle = configure("first-run")
        assert trace.get_tracer_provider() is handle.provider

        @tool
        def hello(name: str) -> str:
            return f"hello {name}"

        hello("world")
        with trace.get_tracer("app").start_as_current_span("plain otel span"):
            pass
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k != TRACES_FILE_ENV}
    env["PYTHONPATH"] = str(REPO)
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    records = list(read_otlp_json(tmp_path / "agenteval-traces.jsonl"))
    assert sorted(r.name for r in records) == ["execute_tool hello", "plain otel span"]
    assert records[0].resource["service.name"] == "first-run"


def test_a_timeout_of_none_means_the_default_deadline(tmp_path: Path) -> None:
    handle = configure(traces_file=tmp_path / "spans.jsonl", set_global=False)
    assert handle.force_flush(timeout=None) is True
    assert all(exporter.force_flush(None) for exporter in handle.exporters)
    assert handle.shutdown(timeout=None) is True
    assert handle.shutdown(None) is True
