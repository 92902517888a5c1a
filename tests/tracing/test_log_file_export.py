"""OtlpJsonLogFileExporter and the logger provider configure() sets up beside the tracer provider:
log records are written where our readers find them, and sent to the same OTLP endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider

from agenteval_otel.traces.files import is_logs_file, read_logs
from agenteval_otel.tracing import OtlpJsonLogFileExporter, configure, logs_file_for
from tests.otlp_receiver import http_receiver


def test_log_records_written_as_otlp_json_lines_are_read_back(tmp_path: Path) -> None:
    path = tmp_path / "logs.jsonl"
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(OtlpJsonLogFileExporter(path)))
    with TracerProvider().get_tracer("demo").start_as_current_span("root") as span:
        provider.get_logger("demo").emit(event_name="gen_ai.user.message", body={"content": "Hi"},
                                         attributes={"n": 1, "ok": True})
        provider.get_logger("demo").emit(body="second")
    provider.shutdown()
    context = span.get_span_context()
    assert is_logs_file(path)
    first, second = read_logs([path])
    assert (first.trace_id, first.span_id) == (format(context.trace_id, "032x"), format(context.span_id, "016x"))
    assert (first.name, first.body, first.attributes) == ("gen_ai.user.message", {"content": "Hi"},
                                                          {"n": 1, "ok": True})
    assert second.body == "second" and second.time_ns > 0


def test_the_log_file_sits_beside_the_traces_file() -> None:
    assert logs_file_for("a/traces.jsonl") == Path("a/traces.logs.jsonl")
    assert logs_file_for("a/traces.json") == Path("a/traces.logs.jsonl")
    assert logs_file_for("traces") == Path("traces.logs.jsonl")


def test_configure_writes_log_records_beside_its_traces_file(tmp_path: Path) -> None:
    handle = configure("svc", traces_file=tmp_path / "t.jsonl", set_global=False)
    assert handle.logger_provider is not None and handle.logs_file == tmp_path / "t.logs.jsonl"
    handle.logger_provider.get_logger("demo").emit(event_name="gen_ai.evaluation.result", attributes={"k": "v"})
    assert handle.shutdown(timeout=5) is True
    [record] = read_logs([handle.logs_file])
    assert (record.name, record.attributes) == ("gen_ai.evaluation.result", {"k": "v"})


def test_configure_sends_log_records_to_the_same_otlp_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    with http_receiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        handle = configure("svc", set_global=False)
        assert handle.logger_provider is not None
        with handle.provider.get_tracer("demo").start_as_current_span("root"):
            handle.logger_provider.get_logger("demo").emit(event_name="gen_ai.evaluation.result")
        assert handle.force_flush(timeout=5) is True
        assert handle.shutdown(timeout=5) is True
    assert [s.name for s in receiver.spans] == ["root"]
    assert [(r.event_name, r.trace_id) for r in receiver.logs] == [
        ("gen_ai.evaluation.result", receiver.spans[0].trace_id)]


def test_log_export_off_writes_no_log_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "none")
    handle = configure("svc", traces_file=tmp_path / "t.jsonl", set_global=False)
    assert handle.logs_file is None and not (tmp_path / "t.logs.jsonl").exists()
    assert handle.shutdown(timeout=5) is True
