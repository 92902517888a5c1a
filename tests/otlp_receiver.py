"""The OTLP receiver of ``agenteval serve`` (``agenteval_otel.traces.receiver``) on 127.0.0.1, over
HTTP (protobuf) or gRPC, for tests that export to an endpoint: what it got is kept as our
``SpanRecord``s and ``LogRecord``s so a test can assert on ids and attributes."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from agenteval_otel.traces.receiver import OtlpReceiver
from agenteval_otel.trajectory.logs import LogRecord
from agenteval_otel.trajectory.spans import SpanRecord


@dataclass
class Received:
    """What the receiver got (``paths``: the OTLP/HTTP endpoints data came to)."""

    endpoint: str = ""
    spans: list[SpanRecord] = field(default_factory=list)
    logs: list[LogRecord] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    received: threading.Event = field(default_factory=threading.Event)
    """Set when spans have come."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def names(self) -> list[str]:
        """The names of the spans received, in order."""
        return [span.name for span in self.spans]

    def take_spans(self, records: list[SpanRecord]) -> None:
        with self.lock:
            self.spans += records
            self.paths.append("/v1/traces")
        self.received.set()

    def take_logs(self, records: list[LogRecord]) -> None:
        with self.lock:
            self.logs += records
            self.paths.append("/v1/logs")


@contextmanager
def http_receiver() -> Iterator[Received]:
    """OTLP/HTTP on 127.0.0.1 for ``/v1/traces`` and ``/v1/logs`` (``endpoint`` is its base URL)."""
    received = Received()
    with OtlpReceiver(received.take_spans, received.take_logs, http_port=0) as receiver:
        received.endpoint = f"http://127.0.0.1:{receiver.http_port}"
        yield received


@contextmanager
def grpc_receiver() -> Iterator[Received]:
    """OTLP/gRPC on 127.0.0.1 for traces and logs (``endpoint`` is ``host:port``)."""
    received = Received()
    with OtlpReceiver(received.take_spans, received.take_logs, http_port=None, grpc_port=0) as receiver:
        received.endpoint = f"127.0.0.1:{receiver.grpc_port}"
        yield received


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
