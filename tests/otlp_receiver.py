"""A real OTLP receiver for tests, over HTTP (protobuf) and gRPC, taking both traces and logs:
what it got is kept as plain tuples so a test can assert on ids and attributes."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return None if kind is None else getattr(value, kind)


@dataclass(frozen=True)
class ReceivedSpan:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    attributes: dict[str, Any]
    status_code: int


@dataclass(frozen=True)
class ReceivedLog:
    trace_id: str
    span_id: str
    event_name: str
    attributes: dict[str, Any]


@dataclass
class OtlpReceiver:
    """What the receiver got, and when it got each kind."""

    endpoint: str = ""
    spans: list[ReceivedSpan] = field(default_factory=list)
    logs: list[ReceivedLog] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    got_spans: threading.Event = field(default_factory=threading.Event)
    got_logs: threading.Event = field(default_factory=threading.Event)

    def take_spans(self, request: trace_service_pb2.ExportTraceServiceRequest) -> None:
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                self.spans += [ReceivedSpan(span.trace_id.hex(), span.span_id.hex(), span.parent_span_id.hex(),
                                            span.name, {a.key: _value(a.value) for a in span.attributes},
                                            span.status.code)
                               for span in scope_spans.spans]
        self.got_spans.set()

    def take_logs(self, request: logs_service_pb2.ExportLogsServiceRequest) -> None:
        for resource_logs in request.resource_logs:
            for scope_logs in resource_logs.scope_logs:
                self.logs += [ReceivedLog(record.trace_id.hex(), record.span_id.hex(), record.event_name,
                                          {a.key: _value(a.value) for a in record.attributes})
                              for record in scope_logs.log_records]
        self.got_logs.set()


@contextmanager
def http_receiver() -> Iterator[OtlpReceiver]:
    """An OTLP/HTTP (protobuf) receiver on 127.0.0.1 for ``/v1/traces`` and ``/v1/logs``."""
    receiver = OtlpReceiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            receiver.paths.append(self.path)
            if self.path == "/v1/logs":
                receiver.take_logs(logs_service_pb2.ExportLogsServiceRequest.FromString(body))
                payload = logs_service_pb2.ExportLogsServiceResponse().SerializeToString()
            else:
                receiver.take_spans(trace_service_pb2.ExportTraceServiceRequest.FromString(body))
                payload = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def grpc_receiver() -> Iterator[OtlpReceiver]:
    """An OTLP/gRPC receiver on 127.0.0.1 for traces and logs (``endpoint`` is ``host:port``)."""
    receiver = OtlpReceiver()

    class Traces(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:
            receiver.take_spans(request)
            return trace_service_pb2.ExportTraceServiceResponse()

    class Logs(logs_service_pb2_grpc.LogsServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:
            receiver.take_logs(request)
            return logs_service_pb2.ExportLogsServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
    logs_service_pb2_grpc.add_LogsServiceServicer_to_server(Logs(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    receiver.endpoint = f"127.0.0.1:{port}"
    try:
        yield receiver
    finally:
        server.stop(grace=None)


@contextmanager
def hanging_endpoint() -> Iterator[str]:
    """An endpoint on 127.0.0.1 that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (just released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
