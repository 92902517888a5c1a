"""Fixtures for the capture tests: a real SDK pipeline into memory, real OTLP receivers on 127.0.0.1."""

from __future__ import annotations

import importlib.util
import socket
import threading
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel.tracing import TracingHandle, configure, providers
from agenteval_otel.tracing.content import active_policy, set_active_policy

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class Spans:
    """The spans our steps produced in one test, finished ones only."""

    def __init__(self, exporter: InMemorySpanExporter, handle: TracingHandle) -> None:
        self.exporter = exporter
        self.handle = handle

    def all(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> ReadableSpan:
        matches = [s for s in self.all() if s.name == name]
        assert len(matches) == 1, f"expected one span {name!r}, got {[s.name for s in self.all()]}"
        return matches[0]

    def attributes(self, name: str) -> dict[str, Any]:
        return dict(self.named(name).attributes or {})


@pytest.fixture(autouse=True)
def _restore_tracing_state() -> Iterator[None]:
    """Every test leaves the content policy and the provider our steps use as it found them."""
    policy = active_policy()
    routed = providers._routed
    yield
    set_active_policy(policy)
    providers._routed = routed


@pytest.fixture
def provider() -> TracerProvider:
    return TracerProvider()


@pytest.fixture
def spans(provider: TracerProvider) -> Iterator[Spans]:
    """Our steps export into memory through a real SDK provider (not the global one)."""
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handle = configure(tracer_provider=provider, set_global=False)
    yield Spans(exporter, handle)
    handle.shutdown(timeout=5)


@pytest.fixture(scope="session")
def traced_agent() -> ModuleType:
    """``examples/traced_agent.py``, imported as a module."""
    spec = importlib.util.spec_from_file_location("traced_agent_example", EXAMPLES / "traced_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (just released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Receiver:
    """What an OTLP receiver got: span names by request."""

    endpoint: str
    names: list[str] = field(default_factory=list)
    received: threading.Event = field(default_factory=threading.Event)

    def record(self, request: trace_service_pb2.ExportTraceServiceRequest) -> None:
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                self.names.extend(span.name for span in scope_spans.spans)
        self.received.set()


@pytest.fixture
def http_receiver() -> Iterator[Receiver]:
    """An OTLP/HTTP (protobuf) receiver on 127.0.0.1."""
    receiver = Receiver(endpoint="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            receiver.record(trace_service_pb2.ExportTraceServiceRequest.FromString(body))
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
    yield receiver
    server.shutdown()
    server.server_close()


@pytest.fixture
def grpc_receiver() -> Iterator[Receiver]:
    """An OTLP/gRPC receiver on 127.0.0.1."""
    receiver = Receiver(endpoint="")

    class Service(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:
            receiver.record(request)
            return trace_service_pb2.ExportTraceServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    receiver.endpoint = f"http://127.0.0.1:{port}"
    yield receiver
    server.stop(grace=None)
