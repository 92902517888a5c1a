"""Trace I/O: read spans from OTLP/JSON, OTLP protobuf and Jaeger files, Jaeger's query API
(``JaegerClient``), Grafana Tempo's (``TempoClient``) or Phoenix's REST API (``PhoenixClient``),
over a swappable ``Transport``; the sources an offline run reads (``TraceSource``: files, spans,
trajectories, a Jaeger or Tempo query, a Phoenix project, the ClickHouse table the Collector's
exporter writes, or your own). ``ClickHouseSource`` is loaded when first used (it reads through
``clickhouse-connect``, the ``clickhouse`` extra). The OTLP receiver,
``agenteval_otel.traces.receiver.OtlpReceiver``, is imported from its module (it loads grpc, and
uvicorn for OTLP/HTTP). Spans are written as OTLP/JSON lines by capture's one encoder,
``agenteval_otel.tracing.OtlpJsonFileExporter``."""

from typing import TYPE_CHECKING, Any

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
from agenteval_otel.traces.otlp_json import read_otlp_json
from agenteval_otel.traces.otlp_proto import read_otlp_proto
from agenteval_otel.traces.phoenix import PhoenixClient, PhoenixSource
from agenteval_otel.traces.sources import (
    JaegerSource,
    ReadProgress,
    SpanSource,
    TraceFileSource,
    TraceSource,
    TraceSourceLike,
    TrajectorySource,
    trace_source,
)
from agenteval_otel.traces.tempo import TempoClient, TempoSource
from agenteval_otel.traces.trace_file import SkippedLine, TraceFile

if TYPE_CHECKING:
    from agenteval_otel.traces.clickhouse import ClickHouseSource

__all__ = [
    "ClickHouseSource",
    "HttpRequest",
    "HttpResponse",
    "JaegerClient",
    "JaegerSource",
    "MockTransport",
    "PhoenixClient",
    "PhoenixSource",
    "ReadProgress",
    "SkippedLine",
    "SpanSource",
    "TempoClient",
    "TempoSource",
    "TraceFile",
    "TraceFileSource",
    "TraceSource",
    "TraceSourceLike",
    "TrajectoryFiles",
    "Transport",
    "TrajectorySource",
    "UrllibTransport",
    "read_jaeger_json",
    "read_otlp_json",
    "read_otlp_proto",
    "read_spans",
    "read_trajectories",
    "trace_source",
]


def __getattr__(name: str) -> Any:
    """``ClickHouseSource``, imported when first asked for."""
    if name == "ClickHouseSource":
        from agenteval_otel.traces.clickhouse import ClickHouseSource

        return ClickHouseSource
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
