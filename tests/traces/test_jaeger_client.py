"""``JaegerClient``: against a real local HTTP server serving our Jaeger files, and through
``MockTransport`` with no server at all."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces import (
    HttpRequest,
    HttpResponse,
    JaegerClient,
    MockTransport,
    Transport,
    UrllibTransport,
)
from agenteval_otel.traces.jaeger_client import mask_url
from agenteval_otel.trajectory.spans import normalize_trace_id

QUERY_RESPONSE = "query_response.json"
WEATHER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"

# --- a real Jaeger query service on 127.0.0.1 -------------------------------------------------


class _Jaeger(BaseHTTPRequestHandler):
    traces: dict[str, bytes] = {}
    search_response: bytes = b""
    queries: list[dict[str, list[str]]] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server hook
        url = urlparse(self.path)
        if url.path == "/api/traces":
            self.queries.append(parse_qs(url.query))
            self._reply(200, self.search_response)
        elif url.path.startswith("/api/traces/"):
            body = self.traces.get(url.path.rsplit("/", 1)[1])
            if body is None:
                self._reply(404, b'{"data": null, "errors": [{"code": 404, "msg": "trace not found"}]}')
            else:
                self._reply(200, body)
        else:
            self._reply(200, b"<html>not json</html>")

    def _reply(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


class Served:
    """A running local Jaeger query service: its URL and the searches it received."""

    def __init__(self, url: str, queries: list[dict[str, list[str]]]) -> None:
        self.url = url
        self.queries = queries


@pytest.fixture
def jaeger(own_traces: Path) -> Iterator[Served]:
    traces: dict[str, bytes] = {}
    for path in (own_traces / "jaeger").glob("*.json"):
        doc = json.loads(path.read_text())
        if isinstance(doc, dict) and isinstance(doc.get("data"), list):
            for trace in doc["data"]:
                traces[normalize_trace_id(trace["traceID"])] = json.dumps({"data": [trace]}).encode()
        elif isinstance(doc, dict) and "traceID" in doc:
            traces[normalize_trace_id(doc["traceID"])] = json.dumps({"data": [doc]}).encode()
    queries: list[dict[str, list[str]]] = []
    handler = type(
        "Handler",
        (_Jaeger,),
        {
            "traces": traces,
            "search_response": (own_traces / "jaeger" / QUERY_RESPONSE).read_bytes(),
            "queries": queries,
        },
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{server.server_address[1]}", queries)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_find_traces_sends_service_time_range_and_tags(jaeger: Served) -> None:
    client = JaegerClient(jaeger.url, timeout=5)
    start = datetime(2024, 1, 31, tzinfo=timezone.utc)
    records = client.find_traces(
        "telemetrygen",
        operation="okey-dokey-0",
        tags={"http.status_code": 200},
        start=start,
        end=start + timedelta(hours=1),
        limit=5,
    )
    assert {r.trace_id for r in records} == {WEATHER_TRACE, "0" * 30 + "a1"}
    (query,) = jaeger.queries
    assert query["service"] == ["telemetrygen"] and query["operation"] == ["okey-dokey-0"]
    assert json.loads(query["tags"][0]) == {"http.status_code": "200"}
    assert query["start"] == [str(int(start.timestamp() * 1_000_000))]
    assert query["end"] == [str(int((start + timedelta(hours=1)).timestamp() * 1_000_000))]
    assert query["limit"] == ["5"]


def test_find_traces_with_a_lookback(jaeger: Served) -> None:
    JaegerClient(jaeger.url).find_traces("telemetrygen", lookback=timedelta(minutes=5))
    (query,) = jaeger.queries
    assert int(query["end"][0]) - int(query["start"][0]) == pytest.approx(5 * 60 * 1_000_000, abs=1_000_000)


def test_get_trace_returns_the_spans_of_one_trace(jaeger: Served) -> None:
    client = JaegerClient(jaeger.url)
    records = client.get_trace(WEATHER_TRACE.upper())
    assert len(records) == 4 and {r.trace_id for r in records} == {WEATHER_TRACE}
    assert len(client.get_trace("00000000000000A1")) == 3


def test_an_unknown_trace_is_a_trace_read_error(jaeger: Served) -> None:
    with pytest.raises(TraceReadError, match="HTTP 404"):
        JaegerClient(jaeger.url).get_trace("ab" * 16)


def test_a_response_that_is_not_json_is_a_trace_read_error(jaeger: Served) -> None:
    with pytest.raises(TraceReadError, match="invalid JSON"):
        JaegerClient(jaeger.url + "/ui").find_traces("svc")


def test_an_unreachable_server_is_a_trace_read_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(TraceReadError, match="cannot reach"):
        JaegerClient(f"http://127.0.0.1:{port}", timeout=2).find_traces("svc")


@pytest.mark.parametrize("url", ["localhost:16686", "ftp://host", ""])
def test_a_bad_base_url_fails_at_construction(url: str) -> None:
    with pytest.raises(ValueError):
        JaegerClient(url)


def test_the_urllib_transport_returns_an_error_status_as_a_response(jaeger: Served) -> None:
    transport = UrllibTransport(timeout=5)
    response = transport.handle_request(HttpRequest("GET", f"{jaeger.url}/api/traces/{'ab' * 16}"))
    assert (response.status, response.reason) == (404, "Not Found")
    assert json.loads(response.body)["errors"][0]["msg"] == "trace not found"
    assert response.headers["Content-Type"] == "application/json"
    ok = transport.handle_request(HttpRequest("GET", f"{jaeger.url}/api/traces?service=x", {"Accept": "*/*"}))
    assert ok.status == 200 and json.loads(ok.body)["data"]


@pytest.mark.parametrize("timeout", [0, -1.0])
def test_a_non_positive_timeout_fails_at_construction(timeout: float) -> None:
    with pytest.raises(ValueError):
        UrllibTransport(timeout)
    with pytest.raises(ValueError):
        JaegerClient("http://localhost:16686", timeout=timeout)


# --- MockTransport: no server ------------------------------------------------------------------


class Recorder:
    """A MockTransport handler that records the requests and answers with one response."""

    def __init__(self, response: HttpResponse) -> None:
        self.response = response
        self.requests: list[HttpRequest] = []

    def __call__(self, request: HttpRequest) -> HttpResponse:
        self.requests.append(request)
        return self.response


def _client(response: HttpResponse) -> tuple[JaegerClient, Recorder]:
    recorder = Recorder(response)
    return JaegerClient("http://jaeger.test:16686/", transport=MockTransport(recorder)), recorder


def test_find_traces_sends_its_params_through_the_transport(own_traces: Path) -> None:
    body = (own_traces / "jaeger" / QUERY_RESPONSE).read_bytes()
    client, recorder = _client(HttpResponse(200, body))
    start = datetime(2024, 1, 31, 12, tzinfo=timezone.utc)
    records = client.find_traces(
        "weather agent",
        operation="invoke_agent weather",
        tags={"gen_ai.agent.name": "weather", "attempt": 2},
        start=start,
        end=1_706_706_000_000_000,
        limit=7,
    )
    assert {r.trace_id for r in records} == {WEATHER_TRACE, "0" * 30 + "a1"}
    (request,) = recorder.requests
    assert request.method == "GET" and request.headers == {"Accept": "application/json"}
    url = urlparse(request.url)
    assert (url.scheme, url.netloc, url.path) == ("http", "jaeger.test:16686", "/api/traces")
    assert parse_qs(url.query) == {
        "service": ["weather agent"],
        "limit": ["7"],
        "operation": ["invoke_agent weather"],
        "tags": [json.dumps({"gen_ai.agent.name": "weather", "attempt": "2"})],
        "start": [str(int(start.timestamp() * 1_000_000))],
        "end": ["1706706000000000"],
    }


def test_find_traces_without_a_time_range_sends_service_and_limit_only() -> None:
    client, recorder = _client(HttpResponse(200, b'{"data": []}'))
    assert client.find_traces("svc") == []
    assert recorder.requests[0].url == "http://jaeger.test:16686/api/traces?service=svc&limit=20"


def test_get_trace_asks_for_the_normalized_trace_id() -> None:
    client, recorder = _client(HttpResponse(200, b'{"data": []}'))
    client.get_trace("2BE38093EAD7A083")
    assert recorder.requests[0].url == "http://jaeger.test:16686/api/traces/00000000000000002be38093ead7a083"
    with pytest.raises(ValueError):
        client.get_trace("0" * 32)
    assert len(recorder.requests) == 1


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (HttpResponse(404, b'{"errors": [{"code": 404}]}', reason="Not Found"), "HTTP 404 Not Found"),
        (HttpResponse(404, b""), "HTTP 404 Not Found"),  # the standard phrase when none is given
        (HttpResponse(503, b"upstream down", reason="Service Unavailable"), "HTTP 503 Service Unavailable"),
        (HttpResponse(302, b""), "HTTP 302 Found"),
    ],
)
def test_an_error_status_is_a_trace_read_error_naming_the_url(response: HttpResponse, message: str) -> None:
    client, _ = _client(response)
    with pytest.raises(TraceReadError) as caught:
        client.get_trace("ab" * 16)
    assert str(caught.value) == f"http://jaeger.test:16686/api/traces/{'ab' * 16}: {message}"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>not json</html>", "invalid JSON"),
        (b"", "invalid JSON"),
        (b'{"data": null, "errors": [{"code": 500, "msg": "storage down"}]}', "Jaeger reported"),
        (b'{"hello": "world"}', "not a Jaeger response"),
        (b'{"data": [{"traceID": "1", "spans": [{"spanID": "zz-not-an-id"}]}]}', "data[0].spans[0]"),
        (b'{"data": [{"traceID": "1", "spans": ["not a span"]}]}', "data[0].spans[0]: expected an object"),
        (b'{"data": [{"traceID": "1", "spans": [], "processes": {"p1": "svc"}}]}', "data[0].processes.p1"),
        (b'{"result": {"resourceSpans": [{"resource": ["svc"]}]}}', "result.resourceSpans[0].resource"),
        (b'[' * 5000, "nested more than 1024"),
    ],
)
def test_a_bad_body_is_a_trace_read_error_naming_the_url(body: bytes, message: str) -> None:
    client, _ = _client(HttpResponse(200, body))
    with pytest.raises(TraceReadError, match=r"^http://jaeger\.test:16686/api/traces\?service=svc") as caught:
        client.find_traces("svc")
    assert message in str(caught.value)


def test_a_transport_that_cannot_connect_is_a_trace_read_error() -> None:
    def refuse(request: HttpRequest) -> HttpResponse:
        raise ConnectionRefusedError(111, "Connection refused")

    client = JaegerClient("http://jaeger.test:16686", transport=MockTransport(refuse))
    with pytest.raises(TraceReadError, match="jaeger.test:16686/api/traces.*cannot reach.*refused"):
        client.find_traces("svc")


def test_a_mock_handler_must_return_an_http_response() -> None:
    transport = MockTransport(lambda request: b"{}")  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError, match="HttpResponse"):
        JaegerClient("http://jaeger.test", transport=transport).find_traces("svc")


def test_a_transport_is_anything_with_handle_request() -> None:
    assert isinstance(MockTransport(lambda request: HttpResponse(200)), Transport)
    assert isinstance(UrllibTransport(), Transport)
    with pytest.raises(TypeError, match="transport"):
        JaegerClient("http://jaeger.test", transport=object())  # type: ignore[arg-type]


# --- credentials never reach a message ------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("http://user:s3cret@jaeger:16686", "http://user:***@jaeger:16686"),
        ("https://s3cret@jaeger/api/traces", "https://***@jaeger/api/traces"),
        ("http://jaeger/api?service=a&api_key=s3cret&X-Auth-Token=s3cret", "http://jaeger/api?service=a&api_key=***&X-Auth-Token=***"),
        ("http://jaeger:16686/api/traces?service=svc&limit=20", "http://jaeger:16686/api/traces?service=svc&limit=20"),
        ("http://u:s3cret@[::1/x", "http://***@[::1/x"),
    ],
)
def test_mask_url_hides_credentials_and_secret_parameters(url: str, masked: str) -> None:
    assert mask_url(url) == masked


def test_messages_name_the_url_without_its_credentials() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(TraceReadError, match="cannot reach") as unreachable:
        JaegerClient(f"http://admin:s3cret@127.0.0.1:{port}", timeout=2).find_traces("svc")
    failing = MockTransport(lambda request: HttpResponse(503, b"", reason="Service Unavailable"))
    with pytest.raises(TraceReadError, match="503") as refused:
        JaegerClient("http://admin:s3cret@jaeger:16686", transport=failing).find_traces("svc")
    not_json = MockTransport(lambda request: HttpResponse(200, b"<html>"))
    with pytest.raises(TraceReadError, match="invalid JSON") as garbled:
        JaegerClient("http://admin:s3cret@jaeger:16686", transport=not_json).get_trace("ab" * 16)
    with pytest.raises(ValueError) as bad:
        JaegerClient("ftp://admin:s3cret@jaeger")
    for error in (unreachable, refused, garbled, bad):
        assert "s3cret" not in str(error.value) and "admin:***@" in str(error.value)


# --- a misbehaving server on 127.0.0.1: raw sockets, so the reply can be anything -----------------

SPANS_BODY = json.dumps({"data": [{"traceID": "2be38093ead7a083", "spans": [
    {"traceID": "2be38093ead7a083", "spanID": "7c1c7c1c7c1c7c1c", "operationName": "invoke_agent"}]}]}).encode()


class RawServer:
    """Accepts connections on 127.0.0.1 and answers each with ``reply(connection, stop)``, until
    the test ends (``stop`` is set then, so a reply that streams forever ends too)."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.stop = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except (socket.timeout, OSError):
                continue
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            connection.recv(65536)  # the request
            try:
                self.reply(connection, self.stop)
            except OSError:  # the client hung up
                pass

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.listener.close()


@pytest.fixture
def raw_server() -> Iterator[Any]:
    servers: list[RawServer] = []

    def start(reply: Any) -> RawServer:
        servers.append(RawServer(reply))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _trickle(head: bytes) -> Any:
    def reply(connection: socket.socket, stop: threading.Event) -> None:
        connection.sendall(head)
        for _ in range(40):  # a byte every 0.2 s, for 8 s at most
            if stop.wait(0.2):
                break
            connection.sendall(b"x")
    return reply


@pytest.mark.promise(20)
@pytest.mark.parametrize("head", [b"", b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"],
                         ids=["status line", "body"])
def test_a_trickling_server_is_cut_off_at_the_deadline(raw_server: Any, head: bytes) -> None:
    server = raw_server(_trickle(head))
    client = JaegerClient(server.url, timeout=1.0)
    started = time.monotonic()
    with pytest.raises(TraceReadError, match=rf"^{server.url}/api/traces\?service=svc.*: no complete response within 1 s"):
        client.find_traces("svc")
    assert time.monotonic() - started < 2.0


def test_a_reply_that_is_not_http_is_a_trace_read_error(raw_server: Any) -> None:
    server = raw_server(lambda connection, stop: connection.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\x00\xff garbage\r\n\r\n"))
    with pytest.raises(TraceReadError, match=rf"^{server.url}/api/traces/.*: not a valid HTTP response"):
        JaegerClient(server.url, timeout=2.0).get_trace("ab" * 16)


@pytest.mark.parametrize("reply", [
    b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + SPANS_BODY[:40],
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n28\r\n" + SPANS_BODY[:40] + b"\r\n100\r\n{",
], ids=["content-length", "chunked"])
def test_a_body_cut_short_is_a_trace_read_error(raw_server: Any, reply: bytes) -> None:
    server = raw_server(lambda connection, stop: connection.sendall(reply))
    with pytest.raises(TraceReadError, match=rf"^{server.url}/api/traces/.*: the response body was cut short"):
        JaegerClient(server.url, timeout=2.0).get_trace("ab" * 16)


@pytest.mark.promise(20)
def test_a_body_announced_over_the_size_limit_is_refused_unread(raw_server: Any) -> None:
    server = raw_server(_trickle(b"HTTP/1.1 200 OK\r\nContent-Length: 5000000000\r\n\r\n"))
    started = time.monotonic()
    with pytest.raises(TraceReadError, match=rf"^{server.url}/api/traces.*: the response body .*5000000000 bytes.* "
                                             r"over the limit of 1000 bytes \(max_body_bytes\)"):
        JaegerClient(server.url, timeout=5.0, max_body_bytes=1000).find_traces("svc")
    assert time.monotonic() - started < 1.0


@pytest.mark.promise(20)
def test_a_body_that_grows_over_the_size_limit_stops_being_read(raw_server: Any) -> None:
    def growing(connection: socket.socket, stop: threading.Event) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
        for _ in range(64):  # 4 MiB, no length announced
            connection.sendall(b"[" * 65536)

    server = raw_server(growing)
    started = time.monotonic()
    with pytest.raises(TraceReadError, match=rf"^{server.url}/api/traces.*: the response body is over the limit "
                                             r"of 100000 bytes \(max_body_bytes\)"):
        JaegerClient(server.url, timeout=5.0, max_body_bytes=100_000).find_traces("svc")
    assert time.monotonic() - started < 1.0


def test_a_good_reply_from_a_raw_server_still_reads(raw_server: Any) -> None:
    reply = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(SPANS_BODY), SPANS_BODY)
    server = raw_server(lambda connection, stop: connection.sendall(reply))
    client = JaegerClient(server.url, timeout=2.0, max_body_bytes=len(SPANS_BODY))
    assert [record.name for record in client.get_trace("2be38093ead7a083")] == ["invoke_agent"]


def test_a_broken_reply_named_by_the_transport_is_shown_without_credentials() -> None:
    def broken(request: HttpRequest) -> HttpResponse:
        raise TraceReadError(f"{request.url}: the response body was cut short (3 of 10 bytes)")

    with pytest.raises(TraceReadError, match="cut short") as raised:
        JaegerClient("http://admin:s3cret@jaeger:16686", transport=MockTransport(broken)).find_traces("svc")
    assert "s3cret" not in str(raised.value) and "admin:***@jaeger" in str(raised.value)


@contextmanager
def _recording_server(redirect_to: str | None = None) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A server on 127.0.0.1 that records each request's headers and redirects to
    ``redirect_to`` (when given) or answers an empty Jaeger response."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - the http.server protocol
            seen.append(dict(self.headers.items()))
            if redirect_to is not None:
                self.send_response(302)
                self.send_header("Location", redirect_to + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = b'{"data": []}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.promise(19)
def test_a_redirect_to_another_origin_gets_no_credentials() -> None:
    secret = {"Authorization": "Bearer sk-redirect-secret", "X-Scope-OrgID": "tenant-a"}
    with _recording_server() as (elsewhere, seen_there), _recording_server(elsewhere) as (origin, seen_here):
        UrllibTransport().handle_request(HttpRequest("GET", origin + "/api/traces", secret))
        assert seen_here[0]["Authorization"] == "Bearer sk-redirect-secret"
        assert "Authorization" not in seen_there[0] and "X-Scope-OrgID" not in seen_there[0]
    with _recording_server() as (same, seen_same):
        host_alias = same.replace("127.0.0.1", "localhost")
        with _recording_server(host_alias) as (origin, _):
            UrllibTransport().handle_request(HttpRequest("GET", origin + "/api/traces", secret))
        assert "Authorization" not in seen_same[0]  # another host name is another origin too
