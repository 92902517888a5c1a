"""``ClickHouseSource`` and ``agenteval eval --clickhouse`` against ClickHouse itself.

chDB, ClickHouse embedded in the test process, holds the exporter's traces table
(``clickhouse_exporter.TRACES_TABLE``) with the rows the exporter writes for our runs; the source
runs its SQL there and decodes the rows clickhouse-connect returns, through clickhouse-connect's
own client (its chdb backend) and, for the command line, a ``chdb:`` URL. What chDB does not
have, the HTTP transport, meets real sockets on 127.0.0.1: a server that refuses the
credentials as ClickHouse does (HTTP 403, code 516), a closed port, a server that never answers.
"""

from __future__ import annotations

import importlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agenteval_otel.cli import main
from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces import ClickHouseSource, TraceFileSource, read_spans
from agenteval_otel.traces.clickhouse import SPAN_COLUMNS, TraceQuery, record_from_row
from agenteval_otel.trajectory import SpanEvent, SpanRecord, SpanStatus
from tests.backends import REQUIRE_ENV
from tests.conftest import REPO_ROOT
from tests.shared_data import skip_or_fail
from tests.traces.clickhouse_exporter import INSERT_COLUMNS, TRACES_TABLE, exporter_rows

MISSING = "the ClickHouse tests need clickhouse-connect and chDB: pip install -e '.[backends-test]'"

EXAMPLES = REPO_ROOT / "examples"
POLICIES = EXAMPLES / "production_policies.json"
HOUR_NS = 3600 * 10**9


def _needed(module: str) -> Any:
    """``module``; else the test is skipped (failed with ``AGENTEVAL_REQUIRE_BACKENDS=1``, as in CI)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        skip_or_fail(MISSING, REQUIRE_ENV)


@pytest.fixture(scope="module")
def driver() -> Any:
    """The ``clickhouse_connect`` package."""
    return _needed("clickhouse_connect")


@pytest.fixture(scope="module")
def engine(driver: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """A chDB database on disk (one per process: every client of these tests opens this one),
    its ``chdb:`` URL and an open clickhouse-connect client of it."""
    _needed("chdb")
    url = f"chdb:{tmp_path_factory.mktemp('chdb')}"
    client = driver.get_client(dsn=url)
    yield url, client
    client.close()


def _table(client: Any, name: str, spans: list[SpanRecord]) -> str:
    """The exporter's table ``name``, holding the rows it writes for ``spans``."""
    client.command(f"DROP TABLE IF EXISTS {name}")
    client.command(TRACES_TABLE.format(table=name))
    if spans:
        client.insert(name, exporter_rows(spans), column_names=INSERT_COLUMNS)
    return name


def _file_spans(*paths: Path) -> list[SpanRecord]:
    return [span for path in paths for span in read_spans(path)]


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_our_runs_read_back_from_the_exporter_table_as_from_their_files(
        engine: tuple[str, Any], weather_runs: Path) -> None:
    """Sequential and parallel tools, streaming, a conversation, a graph fan-out, a failing tool:
    the trajectories from the table equal those from the files, though every attribute value
    went through the exporter's strings (token counts, floats, booleans included)."""
    _, client = engine
    files = sorted(path for path in weather_runs.glob("run*.otlp.json"))
    table = _table(client, "weather_runs", _file_spans(*files))
    expected = sorted((t.model_dump(mode="json") for t in TraceFileSource(files).trajectories()), key=json.dumps)
    source = ClickHouseSource(client, table, lookback=timedelta(days=1))
    found = sorted((t.model_dump(mode="json") for t in source.trajectories()), key=json.dumps)
    assert found == expected
    assert any(t["usage"]["input_tokens"] for t in found)  # counts the exporter wrote as strings
    traces = len({span.trace_id for span in _file_spans(*files)})
    assert (source.progress.unit, source.progress.total, source.progress.done) == ("traces", traces, traces)


@pytest.fixture(scope="module")
def weather_agent_traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example weather agent's runs over its eval set, as OTLP JSON lines."""
    from agenteval_otel import EvalSet, evaluate
    from agenteval_otel.evaluation import load_agent
    from agenteval_otel.tracing import OtlpJsonFileExporter

    path = tmp_path_factory.mktemp("weather_agent") / "traces.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
    evaluate(EvalSet.load(EXAMPLES / "weather_agent.evalset.json"),
             load_agent(f"{EXAMPLES / 'weather_agent.py'}:weather_agent"), tracer_provider=provider)
    provider.shutdown()
    return path


def _report(tmp_path: Path, name: str, *source: str) -> dict[str, Any]:
    code = main(["eval", str(EXAMPLES / "weather_agent.evalset.json"), *source,
                 "--config", str(EXAMPLES / "weather_agent.config.json"), "--quiet",
                 "--report", str(tmp_path / f"{name}.json"), "--run-file", str(tmp_path / f"{name}.run.jsonl")])
    assert code == 0
    report: dict[str, Any] = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
    return report


def _without_run_fields(report: dict[str, Any]) -> dict[str, Any]:
    """The report less what differs from one run to the next (its id, when and how long)."""
    return {key: value for key, value in report.items() if key not in ("report_id", "created_at", "duration_seconds")}


def test_eval_of_the_weather_set_from_clickhouse_gives_the_files_report(
        engine: tuple[str, Any], weather_agent_traces: Path, tmp_path: Path) -> None:
    url, client = engine
    table = _table(client, "weather_agent", _file_spans(weather_agent_traces))
    from_file = _report(tmp_path, "file", "--traces", str(weather_agent_traces))
    from_table = _report(tmp_path, "table", "--clickhouse", url, "--table", table, "--since", "1h")
    assert [case["passed"] for case in from_file["results"]] == [True] * 4
    assert _without_run_fields(from_table) == _without_run_fields(from_file)  # the routes' True/False included
    policies = {}
    for name, source in (("file", ["--traces", str(weather_agent_traces)]), ("table", ["--clickhouse", url, "--table", table])):
        main(["eval", *source, "--config", str(POLICIES), "--quiet", "--report", str(tmp_path / f"p-{name}.json"),
              "--run-file", str(tmp_path / f"p-{name}.run.jsonl")])
        policies[name] = _without_run_fields(json.loads((tmp_path / f"p-{name}.json").read_text(encoding="utf-8")))
    assert policies["table"].pop("eval_set_id") == "clickhouse-weather_agent"  # no eval set: named after the table
    assert policies["file"].pop("eval_set_id") == "traces"
    assert len(policies["table"]["results"]) == 5
    policies["file"]["results"].sort(key=lambda case: case["trace_id"])  # the file's order: as the spans ended
    policies["table"]["results"].sort(key=lambda case: case["trace_id"])  # the table's: as the traces began
    assert policies["table"] == policies["file"]


def _span(trace: int, span: int, *, parent: int | None = None, start_ns: int, service: str = "svc-a",
          **attributes: Any) -> SpanRecord:
    return SpanRecord(trace_id=f"{trace:032x}", span_id=f"{span:016x}", parent_id=f"{parent:016x}" if parent else None,
                      name=f"span {span}", kind="server" if parent is None else "internal", start_ns=start_ns,
                      end_ns=start_ns + 1000, attributes=attributes, resource={"service.name": service},
                      events=(SpanEvent("exception", start_ns + 10, {"exception.type": "ValueError"}),),
                      status=SpanStatus("error", "boom") if span == 2 else SpanStatus("ok"))


def test_the_window_service_where_and_limit_pick_whole_traces(engine: tuple[str, Any]) -> None:
    """Trace 1 began before the window (its root two hours ago) and has a span in it: it is read
    whole. The service, the raw condition and the limit (the most recent first) select traces."""
    _, client = engine
    now = time.time_ns()
    spans = [_span(1, 1, start_ns=now - 2 * HOUR_NS), _span(1, 2, parent=1, start_ns=now - HOUR_NS // 2),
             _span(2, 3, start_ns=now - HOUR_NS // 4, service="svc-b"),
             _span(3, 4, start_ns=now - HOUR_NS // 8, **{"gen_ai.agent.name": "weather"}),
             _span(4, 5, start_ns=now - 3 * HOUR_NS)]
    table = _table(client, "picked", spans)

    def read(**query: Any) -> tuple[list[tuple[str, str]], tuple[int | None, int]]:
        source = ClickHouseSource(client, table, lookback=timedelta(hours=1), **query)
        found = [(record.trace_id[-1], record.span_id[-1]) for record in source.spans()]
        return found, (source.progress.total, source.progress.done)

    assert read() == ([("1", "1"), ("1", "2"), ("2", "3"), ("3", "4")], (3, 3))
    assert read(service="svc-a") == ([("1", "1"), ("1", "2"), ("3", "4")], (2, 2))
    assert read(where="SpanAttributes['gen_ai.agent.name'] LIKE 'weath%'") == ([("3", "4")], (1, 1))
    assert read(limit=2) == ([("2", "3"), ("3", "4")], (2, 2))
    assert read(batch=1) == read()  # a query per trace, in the same order
    [root, child] = [r for r in ClickHouseSource(client, table, service="svc-a", limit=1,
                                                 start=datetime.fromtimestamp((now - HOUR_NS) / 1e9, timezone.utc),
                                                 end=datetime.fromtimestamp((now - HOUR_NS // 4) / 1e9, timezone.utc)
                                                 ).spans()]
    assert (root.kind, root.status.code, root.parent_id, root.resource) == ("server", "ok", None, {"service.name": "svc-a"})
    assert (child.kind, child.status, child.parent_id) == ("internal", SpanStatus("error", "boom"), root.span_id)
    assert child.events == (SpanEvent("exception", now - HOUR_NS // 2 + 10, {"exception.type": "ValueError"}),)


def test_a_read_only_user_reads_without_the_servers_deadline(engine: tuple[str, Any], driver: Any) -> None:
    """A user who may not change settings (``readonly=1``) is refused ``max_execution_time``:
    the source asks again without it, once, and keeps the client's own deadline."""
    url, client = engine
    table = _table(client, "read_only", [_span(7, 1, start_ns=time.time_ns() - HOUR_NS // 2)])
    read_only = driver.get_client(dsn=url, settings={"readonly": "1"})
    try:
        with pytest.raises(Exception, match="READONLY"):
            read_only.query("SELECT 1", settings={"max_execution_time": 5})
        source = ClickHouseSource(read_only, table)
        assert [record.trace_id for record in source.spans()] == [f"{7:032x}"]
    finally:
        read_only.close()


def test_rows_as_drivers_give_them_and_older_exporters_spell_them() -> None:
    """A tuple in column order or a mapping; maps as pairs; datetimes; ``SPAN_KIND_*`` and
    ``STATUS_CODE_*`` (older exporters wrote those, through traceutil's ``SpanKindStr`` and
    ``StatusCodeStr``)."""
    values = {"TraceId": "5B8EFFF798038103D269B633813FC60C", "SpanId": "eee19b7ec3c1b174",
              "ParentSpanId": "", "SpanName": "chat", "SpanKind": "SPAN_KIND_CLIENT",
              "StartNs": datetime(2025, 1, 1, tzinfo=timezone.utc), "Duration": 5,
              "StatusCode": "STATUS_CODE_ERROR", "StatusMessage": "", "SpanAttributes": [("a", "1")],
              "ResourceAttributes": {}, "ScopeName": "", "ScopeVersion": "", "EventTimes": [7],
              "Events.Name": ["e"], "Events.Attributes": [{}], "Links.TraceId": [""], "Links.SpanId": [""],
              "Links.Attributes": [{}]}
    by_name = record_from_row(values)
    assert record_from_row(tuple(values[name] for name in SPAN_COLUMNS)) == by_name
    assert (by_name.trace_id, by_name.kind, by_name.status, by_name.attributes, by_name.links) == (
        "5b8efff798038103d269b633813fc60c", "client", SpanStatus("error"), {"a": "1"}, ())
    assert by_name.end_ns - 5 == by_name.start_ns == 1_735_689_600 * 10**9
    conditional = {"agenteval.conditional.value": "true", "agenteval.conditional.branch": "true", "n": "3"}
    assert record_from_row({**values, "SpanAttributes": conditional}).attributes == {
        "agenteval.conditional.value": True, "agenteval.conditional.branch": "true", "n": "3"}
    assert record_from_row({**values, "SpanAttributes": {"agenteval.conditional.value": "tools"}}).attributes == {
        "agenteval.conditional.value": "tools"}
    with pytest.raises(ValueError, match="expected a row of 19 columns"):
        record_from_row(("5b8efff798038103d269b633813fc60c",))
    with pytest.raises(ValueError, match=r"StartNs: expected nanoseconds .* got '2025'"):
        record_from_row({**values, "StartNs": "2025"})


def test_bad_arguments_name_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    asked = ["eval", "--config", str(POLICIES), "--quiet"]
    for options, message in [
        (["--clickhouse", "ftp://admin:s3cretpw@ch:21"],
         "--clickhouse: expected an http(s) URL such as http://localhost:8123 (or chdb:PATH), "
         "got 'ftp://admin:***@ch:21'"),
        (["--clickhouse", "http://ch:8123", "--table", "otel traces"],
         "--table: expected a table name such as otel_traces or otel.otel_traces, got 'otel traces'"),
        (["--clickhouse", "http://ch:8123", "--where", " "], "--where: expected an SQL condition, got an empty text"),
        (["--jaeger", "http://j:16686", "--service", "s", "--where", "1"],
         "--where goes with --clickhouse: it is an SQL condition, and --jaeger reads no SQL"),
        (["--clickhouse", "http://ch:8123", "--jaeger", "http://j:16686"],
         "give one place to read traces from, not --jaeger and --clickhouse"),
    ]:
        assert main([*asked, *options]) == 2
        assert _one_line(capsys.readouterr().err) == f"agenteval: error: {message}"
    with pytest.raises(ValueError, match="the window is empty"):
        TraceQuery("otel_traces", start_ns=5, end_ns=5)


def test_a_table_that_is_not_the_exporters_is_named(
        engine: tuple[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    url, client = engine
    client.command("CREATE TABLE IF NOT EXISTS not_traces (TraceId String, Timestamp DateTime64(9)) "
                   "ENGINE = MergeTree ORDER BY Timestamp")
    client.command("INSERT INTO not_traces VALUES ('5b8efff798038103d269b633813fc60c', now64(9))")
    run = ["eval", "--clickhouse", url, "--config", str(POLICIES), "--quiet", "--run-file", str(tmp_path / "r")]
    assert main([*run, "--table", "nope"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith(f"agenteval: error: ClickHouse {url}, table nope: no such table (Code: 60. ")
    assert line.endswith("expected the table the OpenTelemetry Collector's clickhouse exporter writes spans to "
                         "(its otel_traces schema)")
    assert main([*run, "--table", "not_traces"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "table not_traces: the table lacks a column of the exporter's schema (Code: 47. " in line
    assert line.endswith("(its otel_traces schema)")


class _RefusingClickHouse(BaseHTTPRequestHandler):
    """Answers every request as ClickHouse answers a wrong password."""

    seen: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook
        self.seen.append(self.headers.get("Authorization", ""))
        body = (b"Code: 516. DB::Exception: admin: Authentication failed: password is incorrect, or there is "
                b"no user with such name. (AUTHENTICATION_FAILED) (version 25.3.1.1)\n")
        self.send_response(403)
        self.send_header("X-ClickHouse-Exception-Code", "516")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.mark.promise(19)
def test_refused_credentials_are_one_line_without_the_password(
        driver: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import base64

    server = ThreadingHTTPServer(("127.0.0.1", 0), _RefusingClickHouse)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    port = server.server_address[1]
    run = ["eval", "--config", str(POLICIES), "--quiet", "--run-file", str(tmp_path / "r")]
    try:
        assert main([*run, "--clickhouse", f"http://admin:s3cretpw0rd@127.0.0.1:{port}/otel"]) == 2
        from_url = _one_line(capsys.readouterr().err)
        monkeypatch.setenv("CLICKHOUSE_USER", "admin")
        monkeypatch.setenv("CLICKHOUSE_PASSWORD", "s3cretpw0rd")
        assert main([*run, "--clickhouse", f"http://127.0.0.1:{port}/otel"]) == 2
        from_env = _one_line(capsys.readouterr().err)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    sent = "Basic " + base64.b64encode(b"admin:s3cretpw0rd").decode()
    assert _RefusingClickHouse.seen[0] == _RefusingClickHouse.seen[-1] == sent
    for line, shown in ((from_url, f"http://admin:***@127.0.0.1:{port}/otel"), (from_env, f"http://127.0.0.1:{port}/otel")):
        assert "s3cretpw0rd" not in line
        assert line == (f"agenteval: error: ClickHouse {shown}, table otel_traces: ClickHouse refused the credentials "
                        "of user admin (Code: 516. DB::Exception: admin: Authentication failed: password is "
                        "incorrect, or there is no user with such name. (AUTHENTICATION_FAILED) (version 25.3.1.1)); "
                        "give them in the URL (http://USER:PASSWORD@HOST:8123) or in CLICKHOUSE_USER and "
                        "CLICKHOUSE_PASSWORD")


def test_a_server_that_is_down_is_one_line(driver: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    assert main(["eval", "--clickhouse", f"http://127.0.0.1:{port}", "--config", str(POLICIES), "--quiet",
                 "--run-file", str(tmp_path / "r")]) == 2
    assert _one_line(capsys.readouterr().err) == (
        f"agenteval: error: ClickHouse http://127.0.0.1:{port}, table otel_traces: cannot reach ClickHouse while "
        "connecting ([Errno 111] Connection refused)")


def test_a_server_that_never_answers_is_given_up_at_the_deadline(driver: Any) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        source = ClickHouseSource(f"http://127.0.0.1:{silent.getsockname()[1]}", timeout=1.0)
        started = time.monotonic()
        with pytest.raises(TraceReadError, match=r"no answer within the deadline of 1 s while connecting"):
            list(source.trajectories())
        assert time.monotonic() - started < 5
