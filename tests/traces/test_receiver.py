"""The OTLP receiver: real OTLP from the official exporters over HTTP and gRPC, and every limit it
promises (auth, sizes, media types, overload, partial success, the request deadline, shutdown)."""

from __future__ import annotations

import gzip
import http.client
import logging
import socket
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import grpc
import orjson
import pytest
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry import trace as trace_api
from opentelemetry._logs import LogRecord as ApiLogRecord
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel.traces.receiver import OtlpReceiver
from agenteval_otel.trajectory.logs import LogRecord
from agenteval_otel.trajectory.spans import SpanRecord

TRACE_ID = "5b8efff798038103d269b633813fc60c"
SPAN_ID = "eee19b7ec3c1b174"


def _json_request(*spans: dict[str, Any]) -> bytes:
    return orjson.dumps({"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "weather"}}]},
        "scopeSpans": [{"scope": {"name": "agent"}, "spans": list(spans)}]}]})


GOOD_SPAN = {"traceId": TRACE_ID, "spanId": SPAN_ID, "name": "invoke_agent weather", "kind": 1,
             "startTimeUnixNano": "1", "endTimeUnixNano": "5",
             "attributes": [{"key": "gen_ai.agent.name", "value": {"stringValue": "weather"}}]}


def _one_span_request() -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    request.resource_spans.add().scope_spans.add().spans.add(
        trace_id=bytes.fromhex(TRACE_ID), span_id=bytes.fromhex(SPAN_ID), name="kept")
    return request


class Sink:
    """A callback that records what it gets; ``answer`` is what it returns, ``gate`` holds it."""

    def __init__(self) -> None:
        self.spans: list[SpanRecord] = []
        self.logs: list[LogRecord] = []
        self.answer: bool | None = None
        self.gate: threading.Event | None = None
        self.entered = threading.Event()

    def on_spans(self, records: list[SpanRecord]) -> bool | None:
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(5.0)
        self.spans += records
        return self.answer

    def on_logs(self, records: list[LogRecord]) -> None:
        self.logs += records


@pytest.fixture
def sink() -> Sink:
    return Sink()


@pytest.fixture
def receiver(sink: Sink) -> Iterator[OtlpReceiver]:
    with OtlpReceiver(sink.on_spans, sink.on_logs, http_port=0, grpc_port=0, request_timeout=2.0) as started:
        yield started


def post(port: int | None, path: str, body: bytes, content_type: str = "application/json",
         **headers: str) -> tuple[int, dict[str, str], bytes]:
    assert port is not None
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("POST", path, body, {"Content-Type": content_type,
                                                **{k.replace("_", "-"): v for k, v in headers.items()}})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _status_message(headers: dict[str, str], body: bytes) -> str:
    """The message of a ``google.rpc.Status`` answer, in the encoding its Content-Type names."""
    if headers["content-type"] == "application/json":
        return str(orjson.loads(body)["message"])
    return Status.FromString(body).message


def _sdk_spans(*processors: Any) -> list[ReadableSpan]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    for exporter in (memory, *processors):
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("weather-agent", "1.0")
    with tracer.start_as_current_span("invoke_agent weather", attributes={"gen_ai.agent.name": "weather"}):
        with tracer.start_as_current_span("execute_tool get_weather", kind=trace_api.SpanKind.CLIENT,
                                          attributes={"gen_ai.tool.name": "get_weather", "attempt": 2,
                                                      "cities": ("Paris", "Oslo")}):
            pass
    provider.shutdown()
    return list(memory.get_finished_spans())


def _assert_same_spans(received: list[SpanRecord], sent: list[ReadableSpan]) -> None:
    def key(span: ReadableSpan) -> tuple[Any, ...]:
        context = span.get_span_context()
        assert context is not None
        parent = f"{span.parent.span_id:016x}" if span.parent else None
        return (f"{context.trace_id:032x}", f"{context.span_id:016x}", parent, span.name,
                {k: list(v) if isinstance(v, tuple) else v for k, v in (span.attributes or {}).items()})

    got = sorted((r.trace_id, r.span_id, r.parent_id, r.name, r.attributes) for r in received)
    assert got == sorted(key(span) for span in sent)
    assert {r.scope_name for r in received} == {"weather-agent"}


# --- the official exporters --------------------------------------------------------------------


def test_the_official_http_exporter_delivers_its_spans(receiver: OtlpReceiver, sink: Sink) -> None:
    exporter = HttpSpanExporter(endpoint=f"http://127.0.0.1:{receiver.http_port}/v1/traces", timeout=5)
    sent = _sdk_spans(exporter)
    _assert_same_spans(sink.spans, sent)
    assert receiver.counters.spans_received == 2


def test_the_official_grpc_exporter_delivers_its_spans(receiver: OtlpReceiver, sink: Sink) -> None:
    exporter = GrpcSpanExporter(endpoint=f"127.0.0.1:{receiver.grpc_port}", insecure=True, timeout=5)
    sent = _sdk_spans(exporter)
    _assert_same_spans(sink.spans, sent)


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_the_official_log_exporters_deliver_log_records(receiver: OtlpReceiver, sink: Sink, transport: str) -> None:
    exporter = (HttpLogExporter(endpoint=f"http://127.0.0.1:{receiver.http_port}/v1/logs", timeout=5)
                if transport == "http" else
                GrpcLogExporter(endpoint=f"127.0.0.1:{receiver.grpc_port}", insecure=True, timeout=5))
    logs = LoggerProvider()
    logs.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    tracer = TracerProvider().get_tracer("t")
    with tracer.start_as_current_span("chat") as span:
        logs.get_logger("weather").emit(ApiLogRecord(
            event_name="gen_ai.user.message", body={"content": "Weather in Paris?"}, attributes={"turn": 1}))
        context = span.get_span_context()
    logs.shutdown()
    (record,) = sink.logs
    assert (record.trace_id, record.span_id) == (f"{context.trace_id:032x}", f"{context.span_id:016x}")
    assert (record.event_name, record.body, record.attributes) == (
        "gen_ai.user.message", {"content": "Weather in Paris?"}, {"turn": 1})
    assert receiver.counters.logs_received == 1


# --- OTLP/JSON over plain HTTP -----------------------------------------------------------------


@pytest.mark.parametrize("compressed", [False, True])
def test_json_bodies_gzip_or_not_are_answered_in_json(receiver: OtlpReceiver, sink: Sink, compressed: bool) -> None:
    body = _json_request(GOOD_SPAN)
    headers = {"Content_Encoding": "gzip"} if compressed else {}
    status, response_headers, answer = post(
        receiver.http_port, "/v1/traces", gzip.compress(body) if compressed else body,
        "application/json; charset=utf-8", **headers)
    assert (status, response_headers["content-type"], orjson.loads(answer)) == (200, "application/json", {})
    (record,) = sink.spans
    assert (record.trace_id, record.span_id, record.name, record.resource) == (
        TRACE_ID, SPAN_ID, "invoke_agent weather", {"service.name": "weather"})


def test_some_unreadable_spans_are_a_partial_success(receiver: OtlpReceiver, sink: Sink) -> None:
    no_id = {**GOOD_SPAN, "spanId": "", "name": "no id"}
    bad_trace = {**GOOD_SPAN, "spanId": "aaaaaaaaaaaaaaaa", "traceId": "xyz", "name": "bad trace id"}
    status, _, answer = post(receiver.http_port, "/v1/traces", _json_request(GOOD_SPAN, no_id, bad_trace))
    assert status == 200
    partial = orjson.loads(answer)["partialSuccess"]
    assert partial["rejectedSpans"] == "2"
    assert "spans[1]" in partial["errorMessage"] and "spans[2].traceId" in partial["errorMessage"]
    assert [r.name for r in sink.spans] == ["invoke_agent weather"]
    assert receiver.counters.spans_rejected == 2


def test_a_protobuf_span_without_ids_is_rejected_alone_over_http_and_grpc(receiver: OtlpReceiver, sink: Sink) -> None:
    request = _one_span_request()
    request.resource_spans[0].scope_spans[0].spans.add(name="no ids")
    status, headers, answer = post(receiver.http_port, "/v1/traces", request.SerializeToString(),
                                   "application/x-protobuf")
    response = ExportTraceServiceResponse()
    response.ParseFromString(answer)
    assert (status, headers["content-type"], response.partial_success.rejected_spans) == (
        200, "application/x-protobuf", 1)
    with grpc.insecure_channel(f"127.0.0.1:{receiver.grpc_port}") as channel:
        grpc_response = TraceServiceStub(channel).Export(request, timeout=5)
    assert grpc_response.partial_success.rejected_spans == 1
    assert "no trace or span id" in grpc_response.partial_success.error_message
    assert [r.name for r in sink.spans] == ["kept", "kept"]


def test_a_full_success_leaves_partial_success_unset(receiver: OtlpReceiver) -> None:
    _, _, answer = post(receiver.http_port, "/v1/traces", ExportTraceServiceRequest().SerializeToString(),
                        "application/x-protobuf")
    response = ExportTraceServiceResponse()
    response.ParseFromString(answer)
    assert not response.HasField("partial_success")


# --- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "content_type", "expected"), [
    (b"\xff\xff\xff", "application/x-protobuf", "not a protobuf"),
    (b'{"resourceSpans": [', "application/json", "invalid JSON"),
    (b'{"resourceSpans": {"no": "list"}}', "application/json", "resourceSpans: expected a list"),
    (b"[1, 2]", "application/json", "expected an ExportTraceServiceRequest object"),
])
def test_a_malformed_body_is_400_with_a_status_saying_why(
        receiver: OtlpReceiver, body: bytes, content_type: str, expected: str) -> None:
    status, headers, answer = post(receiver.http_port, "/v1/traces", body, content_type)
    assert status == 400 and headers["content-type"] == content_type
    assert expected in _status_message(headers, answer)
    assert receiver.counters.refused_bad_request == 1


def test_a_truncated_gzip_body_is_400(receiver: OtlpReceiver) -> None:
    status, _, _ = post(receiver.http_port, "/v1/traces", gzip.compress(_json_request(GOOD_SPAN))[:-12],
                        Content_Encoding="gzip")
    assert status == 400


@pytest.mark.parametrize(("content_type", "encoding"), [("text/plain", ""), ("application/json", "br")])
def test_an_unsupported_media_type_or_coding_is_415(receiver: OtlpReceiver, content_type: str, encoding: str) -> None:
    headers = {"Content_Encoding": encoding} if encoding else {}
    status, response_headers, answer = post(receiver.http_port, "/v1/traces", b"{}", content_type, **headers)
    assert status == 415 and "unsupported Content-" in _status_message(response_headers, answer)


def test_unknown_paths_and_methods_are_404_and_405(receiver: OtlpReceiver) -> None:
    assert post(receiver.http_port, "/v1/metrics", b"{}")[0] == 404
    connection = http.client.HTTPConnection("127.0.0.1", receiver.http_port, timeout=5)
    connection.request("GET", "/v1/traces")
    response = connection.getresponse()
    assert (response.status, response.getheader("Allow")) == (405, "POST")
    connection.close()


def test_logs_endpoints_are_absent_without_a_logs_callback(sink: Sink) -> None:
    with OtlpReceiver(sink.on_spans, http_port=0, grpc_port=None) as receiver:
        assert post(receiver.http_port, "/v1/logs", b"{}")[0] == 404


def test_a_token_is_required_when_set(sink: Sink) -> None:
    request = ExportTraceServiceRequest()
    with OtlpReceiver(sink.on_spans, http_port=0, grpc_port=0, token="s3cret") as receiver:
        assert post(receiver.http_port, "/v1/traces", b"{}")[0] == 401
        status, headers, _ = post(receiver.http_port, "/v1/traces", b"{}", Authorization="Bearer wrong")
        assert (status, headers["www-authenticate"]) == (401, "Bearer")
        assert post(receiver.http_port, "/v1/traces", b"{}", Authorization="Bearer s3cret")[0] == 200
        with grpc.insecure_channel(f"127.0.0.1:{receiver.grpc_port}") as channel:
            stub = TraceServiceStub(channel)
            with pytest.raises(grpc.RpcError) as refused:
                stub.Export(request, timeout=5)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
            stub.Export(request, timeout=5, metadata=(("authorization", "Bearer s3cret"),))
        assert receiver.counters.refused_unauthorized == 3


@pytest.mark.promise(20)
def test_oversized_bodies_and_gzip_bombs_are_413(sink: Sink) -> None:
    limit = 64 * 1024
    big = _json_request(*[{**GOOD_SPAN, "name": "x" * 1000}] * 100)
    bomb = gzip.compress(b" " * (8 * 1024 * 1024))  # 8 MB of blanks in about 8 KB
    assert len(bomb) < limit < len(big)
    with OtlpReceiver(sink.on_spans, http_port=0, grpc_port=0, max_body_bytes=limit) as receiver:
        assert post(receiver.http_port, "/v1/traces", big)[0] == 413
        tracemalloc.start()
        try:
            assert post(receiver.http_port, "/v1/traces", bomb, Content_Encoding="gzip")[0] == 413
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 2 * 1024 * 1024  # the 8 MB never materialise: inflating stops past the limit
        # no Content-Length: the limit holds while the body streams in
        connection = http.client.HTTPConnection("127.0.0.1", receiver.http_port, timeout=5)
        connection.request("POST", "/v1/traces", iter([big[i:i + 8192] for i in range(0, len(big), 8192)]),
                           {"Content-Type": "application/json"}, encode_chunked=True)
        assert connection.getresponse().status == 413
        connection.close()
        request = ExportTraceServiceRequest()
        request.resource_spans.add().scope_spans.add().spans.add(name="x" * (2 * limit))
        with grpc.insecure_channel(f"127.0.0.1:{receiver.grpc_port}") as channel:
            with pytest.raises(grpc.RpcError) as refused:
                TraceServiceStub(channel).Export(request, timeout=5)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert receiver.counters.refused_too_large == 3
    assert sink.spans == []


def test_a_refusing_consumer_gets_429_and_retry_info(sink: Sink) -> None:
    sink.answer = False
    with OtlpReceiver(sink.on_spans, http_port=0, grpc_port=0, retry_after=7) as receiver:
        status, headers, _ = post(receiver.http_port, "/v1/traces", _json_request(GOOD_SPAN))
        assert (status, headers["retry-after"]) == (429, "7")
        with grpc.insecure_channel(f"127.0.0.1:{receiver.grpc_port}") as channel:
            with pytest.raises(grpc.RpcError) as refused:
                TraceServiceStub(channel).Export(_one_span_request(), timeout=5)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        retry = RetryInfo.FromString(dict(refused.value.trailing_metadata())["google.rpc.retryinfo-bin"])
        assert retry.retry_delay.seconds == 7
        assert receiver.counters.refused_overload == 2 and receiver.counters.spans_received == 0


def test_too_many_requests_in_flight_are_503_with_retry_after(sink: Sink) -> None:
    sink.gate = threading.Event()
    with OtlpReceiver(sink.on_spans, http_port=0, max_in_flight=1) as receiver:
        first = threading.Thread(target=post, args=(receiver.http_port, "/v1/traces", _json_request(GOOD_SPAN)))
        first.start()
        assert sink.entered.wait(5.0)
        status, headers, _ = post(receiver.http_port, "/v1/traces", _json_request(GOOD_SPAN))
        sink.gate.set()
        first.join(5.0)
        assert (status, headers["retry-after"]) == (503, "1")
        assert post(receiver.http_port, "/v1/traces", _json_request(GOOD_SPAN))[0] == 200


def test_a_failing_consumer_is_500_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    def explode(records: list[SpanRecord]) -> None:
        raise RuntimeError("consumer broke")

    with OtlpReceiver(explode, http_port=0) as receiver, caplog.at_level(logging.ERROR):
        assert post(receiver.http_port, "/v1/traces", _json_request(GOOD_SPAN))[0] == 500
        assert receiver.counters.failed == 1
    assert "consumer broke" in caplog.text


@pytest.mark.promise(20)
def test_a_body_trickled_past_the_deadline_is_408_in_bounded_time(sink: Sink) -> None:
    with OtlpReceiver(sink.on_spans, http_port=0, request_timeout=0.5) as receiver:
        assert receiver.http_port is not None
        with socket.create_connection(("127.0.0.1", receiver.http_port), timeout=5) as client:
            client.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           b"Content-Length: 1000\r\n\r\n")
            started = time.monotonic()
            client.settimeout(0.1)
            answer = b""
            while not answer and time.monotonic() - started < 5:
                try:
                    client.sendall(b" ")  # one byte every 100 ms
                    answer = client.recv(4096)
                except socket.timeout:
                    continue
                except OSError:
                    break
            elapsed = time.monotonic() - started
        assert answer.startswith(b"HTTP/1.1 408")
        assert elapsed < 1.5
        assert receiver.counters.timed_out == 1


def test_health_shows_the_state_and_counters(receiver: OtlpReceiver) -> None:
    post(receiver.http_port, "/v1/traces", _json_request(GOOD_SPAN))
    connection = http.client.HTTPConnection("127.0.0.1", receiver.http_port, timeout=5)
    connection.request("GET", "/health")
    response = connection.getresponse()
    health = orjson.loads(response.read())
    connection.close()
    assert response.status == 200
    assert (health["status"], health["counters"]["spans_received"]) == ("serving", 1)


# --- lifecycle ---------------------------------------------------------------------------------


@pytest.mark.promise(7)
def test_stop_meets_its_deadline_with_a_hung_consumer_and_is_idempotent(sink: Sink) -> None:
    sink.gate = threading.Event()  # never set: the consumer hangs until the test ends
    receiver = OtlpReceiver(sink.on_spans, http_port=0, grpc_port=0).start()
    port = receiver.http_port
    hung = threading.Thread(target=lambda: _ignore_errors(post, port, "/v1/traces", _json_request(GOOD_SPAN)),
                            daemon=True)
    hung.start()
    assert sink.entered.wait(5.0)
    started = time.monotonic()
    receiver.stop(1.0)
    assert time.monotonic() - started < 1.3
    started = time.monotonic()
    receiver.stop(1.0)
    assert time.monotonic() - started < 0.1
    sink.gate.set()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_stop_returns_true_when_idle_and_binds_127_0_0_1_by_default(sink: Sink) -> None:
    receiver = OtlpReceiver(sink.on_spans, http_port=0).start()
    assert receiver._http is not None and receiver._http.listener.getsockname()[0] == "127.0.0.1"
    assert receiver.stop(2.0) is True
    assert receiver.stop(2.0) is True


def _ignore_errors(function: Any, *args: Any) -> None:
    try:
        function(*args)
    except OSError:
        pass


def test_bad_arguments_fail_at_construction(sink: Sink) -> None:
    with pytest.raises(ValueError, match="max_body_bytes"):
        OtlpReceiver(sink.on_spans, http_port=0, max_body_bytes=0)
    with pytest.raises(ValueError, match="http_port, a grpc_port"):
        OtlpReceiver(sink.on_spans, http_port=None)


def test_without_the_serve_extra_the_error_says_what_to_install(
        sink: Sink, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    with pytest.raises(ImportError, match=r'pip install "agenteval-otel\[serve\]"'):
        OtlpReceiver(sink.on_spans, http_port=0)
    OtlpReceiver(sink.on_spans, http_port=None, grpc_port=0)  # gRPC alone needs no extra
