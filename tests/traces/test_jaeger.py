"""Jaeger JSON files and the Jaeger query API client (against a local server serving the real
Jaeger files)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces import JaegerClient, read_jaeger_json, read_spans
from agenteval_otel.traces.jaeger import record_from_span
from agenteval_otel.trajectory import build_trajectories
from agenteval_otel.trajectory.spans import normalize_trace_id

UI_TRACE = "jaeger__internal__uimodel__converter__v1__json__fixtures__ui_01.json"
QUERY_RESPONSE = (
    "jaeger__cmd__jaeger__internal__extension__jaegerquery__internal__fixture__otlp2jaeger-out.json"
)
ANONYMIZED = "jaeger__cmd__anonymizer__app__uiconv__fixtures__trace_success.json"
GENAI = "jaeger-ui__components__TracePage__TraceTimelineViewer__genaiTestTrace.json"
API_V3 = "jaeger__cmd__jaeger__internal__extension__jaegerquery__internal__apiv3__snapshots__GetTrace.json"


def test_ui_model_trace(traces_dir: Path) -> None:
    records = list(read_jaeger_json(traces_dir / "jaeger" / UI_TRACE))
    assert len(records) == 5
    first, error_span, child, linked, deep = records
    assert first.trace_id == "0" * 31 + "1" and first.span_id == "0" * 15 + "2"
    assert first.start_ns == 1485467191639875000 and first.duration_ns == 5000
    assert [e.name for e in first.events] == ["some-event", "log"] and first.events[1].attributes == {
        "x": "y"
    }
    assert first.resource == {"service.name": "service-x"}
    assert error_span.status.code == "error" and error_span.attributes["temperature"] == 72.5
    assert error_span.attributes["blob"] == b"\x00\x0009"
    assert child.parent_id == first.span_id
    assert linked.parent_id == first.span_id and linked.links[0].trace_id == "0" * 30 + "ff"
    assert deep.parent_id == linked.span_id


def test_query_api_response_restores_kind_status_and_scope(traces_dir: Path) -> None:
    records = list(read_jaeger_json(traces_dir / "jaeger" / QUERY_RESPONSE))
    original = list(read_spans(traces_dir / "jaeger" / QUERY_RESPONSE.replace("-out", "-in")))
    assert {(r.trace_id, r.span_id, r.parent_id, r.name, r.kind) for r in records} == {
        (r.trace_id, r.span_id, r.parent_id, r.name, r.kind) for r in original
    }
    assert {r.scope_name for r in records} == {r.scope_name for r in original}
    assert all("span.kind" not in r.attributes and "otel.scope.name" not in r.attributes for r in records)


def test_span_list_with_64_bit_ids_inline_process_and_a_missing_parent(traces_dir: Path) -> None:
    records = list(read_spans(traces_dir / "jaeger" / ANONYMIZED))
    assert [r.trace_id for r in records] == ["0000000000000000" + "2be38093ead7a083"] * 2
    assert records[0].kind == "server" and records[1].status.code == "error"
    (trajectory,) = build_trajectories(records, group="trace")
    assert trajectory.trace_ids == [records[0].trace_id]


def test_api_v3_response_is_otlp_inside_result(traces_dir: Path) -> None:
    (record,) = read_spans(traces_dir / "jaeger" / API_V3)
    assert (record.name, record.kind, record.status.code) == ("foobar", "server", "error")


def test_genai_trace_from_jaeger(traces_dir: Path) -> None:
    (trajectory,) = build_trajectories(read_spans(traces_dir / "jaeger" / GENAI))
    assert trajectory.agent_name == "triage-agent"
    assert [c.name for c in trajectory.tool_calls()] == ["list_dashboards", "search_traces"] * 3 + [
        "summarize_findings"
    ]
    assert trajectory.tool_calls()[0].args == {"window": "1h"}
    assert trajectory.user_input == "Why did the checkout latency regress this afternoon?"
    assert trajectory.usage.input_tokens == 4 * 1840 + 920


# --- the query API client ---------------------------------------------------------------------


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
def jaeger(traces_dir: Path) -> Iterator[Served]:
    traces: dict[str, bytes] = {}
    for path in (traces_dir / "jaeger").glob("*.json"):
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
            "search_response": (traces_dir / "jaeger" / QUERY_RESPONSE).read_bytes(),
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
    assert {r.trace_id for r in records} == {"83a9efd15c1c98a977e0711cc93ee28b"}
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
    records = client.get_trace("4A1B2C3D4E5F60718293A4B5C6D7E8F9")
    assert len(records) == 57 and {r.trace_id for r in records} == {"4a1b2c3d4e5f60718293a4b5c6d7e8f9"}
    assert len(client.get_trace("0000000000000001")) == 5


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


def test_one_jaeger_span_with_its_process(traces_dir: Path) -> None:
    spans = json.loads((traces_dir / "jaeger" / UI_TRACE).read_text())
    record = record_from_span(spans["spans"][2], processes=spans["processes"])
    assert (record.span_id, record.parent_id, record.service_name) == (
        "0" * 15 + "3",
        "0" * 15 + "2",
        "service-y",
    )
