"""Where a tracing set-up's spans go, said for people, and OTLP export that fails fast while its
endpoint is down.

The OTLP exporters ``configure()`` and ``providers_for()`` make are wrapped in a fail-fast
exporter: before a batch goes out it checks (at most every few seconds) that the endpoint's host
and port accept a connection. While they do not, the batch fails at once, without the SDK
exporter's retries, its backoff and a log line per retry; one warning names the endpoint (its
credentials masked) when it goes down, one line says how much was dropped when it answers again.
The span and log exporters of one set-up that send to the same host and port share that state,
so they make one warning between them. An endpoint reached through a proxy is not checked.

A logs endpoint that answers that it takes no log records (HTTP 404 or 405, gRPC ``UNIMPLEMENTED``:
a tracing backend that stores spans only) is warned about once, naming it, and gets no more log
records from that exporter; the SDK exporter's ERROR line for that answer is not shown. Every other
failure is logged by the SDK as usual.

>>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
>>> span_destinations([InMemorySpanExporter()])
('InMemorySpanExporter', None)
"""

from __future__ import annotations

import logging
import math
import os
import re
import socket
import threading
import time
import urllib.request
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from agenteval_otel.errors import mask_url

__all__ = [
    "EndpointWatch",
    "FailFastLogExporter",
    "FailFastSpanExporter",
    "otlp_traces_endpoint",
    "span_destinations",
    "unreachable",
]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

CONNECT_TIMEOUT_S = 1.0
"""How long a reachability check waits for a connection."""
REACHABLE_FOR_S = 10.0
"""How long an endpoint that accepted a connection is taken to be up before it is checked again."""
UNREACHABLE_FOR_S = 2.0
"""How long an endpoint that refused one is taken to be down (a burst of batches costs one check)."""
SDK_EXPORT_LOGGERS = ("opentelemetry.exporter.otlp.proto.http._log_exporter",
                      "opentelemetry.exporter.otlp.proto.grpc.exporter")
"""The loggers through which the SDK's OTLP log exporters report a failed batch."""
_NO_LOGS_SERVICE = re.compile(r"\bcode: (404|405)\b|StatusCode\.(UNIMPLEMENTED)\b")
"""The SDK's failure line when the endpoint has no logs service: HTTP 404/405, gRPC UNIMPLEMENTED."""


def otlp_traces_endpoint(environ: Mapping[str, str] | None = None) -> str | None:
    """The OTLP endpoint the ``OTEL_EXPORTER_OTLP_*`` variables name for traces, if any."""
    env = os.environ if environ is None else environ
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    return endpoint.strip() if endpoint and endpoint.strip() else None


def _grpc_from(environ: Mapping[str, str]) -> bool:
    protocol = environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or ""
    return "grpc" in protocol.lower()


def _address(endpoint: str, grpc: bool) -> tuple[str, int]:
    """The host and port ``endpoint`` connects to (the OTLP default port when it names none);
    ``ValueError`` for a port that is not a number."""
    url = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    secure = url.scheme in ("https", "grpcs")
    port = url.port or (443 if secure else 4317 if grpc or url.scheme == "grpc" else 4318)
    return url.hostname or "localhost", port


def _proxied(endpoint: str, grpc: bool) -> bool:
    """Whether a proxy from the environment carries connections to ``endpoint``."""
    url = urlsplit(endpoint if "://" in endpoint else f"http://{endpoint}")
    proxies = urllib.request.getproxies()
    schemes = ("grpc", "https", "http") if grpc or url.scheme.startswith("grpc") else (url.scheme,)
    if not any(proxies.get(scheme) for scheme in schemes):
        return False
    return not urllib.request.proxy_bypass(url.hostname or "")


def _connect(host: str, port: int, timeout_s: float) -> str | None:
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except OSError as exc:
        return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def unreachable(endpoint: str, environ: Mapping[str, str] | None = None,
                timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """Why no connection to ``endpoint`` opens within ``timeout_s``; ``None`` when one does."""
    try:
        host, port = _address(endpoint, _grpc_from(os.environ if environ is None else environ))
    except ValueError as exc:
        return str(exc) or type(exc).__name__
    return _connect(host, port, timeout_s)


class EndpointWatch:
    """Whether one OTLP endpoint (a host and port) accepts connections, checked at most every
    ``REACHABLE_FOR_S`` seconds while it does and every ``UNREACHABLE_FOR_S`` while it does not.
    It warns once when the endpoint goes down and says how much was dropped when it comes back.
    An endpoint reached through a proxy from the environment (or that does not parse) is not
    checked: it is taken to be up."""

    def __init__(self, endpoint: str, *, grpc: bool = False) -> None:
        self.shown = mask_url(endpoint)
        """The endpoint as messages show it (credentials masked)."""
        try:
            address = None if _proxied(endpoint, grpc) else _address(endpoint, grpc)
        except ValueError:
            address = None
        self.address = address
        """The host and port checked; ``None``: not checked."""
        self.dropped = 0
        """Spans and log records dropped during the current outage."""
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._checked_at = -math.inf

    def watches(self, endpoint: str, *, grpc: bool = False) -> bool:
        """Whether ``endpoint`` is this watch's host and port (so exporters to it share the watch)."""
        try:
            return self.address is not None and _address(endpoint, grpc) == self.address
        except ValueError:
            return False

    def problem(self) -> str | None:
        """Why the endpoint is down (``None`` while it is up), checked again when the last
        check is older than it is trusted for."""
        if self.address is None:
            return None
        with self._lock:
            now = time.monotonic()
            if now - self._checked_at < (UNREACHABLE_FOR_S if self._reason else REACHABLE_FOR_S):
                return self._reason
            reason = _connect(*self.address, CONNECT_TIMEOUT_S)
            self._checked_at = time.monotonic()
            if reason and not self._reason:
                _log.warning("the OTLP endpoint %s is unreachable (%s): spans and log records sent there "
                             "are dropped until it answers", self.shown, reason)
            elif self._reason and not reason:
                _log.info("the OTLP endpoint %s answers again; %d span(s) and log record(s) were dropped "
                          "while it did not", self.shown, self.dropped)
                self.dropped = 0
            self._reason = reason
            return reason

    def drop(self, count: int) -> None:
        """Count ``count`` items dropped because the endpoint is down."""
        with self._lock:
            self.dropped += count


class FailFastSpanExporter(SpanExporter):
    """An OTLP span ``exporter`` whose batches fail at once while ``watch`` finds its endpoint down."""

    def __init__(self, exporter: SpanExporter, watch: EndpointWatch) -> None:
        self.exporter = exporter
        self.watch = watch

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self.watch.problem() is not None:
            self.watch.drop(len(spans))
            return SpanExportResult.FAILURE
        return self.exporter.export(spans)

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.exporter.force_flush(timeout_millis)


class _NoLogsServiceCatcher(logging.Filter):
    """Takes the SDK exporter's ERROR line saying that the endpoint has no logs service, when it
    comes on the thread of a :class:`FailFastLogExporter` export, and tells that exporter."""

    def __init__(self) -> None:
        super().__init__()
        self.exporting = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        exporter: FailFastLogExporter | None = getattr(self.exporting, "exporter", None)
        if exporter is None or record.levelno < logging.ERROR:
            return True
        match = _NO_LOGS_SERVICE.search(record.getMessage())
        if match is None:
            return True
        exporter.refused = f"HTTP {match.group(1)}" if match.group(1) else f"gRPC {match.group(2)}"
        return False


_catcher = _NoLogsServiceCatcher()


def _catch_no_logs_service() -> None:
    """Put the catcher first on the SDK's exporter loggers (before their duplicate filter), once."""
    for name in SDK_EXPORT_LOGGERS:
        logger = logging.getLogger(name)
        if _catcher not in logger.filters:
            logger.filters.insert(0, _catcher)


class FailFastLogExporter(LogRecordExporter):
    """An OTLP log ``exporter`` whose batches fail at once while ``watch`` finds its endpoint down,
    and that stops for good, with one warning naming ``endpoint`` (the logs URL; else the watch's),
    once the endpoint answers that it takes no log records."""

    def __init__(self, exporter: LogRecordExporter, watch: EndpointWatch, endpoint: str | None = None) -> None:
        self.exporter = exporter
        self.watch = watch
        self.shown = mask_url(endpoint) if endpoint else watch.shown
        """The logs endpoint as messages show it (credentials masked)."""
        self.refused: str | None = None
        """The answer by which the endpoint said it takes no log records (``None``: it has not)."""
        _catch_no_logs_service()

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        if self.refused is not None:
            return LogRecordExportResult.FAILURE
        if self.watch.problem() is not None:
            self.watch.drop(len(batch))
            return LogRecordExportResult.FAILURE
        _catcher.exporting.exporter = self
        try:
            result = self.exporter.export(batch)
        finally:
            _catcher.exporting.exporter = None
        if self.refused is not None:
            _log.warning("the OTLP endpoint %s takes no log records (it answered %s): log records will "
                         "not be sent there", self.shown, self.refused)
        return result

    def shutdown(self) -> None:
        self.exporter.shutdown()  # type: ignore[no-untyped-call]  # untyped in the SDK

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        flushed: bool = self.exporter.force_flush(timeout_millis)
        return flushed


def span_destinations(exporters: Sequence[SpanExporter]) -> tuple[str, str | None]:
    """Where spans sent to ``exporters`` go, in words, and why they may not get there (``None``
    when nothing is wrong). An OTLP endpoint found down is warned about once, by its watch."""
    places: list[str] = []
    problem = None
    for exporter in exporters:
        if not isinstance(exporter, FailFastSpanExporter):
            places.append(str(getattr(exporter, "path", type(exporter).__name__)))
            continue
        shown, reason = exporter.watch.shown, exporter.watch.problem()
        places.append(f"OTLP {shown}" + (f" (unreachable: {reason})" if reason else ""))
        if reason:
            problem = f"the OTLP endpoint {shown} is unreachable ({reason})"
    return (", ".join(places) or "not exported (OTEL_TRACES_EXPORTER=none)"), problem
