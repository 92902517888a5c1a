"""The OTLP receiver's network edge: bodies that decode into far more than they weigh, bytes in
flight, gzip members, connections that never send headers, the token before the body over gRPC,
``/health`` for the unauthenticated, taken ports. Real servers on free 127.0.0.1 ports, the real
grpcio client, raw sockets and ``http.client``."""

from __future__ import annotations

import gzip
import http.client
import socket
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import orjson
import pytest
from google.protobuf.internal.encoder import _VarintBytes
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub

from agenteval_otel.traces import receiver as receiver_module
from agenteval_otel.traces.receiver import OtlpReceiver
from agenteval_otel.trajectory.spans import SpanRecord

TRACE_ID = bytes.fromhex("5b8efff798038103d269b633813fc60c")
EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
MB = 1024 * 1024


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited protobuf field."""
    return _VarintBytes(number << 3 | 2) + _VarintBytes(len(payload)) + payload


def _request_of_spans(spans: bytes) -> bytes:
    """An ``ExportTraceServiceRequest`` of one resource and one scope holding the encoded ``spans``."""
    return _field(1, _field(2, spans))


EMPTY_SPANS = _request_of_spans(b"\x12\x00" * 9_000_000)  # 18 MB: 9 million empty spans
EMPTY_ATTRIBUTES = _request_of_spans(_field(2, _field(1, TRACE_ID) + _field(2, b"\x01" * 8)
                                            + b"\x4a\x00" * 1_000_000))  # 2 MB: one span, a million attributes


def _spans(count: int) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    for index in range(count):
        spans.add(trace_id=TRACE_ID, span_id=(index + 1).to_bytes(8, "big"), name=f"step {index}")
    return request


def _json_spans(count: int) -> bytes:
    return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": TRACE_ID.hex(), "spanId": f"{index + 1:016x}", "name": f"step {index}"}
        for index in range(count)]}]}]})


class Sink:
    """Records what the receiver delivers; ``gate`` holds the callback."""

    def __init__(self) -> None:
        self.spans: list[SpanRecord] = []
        self.gate: threading.Event | None = None
        self.entered = threading.Event()

    def on_spans(self, records: list[SpanRecord]) -> None:
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(5.0)
        self.spans += records

    def on_logs(self, records: list[Any]) -> None:
        pass


@pytest.fixture
def sink() -> Sink:
    return Sink()


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many bodies the receiver has decoded (the real decoder, counted)."""
    calls: list[int] = []
    real = receiver_module.decode_trace_export

    def counted(body: bytes, encoding: Any) -> Any:
        calls.append(len(body))
        return real(body, encoding)

    monkeypatch.setattr(receiver_module, "decode_trace_export", counted)
    return calls


@pytest.fixture
def receiver(sink: Sink) -> Iterator[OtlpReceiver]:
    with OtlpReceiver(sink.on_spans, sink.on_logs, http_port=0, grpc_port=0) as started:
        yield started


def post(port: int | None, body: bytes, content_type: str = "application/x-protobuf", path: str = "/v1/traces",
         timeout: float = 10, **headers: str) -> tuple[int, dict[str, str], bytes]:
    assert port is not None
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", path, body, {"Content-Type": content_type,
                                                **{k.replace("_", "-"): v for k, v in headers.items()}})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _message(headers: dict[str, str], body: bytes) -> str:
    if headers["content-type"] == "application/json":
        return str(orjson.loads(body)["message"])
    return Status.FromString(body).message


def _raw_export(port: int | None, body: bytes, **metadata: str) -> tuple[grpc.StatusCode, str]:
    """Send ``body`` as it is to ``TraceService/Export`` with the real grpcio client."""
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_send_message_length", -1)]) as channel:
        export = channel.unary_unary(EXPORT, request_serializer=None,
                                     response_deserializer=ExportTraceServiceResponse.FromString)
        try:
            export(body, timeout=10, metadata=tuple(metadata.items()))
        except grpc.RpcError as error:
            return error.code(), error.details()
    return grpc.StatusCode.OK, ""


def _timed(action: Callable[[], Any]) -> tuple[Any, float]:
    """``action()`` and the seconds it took."""
    started = time.monotonic()
    return action(), time.monotonic() - started


def _peak_memory(action: Callable[[], Any]) -> tuple[Any, int]:
    """``action()`` and the peak of memory it allocated in this process (the servers included)."""
    tracemalloc.start()
    try:
        result = action()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


# --- what a body decodes into ------------------------------------------------------------------


@pytest.mark.promise(22, 25)
@pytest.mark.parametrize(("body", "content_type", "limit"), [
    (EMPTY_SPANS, "application/x-protobuf", "more than 65536 spans"),
    (EMPTY_ATTRIBUTES, "application/x-protobuf", "more than 524288 messages"),
    (_json_spans(0).replace(b'"spans":[]', b'"spans":[' + b"{}," * 1_000_000 + b"{}]"), "application/json",
     "over the limit of 524288 per request"),
], ids=["empty-spans", "empty-attributes", "json-empty-objects"])
def test_a_small_body_that_would_decode_into_gigabytes_is_413_before_decoding(
        receiver: OtlpReceiver, sink: Sink, decodes: list[int], body: bytes, content_type: str, limit: str) -> None:
    (status, headers, answer), elapsed = _timed(lambda: post(receiver.http_port, body, content_type))
    assert status == 413 and limit in _message(headers, answer)
    assert decodes == [] and sink.spans == []
    assert elapsed < 2.0  # decoding it would take tens of seconds
    assert receiver.counters.refused_too_large == 1


@pytest.mark.promise(22, 25)
def test_nine_million_empty_spans_are_refused_in_little_memory_on_both_transports(
        receiver: OtlpReceiver, sink: Sink, decodes: list[int]) -> None:
    (status, _, _), peak = _peak_memory(lambda: post(receiver.http_port, EMPTY_SPANS))
    assert status == 413
    assert peak < len(EMPTY_SPANS) + 4 * MB  # the 18 MB body itself and little more (decoding took 1.6 GB)
    (code, details), peak = _peak_memory(lambda: _raw_export(receiver.grpc_port, EMPTY_SPANS))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "more than 65536 spans" in details
    assert peak < 2 * len(EMPTY_SPANS) + 4 * MB  # grpcio copies the message once on its way to Python
    assert decodes == [] and sink.spans == []


@pytest.mark.promise(22)
def test_the_span_limit_is_exact_on_every_encoding_and_transport(sink: Sink) -> None:
    with OtlpReceiver(sink.on_spans, http_port=0, grpc_port=0, max_spans_per_request=3) as receiver:
        assert post(receiver.http_port, _spans(3).SerializeToString())[0] == 200
        status, headers, answer = post(receiver.http_port, _spans(4).SerializeToString())
        assert status == 413 and "more than 3 spans, the limit per request" in _message(headers, answer)
        assert post(receiver.http_port, _json_spans(3), "application/json")[0] == 200
        assert post(receiver.http_port, _json_spans(4), "application/json")[0] == 413
        with grpc.insecure_channel(f"127.0.0.1:{receiver.grpc_port}") as channel:
            stub = TraceServiceStub(channel)
            stub.Export(_spans(3), timeout=5)
            with pytest.raises(grpc.RpcError) as refused:
                stub.Export(_spans(4), timeout=5)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "google.rpc.retryinfo-bin" not in dict(refused.value.trailing_metadata() or ())  # permanent
        assert len(sink.spans) == 9 and receiver.counters.refused_too_large == 3


def test_log_records_are_counted_the_same_way(sink: Sink) -> None:
    request = ExportLogsServiceRequest()
    records = request.resource_logs.add().scope_logs.add().log_records
    for _ in range(3):
        records.add(event_name="gen_ai.user.message")
    with OtlpReceiver(sink.on_spans, sink.on_logs, http_port=0, max_spans_per_request=2) as receiver:
        status, headers, answer = post(receiver.http_port, request.SerializeToString(), path="/v1/logs")
    assert status == 413 and "more than 2 log records" in _message(headers, answer)


def test_a_broken_protobuf_body_is_400_naming_the_request_type(receiver: OtlpReceiver) -> None:
    status, headers, answer = post(receiver.http_port, _request_of_spans(b"\x12\x05\x0a"))
    assert status == 400 and "not a protobuf ExportTraceServiceRequest" in _message(headers, answer)
    code, details = _raw_export(receiver.grpc_port, b"\x0a\xff")
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "not a protobuf" in details


# --- bytes in flight -----------------------------------------------------------------------------


def _send_headers(port: int | None, length: int | None) -> socket.socket:
    """A raw connection that sent a POST's headers (``length`` or chunked) and no body yet."""
    assert port is not None
    client = socket.create_connection(("127.0.0.1", port), timeout=5)
    framing = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    client.sendall(f"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{framing}\r\n\r\n"
                   .encode())
    return client


def _response(client: socket.socket) -> bytes:
    """One whole HTTP response read from ``client``."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += client.recv(4096)
    head, _, body = answer.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.lower().split(b"\r\n")
                      if line.startswith(b"content-length:")))
    while len(body) < length:
        body += client.recv(4096)
    return head + b"\r\n\r\n" + body


@pytest.mark.promise(22)
def test_bodies_in_flight_are_bounded_in_bytes_and_the_excess_is_503_before_it_is_read(sink: Sink) -> None:
    sink.gate = threading.Event()
    held = _json_spans(1) + b" " * (60_000 - len(_json_spans(1)))
    with OtlpReceiver(sink.on_spans, http_port=0, max_body_bytes=64_000, max_in_flight_bytes=100_000,
                      retry_after=3) as receiver:
        first = threading.Thread(target=post, args=(receiver.http_port, held, "application/json"))
        first.start()
        assert sink.entered.wait(5.0)  # 60,000 bytes held by a request in the consumer
        try:
            with _send_headers(receiver.http_port, 60_000) as declared:  # no byte of its body is sent
                answer = _response(declared)
            assert answer.startswith(b"HTTP/1.1 503") and b"retry-after: 3" in answer.lower()
            assert b"60000 more would pass the limit of 100000" in answer
            with _send_headers(receiver.http_port, None) as chunked:
                chunk = b" " * 30_000
                chunked.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))  # 90,000 in flight: still within
                chunked.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))  # 120,000: over
                answer = _response(chunked)
            assert answer.startswith(b"HTTP/1.1 503") and b"bytes of request bodies in flight" in answer
        finally:
            sink.gate.set()
        first.join(5.0)
        assert post(receiver.http_port, held, "application/json")[0] == 200  # the budget was given back
        assert receiver.counters.refused_overload == 2


def test_an_in_flight_budget_below_the_body_limit_fails_at_construction(sink: Sink) -> None:
    with pytest.raises(ValueError, match=r"max_in_flight_bytes \(1000\) must be at least max_body_bytes \(2000\)"):
        OtlpReceiver(sink.on_spans, http_port=0, max_body_bytes=2000, max_in_flight_bytes=1000)


# --- gzip ------------------------------------------------------------------------------------------


def test_every_gzip_member_is_read(receiver: OtlpReceiver, sink: Sink) -> None:
    first, second = _spans(2), _spans(3)  # protobuf messages concatenated are one merged message
    body = gzip.compress(first.SerializeToString()) + gzip.compress(second.SerializeToString())
    assert post(receiver.http_port, body, Content_Encoding="gzip")[0] == 200
    document = _json_spans(4)
    body = (gzip.compress(document[:10]) + gzip.compress(document[10:30]) + gzip.compress(document[30:])
            + gzip.compress(b" " * (3 * MB)))  # a member that inflates in several steps
    assert post(receiver.http_port, body, "application/json", Content_Encoding="gzip")[0] == 200
    assert len(sink.spans) == 9


@pytest.mark.promise(20)
def test_bytes_after_the_gzip_data_are_400_and_the_limit_holds_across_members(sink: Sink) -> None:
    with OtlpReceiver(sink.on_spans, http_port=0, max_body_bytes=64_000) as receiver:
        status, headers, answer = post(receiver.http_port, gzip.compress(_json_spans(1)) + b"trailing junk",
                                       "application/json", Content_Encoding="gzip")
        assert status == 400
        assert "13 bytes after the end of the gzip data are not a gzip member" in _message(headers, answer)
        blanks = gzip.compress(b" " * 30_000)
        status, headers, answer = post(receiver.http_port, gzip.compress(_json_spans(1)) + blanks * 3,
                                       "application/json", Content_Encoding="gzip")
        assert status == 413 and "decompressed body is over the limit" in _message(headers, answer)
    assert sink.spans == []


# --- connections -----------------------------------------------------------------------------------


def _closed_within(client: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``client`` within ``seconds`` (what it sends first is read and dropped)."""
    client.settimeout(seconds)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if not client.recv(4096):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    return False


@pytest.mark.promise(25)
def test_connections_that_send_no_headers_are_closed_after_the_header_deadline(sink: Sink) -> None:
    with OtlpReceiver(sink.on_spans, http_port=0, grpc_port=0, header_timeout=0.5) as receiver:
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5)
                for port in (receiver.http_port, receiver.grpc_port) for _ in range(5)]
        started = time.monotonic()
        try:
            assert all(_closed_within(client, 3.0) for client in idle)
        finally:
            for client in idle:
                client.close()
        assert time.monotonic() - started < 2.0
        assert receiver.counters.headers_timed_out == 5  # the gRPC ones are cut by grpcio


@pytest.mark.promise(20, 25)
def test_headers_trickled_a_byte_at_a_time_are_cut_at_the_deadline(sink: Sink) -> None:
    with OtlpReceiver(sink.on_spans, http_port=0, header_timeout=0.5) as receiver:
        assert receiver.http_port is not None
        headers = b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" * 10
        with socket.create_connection(("127.0.0.1", receiver.http_port), timeout=5) as client:
            started = time.monotonic()
            closed = False
            for byte in headers:
                try:
                    client.sendall(bytes([byte]))
                except OSError:
                    closed = True
                    break
                if _closed_within(client, 0.1):
                    closed = True
                    break
            elapsed = time.monotonic() - started
        assert closed and 0.4 < elapsed < 1.5


@pytest.mark.promise(20, 25)
def test_a_body_still_trickling_after_its_408_does_not_keep_the_connection(sink: Sink) -> None:
    with OtlpReceiver(sink.on_spans, http_port=0, request_timeout=0.3, header_timeout=0.5) as receiver:
        with _send_headers(receiver.http_port, 1000) as client:
            client.settimeout(0.1)
            started, answer, closed = time.monotonic(), b"", False
            while time.monotonic() - started < 4:
                try:
                    client.sendall(b" ")  # a byte every 100 ms, for ever
                    data = client.recv(4096)
                except socket.timeout:
                    continue
                except OSError:
                    closed = True
                    break
                if not data:
                    closed = True
                    break
                answer += data
            elapsed = time.monotonic() - started
        assert answer.startswith(b"HTTP/1.1 408")
        assert closed and elapsed < 1.5


@pytest.mark.promise(25)
def test_idle_connections_do_not_starve_a_well_behaved_client(sink: Sink) -> None:
    body = _spans(1).SerializeToString()
    with OtlpReceiver(sink.on_spans, http_port=0) as receiver:  # the defaults: room to spare
        idle = [socket.create_connection(("127.0.0.1", receiver.http_port or 0)) for _ in range(100)]
        try:
            started = time.monotonic()
            assert post(receiver.http_port, body)[0] == 200
            assert time.monotonic() - started < 1.0
        finally:
            for client in idle:
                client.close()
    with OtlpReceiver(sink.on_spans, http_port=0, max_connections=8, header_timeout=0.5) as receiver:
        idle = [socket.create_connection(("127.0.0.1", receiver.http_port or 0)) for _ in range(20)]
        try:
            started = time.monotonic()
            assert post(receiver.http_port, body)[0] == 200  # it waits for the idle ones to be cut
            assert time.monotonic() - started < 3.0
        finally:
            for client in idle:
                client.close()
    assert len(sink.spans) == 2


# --- the token ---------------------------------------------------------------------------------


@pytest.mark.promise(25)
def test_over_grpc_a_wrong_token_is_refused_before_the_body_is_read(sink: Sink, decodes: list[int]) -> None:
    with OtlpReceiver(sink.on_spans, http_port=None, grpc_port=0, token="s3cret") as receiver:
        (code, _), elapsed = _timed(lambda: _raw_export(receiver.grpc_port, EMPTY_SPANS, authorization="Bearer wrong"))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        assert elapsed < 1.0  # parsing the 9 million spans alone takes seconds
        (code, _), peak = _peak_memory(lambda: _raw_export(receiver.grpc_port, EMPTY_SPANS))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        assert peak < 5 * MB  # the 18 MB body never reaches Python
        assert decodes == [] and sink.spans == []
        counters = receiver.counters
        assert (counters.refused_unauthorized, counters.refused_too_large) == (2, 0)


@pytest.mark.promise(25)
def test_health_shows_only_its_state_without_the_token() -> None:
    with OtlpReceiver(lambda spans: None, http_port=0, token="s3cret",
                      health=lambda: {"queued": 3}) as receiver:
        def health(**headers: str) -> tuple[int, dict[str, Any]]:
            connection = http.client.HTTPConnection("127.0.0.1", receiver.http_port or 0, timeout=5)
            connection.request("GET", "/health", headers=headers)
            response = connection.getresponse()
            document = orjson.loads(response.read())
            connection.close()
            return response.status, document

        assert health() == (200, {"status": "ok"})
        assert health(Authorization="Bearer wrong") == (200, {"status": "ok"})
        status, document = health(Authorization="Bearer s3cret")
        assert status == 200 and document["consumer"] == {"queued": 3} and "counters" in document


# --- ports and lifecycle -----------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_a_taken_port_is_refused_naming_it(sink: Sink, protocol: str) -> None:
    ports: dict[str, int | None] = {"http_port": None, "grpc_port": None}
    with OtlpReceiver(sink.on_spans, **{**ports, f"{protocol}_port": 0}) as first:  # type: ignore[arg-type]
        port = first.http_port if protocol == "http" else first.grpc_port
        second = OtlpReceiver(sink.on_spans, **{**ports, f"{protocol}_port": port})  # type: ignore[arg-type]
        with pytest.raises(OSError, match=rf"cannot bind OTLP/{'HTTP' if protocol == 'http' else 'gRPC'} "
                                          rf"on 127\.0\.0\.1:{port}"):
            second.start()
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=str(port)):
            OtlpReceiver(sink.on_spans, **{**ports, f"{protocol}_port": port}).start()  # type: ignore[arg-type]


def test_stop_without_a_timeout_takes_the_default(sink: Sink) -> None:
    receiver = OtlpReceiver(sink.on_spans, http_port=0).start()
    assert receiver.stop(None) is True
