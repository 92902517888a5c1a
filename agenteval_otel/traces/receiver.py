"""``OtlpReceiver``: an OTLP/HTTP and OTLP/gRPC server that hands the spans (and log records) it
receives to a callback, within bounds.

OTLP/HTTP takes ``POST /v1/traces`` and ``POST /v1/logs`` with binary protobuf
(``application/x-protobuf``) or OTLP/JSON (``application/json``) bodies, gzip or not, and answers
in the request's encoding as the OTLP specification asks: an ``Export…ServiceResponse`` (with
``partial_success`` when some spans could not be read), or a ``google.rpc.Status`` with 400
(malformed body), 401 (no or wrong bearer token), 404, 405, 408 (the body did not arrive within
the request deadline), 413 (body over the limit, before or after decompression), 415 (media type
or content encoding), 429 (the consumer refused the batch) or 503 (too many requests in flight,
or stopping, or too many bytes of bodies in flight), both with ``Retry-After``. ``GET /health``
answers its state and counters as JSON (only its state to a client without the token, when a
token is set). OTLP/gRPC serves ``TraceService`` and ``LogsService`` with the same limits
(UNAUTHENTICATED, RESOURCE_EXHAUSTED, UNAVAILABLE with ``RetryInfo``, INVALID_ARGUMENT, INTERNAL).

The network edge is safe by default: loopback only unless told otherwise; the token is checked
before a body is read (over gRPC, before the request message is even taken from the call); a
connection that sends no request headers within ``header_timeout`` is closed, and at most
``max_connections`` are open at once (the others wait to be accepted). Memory stays bounded in
bytes: at most ``max_in_flight`` requests and ``max_in_flight_bytes`` of bodies (as received and
as decompressed) at once, none beyond ``max_body_bytes``; gzip bodies of several members are read
whole. Before a body is decoded its items are counted on the wire: more than
``max_spans_per_request`` spans (or log records), or ``max_objects_per_request`` messages or JSON
objects in all, is refused with 413, so a small body of many empty spans or attributes never
parses into gigabytes. The HTTP server needs the ``serve`` extra (``pip install
"agenteval-otel[serve]"``), the gRPC server the ``grpc`` extra (``grpcio``, imported only when a
``grpc_port`` is given).

>>> received = []
>>> receiver = OtlpReceiver(received.extend, http_port=0).start()
>>> import urllib.request
>>> urllib.request.urlopen(f"http://127.0.0.1:{receiver.http_port}/health").status
200
>>> receiver.stop(2.0)
True
"""

from __future__ import annotations

import asyncio
import errno
import functools
import hmac
import logging
import socket
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

import orjson
from google.protobuf import json_format
from google.protobuf.duration_pb2 import Duration
from google.protobuf.message import Message
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from agenteval_otel.errors import ConfigError
from agenteval_otel.traces._export_scan import json_over_limits, proto_over_limits
from agenteval_otel.traces.otlp_export import Encoding, ExportBatch, decode_logs_export, decode_trace_export
from agenteval_otel.trajectory.logs import LogRecord
from agenteval_otel.trajectory.spans import SpanRecord

if TYPE_CHECKING:
    import grpc

__all__ = ["DEFAULT_MAX_BODY_BYTES", "OtlpReceiver", "ReceiverCounters"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

Signal = Literal["traces", "logs"]
SERVE_EXTRA_HINT = 'the OTLP/HTTP receiver needs uvicorn: pip install "agenteval-otel[serve]"'
GRPC_EXTRA_HINT = "the OTLP/gRPC receiver needs the 'grpc' extra: pip install 'agenteval-otel[grpc]'"
DEFAULT_MAX_BODY_BYTES = 20 * 1024 * 1024  # the OTLP specification's recommended limit
DEFAULT_MAX_SPANS_PER_REQUEST = 65_536
DEFAULT_MAX_OBJECTS_PER_REQUEST = 524_288
_INFLATE_STEP = 1024 * 1024
_GRPC_SERVICES: dict[Signal, str] = {"traces": "opentelemetry.proto.collector.trace.v1.TraceService",
                                     "logs": "opentelemetry.proto.collector.logs.v1.LogsService"}
_MEDIA_TYPES: dict[str, Encoding] = {"application/x-protobuf": "proto", "application/json": "json"}
_CONTENT_TYPES: dict[Encoding, bytes] = {"proto": b"application/x-protobuf", "json": b"application/json"}
_GRPC_CODES = {400: 3, 401: 16, 404: 5, 405: 12, 408: 4, 413: 8, 415: 3, 429: 8, 500: 13, 503: 14}

SpanCallback = Callable[[list[SpanRecord]], "bool | None"]
LogCallback = Callable[[list[LogRecord]], "bool | None"]
_Send = Callable[[dict[str, Any]], Awaitable[None]]
_Receive = Callable[[], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ReceiverCounters:
    """What the receiver has done since it started (a snapshot)."""

    requests: int = 0
    spans_received: int = 0
    spans_rejected: int = 0
    logs_received: int = 0
    logs_rejected: int = 0
    refused_overload: int = 0  # 429 / 503 / RESOURCE_EXHAUSTED / UNAVAILABLE
    refused_too_large: int = 0  # 413
    refused_unauthorized: int = 0  # 401 / UNAUTHENTICATED
    refused_bad_request: int = 0  # 400 / 404 / 405 / 415 / INVALID_ARGUMENT
    timed_out: int = 0  # 408
    headers_timed_out: int = 0  # connections closed for sending no request headers within header_timeout
    failed: int = 0  # the callback raised: 500 / INTERNAL

    def as_dict(self) -> dict[str, int]:
        """The counters by name."""
        return asdict(self)


class _Refused(Exception):
    """A request answered with an error status (HTTP status, message, ``Retry-After``)."""

    def __init__(self, status: int, message: str, counter: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.counter, self.retry_after = status, message, counter, retry_after


class OtlpReceiver:
    """An OTLP receiver on ``host``: OTLP/HTTP on ``http_port``, OTLP/gRPC on ``grpc_port``.

    ``on_spans`` gets each request's spans (``on_logs`` its log records; without it the logs
    endpoints answer 404 / UNIMPLEMENTED) on a worker thread; returning ``False`` refuses the
    batch (the sender is told to retry after ``retry_after`` seconds), raising answers 500.

    Args:
        host: the address to bind; 127.0.0.1 (loopback only) by default.
        http_port, grpc_port: ``None`` turns either off; ``0`` binds a free port, read back from
            the ``http_port`` / ``grpc_port`` properties after ``start()``.
        token: when set, every request needs ``Authorization: Bearer <token>``, checked before
            its body is read; ``GET /health`` then shows its counters only to holders of it.
        max_body_bytes: the largest body, compressed or decompressed (20 MiB).
        max_spans_per_request: the most spans (or log records) one request may hold (65,536),
            counted on the wire before decoding; more is refused with 413 / RESOURCE_EXHAUSTED.
        max_objects_per_request: the most messages (spans, attributes, values, events...) of a
            protobuf body, or objects and arrays of a JSON one, counted likewise (524,288): what
            bounds the memory one request decodes into, a few hundred bytes per object.
        max_in_flight: the most requests read and handled at once (16); more are answered 503.
        max_in_flight_bytes: the most bytes of bodies, as received and as decompressed, held by
            all requests at once (4 x ``max_body_bytes`` by default, never less than it); a
            request that would pass it is answered 503 with ``Retry-After``, before its body is
            read when it declares its length.
        request_timeout: the seconds a body may take to arrive (10); later is 408.
        header_timeout: the seconds a connection may take to send complete request headers,
            from being accepted or from the first byte of its next request (5); later it is
            closed. Over gRPC, the seconds allowed for the connection's handshake.
        max_connections: the most connections open at once on each protocol (128); over HTTP
            further ones wait to be accepted until one closes, over gRPC they are closed.
        retry_after: the seconds a refused sender is told to wait (1).
        workers: the threads that decode and deliver (4).
        health: adds its document (e.g. the consumer's counters) to ``GET /health`` under
            ``"consumer"``; when that document's ``"status"`` is ``"failing"``, ``/health``
            answers 503 with status ``"failing"`` (to everyone: a load balancer needs no token).
    """

    def __init__(
        self,
        on_spans: SpanCallback,
        on_logs: LogCallback | None = None,
        *,
        host: str = "127.0.0.1",
        http_port: int | None = 4318,
        grpc_port: int | None = None,
        token: str | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_spans_per_request: int = DEFAULT_MAX_SPANS_PER_REQUEST,
        max_objects_per_request: int = DEFAULT_MAX_OBJECTS_PER_REQUEST,
        max_in_flight: int = 16,
        max_in_flight_bytes: int | None = None,
        request_timeout: float = 10.0,
        header_timeout: float = 5.0,
        max_connections: int = 128,
        retry_after: int = 1,
        workers: int = 4,
        health: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        if http_port is None and grpc_port is None:
            raise ValueError("OtlpReceiver needs an http_port, a grpc_port or both")
        in_flight_bytes = 4 * max_body_bytes if max_in_flight_bytes is None else max_in_flight_bytes
        for name, value in (("max_body_bytes", max_body_bytes), ("max_in_flight", max_in_flight),
                            ("max_spans_per_request", max_spans_per_request),
                            ("max_objects_per_request", max_objects_per_request),
                            ("max_connections", max_connections), ("workers", workers),
                            ("retry_after", retry_after)):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        if in_flight_bytes < max_body_bytes:
            raise ValueError(f"max_in_flight_bytes ({in_flight_bytes}) must be at least max_body_bytes "
                             f"({max_body_bytes}), or no body of the largest size could ever be read")
        for name, seconds in (("request_timeout", request_timeout), ("header_timeout", header_timeout)):
            if seconds <= 0:
                raise ValueError(f"{name} must be positive, got {seconds}")
        if http_port is not None:
            _uvicorn()  # fail now, not at start(), when the serve extra is missing
        if grpc_port is not None:
            _grpc()  # likewise for the grpc extra (ConfigError)
        self._on_spans = on_spans
        self._on_logs = on_logs
        self._health_of_consumer = health
        self._host = host
        self._requested_ports = (http_port, grpc_port)
        self._token = token.encode() if token else None
        self._max_body = max_body_bytes
        self._max_items = max_spans_per_request
        self._max_objects = max_objects_per_request
        self._max_in_flight = max_in_flight
        self._max_in_flight_bytes = in_flight_bytes
        self._timeout = request_timeout
        self._header_timeout = header_timeout
        self._max_connections = max_connections
        self._retry_after = retry_after
        self._workers = workers
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(ReceiverCounters().as_dict(), 0)
        self._in_flight = 0
        self._bytes_in_flight = 0
        self._state: Literal["new", "serving", "stopping", "stopped"] = "new"
        self._pool: ThreadPoolExecutor | None = None
        self._http: Any = None  # _http_server.OtlpHttpServer
        self._http_thread: threading.Thread | None = None
        self._grpc: grpc.Server | None = None
        self._grpc_pool: ThreadPoolExecutor | None = None
        self._ports: tuple[int | None, int | None] = (None, None)

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> OtlpReceiver:
        """Bind the ports and serve in background threads; ``OSError`` naming the port when one
        cannot be bound (taken by another process or another receiver: ports are never shared)."""
        with self._lock:
            if self._state != "new":
                raise RuntimeError(f"OtlpReceiver.start(): the receiver is {self._state}")
            self._state = "serving"
        self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="otlp-receiver")
        http_port, grpc_port = self._requested_ports
        try:
            bound_grpc = self._start_grpc(grpc_port) if grpc_port is not None else None
            bound_http = self._start_http(http_port) if http_port is not None else None
        except BaseException:
            self.stop(2.0)
            raise
        self._ports = (bound_http, bound_grpc)
        logger.info("OTLP receiver on %s: http %s, grpc %s", self._host, bound_http, bound_grpc)
        return self

    def stop(self, timeout: float | None = 5.0) -> bool:
        """Stop accepting, let requests in flight finish, and shut down within ``timeout`` seconds
        overall (``None``: 5); ``True`` when everything stopped in time. Idempotent."""
        timeout = 5.0 if timeout is None else max(timeout, 0.0)
        deadline = time.monotonic() + timeout
        with self._lock:
            if self._state in ("stopping", "stopped"):
                return self._state == "stopped"
            self._state = "stopping"
        grace = timeout / 2
        grpc_done = self._grpc.stop(grace) if self._grpc is not None else None
        clean = True
        if self._http is not None and self._http_thread is not None:
            self._http.config.timeout_graceful_shutdown = grace
            self._http.should_exit = True
            self._http_thread.join(max(deadline - time.monotonic() - 0.2, 0.0))
            if self._http_thread.is_alive():
                self._http.force_exit = True
                self._http_thread.join(max(deadline - time.monotonic(), 0.0))
            clean = not self._http_thread.is_alive()
        if grpc_done is not None:
            clean = grpc_done.wait(max(deadline - time.monotonic(), 0.0)) and clean
        for pool in (self._pool, self._grpc_pool):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            self._state = "stopped" if clean else "stopping"
        if not clean:
            logger.warning("OTLP receiver did not stop within %.1f s", timeout)
        return clean

    def __enter__(self) -> OtlpReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def http_port(self) -> int | None:
        """The bound OTLP/HTTP port (``None`` before ``start()`` or when HTTP is off)."""
        return self._ports[0]

    @property
    def grpc_port(self) -> int | None:
        """The bound OTLP/gRPC port (``None`` before ``start()`` or when gRPC is off)."""
        return self._ports[1]

    @property
    def counters(self) -> ReceiverCounters:
        """A snapshot of what the receiver has done."""
        with self._lock:
            return ReceiverCounters(**self._counts)

    # --- shared by both transports ---------------------------------------------------------------

    def _count(self, **increments: int) -> None:
        with self._lock:
            for name, value in increments.items():
                self._counts[name] += value

    def _admit(self) -> None:
        """Take one in-flight slot, or refuse with 503."""
        with self._lock:
            if self._state != "serving":
                raise _Refused(503, "the receiver is shutting down", "refused_overload", self._retry_after)
            if self._in_flight >= self._max_in_flight:
                raise _Refused(503, f"{self._in_flight} requests in flight, the limit", "refused_overload",
                               self._retry_after)
            self._in_flight += 1

    def _release(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _take_bytes(self, held: list[int], size: int) -> None:
        """Add ``size`` bytes to what one request holds (``held[0]``) of the in-flight byte budget,
        or refuse with 503 when they would pass it."""
        with self._lock:
            if self._bytes_in_flight + size > self._max_in_flight_bytes:
                raise _Refused(503, f"{self._bytes_in_flight} bytes of request bodies in flight: {size} more "
                                    f"would pass the limit of {self._max_in_flight_bytes}", "refused_overload",
                               self._retry_after)
            self._bytes_in_flight += size
        held[0] += size

    def _return_bytes(self, held: list[int]) -> None:
        with self._lock:
            self._bytes_in_flight -= held[0]
        held[0] = 0

    def _authorized(self, header: str | bytes | None) -> bool:
        if self._token is None:
            return True
        value = header.encode() if isinstance(header, str) else (header or b"")
        scheme, _, credentials = value.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self._token)

    def _handle(self, signal: Signal, body: bytes | bytearray, encoding: Encoding) -> bytes:
        """Count what the body holds, decode, deliver and encode the response (on a worker thread)."""
        try:
            over = (proto_over_limits(body, signal, max_items=self._max_items, max_objects=self._max_objects)
                    if encoding == "proto" else json_over_limits(body, max_objects=self._max_objects))
            if over is not None:
                raise _Refused(413, over, "refused_too_large")
            batch: ExportBatch[Any] = (decode_trace_export if signal == "traces" else decode_logs_export)(
                body, encoding)  # type: ignore[arg-type]  # bytearray reads as bytes
        except ValueError as exc:
            raise _Refused(400, f"the body is not an OTLP {signal} export request: {exc}",
                           "refused_bad_request") from None
        if len(batch.items) + batch.rejected > self._max_items:  # JSON: counted once parsed
            raise _Refused(413, f"the request holds more than {self._max_items} "
                                f"{'spans' if signal == 'traces' else 'log records'}, the limit per request",
                           "refused_too_large")
        self._deliver(signal, batch)
        return _encode(_export_response(signal, batch), encoding)

    def _deliver(self, signal: Signal, batch: ExportBatch[Any]) -> None:
        """Hand a decoded batch to its callback (on a worker thread); refuse when it says no."""
        if signal == "traces":
            self._count(spans_rejected=batch.rejected)
            callback: Callable[[list[Any]], bool | None] | None = self._on_spans
        else:
            self._count(logs_rejected=batch.rejected)
            callback = self._on_logs
        if batch.items and callback is not None:
            try:
                accepted = callback(batch.items)
            except Exception:  # noqa: BLE001 - the consumer's failure is answered, never raised into the server
                logger.exception("OTLP receiver: the %s callback failed", signal)
                raise _Refused(500, f"the {signal} consumer failed", "failed") from None
            if accepted is False:
                raise _Refused(429, f"the {signal} consumer is over its bounds; retry later", "refused_overload",
                               self._retry_after)
        self._count(**{"spans_received" if signal == "traces" else "logs_received": len(batch.items)})

    # --- OTLP/HTTP -------------------------------------------------------------------------------

    def _start_http(self, port: int) -> int:
        uvicorn = _uvicorn()
        from agenteval_otel.traces._http_server import OtlpHttpServer

        family = socket.getaddrinfo(self._host, port, type=socket.SOCK_STREAM)[0][0]
        try:
            sock = socket.create_server((self._host, port), family=family, reuse_port=False)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot bind OTLP/HTTP on {self._host}:{port} ({exc.strerror})") from None
        config = uvicorn.Config(
            self._asgi, log_config=None, access_log=False, lifespan="off", loop="asyncio", http="h11",
            ws="none", interface="asgi3", proxy_headers=False, server_header=False, timeout_keep_alive=5,
            h11_max_incomplete_event_size=64 * 1024)
        self._http = OtlpHttpServer(config, sock, max_connections=self._max_connections,
                                    header_timeout=self._header_timeout,
                                    on_header_timeout=lambda: self._count(headers_timed_out=1))
        self._http_thread = threading.Thread(target=self._http.run, name="otlp-receiver-http", daemon=True)
        self._http_thread.start()
        deadline = time.monotonic() + 10.0
        while not self._http.started:
            if not self._http_thread.is_alive() or time.monotonic() > deadline:
                sock.close()
                raise OSError(f"the OTLP/HTTP server on {self._host}:{port} did not start")
            time.sleep(0.01)
        return int(sock.getsockname()[1])

    async def _asgi(self, scope: dict[str, Any], receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http":
            return
        headers = {name.decode("latin-1").lower(): value for name, value in scope["headers"]}
        media = headers.get("content-type", b"").decode("latin-1").split(";")[0].strip().lower()
        encoding: Encoding = _MEDIA_TYPES.get(media, "proto")
        authorized = self._authorized(headers.get("authorization"))
        self._count(requests=1)
        try:
            if scope["path"] == "/health":
                await self._health(scope["method"], send, authorized)
                return
            signal = self._route(scope["path"], scope["method"])
            if not authorized:
                raise _Refused(401, "a valid bearer token is required", "refused_unauthorized")
            coding, length = self._check_body_headers(headers, media)
            self._admit()
            held = [0]
            try:
                if length is not None:
                    self._take_bytes(held, length)  # before a byte of the body is read
                body = await self._body(receive, length, held)

                def decompress_and_handle() -> bytes:  # on a worker thread: inflating is no work for the loop
                    plain = (_gunzip(body, self._max_body, functools.partial(self._take_bytes, held))
                             if coding == "gzip" else body)
                    return self._handle(signal, plain, _MEDIA_TYPES[media])

                assert self._pool is not None
                response = await asyncio.get_running_loop().run_in_executor(self._pool, decompress_and_handle)
            finally:
                self._return_bytes(held)
                self._release()
        except _Refused as refused:
            self._count(**{refused.counter: 1})
            await self._respond_status(send, refused, encoding)
            return
        await _respond(send, 200, response, _CONTENT_TYPES[encoding])

    def _route(self, path: str, method: str) -> Signal:
        signal: Signal | None = {"/v1/traces": "traces", "/v1/logs": "logs"}.get(path)  # type: ignore[assignment]
        if signal is None or (signal == "logs" and self._on_logs is None):
            raise _Refused(404, f"no OTLP endpoint at {path}; this receiver takes POST /v1/traces"
                                + (" and /v1/logs" if self._on_logs is not None else ""), "refused_bad_request")
        if method != "POST":
            raise _Refused(405, f"{path} takes POST, not {method}", "refused_bad_request")
        return signal

    def _check_body_headers(self, headers: dict[str, bytes], media: str) -> tuple[str, int | None]:
        """The body's content coding and declared length, once its media type, coding and length
        are acceptable."""
        if media not in _MEDIA_TYPES:
            raise _Refused(415, f"unsupported Content-Type {media or '(none)'!r}; expected "
                                "application/x-protobuf or application/json", "refused_bad_request")
        coding = headers.get("content-encoding", b"").decode("latin-1").strip().lower()
        if coding not in ("", "identity", "gzip"):
            raise _Refused(415, f"unsupported Content-Encoding {coding!r}; expected gzip or none",
                           "refused_bad_request")
        declared = headers.get("content-length")
        length = int(declared) if declared is not None and declared.isdigit() else None
        if length is not None and length > self._max_body:
            raise _Refused(413, f"the body ({length} bytes) is over the limit of {self._max_body} bytes",
                           "refused_too_large")
        return coding, length

    async def _body(self, receive: _Receive, length: int | None, held: list[int]) -> bytearray:
        """The request body as sent, within the size limit and the request deadline."""
        try:
            return await asyncio.wait_for(self._read(receive, length, held), self._timeout)
        except asyncio.TimeoutError:
            raise _Refused(408, f"the body did not arrive within {self._timeout:g} s", "timed_out") from None

    async def _read(self, receive: _Receive, length: int | None, held: list[int]) -> bytearray:
        """The body as it arrives: into a buffer of the declared length (taken from the budget
        already), else growing, each chunk taken from the budget before it is kept."""
        body = bytearray(length or 0)
        view = memoryview(body) if length is not None else None  # a growing body must have no view
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Refused(400, "the client disconnected before the body ended", "refused_bad_request")
            chunk = message.get("body", b"")
            if view is not None:  # h11 never lets more than the declared length through
                view[size:size + len(chunk)] = chunk
            else:
                if size + len(chunk) > self._max_body:
                    raise _Refused(413, f"the body is over the limit of {self._max_body} bytes",
                                   "refused_too_large")
                self._take_bytes(held, len(chunk))
                body += chunk
            size += len(chunk)
            if not message.get("more_body", False):
                if view is not None:
                    view.release()
                return body

    async def _health(self, method: str, send: _Send, authorized: bool) -> None:
        if method not in ("GET", "HEAD"):
            raise _Refused(405, f"/health takes GET, not {method}", "refused_bad_request")
        with self._lock:
            state, in_flight = self._state, self._in_flight
        consumer: dict[str, Any] | None = None
        if self._health_of_consumer is not None:
            try:
                consumer = self._health_of_consumer()
            except Exception:  # noqa: BLE001 - health must answer whatever the consumer does
                logger.warning("OtlpReceiver: the health callback raised", exc_info=True)
        failing = state == "serving" and consumer is not None and consumer.get("status") == "failing"
        document: dict[str, Any] = {"status": "failing" if failing else "ok" if state == "serving" else state}
        if authorized:
            document.update(status="failing" if failing else state, in_flight=in_flight,
                            counters=self.counters.as_dict())
            if consumer is not None:
                document["consumer"] = consumer
        healthy = state == "serving" and not failing
        await _respond(send, 200 if healthy else 503, orjson.dumps(document), b"application/json")

    async def _respond_status(self, send: _Send, refused: _Refused, encoding: Encoding) -> None:
        extra: list[tuple[bytes, bytes]] = []
        if refused.retry_after is not None:
            extra.append((b"retry-after", str(refused.retry_after).encode()))
        if refused.status == 401:
            extra.append((b"www-authenticate", b"Bearer"))
        if refused.status == 405:
            extra.append((b"allow", b"POST"))
        status = Status(code=_GRPC_CODES.get(refused.status, 2), message=refused.message)
        await _respond(send, refused.status, _encode(status, encoding), _CONTENT_TYPES[encoding], extra)

    # --- OTLP/gRPC -------------------------------------------------------------------------------

    def _start_grpc(self, port: int) -> int:
        grpc = _grpc()
        self._grpc_pool = ThreadPoolExecutor(self._workers, thread_name_prefix="otlp-receiver-grpc")
        self._grpc = grpc.server(
            self._grpc_pool,
            maximum_concurrent_rpcs=self._max_in_flight,
            options=[("grpc.max_receive_message_length", self._max_body),
                     ("grpc.max_send_message_length", 4 * 1024 * 1024),
                     ("grpc.so_reuseport", 0),  # a taken port is an error, not a port silently shared
                     ("grpc.server_handshake_timeout_ms", int(self._header_timeout * 1000)),
                     ("grpc.max_allowed_incoming_connections", self._max_connections)],
        )
        # Export takes the request's raw bytes, and as a stream: the token is checked before the
        # message is taken from the call, then the body is counted and decoded as over HTTP.
        signals: tuple[Signal, ...] = ("traces", "logs") if self._on_logs is not None else ("traces",)
        self._grpc.add_generic_rpc_handlers(tuple(
            grpc.method_handlers_generic_handler(_GRPC_SERVICES[signal], {"Export": grpc.stream_unary_rpc_method_handler(
                functools.partial(self._grpc_export, signal))}) for signal in signals))
        host = f"[{self._host}]" if ":" in self._host else self._host
        try:
            bound = self._grpc.add_insecure_port(f"{host}:{port}")
        except RuntimeError as exc:
            raise OSError(errno.EADDRINUSE, f"cannot bind OTLP/gRPC on {host}:{port} ({exc})") from None
        if not bound:
            raise OSError(errno.EADDRINUSE, f"cannot bind OTLP/gRPC on {host}:{port}")
        self._grpc.start()
        return int(bound)

    def _grpc_export(self, signal: Signal, messages: Iterator[bytes], context: grpc.ServicerContext) -> bytes:
        """Serve one gRPC ``Export`` call: its answer, serialised."""
        self._count(requests=1)
        try:
            if not self._authorized(dict(context.invocation_metadata()).get("authorization")):
                raise _Refused(401, "a valid bearer token is required", "refused_unauthorized")
            self._admit()
            held = [0]
            try:
                body = next(messages, None)
                if body is None:  # grpcio has answered already (over max_receive_message_length), or none came
                    return b""  # an empty ExportTraceServiceResponse / ExportLogsServiceResponse
                self._take_bytes(held, len(body))
                return self._handle(signal, body, "proto")
            finally:
                self._return_bytes(held)
                self._release()
        except _Refused as refused:
            self._count(**{refused.counter: 1})
            grpc = _grpc()
            if refused.retry_after is not None:
                retry = RetryInfo(retry_delay=Duration(seconds=refused.retry_after))
                context.set_trailing_metadata((("google.rpc.retryinfo-bin", retry.SerializeToString()),))
            context.abort(_grpc_status(grpc, refused.status), refused.message)
            raise  # abort raises; this line is for the type checker


# --- encoding -----------------------------------------------------------------------------------


def _uvicorn() -> Any:
    # uvicorn (with h11): a small, widely deployed asyncio HTTP server, pure Python, two dependencies.
    try:
        import uvicorn
    except ImportError:
        raise ImportError(SERVE_EXTRA_HINT) from None
    return uvicorn


def _grpc() -> Any:
    """``grpc``, imported when the gRPC server is asked for; ``ConfigError`` naming the extra without it."""
    try:
        import grpc
    except ImportError as exc:
        raise ConfigError(GRPC_EXTRA_HINT) from exc
    return grpc


def _grpc_status(grpc: Any, http_status: int) -> Any:
    """The ``grpc.StatusCode`` that answers what HTTP answers with ``http_status``."""
    code = _GRPC_CODES.get(http_status, 13)
    return next(status for status in grpc.StatusCode if status.value[0] == code)


def _gunzip(body: bytes | bytearray, limit: int, take: Callable[[int], None]) -> bytearray:
    """``body`` gunzipped, every member of it (RFC 1952 allows several), never materialising more
    than ``limit`` + 1 bytes; ``take`` is told of every step of output before it is kept."""
    data = bytearray()
    rest: bytes | bytearray = body
    while True:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while True:
            wanted = min(_INFLATE_STEP, limit + 1 - len(data))
            try:
                step = inflater.decompress(rest, wanted)
            except zlib.error as exc:
                raise _Refused(400, f"the gzip body cannot be decompressed ({exc})", "refused_bad_request") from None
            take(len(step))
            data += step
            if len(data) > limit:
                raise _Refused(413, f"the decompressed body is over the limit of {limit} bytes",
                               "refused_too_large")
            rest = inflater.unconsumed_tail
            if inflater.eof or (not rest and len(step) < wanted):  # a full step may leave output pending
                break
        if not inflater.eof:
            raise _Refused(400, "the gzip body is truncated", "refused_bad_request")
        rest = inflater.unused_data
        if not rest:
            return data
        if not rest.startswith(b"\x1f\x8b"):
            raise _Refused(400, f"{len(rest)} bytes after the end of the gzip data are not a gzip member",
                           "refused_bad_request")


def _export_response(signal: Signal, batch: ExportBatch[Any]) -> Message:
    if signal == "traces":
        if not batch.rejected:
            return trace_service_pb2.ExportTraceServiceResponse()
        return trace_service_pb2.ExportTraceServiceResponse(partial_success=trace_service_pb2.ExportTracePartialSuccess(
            rejected_spans=batch.rejected, error_message=batch.error_message))
    if not batch.rejected:
        return logs_service_pb2.ExportLogsServiceResponse()
    return logs_service_pb2.ExportLogsServiceResponse(partial_success=logs_service_pb2.ExportLogsPartialSuccess(
        rejected_log_records=batch.rejected, error_message=batch.error_message))


def _encode(message: Message, encoding: Encoding) -> bytes:
    if encoding == "proto":
        return bytes(message.SerializeToString())
    return str(json_format.MessageToJson(message, indent=None)).encode()


async def _respond(send: _Send, status: int, body: bytes, content_type: bytes,
                   extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
