"""Trace I/O: read spans from OTLP/JSON, OTLP protobuf and Jaeger files or Jaeger's query API
(``JaegerClient``, over a swappable ``Transport``), and write them as OTLP/JSON lines. The OTLP
receiver, ``agenteval_otel.traces.receiver.OtlpReceiver``, is imported from its module (it loads
grpc, and uvicorn for OTLP/HTTP)."""

from agenteval_otel.traces.files import TrajectoryFiles, read_spans, read_trajectories
from agenteval_otel.traces.jaeger_client import (
    HttpRequest,
    HttpResponse,
    JaegerClient,
    MockTransport,
    Transport,
    UrllibTransport,
)
from agenteval_otel.traces.jaeger_json import read_jaeger_json
from agenteval_otel.traces.otlp_json import read_otlp_json, write_otlp_json_lines
from agenteval_otel.traces.otlp_proto import read_otlp_proto
from agenteval_otel.traces.trace_file import SkippedLine, TraceFile

__all__ = [
    "HttpRequest",
    "HttpResponse",
    "JaegerClient",
    "MockTransport",
    "SkippedLine",
    "TraceFile",
    "TrajectoryFiles",
    "Transport",
    "UrllibTransport",
    "read_jaeger_json",
    "read_otlp_json",
    "read_otlp_proto",
    "read_spans",
    "read_trajectories",
    "write_otlp_json_lines",
]
