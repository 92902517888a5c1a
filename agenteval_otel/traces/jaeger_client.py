"""``JaegerClient``: traces from the Jaeger query service's HTTP API, over a transport you can swap.

The client builds the request and turns the answer into ``SpanRecord``s; a ``Transport`` does the
HTTP. The default ``UrllibTransport`` talks to the network with ``urllib``; ``MockTransport``
answers from a function, so tests (ours and yours) need no server and no monkeypatching, as with
httpx's ``MockTransport``.

>>> def jaeger(request: HttpRequest) -> HttpResponse:
...     span = {"traceID": "2be38093ead7a083", "spanID": "7c1c7c1c7c1c7c1c", "operationName": "invoke_agent"}
...     return HttpResponse(200, json.dumps({"data": [{"traceID": span["traceID"], "spans": [span]}]}).encode())
>>> client = JaegerClient("http://jaeger:16686", transport=MockTransport(jaeger))
>>> [record.name for record in client.find_traces("weather-agent")]
['invoke_agent']
"""

from __future__ import annotations

import http
import http.client
import json
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol, runtime_checkable

import orjson

from agenteval_otel.errors import TraceReadError, mask_url, mask_url_in  # mask_url: re-exported
from agenteval_otel.traces._jsonfile import MALFORMED, malformed_reason
from agenteval_otel.traces.jaeger_json import EXPECTED, records_from_jaeger
from agenteval_otel.trajectory.spans import SpanRecord, normalize_trace_id

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "HttpRequest",
    "HttpResponse",
    "JaegerClient",
    "MockTransport",
    "Transport",
    "UrllibTransport",
    "client_transport",
    "mask_url",
]


DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024
_CHUNK_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One HTTP request the client asks a transport to send."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class HttpResponse:
    """What the server answered, whatever the status (an HTTP error status is a response too).

    ``reason`` is the status line's phrase; when empty the standard phrase for ``status`` is used.
    """

    status: int
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    reason: str = ""


@runtime_checkable
class Transport(Protocol):
    """Sends one request and returns the response, for every status.

    Raises ``OSError`` (``urllib.error.URLError`` is one, as are ``ConnectionError`` and
    ``TimeoutError``) when no response arrives, which the client reports as a ``TraceReadError``;
    a transport may raise ``TraceReadError`` itself for a reply that is broken (not HTTP, cut
    short, too large, too slow).
    """

    def handle_request(self, request: HttpRequest) -> HttpResponse:
        """Send ``request`` and return the response."""
        ...


class _Deadline:
    """One request's deadline: when it passes, the request's sockets are shut down, which ends
    any read still waiting on them (so a server that trickles bytes never holds a request)."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket | None) -> None:
        """Shut ``sock`` down when the deadline passes (at once if it has)."""
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def cancel(self) -> None:
        """The request is over: no shutdown."""
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed
        pass


def _opener(deadline: _Deadline) -> urllib.request.OpenerDirector:
    """A urllib opener (redirects, proxies) whose connections are watched by ``deadline``."""

    class WatchedHTTPConnection(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    class WatchedHTTPSConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    class HTTPHandler(urllib.request.HTTPHandler):
        def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
            return super().do_open(WatchedHTTPConnection, req, **kwargs)

    class HTTPSHandler(urllib.request.HTTPSHandler):
        def do_open(self, http_class: Any, req: Any, **kwargs: Any) -> Any:
            return super().do_open(WatchedHTTPSConnection, req, **kwargs)

    return urllib.request.build_opener(HTTPHandler(), HTTPSHandler(), _SameOriginCredentials())


_CREDENTIAL_HEADERS = ("Authorization", "Proxy-authorization", "Cookie", "X-scope-orgid", "Api_key")


class _SameOriginCredentials(urllib.request.HTTPRedirectHandler):
    """Follows redirects, but sends credential headers to the origin they were meant for only:
    a redirect to another scheme, host or port drops them (as browsers and ``requests`` do)."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(newurl) != _origin(req.full_url):
            for name in _CREDENTIAL_HEADERS:
                new.remove_header(name)
        return new


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parsed = urllib.parse.urlsplit(url)
    return parsed.scheme, parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80)


class UrllibTransport:
    """The default transport: real HTTP(S) with ``urllib`` (redirects are followed).

    ``timeout`` (seconds) is one deadline for the whole request: connecting, the headers and the
    whole body. ``max_body_bytes`` bounds the body: reading stops as soon as it is passed (at
    once, when the server announces a longer body).
    """

    def __init__(self, timeout: float = 10.0, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if max_body_bytes < 1:
            raise ValueError("max_body_bytes must be at least 1")
        self.timeout = timeout
        self.max_body_bytes = max_body_bytes

    def handle_request(self, request: HttpRequest) -> HttpResponse:
        """Send ``request``; an HTTP error status comes back as a response, not an exception.

        Raises ``OSError`` when the server cannot be reached, and ``TraceReadError`` (naming the
        URL) when the reply is not HTTP, is cut short, is over ``max_body_bytes`` or is not
        complete within ``timeout``.
        """
        outgoing = urllib.request.Request(request.url, headers=dict(request.headers), method=request.method)
        deadline = _Deadline(self.timeout)
        try:
            try:
                response = _opener(deadline).open(outgoing, timeout=self.timeout)
            except urllib.error.HTTPError as exc:  # an error status is a response too
                response = exc
            with response:
                body = self._body(response, request.url)
                headers = dict(response.headers.items()) if response.headers else {}
                return HttpResponse(response.status, body, headers, response.reason or "")
        except (OSError, http.client.HTTPException, TraceReadError) as exc:
            if deadline.expired:  # whatever the shut-down sockets made of it
                raise TraceReadError(f"{request.url}: no complete response within {self.timeout:g} s") from None
            if isinstance(exc, TraceReadError):
                raise
            if isinstance(exc, http.client.IncompleteRead):
                raise TraceReadError(f"{request.url}: the response body was cut short ({exc!r})") from None
            if isinstance(exc, http.client.HTTPException):
                raise TraceReadError(f"{request.url}: not a valid HTTP response ({_shortened(repr(exc))})") from None
            raise
        finally:
            deadline.cancel()

    def _body(self, response: Any, url: str) -> bytes:
        """The body, read in chunks up to ``max_body_bytes``."""
        announced = str(response.headers.get("Content-Length") or "").strip() if response.headers else ""
        length = int(announced) if announced.isdigit() else None
        if length is not None and length > self.max_body_bytes:
            raise TraceReadError(
                f"{url}: the response body ({length} bytes announced) is over the limit of "
                f"{self.max_body_bytes} bytes (max_body_bytes)")
        chunks: list[bytes] = []
        size = 0
        while chunk := response.read(min(_CHUNK_BYTES, self.max_body_bytes + 1 - size)):
            size += len(chunk)
            if size > self.max_body_bytes:
                raise TraceReadError(
                    f"{url}: the response body is over the limit of {self.max_body_bytes} bytes (max_body_bytes)")
            chunks.append(chunk)
        if length is not None and size < length:
            raise TraceReadError(f"{url}: the response body was cut short ({size} of {length} bytes)")
        return b"".join(chunks)


class MockTransport:
    """A transport that answers every request with ``handler(request)``: no network.

    >>> transport = MockTransport(lambda request: HttpResponse(404, b"", reason="Not Found"))
    >>> transport.handle_request(HttpRequest("GET", "http://jaeger/api/traces")).status
    404
    """

    def __init__(self, handler: Callable[[HttpRequest], HttpResponse]) -> None:
        self.handler = handler

    def handle_request(self, request: HttpRequest) -> HttpResponse:
        """The handler's response; ``TypeError`` if it returned something else."""
        response = self.handler(request)
        if not isinstance(response, HttpResponse):
            raise TypeError(f"the MockTransport handler returned {type(response).__name__}, not an HttpResponse")
        return response


def _micros(moment: datetime | int | float) -> int:
    if isinstance(moment, datetime):
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return int(moment.timestamp() * 1_000_000)
    return int(moment)


def _shortened(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _reason(response: HttpResponse) -> str:
    if response.reason:
        return response.reason
    try:
        return http.HTTPStatus(response.status).phrase
    except ValueError:
        return ""


def client_transport(transport: Transport | None, timeout: float, max_body_bytes: int) -> Transport:
    """A trace backend client's transport: ``transport`` checked, or a ``UrllibTransport`` with
    one deadline of ``timeout`` seconds per request reading at most ``max_body_bytes``
    (``ValueError`` for a timeout or limit out of range, ``TypeError`` for a transport that is not one)."""
    if timeout <= 0:
        raise ValueError("timeout must be positive")
    if max_body_bytes < 1:
        raise ValueError("max_body_bytes must be at least 1")
    if transport is not None and not isinstance(transport, Transport):
        raise TypeError(f"transport must have handle_request(request), not be {type(transport).__name__}")
    return transport if transport is not None else UrllibTransport(timeout, max_body_bytes)


class JaegerClient:
    """Reads traces from the Jaeger query service's HTTP API (``/api/traces``).

    ``timeout`` (seconds) is the one deadline of each request of the default ``UrllibTransport``,
    and ``max_body_bytes`` the largest response body it reads; ``transport`` replaces that
    transport (e.g. a ``MockTransport`` in tests; ``timeout`` is then its business). Failures
    (unreachable server, a reply that is not HTTP, cut short, too large or too slow, HTTP errors,
    a body that is not Jaeger JSON) raise ``TraceReadError`` naming the URL.
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 10.0,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        transport: Transport | None = None,
    ) -> None:
        parsed = urllib.parse.urlparse(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"base_url must be an http(s) URL, got {mask_url(base_url)!r}")
        self.transport = client_transport(transport, timeout, max_body_bytes)
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_body_bytes = max_body_bytes

    def get_trace(self, trace_id: str) -> list[SpanRecord]:
        """The spans of one trace (``/api/traces/{id}``)."""
        normalized = normalize_trace_id(trace_id)
        if normalized is None:
            raise ValueError(f"not a trace id: {trace_id!r}")
        return self._get(f"/api/traces/{normalized}", {})

    def find_traces(
        self,
        service: str,
        *,
        operation: str | None = None,
        tags: Mapping[str, Any] | None = None,
        start: datetime | int | None = None,
        end: datetime | int | None = None,
        lookback: timedelta | None = None,
        limit: int = 20,
    ) -> list[SpanRecord]:
        """The spans of the traces of ``service`` matching ``operation`` and ``tags`` between
        ``start`` and ``end`` (datetimes or epoch microseconds; ``lookback`` before now when no
        ``start`` is given), at most ``limit`` traces."""
        params: dict[str, str] = {"service": service, "limit": str(limit)}
        if operation:
            params["operation"] = operation
        if tags:
            params["tags"] = json.dumps({str(k): str(v) for k, v in tags.items()})
        now = datetime.now(timezone.utc)
        if start is None and lookback is not None:
            start = now - lookback
        if start is not None:
            params["start"] = str(_micros(start))
            params["end"] = str(_micros(end if end is not None else now))
        elif end is not None:
            params["end"] = str(_micros(end))
        return self._get("/api/traces", params)

    def _get(self, path: str, params: Mapping[str, str]) -> list[SpanRecord]:
        url = self.base_url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        shown = mask_url(url)  # every message names the URL without its credentials
        try:
            response = self.transport.handle_request(HttpRequest("GET", url, {"Accept": "application/json"}))
        except TraceReadError as exc:  # a broken reply the transport named: without the credentials
            raise TraceReadError(mask_url_in(str(exc), url)) from None
        except OSError as exc:
            reason = mask_url_in(str(exc), url)
            raise TraceReadError(f"{shown}: cannot reach the Jaeger query service ({reason})") from exc
        if not 200 <= response.status < 300:
            raise TraceReadError(f"{shown}: HTTP {response.status} {_reason(response)}")
        if len(response.body) > self.max_body_bytes:
            raise TraceReadError(
                f"{shown}: the response body is over the limit of {self.max_body_bytes} bytes (max_body_bytes)")
        try:
            doc = orjson.loads(response.body)
        except orjson.JSONDecodeError as exc:
            if "depth limit" in exc.msg:
                raise TraceReadError(f"{shown}: {malformed_reason(exc)}") from None
            raise TraceReadError(f"{shown}: invalid JSON ({exc}); expected {EXPECTED}") from None
        if isinstance(doc, Mapping) and doc.get("errors") and not doc.get("data"):
            raise TraceReadError(f"{shown}: Jaeger reported {_shortened(repr(doc['errors']))}")
        try:
            records = records_from_jaeger(doc)
        except MALFORMED as exc:
            raise TraceReadError(f"{shown}: {malformed_reason(exc)}") from None
        if records is None:
            raise TraceReadError(f"{shown}: not a Jaeger response; expected {EXPECTED}")
        return records
