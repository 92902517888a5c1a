"""``PhoenixSource`` and ``agenteval eval --phoenix`` against a real Phoenix (``phoenix serve`` from
``.venvs/phoenix``, with API keys required): a run of the weather agent goes to it over OTLP and,
at the same time, to a trace file; both give the same report."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agenteval_otel.cli import main
from agenteval_otel.errors import TraceReadError
from agenteval_otel.evalsets import EvalSet
from agenteval_otel.evaluation import LiveRunner, load_agent, run_sync
from agenteval_otel.traces import (
    HttpRequest,
    HttpResponse,
    MockTransport,
    PhoenixClient,
    PhoenixSource,
    UrllibTransport,
    read_trajectories,
)
from agenteval_otel.tracing import OtlpJsonFileExporter
from agenteval_otel.trajectory import Trajectory
from tests.backends import PhoenixServer, phoenix_server
from tests.otlp_receiver import closed_port
from tests.shared_data import REPO_ROOT

EVALSET = str(REPO_ROOT / "examples" / "weather_agent.evalset.json")
AGENT = f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent"
PROJECT = "weather"


@dataclass(frozen=True)
class Run:
    """The weather agent's run over its eval set, held by Phoenix and written to ``file``."""

    phoenix: PhoenixServer
    file: Path
    before: datetime
    after: datetime
    trace_ids: frozenset[str]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    folder = tmp_path_factory.mktemp("phoenix")
    with phoenix_server(folder) as phoenix:
        file = folder / "weather.jsonl"
        provider = TracerProvider(resource=Resource.create(
            {"service.name": "weather-agent", "openinference.project.name": PROJECT}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
            endpoint=phoenix.otlp_traces_url, headers={"authorization": f"Bearer {phoenix.api_key}"}, timeout=10)))
        provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(file)))
        before = datetime.now(timezone.utc)
        runner = LiveRunner(load_agent(AGENT), tracer_provider=provider, export_results=False)
        assert run_sync(runner.aevaluate(EvalSet.load(EVALSET)), "aevaluate").passed
        provider.shutdown()
        after = datetime.now(timezone.utc)
        trace_ids = frozenset(t.trace_id for t in read_trajectories([file]).trajectories)
        _wait_until_stored(PhoenixClient(phoenix.url, api_key=phoenix.api_key), len(trace_ids))
        yield Run(phoenix, file, before, after, trace_ids)


def _wait_until_stored(client: PhoenixClient, traces: int, timeout: float = 20.0) -> None:
    """Phoenix stores what it receives in batches: wait until every trace is there (the project
    is made with the first batch)."""
    deadline = time.monotonic() + timeout
    while _stored(client) < traces:
        assert time.monotonic() < deadline, f"Phoenix did not store {traces} traces within {timeout:g} s"
        time.sleep(0.2)


def _stored(client: PhoenixClient) -> int:
    try:
        return sum(map(len, client.trace_ids(PROJECT)))
    except TraceReadError:  # no project yet
        return 0


TIMING = {"report_id", "created_at", "duration_seconds", "duration_s", "duration_ms", "timestamp"}
"""What differs between two scorings of the same spans (Phoenix keeps times to the microsecond)."""


def _without_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_timing(item) for key, item in value.items() if key not in TIMING}
    if isinstance(value, list):
        return [_without_timing(item) for item in value]
    return value


def _summary(trajectory: Trajectory) -> tuple[Any, ...]:
    return (trajectory.trace_id, trajectory.span_id, trajectory.final_response, trajectory.node_order(),
            [(call.name, call.args, call.result) for call in trajectory.tool_calls()])


def test_phoenix_gives_the_report_the_trace_file_gives(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PHOENIX_API_KEY", run.phoenix.api_key)
    reports = {}
    for name, source in (("file", ["--traces", str(run.file)]),
                         ("phoenix", ["--phoenix", run.phoenix.url, "--project", PROJECT, "--since", "1h"])):
        assert main(["eval", EVALSET, *source, "--quiet", "--report", str(tmp_path / f"{name}.json"),
                     "--run-file", str(tmp_path / f"{name}.run.jsonl")]) == 0
        reports[name] = _without_timing(json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8")))
    assert reports["phoenix"] == reports["file"]
    assert {result["trace_id"] for result in reports["phoenix"]["results"]} <= run.trace_ids


def test_a_time_window_reads_only_the_traces_that_started_in_it(run: Run) -> None:
    client = PhoenixClient(run.phoenix.url, api_key=run.phoenix.api_key)
    inside = PhoenixSource(client, PROJECT, start=run.before, end=run.after)
    assert {t.trace_id for t in inside.trajectories()} == run.trace_ids
    assert inside.progress.done == len(run.trace_ids)
    for outside in (PhoenixSource(client, PROJECT, end=run.before), PhoenixSource(client, PROJECT, start=run.after)):
        assert list(outside.trajectories()) == []


class CountingTransport:
    """The real transport, with the URLs asked for kept."""

    def __init__(self) -> None:
        self.transport = UrllibTransport()
        self.urls: list[str] = []

    def handle_request(self, request: HttpRequest) -> HttpResponse:
        self.urls.append(request.url)
        return self.transport.handle_request(request)


@pytest.mark.promise(24)
def test_small_pages_still_give_whole_traces(run: Run) -> None:
    """Two traces a page, two spans a request: every trace's spans straddle pages."""
    counting = CountingTransport()
    client = PhoenixClient(run.phoenix.url, api_key=run.phoenix.api_key, spans_per_page=2, transport=counting)
    paged = PhoenixSource(client, PROJECT, traces_per_page=2)
    expected = sorted(map(_summary, read_trajectories([run.file]).trajectories))
    assert sorted(map(_summary, paged.trajectories())) == expected
    trace_pages = [url for url in counting.urls if "/traces?" in url]
    span_pages = [url for url in counting.urls if "/spans/otlpv1?" in url]
    assert len(trace_pages) == 3 and len(span_pages) > len(run.trace_ids) * 2
    assert paged.progress.done == len(run.trace_ids) and paged.progress.total is None


def test_limit_reads_the_newest_traces(run: Run) -> None:
    client = PhoenixClient(run.phoenix.url, api_key=run.phoenix.api_key)
    newest = sorted(read_trajectories([run.file]).trajectories, key=lambda t: t.start_ns or 0)[-2:]
    limited = PhoenixSource(client, PROJECT, limit=2, traces_per_page=1)
    assert {t.trace_id for t in limited.trajectories()} == {t.trace_id for t in newest}
    assert limited.progress.done == 2


def test_a_filter_is_phoenix_own_and_a_bad_one_is_named(
    run: Run, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    client = PhoenixClient(run.phoenix.url, api_key=run.phoenix.api_key)
    everything = {t.trace_id: len(t.tool_calls()) for t in read_trajectories([run.file]).trajectories}
    with_tools = PhoenixSource(client, PROJECT, filter="tool_span_count > 0")
    assert {t.trace_id for t in with_tools.trajectories()} == {key for key, calls in everything.items() if calls}
    monkeypatch.setenv("PHOENIX_API_KEY", run.phoenix.api_key)
    assert main(["eval", EVALSET, "--phoenix", run.phoenix.url, "--project", PROJECT, "--filter", "latency_ms >",
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agenteval: error: {run.phoenix.url}/v1/projects/{PROJECT}/traces: HTTP 400: "
                          "Phoenix rejected the filter 'latency_ms >': ")
    assert err.count("\n") == 1


class EchoingGateway(BaseHTTPRequestHandler):
    """A gateway in front of a server that is down, which quotes the request's token back."""

    def do_GET(self) -> None:  # noqa: N802 - the http.server hook
        token = self.headers.get("Authorization", "").partition(" ")[2]
        body = f"upstream down; token {token} not checked".encode()
        self.send_response(502)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def echoing_gateway() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoingGateway)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.mark.promise(19)
def test_errors_are_one_line_exit_2_and_never_show_the_key(
    run: Run, echoing_gateway: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    down = f"http://127.0.0.1:{closed_port()}"
    cases = [  # (server, project, key, what the message says)
        (run.phoenix.url, "nope", run.phoenix.api_key, "/v1/projects/nope/traces: Phoenix has no project 'nope' "
                                                       "(HTTP 404: Project with name nope not found)"),
        (run.phoenix.url, PROJECT, "phx-" + run.phoenix.api_key[::-1],
         f"/v1/projects/{PROJECT}/traces: HTTP 401: Phoenix refused the API key in PHOENIX_API_KEY "
         "(wrong, expired or revoked)"),
        (run.phoenix.url, PROJECT, "", f"/v1/projects/{PROJECT}/traces: HTTP 401: Phoenix wants an API key and "
                                       "none was given (set PHOENIX_API_KEY)"),
        (down, PROJECT, run.phoenix.api_key, f"/v1/projects/{PROJECT}/traces: cannot reach Phoenix ("),
        (echoing_gateway, PROJECT, run.phoenix.api_key,
         f"/v1/projects/{PROJECT}/traces: HTTP 502: upstream down; token *** not checked\n"),
    ]
    for server, project, key, said in cases:
        monkeypatch.setenv("PHOENIX_API_KEY", key)
        assert main(["eval", EVALSET, "--phoenix", server, "--project", project, "--quiet"]) == 2
        captured = capsys.readouterr()
        assert captured.err.startswith(f"agenteval: error: {server}{said}"), captured.err
        assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
        if key:
            assert key not in captured.err + captured.out and key[-12:] not in captured.err
    assert main(["eval", EVALSET, "--phoenix", down.replace("//", "//admin:s3cret@"), "--project", PROJECT]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agenteval: error: {down.replace('//', '//admin:***@')}/v1/") and "s3cret" not in err


@pytest.mark.parametrize(("args", "said"), [
    (["--phoenix", "http://127.0.0.1:9"], "--phoenix needs --project NAME (a project's name or id)"),
    (["--phoenix", "localhost:6006", "--project", "p"], "--phoenix: base_url must be an http(s) URL, got "
                                                        "'localhost:6006'"),
    (["--phoenix", "http://127.0.0.1:9", "--project", "a/b"], "--project a/b: project must be a name or id "
                                                              "without '/', '?' or '#', got 'a/b'"),
    (["--traces", "x.jsonl", "--project", "p"], "--project goes with --phoenix URL"),
    (["--jaeger", "http://127.0.0.1:9", "--service", "s", "--filter", "x"], "--filter goes with --phoenix URL"),
    (["--phoenix", "http://127.0.0.1:9", "--jaeger", "http://127.0.0.1:9"],
     "give one place to read traces from, not --jaeger and --phoenix"),
])
def test_bad_phoenix_options_exit_2_with_one_line(
    args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", EVALSET, *args, "--quiet"]) == 2
    assert capsys.readouterr().err == f"agenteval: error: {said}\n"


def test_a_server_that_is_not_phoenix_is_named() -> None:
    """A web page (Phoenix's UI answers unknown paths with it) or JSON of another shape."""
    answers = iter([HttpResponse(200, b"<!DOCTYPE html><html></html>"), HttpResponse(200, b'{"traces": []}')])
    client = PhoenixClient("http://phoenix:6006", api_key="", transport=MockTransport(lambda _: next(answers)))
    shown = "http://phoenix:6006/v1/projects/p/traces"
    with pytest.raises(TraceReadError, match=f"^{shown}: the server answered a web page, not JSON; expected a "
                                             "Phoenix server whose REST API has /v1/projects/"):
        list(PhoenixSource(client, "p").trajectories())
    with pytest.raises(TraceReadError, match=f"^{shown}: not a Phoenix answer; expected a JSON object with 'data'"):
        list(PhoenixSource(client, "p").trajectories())
