"""Where a tracing set-up's spans go, said for people, with a warning when an OTLP endpoint
cannot be reached (so a run does not lose its spans silently).

>>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
>>> span_destinations([InMemorySpanExporter()], environ={})
('InMemorySpanExporter', None)
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from opentelemetry.sdk.trace.export import SpanExporter

from agenteval_otel.errors import mask_url
from agenteval_otel.tracing.file_export import OtlpJsonFileExporter

__all__ = ["otlp_traces_endpoint", "span_destinations", "unreachable"]


def otlp_traces_endpoint(environ: Mapping[str, str] | None = None) -> str | None:
    """The OTLP endpoint the ``OTEL_EXPORTER_OTLP_*`` variables name for traces, if any."""
    env = os.environ if environ is None else environ
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    return endpoint.strip() if endpoint and endpoint.strip() else None


def unreachable(endpoint: str, environ: Mapping[str, str] | None = None, timeout_s: float = 1.0) -> str | None:
    """Why no connection to ``endpoint`` opens within ``timeout_s``; ``None`` when one does."""
    env = os.environ if environ is None else environ
    url = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    grpc = "grpc" in (env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "").lower()
    try:
        port = url.port or (443 if url.scheme == "https" else 4317 if grpc else 4318)
        with socket.create_connection((url.hostname or "localhost", port), timeout=timeout_s):
            return None
    except (OSError, ValueError) as exc:
        return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def span_destinations(
    exporters: Sequence[SpanExporter], environ: Mapping[str, str] | None = None
) -> tuple[str, str | None]:
    """Where spans sent to ``exporters`` go, in words, and why they may not get there (``None``
    when nothing is wrong)."""
    places: list[str] = []
    problem = None
    endpoint = otlp_traces_endpoint(environ)
    for exporter in exporters:
        if isinstance(exporter, OtlpJsonFileExporter) or endpoint is None:
            places.append(str(getattr(exporter, "path", type(exporter).__name__)))
            continue
        shown = mask_url(endpoint)
        reason = unreachable(endpoint, environ)
        places.append(f"OTLP {shown}" + (f" (unreachable: {reason})" if reason else ""))
        if reason:
            problem = f"the OTLP endpoint {shown} is unreachable ({reason}): this run's spans will be lost"
    return (", ".join(places) or "not exported (OTEL_TRACES_EXPORTER=none)"), problem
