"""Trace I/O: read spans from OTLP/JSON, OTLP protobuf and Jaeger files or Jaeger's query API,
and write them as OTLP/JSON lines."""

from agenteval_otel.traces.files import TrajectoryFiles, read_spans, read_trajectories
from agenteval_otel.traces.jaeger import JaegerClient, read_jaeger_json
from agenteval_otel.traces.otlp_json import read_otlp_json, write_otlp_json_lines
from agenteval_otel.traces.otlp_proto import read_otlp_proto
from agenteval_otel.traces.trace_file import SkippedLine, TraceFile

__all__ = [
    "JaegerClient",
    "SkippedLine",
    "TraceFile",
    "TrajectoryFiles",
    "read_jaeger_json",
    "read_otlp_json",
    "read_otlp_proto",
    "read_spans",
    "read_trajectories",
    "write_otlp_json_lines",
]
