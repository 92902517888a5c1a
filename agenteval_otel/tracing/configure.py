"""``configure()``: tracing set up in one call, and the handle that flushes and shuts it down.

Where spans go, in this order:

1. ``exporter=``: that exporter only.
2. ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT`` set: OTLP, over
   http/protobuf, or gRPC when ``OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL=grpc``; the exporter reads
   the other standard ``OTEL_EXPORTER_OTLP_*`` variables (headers, timeout, ...) itself. While
   the endpoint refuses connections, batches fail at once with one warning naming it (see
   :class:`~agenteval_otel.tracing.destinations.FailFastSpanExporter`). gRPC
   needs the ``grpc`` extra: without it the error is logged, naming the extra, and spans go to
   the file of 3.
3. Otherwise (the OTLP exporter could not be created included), or when ``traces_file=`` is
   given: an OTLP/JSON-lines file (the Collector's file format, written by
   ``OtlpJsonFileExporter``) that ``agenteval_otel.traces`` reads back: ``traces_file``, else
   ``$AGENTEVAL_TRACES_FILE``, else ``agenteval-traces.jsonl`` in the current directory.

``OTEL_TRACES_EXPORTER=none`` turns export off. Each exporter runs behind a
``BatchSpanProcessor``; every processor is isolated so that one that raises never reaches the
code that ends a span. Our decorators use the configured provider; it also becomes the global
OpenTelemetry provider (``set_global``) unless one is set already.

Beside the tracer provider, a ``LoggerProvider`` (the OpenTelemetry Logs API, through which
log-based events such as ``gen_ai.evaluation.result`` are written) exports log records to the
same place: the same OTLP endpoint (``/v1/logs``, or ``OTEL_EXPORTER_OTLP_LOGS_ENDPOINT``), and
the log file beside the traces file (``x.jsonl`` → ``x.logs.jsonl``, see ``logs_file_for``),
which ``agenteval eval --traces x.jsonl x.logs.jsonl`` reads together. It becomes the global
logger provider under the same rule; ``OTEL_LOGS_EXPORTER=none`` turns log export off.

``providers_for(target)`` builds the same pair, owned by the caller and neither global nor used
by our decorators, for an explicit target: an OTLP URL or a file path.

>>> handle = configure("my-agent", traces_file="/tmp/agenteval-doctest.jsonl", set_global=False)
>>> handle.shutdown(timeout=5)
True
"""

from __future__ import annotations

import atexit
import dataclasses
import importlib
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from opentelemetry import _logs, trace
from opentelemetry.sdk._logs import LoggerProvider as SdkLoggerProvider
from opentelemetry.sdk._logs import LogRecordProcessor
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import TracerProvider

from agenteval_otel.tracing._isolation import IsolatedSpanProcessor
from agenteval_otel.tracing.content import ContentPolicy, active_policy, set_active_policy
from agenteval_otel.tracing.conventions import conventions_from_env, set_conventions
from agenteval_otel.tracing.destinations import EndpointWatch, FailFastLogExporter, FailFastSpanExporter
from agenteval_otel.tracing.file_export import OtlpJsonFileExporter
from agenteval_otel.tracing.instrumentors import apply_instrumentors, find_instrumentors
from agenteval_otel.tracing.log_file_export import OtlpJsonLogFileExporter, logs_file_for
from agenteval_otel.tracing.providers import release_provider, route_to_provider

__all__ = ["DEFAULT_TRACES_FILE", "TRACES_FILE_ENV", "TracingHandle", "configure", "is_otlp_url", "providers_for"]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())

TRACES_FILE_ENV: Final = "AGENTEVAL_TRACES_FILE"
DEFAULT_TRACES_FILE: Final = "agenteval-traces.jsonl"
EXIT_TIMEOUT_SECONDS: Final = 5.0
GRPC_EXTRA_HINT: Final = "OTLP over gRPC needs the 'grpc' extra: pip install 'agenteval-otel[grpc]'"
HTTP_EXTRA_HINT: Final = "OTLP over HTTP needs the 'otlp' extra: pip install 'agenteval-otel[otlp]'"
DEFAULT_TIMEOUT_SECONDS: Final = 30.0


def _within(timeout: float, action: Callable[[], object], what: str) -> bool:
    """Run ``action`` with a deadline: ``False`` if it fails, returns ``False`` or is not done in time."""
    outcome: list[bool] = []

    def target() -> None:
        try:
            outcome.append(action() is not False)
        except Exception:
            _logger.warning("%s failed", what, exc_info=True)
            outcome.append(False)

    worker = threading.Thread(target=target, name=f"agenteval {what}", daemon=True)
    try:
        worker.start()
    except RuntimeError:  # no new threads at interpreter exit: run it here
        target()
    else:
        worker.join(max(0.0, timeout))
    if not outcome:
        _logger.warning("%s did not finish within %.1f s", what, timeout)
        return False
    return outcome[0]


class TracingHandle:
    """What ``configure()`` set up. ``force_flush`` and ``shutdown`` each keep one deadline.

    ``provider`` is the tracer provider our steps use, ``exporters`` the exporters chosen,
    ``traces_file`` the OTLP/JSON-lines file spans are written to (``None`` without one);
    ``logger_provider`` the logger provider beside it (``None`` when none was set up),
    ``logs_file`` the file its log records are written to, ``instrumentors`` the instrumentors
    ``configure(instrument=...)`` applied.
    """

    def __init__(
        self,
        provider: TracerProvider,
        content_policy: ContentPolicy,
        exporters: tuple[SpanExporter, ...],
        traces_file: Path | None,
        *,
        logger_provider: SdkLoggerProvider | None = None,
        logs_file: Path | None = None,
        instrumentors: tuple[object, ...] = (),
    ) -> None:
        self.provider = provider
        self.content_policy = content_policy
        self.exporters = exporters
        self.traces_file = traces_file
        self.logger_provider = logger_provider
        self.logs_file = logs_file
        self.instrumentors = instrumentors
        self._lock = threading.Lock()
        self._shutdown_result: bool | None = None
        atexit.register(self._at_exit)

    def force_flush(self, timeout: float | None = DEFAULT_TIMEOUT_SECONDS) -> bool:
        """Export every ended span and emitted log record; ``False`` if that failed or took
        longer than ``timeout`` seconds (``None``: the default, 30 s)."""
        timeout = DEFAULT_TIMEOUT_SECONDS if timeout is None else timeout
        if self._shutdown_result is not None:
            _logger.warning("force_flush after shutdown: nothing to flush")
            return False
        deadline = time.monotonic() + timeout

        def flush() -> bool:
            ok = True
            for provider in (self.provider, self.logger_provider):
                flush_one = getattr(provider, "force_flush", None)
                if flush_one is not None:
                    remaining = max(0, int((deadline - time.monotonic()) * 1000))
                    ok = flush_one(remaining) is not False and ok
            return ok

        return _within(timeout, flush, "force_flush")

    def shutdown(self, timeout: float | None = DEFAULT_TIMEOUT_SECONDS) -> bool:
        """Flush and stop export within ``timeout`` seconds overall (``None``: the default, 30 s);
        ``False`` if that failed or timed out.

        Idempotent: later calls return the first call's result at once. Our steps go back to the
        global provider, so their spans are dropped when that is this (now shut down) provider.
        An exit handler calls this with a 5 s deadline if the application does not.
        """
        with self._lock:
            if self._shutdown_result is not None:
                return self._shutdown_result
            started = time.monotonic()
            timeout = DEFAULT_TIMEOUT_SECONDS if timeout is None else timeout
            release_provider(self.provider)
            atexit.unregister(self._at_exit)
            stops = [stop for stop in (getattr(self.provider, "shutdown", None),
                                       getattr(self.logger_provider, "shutdown", None)) if stop is not None]
            result = True if not stops else _within(timeout, lambda: all([s() is not False for s in stops]),
                                                    "shutdown")
            self._shutdown_result = result
            _logger.debug("tracing shut down in %.3f s (ok=%s)", time.monotonic() - started, result)
            return result

    def _at_exit(self) -> None:
        self.shutdown(EXIT_TIMEOUT_SECONDS)


def _env(*names: str) -> str | None:
    """The first of these environment variables that is set (stripped), if any."""
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def _protocol(signal: str) -> str:
    """The OTLP protocol for ``signal`` (``TRACES`` or ``LOGS``); an unsupported one is logged
    (once, for traces) and replaced by http/protobuf."""
    protocol = (_env(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf").lower()
    if protocol not in ("grpc", "http/protobuf"):
        if signal == "TRACES":
            _logger.warning("OTLP protocol %r is not supported; using http/protobuf", protocol)
        return "http/protobuf"
    return protocol


def _exporter_module(protocol: str, name: str) -> Any:
    """``opentelemetry.exporter.otlp.proto.<protocol>.<name>`` (``grpc`` or ``http``); a
    ``ConfigError`` naming the extra when it is not installed."""
    try:
        return importlib.import_module(f"opentelemetry.exporter.otlp.proto.{protocol}.{name}")
    except ImportError as exc:
        from agenteval_otel.errors import ConfigError  # loaded only to raise: capture stays light

        raise ConfigError(GRPC_EXTRA_HINT if protocol == "grpc" else HTTP_EXTRA_HINT) from exc


def _otlp_span_exporter(endpoint: str | None = None, *, grpc: bool, insecure: bool | None = None) -> SpanExporter:
    module = _exporter_module("grpc" if grpc else "http", "trace_exporter")
    exporter: SpanExporter = (module.OTLPSpanExporter(endpoint=endpoint, insecure=insecure) if grpc
                              else module.OTLPSpanExporter(endpoint=endpoint))
    return exporter


def _otlp_log_exporter(endpoint: str | None = None, *, grpc: bool, insecure: bool | None = None) -> LogRecordExporter:
    module = _exporter_module("grpc" if grpc else "http", "_log_exporter")
    exporter: LogRecordExporter = (module.OTLPLogExporter(endpoint=endpoint, insecure=insecure) if grpc
                                   else module.OTLPLogExporter(endpoint=endpoint))
    return exporter


def _otlp_exporter() -> SpanExporter | None:
    """The OTLP span exporter the environment asks for (it reads the other variables itself),
    failing fast while its endpoint is down."""
    endpoint = _env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
    if endpoint is None:
        return None
    grpc = _protocol("TRACES") == "grpc"
    return FailFastSpanExporter(_otlp_span_exporter(grpc=grpc), EndpointWatch(endpoint, grpc=grpc))


def _log_watch(endpoint: str, grpc: bool, beside: Sequence[SpanExporter]) -> EndpointWatch:
    """The watch of the span exporter among ``beside`` that sends to the same host and port as
    ``endpoint`` (one warning for both signals), else a watch of its own."""
    for exporter in beside:
        if isinstance(exporter, FailFastSpanExporter) and exporter.watch.watches(endpoint, grpc=grpc):
            return exporter.watch
    return EndpointWatch(endpoint, grpc=grpc)


def _otlp_log_exporter_from_env(beside: Sequence[SpanExporter]) -> LogRecordExporter | None:
    """The OTLP log exporter beside the environment's span exporter: the logs endpoint, else the
    common one, else the traces endpoint with ``/v1/logs`` in place of ``/v1/traces``; failing
    fast while its endpoint is down."""
    grpc = _protocol("LOGS") == "grpc"
    logs, common = _env("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"), _env("OTEL_EXPORTER_OTLP_ENDPOINT")
    if logs is not None or common is not None:
        endpoint = logs or common or ""
        url = endpoint if logs is not None or grpc else endpoint.rstrip("/") + "/v1/logs"
        exporter = _otlp_log_exporter(grpc=grpc)
    else:
        traces = _env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        if traces is None:
            return None
        if not grpc and traces.rstrip("/").endswith("/v1/traces"):
            traces = traces.rstrip("/")[: -len("/v1/traces")] + "/v1/logs"
        endpoint = url = traces
        exporter = _otlp_log_exporter(traces, grpc=grpc)
    return FailFastLogExporter(exporter, _log_watch(endpoint, grpc, beside), url)


def _log_failure(what: str, exc: Exception, consequence: str) -> None:
    """Log an exporter that could not be made: a missing extra in one line, anything else with
    its traceback. Set-up goes on without it."""
    from agenteval_otel.errors import ConfigError  # loaded only when something failed: capture stays light

    if isinstance(exc, ConfigError):
        _logger.error("%s: %s; %s", what, exc, consequence)
    else:
        _logger.error("%s; %s", what, consequence, exc_info=exc)


def _file_exporter(path: Path) -> SpanExporter | None:
    try:
        return OtlpJsonFileExporter(path)
    except OSError:
        _logger.error("cannot write traces to %s; spans will not be saved", path, exc_info=True)
        return None


def _policy(capture_content: bool | None, content_policy: ContentPolicy | None) -> ContentPolicy:
    policy = content_policy if content_policy is not None else ContentPolicy.from_env()
    if capture_content is not None:
        policy = dataclasses.replace(policy, capture=bool(capture_content))
    return policy


def _exporters(
    exporter: SpanExporter | None, traces_file: str | os.PathLike[str] | None, defaults: bool
) -> tuple[list[SpanExporter], Path | None]:
    """The exporters to use and the traces file among them (see the module docs)."""
    if exporter is not None:
        return [exporter], None
    if os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return [], None
    exporters: list[SpanExporter] = []
    otlp = None
    if defaults:
        try:
            otlp = _otlp_exporter()
        except Exception as exc:
            _log_failure("cannot create the OTLP exporter", exc, "spans will not be sent")
        if otlp is not None:
            exporters.append(otlp)
    if traces_file is None and not (defaults and otlp is None):
        return exporters, None
    path = Path(traces_file or os.environ.get(TRACES_FILE_ENV) or DEFAULT_TRACES_FILE)
    file_exporter = _file_exporter(path)
    if file_exporter is None:
        return exporters, None
    return [*exporters, file_exporter], path


def _logs_export_off() -> bool:
    """Whether ``OTEL_LOGS_EXPORTER=none`` turns log export off."""
    return (_env("OTEL_LOGS_EXPORTER") or "").lower() == "none"


def _log_exporters(exporters: Sequence[SpanExporter], traces_file: Path | None,
                   exporter_given: bool) -> tuple[list[LogRecordExporter], Path | None]:
    """The log exporters beside the span ``exporters`` (none beside an ``exporter=`` given), and
    the log file among them."""
    if exporter_given or _logs_export_off():
        return [], None
    found: list[LogRecordExporter] = []
    if any(not isinstance(e, OtlpJsonFileExporter) for e in exporters):
        try:
            otlp = _otlp_log_exporter_from_env(exporters)
        except Exception as exc:
            _log_failure("cannot create the OTLP log exporter", exc, "log records will not be sent")
            otlp = None
        if otlp is not None:
            found.append(otlp)
    if traces_file is None:
        return found, None
    path = logs_file_for(traces_file)
    try:
        found.append(OtlpJsonLogFileExporter(path))
    except OSError:
        _logger.error("cannot write log records to %s; they will not be saved", path, exc_info=True)
        return found, None
    return found, path


def _logger_provider(resource: Resource, exporters: Sequence[LogRecordExporter]) -> SdkLoggerProvider:
    provider = SdkLoggerProvider(resource=resource, shutdown_on_exit=False)
    for log_exporter in exporters:
        provider.add_log_record_processor(BatchLogRecordProcessor(log_exporter))
    return provider


def _set_global_logger_provider(provider: SdkLoggerProvider) -> None:
    if isinstance(_logs.get_logger_provider(), SdkLoggerProvider):
        _logger.info("a global logger provider is already set; log records go to it")
        return
    _logs.set_logger_provider(provider)


def configure(
    service_name: str | None = None,
    *,
    traces_file: str | os.PathLike[str] | None = None,
    exporter: SpanExporter | None = None,
    span_processors: Sequence[SpanProcessor] = (),
    tracer_provider: TracerProvider | None = None,
    capture_content: bool | None = None,
    content_policy: ContentPolicy | None = None,
    set_global: bool = True,
    instrument: Sequence[str] = (),
    conventions: Sequence[str] | None = None,
) -> TracingHandle:
    """Set up tracing for our decorators (and, with ``set_global``, for everything else).

    ``service_name``: the resource's ``service.name`` (else ``OTEL_SERVICE_NAME``).
    ``traces_file`` / ``exporter``: where spans go (see the module docs).
    ``span_processors``: more processors (e.g. a ``TrajectoryProcessor``), each isolated.
    ``tracer_provider``: use this provider instead of building one; only the ``exporter``,
    ``traces_file`` and ``span_processors`` given here are added to it.
    ``capture_content`` / ``content_policy``: the content policy. ``capture_content`` wins over
    the policy's ``capture``, which follows ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
    unless the policy was made with ``capture=True``/``False``: the environment's ``NO_CONTENT``
    holds for ``ContentPolicy(redact_patterns=...)`` and is overridden only explicitly.
    ``instrument``: libraries to instrument, by their names in the ``opentelemetry_instrumentor``
    entry points (``["openai", "langgraph"]``: install ``agenteval-instrumentation-<name>``), given
    ``capture_content`` when it is set (ours then trace where our steps go); a name of ours
    whose package is missing is logged and skipped, a name nobody registered is a ``ConfigError``.
    ``conventions``: the semantic conventions our steps are written in, ``("gen_ai",)`` or
    ``("gen_ai", "openinference")`` (OpenInference keys beside the GenAI ones, for Phoenix and
    Arize; see :mod:`~agenteval_otel.tracing.conventions`); ``None``: ``AGENTEVAL_CONVENTIONS``
    (comma-separated), else GenAI only. An unknown name is a ``ConfigError``.
    Arguments of the wrong type raise ``TypeError`` here, at set-up, never later.

    >>> handle = configure("my-agent", traces_file="/tmp/agenteval-doctest.jsonl", set_global=False)
    >>> handle.traces_file.name
    'agenteval-doctest.jsonl'
    >>> handle.shutdown(timeout=5)
    True
    """
    if exporter is not None and not isinstance(exporter, SpanExporter):
        raise TypeError(f"exporter must be a SpanExporter, not {type(exporter).__name__}")
    if not all(isinstance(p, SpanProcessor) for p in span_processors):
        raise TypeError("span_processors must be SpanProcessor instances")
    if tracer_provider is not None and not isinstance(tracer_provider, TracerProvider):
        raise TypeError(f"tracer_provider must be a TracerProvider, not {type(tracer_provider).__name__}")
    if content_policy is not None and not isinstance(content_policy, ContentPolicy):
        raise TypeError(f"content_policy must be a ContentPolicy, not {type(content_policy).__name__}")
    instrumentors_found = find_instrumentors(instrument)
    in_force = conventions_from_env() if conventions is None else conventions
    set_conventions(in_force)  # checked before anything is set up: a bad name changes nothing
    policy = _policy(capture_content, content_policy)
    exporters, file_path = _exporters(exporter, traces_file, defaults=tracer_provider is None)
    log_exporters, logs_path = _log_exporters(exporters, file_path, exporter is not None)

    resource = Resource.create({SERVICE_NAME: service_name} if service_name else {})
    if tracer_provider is None:
        tracer_provider = SdkTracerProvider(resource=resource, shutdown_on_exit=False)
    logger_provider = _logger_provider(getattr(tracer_provider, "resource", resource), log_exporters)
    processors = [BatchSpanProcessor(e) for e in exporters] + list(span_processors)
    if isinstance(tracer_provider, SdkTracerProvider):
        for processor in processors:
            tracer_provider.add_span_processor(IsolatedSpanProcessor(processor))
    elif processors:
        _logger.warning("%r takes no span processors; export is left to it", tracer_provider)

    set_active_policy(policy)
    route_to_provider(tracer_provider)
    if set_global:
        if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
            trace.set_tracer_provider(tracer_provider)
        else:
            _logger.info("a global tracer provider is already set; our steps use the configured one")
        _set_global_logger_provider(logger_provider)
    instrumentors = apply_instrumentors(instrumentors_found, capture_content=capture_content)
    return TracingHandle(tracer_provider, policy, tuple(exporters), file_path,
                         logger_provider=logger_provider, logs_file=logs_path, instrumentors=instrumentors)


_OTLP_SCHEMES = ("http", "https", "grpc", "grpcs")


def is_otlp_url(target: str) -> bool:
    """Whether ``target`` names an OTLP endpoint (``http(s)://`` or ``grpc(s)://``) rather than a file."""
    scheme, sep, _ = target.partition("://")
    return bool(sep) and scheme.lower() in _OTLP_SCHEMES


def _otlp_pair(url: str, *, logs: bool) -> tuple[SpanExporter, LogRecordExporter | None]:
    """OTLP exporters to ``url`` for spans and (with ``logs``) log records, failing fast while it
    is down (one watch for both): ``grpc(s)://host:port`` over gRPC; ``http(s)://`` over
    http/protobuf to ``/v1/traces`` and ``/v1/logs`` under it, or over gRPC when
    ``OTEL_EXPORTER_OTLP_PROTOCOL`` says ``grpc``."""
    scheme, _, rest = url.partition("://")
    scheme = scheme.lower()
    grpc = scheme in ("grpc", "grpcs") or _protocol("TRACES") == "grpc"
    if grpc:
        insecure = scheme in ("grpc", "http")
        traces_url = logs_url = rest.rstrip("/") if scheme in ("grpc", "grpcs") else url
        spans = _otlp_span_exporter(traces_url, grpc=True, insecure=insecure)
        log_records = _otlp_log_exporter(logs_url, grpc=True, insecure=insecure) if logs else None
    else:
        base = url.rstrip("/")
        for path in ("/v1/traces", "/v1/logs"):
            base = base.removesuffix(path)
        logs_url = base + "/v1/logs"
        spans = _otlp_span_exporter(base + "/v1/traces", grpc=False)
        log_records = _otlp_log_exporter(logs_url, grpc=False) if logs else None
    watch = EndpointWatch(url, grpc=grpc)
    return (FailFastSpanExporter(spans, watch),
            None if log_records is None else FailFastLogExporter(log_records, watch, logs_url))


def providers_for(
    target: str | os.PathLike[str],
    *,
    service_name: str = "agenteval",
    span_processor: Callable[[SpanExporter], SpanProcessor] | None = None,
    log_processor: Callable[[LogRecordExporter], LogRecordProcessor] | None = None,
    id_generator: IdGenerator | None = None,
) -> TracingHandle:
    """A tracer provider and a logger provider of the caller's own, exporting to ``target``: an
    OTLP endpoint URL (see :func:`is_otlp_url`; headers, timeout and TLS from the standard
    ``OTEL_EXPORTER_OTLP_*`` variables) or a file path, where spans are appended as OTLP/JSON lines
    and log records to the log file beside it (:func:`logs_file_for`). Neither becomes global nor
    receives our decorators' spans; the handle's ``shutdown`` flushes both within one deadline.

    ``span_processor`` builds the span processor around the exporter (default: the SDK's
    ``BatchSpanProcessor``), ``log_processor`` the log record processor (default: the SDK's
    ``BatchLogRecordProcessor``); ``id_generator`` gives the tracer provider's trace and span ids
    (default: random ones).

    Raises ``OSError`` when the file cannot be opened for appending, ``ConfigError`` when the
    target is OTLP over gRPC and the ``grpc`` extra is not installed.

    >>> handle = providers_for("/tmp/agenteval-doctest-results.jsonl")
    >>> handle.logs_file.name
    'agenteval-doctest-results.logs.jsonl'
    >>> handle.shutdown(timeout=5)
    True
    """
    resource = Resource.create({SERVICE_NAME: service_name})
    tracer_provider = SdkTracerProvider(resource=resource, shutdown_on_exit=False, id_generator=id_generator)
    text = os.fspath(target)
    traces_file = logs_file = None
    logs = not _logs_export_off()
    log_exporter: LogRecordExporter | None
    if is_otlp_url(text):
        span_exporter, log_exporter = _otlp_pair(text, logs=logs)
    else:
        traces_file = Path(text)
        span_exporter = OtlpJsonFileExporter(traces_file)
        logs_file = logs_file_for(text) if logs else None
        log_exporter = OtlpJsonLogFileExporter(logs_file) if logs_file is not None else None
    processor = BatchSpanProcessor(span_exporter) if span_processor is None else span_processor(span_exporter)
    tracer_provider.add_span_processor(IsolatedSpanProcessor(processor))
    if log_exporter is None:
        logger_provider = _logger_provider(resource, [])
    elif log_processor is None:
        logger_provider = _logger_provider(resource, [log_exporter])
    else:
        logger_provider = SdkLoggerProvider(resource=resource, shutdown_on_exit=False)
        logger_provider.add_log_record_processor(log_processor(log_exporter))
    return TracingHandle(tracer_provider, active_policy(), (span_exporter,), traces_file,
                         logger_provider=logger_provider, logs_file=logs_file)
