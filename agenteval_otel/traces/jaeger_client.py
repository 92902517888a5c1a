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
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol, runtime_checkable

import orjson

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces.jaeger_json import EXPECTED, records_from_jaeger
from agenteval_otel.trajectory.spans import SpanRecord, normalize_trace_id

__all__ = [
    "HttpRequest",
    "HttpResponse",
    "JaegerClient",
    "MockTransport",
    "Transport",
    "UrllibTransport",
    "mask_url",
]


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
    ``TimeoutError``) when no response arrives; the client reports that as a ``TraceReadError``.
    """

    def handle_request(self, request: HttpRequest) -> HttpResponse:
        """Send ``request`` and return the response."""
        ...


class UrllibTransport:
    """The default transport: real HTTP(S) with ``urllib``; ``timeout`` (seconds) bounds each
    blocking step of a request (connecting, each read). Redirects are followed."""

    def __init__(self, timeout: float = 10.0) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.timeout = timeout

    def handle_request(self, request: HttpRequest) -> HttpResponse:
        """Send ``request``; an HTTP error status comes back as a response, not an exception."""
        outgoing = urllib.request.Request(request.url, headers=dict(request.headers), method=request.method)
        try:
            with urllib.request.urlopen(outgoing, timeout=self.timeout) as response:
                body = response.read()
                return HttpResponse(response.status, body, dict(response.headers.items()), response.reason)
        except urllib.error.HTTPError as exc:
            with exc:
                try:
                    body = exc.read()
                except OSError:
                    body = b""
                return HttpResponse(exc.code, body, dict(exc.headers.items()) if exc.headers else {}, exc.reason)


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


_MASK = "***"
_SECRET_PARAMETER = re.compile(r"pass|pwd|secret|token|key|auth|sig|credential", re.IGNORECASE)


def mask_url(url: str) -> str:
    """``url`` fit to print: its password (or a lone user part) and the values of secret-looking
    query parameters become ``***``. Never raises.

    >>> mask_url("http://user:secret@jaeger:16686/api/traces?service=a&api_key=k")
    'http://user:***@jaeger:16686/api/traces?service=a&api_key=***'
    """
    try:
        parts = urllib.parse.urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, host = netloc.rpartition("@")
            user, has_password, _ = userinfo.partition(":")
            netloc = f"{user}:{_MASK}@{host}" if has_password else f"{_MASK}@{host}"
        query = "&".join(_masked_parameter(pair) for pair in parts.query.split("&")) if parts.query else ""
        return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=query))
    except Exception:  # not even a URL: hide anything between "//" and "@", and every query
        return re.sub(r"\?.*", "?" + _MASK, re.sub(r"//[^/]*@", f"//{_MASK}@", str(url)))


def _masked_parameter(pair: str) -> str:
    name, has_value, _ = pair.partition("=")
    if has_value and _SECRET_PARAMETER.search(urllib.parse.unquote_plus(name)):
        return f"{name}={_MASK}"
    return pair


def _masked_text(text: str, url: str) -> str:
    """``text`` with ``url`` masked, and its password wherever else it appears (e.g. in an OS error)."""
    text = text.replace(url, mask_url(url))
    try:
        password = urllib.parse.urlsplit(url).password
    except ValueError:
        password = None
    for secret in {password, urllib.parse.unquote(password)} if password else ():
        text = text.replace(secret, _MASK)
    return text


def _micros(moment: datetime | int | float) -> int:
    if isinstance(moment, datetime):
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return int(moment.timestamp() * 1_000_000)
    return int(moment)


def _reason(response: HttpResponse) -> str:
    if response.reason:
        return response.reason
    try:
        return http.HTTPStatus(response.status).phrase
    except ValueError:
        return ""


class JaegerClient:
    """Reads traces from the Jaeger query service's HTTP API (``/api/traces``).

    ``timeout`` (seconds) bounds every request of the default ``UrllibTransport``; ``transport``
    replaces that transport (e.g. a ``MockTransport`` in tests; ``timeout`` is then its business).
    Failures (unreachable server, HTTP errors, a response that is not Jaeger JSON) raise
    ``TraceReadError`` naming the URL.
    """

    def __init__(self, base_url: str, *, timeout: float = 10.0, transport: Transport | None = None) -> None:
        parsed = urllib.parse.urlparse(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"base_url must be an http(s) URL, got {mask_url(base_url)!r}")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if transport is not None and not isinstance(transport, Transport):
            raise TypeError(f"transport must have handle_request(request), not be {type(transport).__name__}")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.transport: Transport = transport if transport is not None else UrllibTransport(timeout)

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
        except OSError as exc:
            reason = _masked_text(str(exc), url)
            raise TraceReadError(f"{shown}: cannot reach the Jaeger query service ({reason})") from exc
        if not 200 <= response.status < 300:
            raise TraceReadError(f"{shown}: HTTP {response.status} {_reason(response)}")
        try:
            doc = orjson.loads(response.body)
        except orjson.JSONDecodeError as exc:
            raise TraceReadError(f"{shown}: invalid JSON ({exc}); expected {EXPECTED}") from exc
        if isinstance(doc, Mapping) and doc.get("errors") and not doc.get("data"):
            raise TraceReadError(f"{shown}: Jaeger reported {doc['errors']!r}")
        try:
            records = records_from_jaeger(doc)
        except ValueError as exc:
            raise TraceReadError(f"{shown}: {exc}") from exc
        if records is None:
            raise TraceReadError(f"{shown}: not a Jaeger response; expected {EXPECTED}")
        return records
