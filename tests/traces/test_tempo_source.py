"""``TempoSource`` and ``agenteval eval --tempo``: against a real HTTP server on 127.0.0.1 that
answers as Tempo does, with the responses recorded in ``tests/data/tempo`` (one weather run),
and through ``MockTransport`` for the shapes a run rarely shows."""

from __future__ import annotations

import http
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from agenteval_otel.cli import main
from agenteval_otel.errors import ConfigError, TraceReadError
from agenteval_otel.traces import (
    HttpRequest,
    HttpResponse,
    MockTransport,
    TempoClient,
    TempoSource,
    TraceFileSource,
    read_spans,
)
from agenteval_otel.trajectory.spans import SpanRecord
from tests.conftest import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "tempo"
RUN = DATA / "weather_run.otlp.jsonl"
EVAL_SET = str(REPO_ROOT / "examples" / "weather_agent.evalset.json")
CONFIG = str(REPO_ROOT / "examples" / "weather_agent.config.json")
TOKEN = "tempo-token-5f1e9c2a7b3d4e6f"
TRACE_IDS = sorted(path.stem for path in (DATA / "v2").glob("*.json"))
SEARCH_PARAMS = {"q", "start", "end", "limit"}


# --- a Tempo on 127.0.0.1 -------------------------------------------------------------------------


class Tempo:
    """What the local Tempo answers and what it was asked: ``v2`` off answers every
    ``/api/v2/traces`` with Go's 404 page (Tempo before 2.6); ``token`` asks for that bearer
    token; ``answer`` replaces every response (status, body, headers)."""

    def __init__(self) -> None:
        self.url = ""
        self.v2 = True
        self.token: str | None = None
        self.answer: tuple[int, bytes, dict[str, str]] | None = None
        self.requests: list[tuple[str, dict[str, list[str]], dict[str, str]]] = []

    def searches(self) -> list[dict[str, list[str]]]:
        return [query for path, query, _ in self.requests if path == "/api/search"]

    def paths(self) -> list[str]:
        return [path for path, _, _ in self.requests]


def _handler(tempo: Tempo) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server hook
            url = urlsplit(self.path)
            query = parse_qs(url.query, keep_blank_values=True)
            tempo.requests.append((url.path, query, dict(self.headers.items())))
            if tempo.answer is not None:
                return self._reply(*tempo.answer)
            if tempo.token and self.headers.get("Authorization") != f"Bearer {tempo.token}":
                return self._reply(401, b"Unauthorized\n", {"Content-Type": "text/plain"})
            if url.path == "/api/search":
                problem = _search_problem(query)
                if problem:  # as Tempo refuses a bad search: 400, plain text
                    return self._reply(400, problem.encode(), {"Content-Type": "text/plain"})
                return self._reply(200, (DATA / "search.json").read_bytes())
            version, _, trace_id = url.path.removeprefix("/api/").rpartition("traces/")
            folder = {"v2/": "v2", "": "v1"}.get(version) if url.path.startswith("/api/") else None
            if folder == "v2" and not tempo.v2:
                return self._reply(404, b"404 page not found\n", {"Content-Type": "text/plain"})
            body = DATA / str(folder) / f"{trace_id}.json"
            if folder is None or not body.exists():
                return self._reply(404, b"", {})
            return self._reply(200, body.read_bytes())

        def _reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for name, value in (headers if headers is not None else {"Content-Type": "application/json"}).items():
                self.send_header(name, value)
            if "Content-Length" not in (headers or {}):
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    return Handler


def _search_problem(query: dict[str, list[str]]) -> str:
    """Why Tempo would refuse this search, or ``""``."""
    if set(query) - SEARCH_PARAMS or any(len(values) != 1 for values in query.values()):
        return f"unexpected parameters {sorted(query)}"
    if not query.get("q", [""])[0].strip():
        return "no query"
    if ("start" in query) != ("end" in query):
        return "start and end go together"
    if "start" in query:
        if not (query["start"][0].isdigit() and query["end"][0].isdigit()):
            return "invalid start or end: expected epoch seconds"
        if int(query["start"][0]) > int(query["end"][0]):
            return "invalid start: after end"
    if not query.get("limit", ["1"])[0].isdigit():
        return "invalid limit"
    return ""


@pytest.fixture
def tempo() -> Iterator[Tempo]:
    state = Tempo()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(autouse=True)
def _no_tempo_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEMPO_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("TEMPO_TENANT", raising=False)


def _by_span(records: list[SpanRecord]) -> dict[str, SpanRecord]:
    return {record.span_id: record for record in records}


def _file_spans() -> list[SpanRecord]:
    return list(read_spans(RUN))


# --- reading the recorded run ------------------------------------------------------------------------


def test_eval_via_tempo_gives_the_same_report_as_from_the_file(
        tempo: Tempo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reports = {}
    for source, where in (("file", ["--traces", str(RUN)]), ("tempo", ["--tempo", tempo.url, "--since", "30d"])):
        report = tmp_path / f"{source}.json"
        code = main(["eval", EVAL_SET, *where, "--config", CONFIG, "--quiet", "--report", str(report),
                     "--run-file", str(tmp_path / f"{source}.run.jsonl")])
        assert code == 0, capsys.readouterr().err
        reports[source] = json.loads(report.read_text(encoding="utf-8"))
    run = ("report_id", "created_at", "duration_seconds")  # this run's: its id, when and how long
    tempo_report, file_report = ({k: v for k, v in reports[s].items() if k not in run} for s in ("tempo", "file"))
    assert len(tempo_report["results"]) == 4 and tempo_report["summary"]["passed_cases"] == 4
    assert tempo_report == file_report
    assert {p.rpartition("/")[2] for p in tempo.paths() if p.startswith("/api/v2/traces/")} == set(TRACE_IDS)
    (search,) = tempo.searches()
    assert search["q"] == ["{}"] and search["limit"] == ["1000"]


def test_both_envelopes_read_to_the_same_spans_and_trajectories(tempo: Tempo) -> None:
    v2_client = TempoClient(tempo.url)
    from_v2 = [record for trace_id in TRACE_IDS for record in v2_client.get_trace(trace_id)]
    tempo.v2 = False
    v1_client = TempoClient(tempo.url)
    from_v1 = [record for trace_id in TRACE_IDS for record in v1_client.get_trace(trace_id)]
    assert _by_span(from_v2) == _by_span(from_v1) == _by_span(_file_spans())
    assert len(from_v2) == len(_file_spans())

    def trajectories(source: Any) -> list[Any]:
        return sorted((t.model_dump() for t in source.trajectories()), key=lambda t: (t["trace_id"], t["span_id"]))

    from_file = trajectories(TraceFileSource(RUN))
    assert len(from_file) == 5
    assert trajectories(TempoSource(TempoClient(tempo.url), since=None)) == from_file
    tempo.v2 = True
    assert trajectories(TempoSource(TempoClient(tempo.url))) == from_file


def test_a_tempo_trace_file_of_api_v1_is_an_otlp_json_file() -> None:
    assert _by_span([r for path in sorted((DATA / "v1").glob("*.json")) for r in read_spans(path)]) == \
        _by_span(_file_spans())


def test_a_tempo_without_api_v2_is_read_through_api_v1(tempo: Tempo) -> None:
    tempo.v2 = False
    source = TempoSource(TempoClient(tempo.url), limit=10)
    assert len(list(source.trajectories())) == 5
    first, *rest = _newest_first()
    assert tempo.paths() == ["/api/search", f"/api/v2/traces/{first}", f"/api/traces/{first}",
                             *[f"/api/traces/{trace_id}" for trace_id in rest]]
    assert (source.progress.unit, source.progress.total, source.progress.done) == ("traces", 5, 5)


def _newest_first() -> list[str]:
    """The search's trace ids, padded to 32 digits as the client asks for them."""
    return [t["traceID"].zfill(32) for t in json.loads((DATA / "search.json").read_text())["traces"]]


def test_a_trace_id_tempo_trimmed_is_asked_for_in_full(tempo: Tempo) -> None:
    trimmed = [t for t in json.loads((DATA / "search.json").read_text())["traces"] if len(t["traceID"]) < 32]
    assert trimmed, "the recorded run has a trace id starting with 0"
    client = TempoClient(tempo.url)
    assert client.search() == _newest_first()
    (search,) = tempo.searches()
    assert search == {"q": ["{}"], "limit": ["20"]}  # no time range: Tempo's recent data


def test_since_becomes_start_and_end_in_epoch_seconds(tempo: Tempo, tmp_path: Path) -> None:
    query = '{ resource.service.name = "weather-agent" && span.gen_ai.operation.name = "invoke_agent" }'
    before = time.time()
    assert main(["eval", EVAL_SET, "--tempo", tempo.url, "--query", query, "--since", "24h", "--limit", "7",
                 "--config", CONFIG, "--quiet", "--run-file", str(tmp_path / "run.jsonl")]) == 0
    after = time.time()
    (search,) = tempo.searches()
    start, end = int(search["start"][0]), int(search["end"][0])
    assert search["q"] == [query] and search["limit"] == ["7"]
    assert before - 1 <= end <= after + 1
    assert end - start in (86_400, 86_401)  # whole seconds, the window rounded outwards


# --- what goes wrong ----------------------------------------------------------------------------


def _eval(url: str, tmp_path: Path, *extra: str) -> int:
    return main(["eval", EVAL_SET, "--tempo", url, "--config", CONFIG, "--quiet",
                 "--run-file", str(tmp_path / "run.jsonl"), *extra])


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ((401, b"Unauthorized\n", {"Content-Type": "text/plain"}), "Tempo answered HTTP 401 Unauthorized: Unauthorized"),
        ((500, b"internal error\nstack...", {}), "Tempo answered HTTP 500 Internal Server Error: internal error"),
        ((200, b"<html><body>login</body></html>", {"Content-Type": "text/html"}), "Tempo's answer is not JSON"),
        ((200, b'{"status": "ok"}', {}), "not a Tempo search response (an object); expected an object with 'traces'"),
        ((200, b"", {"Content-Length": str(300 * 1024 * 1024)}), "is over the limit of"),
    ],
)
@pytest.mark.promise(20)
def test_a_bad_answer_is_one_line_naming_the_source_and_exits_2(
        tempo: Tempo, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        answer: tuple[int, bytes, dict[str, str]], expected: str) -> None:
    tempo.answer = answer
    assert _eval(tempo.url, tmp_path) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agenteval: error: {tempo.url}/api/search?q=%7B%7D&start=") and expected in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_trace_tempo_does_not_hold_is_an_error_naming_its_url(tempo: Tempo) -> None:
    missing = "ab" * 16
    client = TempoClient(tempo.url)
    with pytest.raises(TraceReadError) as caught:
        client.get_trace(missing)
    assert str(caught.value) == (f"{tempo.url}/api/traces/{missing}: Tempo has no trace {missing} "
                                 "(HTTP 404 Not Found, from /api/v2/traces too)")


@pytest.mark.promise(20)
def test_a_tempo_that_trickles_its_answer_ends_at_the_deadline(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            with connection:
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{")
                while not stop.wait(0.2):  # a byte every 0.2 s, never the whole body
                    try:
                        connection.sendall(b" ")
                    except OSError:
                        break

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    monkeypatch.setitem(TempoClient.__init__.__kwdefaults__, "timeout", 1.0)  # the CLI's client, 1 s
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        began = time.monotonic()
        assert _eval(url, tmp_path) == 2
        elapsed = time.monotonic() - began
    finally:
        stop.set()
        thread.join(5)
        listener.close()
    err = capsys.readouterr().err
    assert elapsed < 4 and err.count("\n") == 1
    assert err.startswith(f"agenteval: error: {url}/api/search?") and "no complete response within 1 s" in err


@pytest.mark.promise(19)
def test_the_token_reaches_tempo_and_never_a_message(
        tempo: Tempo, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    tempo.token = TOKEN
    monkeypatch.setenv("TEMPO_AUTH_TOKEN", TOKEN)
    monkeypatch.setenv("TEMPO_TENANT", "team-a")
    assert _eval(tempo.url, tmp_path) == 0
    assert {(h["Authorization"], h["X-Scope-Orgid"]) for _, _, h in tempo.requests} == {(f"Bearer {TOKEN}", "team-a")}
    echoes = [  # servers and proxies that quote the credentials they refuse
        (401, f"invalid token {TOKEN}".encode(), {}),
        (403, f"Authorization: Bearer {TOKEN} is not allowed".encode(), {}),
        (500, f"tenant team-a, key ...{TOKEN[-12:]}".encode(), {}),
        (200, f"<html>{TOKEN}</html>".encode(), {}),
    ]
    for answer in echoes:
        tempo.answer = answer
        assert _eval(tempo.url, tmp_path) == 2
        out, err = capsys.readouterr()
        assert "agenteval: error:" in err and TOKEN[-12:] not in out + err and TOKEN[:12] not in out + err
    with socket.socket() as probe:  # nobody listening: the error of the connection
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    assert _eval(closed, tmp_path) == 2
    assert "cannot reach Tempo" in (err := capsys.readouterr().err) and TOKEN[:12] not in err


@pytest.mark.promise(19)
def test_a_user_and_password_in_the_url_are_basic_auth_and_masked(
        tempo: Tempo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    host = tempo.url.removeprefix("http://")
    client = TempoClient(f"http://12345:{TOKEN}@{host}")
    tempo.answer = (401, f"invalid credentials for 12345:{TOKEN}".encode(), {})
    with pytest.raises(TraceReadError) as caught:
        client.search()
    (_, _, headers), = tempo.requests
    assert headers["Authorization"].startswith("Basic ") and "12345" not in tempo.requests[0][0]
    assert TOKEN not in str(caught.value) and str(caught.value).startswith(f"{tempo.url}/api/search?q=%7B%7D")
    assert _eval(f"ftp://12345:{TOKEN}@{host}", tmp_path) == 2
    err = capsys.readouterr().err
    assert "--tempo: base_url must be an http(s) URL" in err and TOKEN not in err


# --- the command line ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tempo", "URL", "--query", " "], "--query: expected a TraceQL query"),
        (["--jaeger", "http://127.0.0.1:9", "--service", "s", "--query", "{}"], "--query goes with --tempo"),
        (["--tempo", "URL", "--service", "weather"], "--service goes with --jaeger"),
        (["--tempo", "URL", "--jaeger", "http://127.0.0.1:9"], "not --jaeger and --tempo"),
        (["--tempo", "localhost:3200"], "--tempo: base_url must be an http(s) URL"),
        (["--tempo", "http://tempo:3200/?orgId=1"], "--tempo: base_url is Tempo's address, without a query"),
        (["--tempo", "URL", "--limit", "0"], "--limit 0: expected a whole number of at least 1"),
        (["--tempo", "URL", "--since", "soon"], "--since/--lookback soon: expected a duration"),
    ],
)
def test_bad_tempo_options_exit_2_with_one_line(
        tempo: Tempo, args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = [tempo.url if arg == "URL" else arg for arg in args]
    assert main(["eval", EVAL_SET, *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert tempo.requests == []


def test_a_report_without_an_eval_set_is_named_tempo(tempo: Tempo, tmp_path: Path) -> None:
    config = tmp_path / "policies.json"
    config.write_text('{"criteria": {"no_tool_errors": {}}}')
    report = tmp_path / "out.json"
    assert main(["eval", "--tempo", tempo.url, "--config", str(config), "--quiet", "--report", str(report),
                 "--run-file", str(tmp_path / "run.jsonl")]) == 0
    saved = json.loads(report.read_text(encoding="utf-8"))
    assert saved["eval_set_id"] == "tempo" and len(saved["results"]) == 5


# --- shapes a run rarely shows, through MockTransport ---------------------------------------------------


def _client(*responses: HttpResponse) -> tuple[TempoClient, list[HttpRequest]]:
    seen: list[HttpRequest] = []
    answers = iter(responses)

    def answer(request: HttpRequest) -> HttpResponse:
        seen.append(request)
        return next(answers)

    return TempoClient("http://tempo.test:3200/tempo/", transport=MockTransport(answer)), seen


def _v2_body(spans: int) -> bytes:
    trace_id = TRACE_IDS[0]
    return (DATA / "v2" / f"{trace_id}.json").read_bytes() if spans else b'{"trace":{}}'


def test_a_partial_trace_is_read_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    doc = json.loads(_v2_body(1))
    doc |= {"status": "PARTIAL", "message": "Trace exceeds maximum size of 5000000 bytes, a partial trace is returned"}
    client, seen = _client(HttpResponse(200, json.dumps(doc).encode()))
    with caplog.at_level(logging.WARNING, logger="agenteval_otel.traces.tempo"):
        records = client.get_trace(TRACE_IDS[0])
    assert len(records) == sum(len(s["spans"]) for r in doc["trace"]["resourceSpans"] for s in r["scopeSpans"])
    (warning,) = caplog.records
    assert f"part of trace {TRACE_IDS[0]} (Trace exceeds maximum size" in warning.getMessage()
    assert seen[0].url == f"http://tempo.test:3200/tempo/api/v2/traces/{TRACE_IDS[0]}"


@pytest.mark.parametrize(
    ("body", "found"),
    [
        (b'{"metrics":{"inspectedTraces":12,"completedJobs":1,"totalJobs":1}}', []),  # nothing found
        (b'{"traces":[{"traceID":"2be38093ead7a083"},{"traceID":"2BE38093EAD7A083"}],"metrics":{}}',
         ["00000000000000002be38093ead7a083"]),
    ],
)
def test_search_answers_are_read_as_tempo_writes_them(body: bytes, found: list[str]) -> None:
    client, seen = _client(HttpResponse(200, body))
    assert client.search('{ span.http.status_code >= 500 }', start=1_700_000_000, end=1_700_003_600, limit=3) == found
    assert seen[0].url == ("http://tempo.test:3200/tempo/api/search?q=%7B+span.http.status_code+%3E%3D+500+%7D"
                           "&start=1700000000&end=1700003600&limit=3")
    assert seen[0].headers == {"Accept": "application/json"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"traces": {"traceID": "1"}}', "not a Tempo search response"),
        (b'[]', "not a Tempo search response (a list)"),
        (b'{"traces": [{"traceID": "not-hex"}]}', "traces[0].traceID: expected a hex trace id, got 'not-hex'"),
        (b'{"traces": [{"rootServiceName": "x"}]}', "traces[0].traceID: expected a hex trace id, got None"),
        (b'[' * 5000, "nested more than 1024"),
    ],
)
def test_a_bad_search_answer_is_a_trace_read_error(body: bytes, message: str) -> None:
    client, _ = _client(HttpResponse(200, body))
    with pytest.raises(TraceReadError, match=r"^http://tempo\.test:3200/tempo/api/search\?q=%7B%7D") as caught:
        client.search()
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("v2", "v1", "message"),
    [
        (HttpResponse(200, b'{"data": []}'), None, "not a Tempo trace (an object); expected an object with 'trace'"),
        (HttpResponse(200, b'{"trace": {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "x"}]}]}]}}'),
         None, "trace.resourceSpans[0].scopeSpans[0].spans[0]"),
        (HttpResponse(404, b"404 page not found"), HttpResponse(200, b'{"resourceSpans": []}'),
         "not a Tempo trace (an object); expected an object with 'batches'"),
        (HttpResponse(404, b""), HttpResponse(200, b'{"batches": [{"scopeSpans": "x"}]}'),
         "batches[0].scopeSpans: expected a list"),
        (HttpResponse(422, b"trace exceeds max size (max bytes: 5000000)\n"), None,  # the phrase as Python names it
         f"Tempo answered HTTP 422 {http.HTTPStatus(422).phrase}: trace exceeds max size (max bytes: 5000000)"),
    ],
)
def test_a_bad_trace_answer_is_a_trace_read_error(v2: HttpResponse, v1: HttpResponse | None, message: str) -> None:
    client, _ = _client(*[r for r in (v2, v1) if r is not None])
    with pytest.raises(TraceReadError, match=r"^http://tempo\.test:3200/tempo/api/") as caught:
        client.get_trace("ab" * 16)
    assert message in str(caught.value)


def test_an_empty_trace_gives_no_spans() -> None:
    client, _ = _client(HttpResponse(200, _v2_body(0)), HttpResponse(404), HttpResponse(200, b"{}"))
    assert client.get_trace("ab" * 16) == []  # API v2
    assert client.get_trace("ab" * 16) == []  # API v1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base_url": "tempo:3200"}, r"base_url must be an http\(s\) URL"),
        ({"base_url": "http://u:p@tempo:3200", "token": "t"}, "not both"),
        ({"base_url": "http://tempo:3200", "tenant": "a\r\nX-Evil: 1"}, "tenant: expected one line"),
        ({"base_url": "http://tempo:3200", "token": "abc\ndef"}, "token: expected one line"),
        ({"base_url": "http://tempo:3200", "timeout": 0}, "timeout"),
    ],
)
def test_bad_client_arguments_fail_at_construction(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TempoClient(**kwargs)


def test_bad_search_arguments_fail_before_any_request() -> None:
    client, seen = _client()
    for kwargs in ({"query": ""}, {"limit": 0}, {"end": 1_700_000_000}):
        with pytest.raises(ValueError):
            client.search(**kwargs)
    with pytest.raises(ValueError, match="not a trace id"):
        client.get_trace("zz")
    assert seen == []


def test_a_tempo_query_takes_no_log_files() -> None:
    with pytest.raises(ConfigError, match="logs=: TempoSource"):
        TempoSource(TempoClient("http://tempo:3200")).with_logs(["logs.json"])
