"""The evaluation worker behind ``agenteval serve``: real OTLP in (the official HTTP and gRPC
exporters, and OTLP/JSON posted as it is stored), verdicts out as records on the judged spans (and,
when asked for, evaluation spans in traces of their own), and the Collector's trace-id load
balancing stood in for across three workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from agenteval_otel import semconv as attr
from agenteval_otel.criteria import EvalConfig
from agenteval_otel.evaluation._worker import EvaluationWorker
from agenteval_otel.results import HistoryStore
from agenteval_otel.traces.files import read_logs, read_spans, read_trajectories
from agenteval_otel.tracing import logs_file_for
from agenteval_otel.trajectory.logs import LogRecord
from agenteval_otel.trajectory.spans import SpanRecord
from tests.conftest import REPO_ROOT

POLICIES = EvalConfig.model_validate({"criteria": {
    "final_response_present": {},
    "max_tool_calls": {"params": {"limit": 10}},
}})
OPENINFERENCE = Path("traces") / "generated" / "openinference" / "run1_sequential_two_tools.otlp.json"


def _readable(record: SpanRecord) -> ReadableSpan:
    """A stored span as the SDK's ``ReadableSpan``, for the official exporters to send as it is."""
    def context(span_id: str) -> SpanContext:
        return SpanContext(int(record.trace_id, 16), int(span_id, 16), is_remote=False,
                           trace_flags=TraceFlags(TraceFlags.SAMPLED))

    return ReadableSpan(
        name=record.name, context=context(record.span_id),
        parent=context(record.parent_id) if record.parent_id else None,
        resource=Resource(dict(record.resource)), attributes=dict(record.attributes),
        events=[Event(e.name, dict(e.attributes), e.time_ns) for e in record.events],
        kind=SpanKind.INTERNAL, status=Status(StatusCode.UNSET),
        start_time=record.start_ns, end_time=record.end_ns,
    )


def _verdicts(target: Path) -> tuple[list[SpanRecord], list[LogRecord]]:
    """The evaluation spans and the verdict records an export file holds."""
    spans = ([s for s in read_spans(target) if s.attributes.get(attr.EVALUATION_MARKER)]
             if target.exists() and target.stat().st_size else [])
    logs = list(read_logs([logs_file_for(target)])) if logs_file_for(target).exists() else []
    return spans, logs


@pytest.fixture
def stored(shared_data: Path) -> tuple[Path, list[SpanRecord]]:
    path = shared_data / OPENINFERENCE
    return path, list(read_spans(path))


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[EvaluationWorker]:
    worker = EvaluationWorker(POLICIES, export_target=str(tmp_path / "verdicts.jsonl"),
                              http_port=0, grpc_port=0).start()
    yield worker
    worker.stop(timeout=5)


def _assert_judged(stored_path: Path, target: Path, *, spans_too: bool = False) -> None:
    [invocation] = read_trajectories([stored_path]).trajectories
    spans, logs = _verdicts(target)
    assert sorted(log.attributes[attr.GEN_AI_EVALUATION_NAME] for log in logs) == [
        "final_response_present", "max_tool_calls"]
    assert {(log.trace_id, log.span_id) for log in logs} == {(invocation.trace_id, invocation.span_id)}
    assert {log.attributes[attr.GEN_AI_EVALUATION_SCORE_LABEL] for log in logs} == {"pass"}
    if not spans_too:
        assert spans == []
        return
    assert sorted(s.name for s in spans) == ["evaluation final_response_present", "evaluation max_tool_calls"]
    assert all(s.parent_id is None and s.trace_id != invocation.trace_id for s in spans)
    assert {(link.trace_id, link.span_id) for s in spans for link in s.links} == {
        (invocation.trace_id, invocation.span_id)}


@pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
def test_a_stored_trace_posted_as_otlp_json_gets_its_verdicts(
    stored: tuple[Path, list[SpanRecord]], worker: EvaluationWorker, tmp_path: Path, gzip: bool
) -> None:
    path, _ = stored
    body = path.read_bytes()
    headers = {"Content-Type": "application/json"}
    if gzip:
        compressor = zlib.compressobj(wbits=31)
        body = compressor.compress(body) + compressor.flush()
        headers["Content-Encoding"] = "gzip"
    request = urllib.request.Request(f"http://127.0.0.1:{worker.receiver.http_port}/v1/traces",
                                     data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200 and json.loads(response.read()) == {}
    assert worker.stop(timeout=5)
    assert worker.evaluator.counters.evaluated == 1
    _assert_judged(path, tmp_path / "verdicts.jsonl")


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_a_stored_trace_sent_by_the_official_exporters_gets_its_verdicts(
    stored: tuple[Path, list[SpanRecord]], worker: EvaluationWorker, tmp_path: Path, protocol: str
) -> None:
    path, records = stored
    if protocol == "grpc":
        exporter = GrpcSpanExporter(endpoint=f"127.0.0.1:{worker.receiver.grpc_port}", insecure=True, timeout=5)
    else:
        exporter = HttpSpanExporter(endpoint=f"http://127.0.0.1:{worker.receiver.http_port}/v1/traces", timeout=5)
    # two batches, the root in the second: a trace is scored when its root arrives
    assert exporter.export([_readable(r) for r in records[1:]]) is SpanExportResult.SUCCESS
    assert exporter.export([_readable(records[0])]) is SpanExportResult.SUCCESS
    exporter.shutdown()
    assert worker.stop(timeout=5)
    _assert_judged(path, tmp_path / "verdicts.jsonl")


@pytest.mark.promise(23)
def test_with_evaluation_spans_the_spool_is_cleared_once_the_judged_traces_records_are_out(
    stored: tuple[Path, list[SpanRecord]], tmp_path: Path
) -> None:
    """``export_as="both"``: the evaluation spans live in traces of their own, and the trace they
    judge leaves the spool once its verdict records (which carry its id) are delivered."""
    path, records = stored
    target = tmp_path / "verdicts.jsonl"
    worker = EvaluationWorker(POLICIES, export_target=str(target), export_as="both", run_id="w1", http_port=0,
                              spool=tmp_path / "spool", evaluator_options={"settle_s": 0.05}).start()
    exporter = HttpSpanExporter(endpoint=f"http://127.0.0.1:{worker.receiver.http_port}/v1/traces", timeout=5)
    assert exporter.export([_readable(r) for r in records]) is SpanExportResult.SUCCESS
    exporter.shutdown()
    assert worker.stop(timeout=5)
    assert worker.health["spool"]["pending_traces"] == 0 and worker.health["verdicts"]["exported"] == 2
    _assert_judged(path, target, spans_too=True)
    assert {log.attributes[attr.EVAL_RUN_ID] for log in _verdicts(target)[1]} == {"w1"}


@pytest.mark.promise(23)
def test_with_log_export_off_the_spool_is_cleared_once_scored(
    stored: tuple[Path, list[SpanRecord]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OTEL_LOGS_EXPORTER=none``: no verdict record will ever confirm the trace, so it leaves the
    spool once scored instead of waiting there for good."""
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "none")
    _, records = stored
    worker = EvaluationWorker(POLICIES, export_target=str(tmp_path / "verdicts.jsonl"), export_as="both",
                              http_port=0, spool=tmp_path / "spool", evaluator_options={"settle_s": 0.05}).start()
    exporter = HttpSpanExporter(endpoint=f"http://127.0.0.1:{worker.receiver.http_port}/v1/traces", timeout=5)
    assert exporter.export([_readable(r) for r in records]) is SpanExportResult.SUCCESS
    exporter.shutdown()
    assert worker.stop(timeout=5)
    assert worker.evaluator.counters.evaluated == 1 and worker.health["spool"]["pending_traces"] == 0


def test_health_shows_the_receiver_and_the_evaluator(worker: EvaluationWorker) -> None:
    with urllib.request.urlopen(f"http://127.0.0.1:{worker.receiver.http_port}/health", timeout=5) as response:
        document = json.loads(response.read())
    assert document["status"] == "serving"
    assert document["consumer"]["evaluator"]["received"] == 0


def _traces(count: int) -> list[list[SpanRecord]]:
    """``count`` small agent traces (a root and a tool call each), with distinct trace ids."""
    traces = []
    for number in range(count):
        trace_id = f"{number + 1:032x}"
        root = SpanRecord(trace_id=trace_id, span_id=f"{number + 1:016x}", parent_id=None,
                          name="invoke_agent weather", start_ns=1_000, end_ns=9_000,
                          attributes={"agenteval.step.type": "agent", "gen_ai.operation.name": "invoke_agent",
                                      "gen_ai.agent.name": "weather", "agenteval.step.output": f"Sunny #{number}"})
        tool = SpanRecord(trace_id=trace_id, span_id=f"{number + 1:08x}{1:08x}", parent_id=root.span_id,
                          name="execute_tool get_weather", start_ns=2_000, end_ns=3_000,
                          attributes={"agenteval.step.type": "tool", "gen_ai.operation.name": "execute_tool",
                                      "gen_ai.tool.name": "get_weather"})
        traces.append([tool, root])
    return traces


def test_three_workers_behind_trace_id_routing_evaluate_every_trace_exactly_once(tmp_path: Path) -> None:
    """Stands in for the Collector's ``loadbalancing`` exporter (routing_key: traceID): every span
    of a trace goes to the worker its trace id hashes to, in batches that mix traces."""
    workers = [EvaluationWorker(POLICIES, export_target=str(tmp_path / f"worker{n}.jsonl"), http_port=0).start()
               for n in range(3)]
    try:
        traces = _traces(30)
        exporters = [HttpSpanExporter(endpoint=f"http://127.0.0.1:{w.receiver.http_port}/v1/traces", timeout=5)
                     for w in workers]
        for half in (0, 1):  # the tool spans first, then the roots: each trace spans two batches
            batches: list[list[ReadableSpan]] = [[], [], []]
            for trace in traces:
                span = trace[half]
                batches[zlib.crc32(bytes.fromhex(span.trace_id)) % 3].append(_readable(span))
            for exporter, batch in zip(exporters, batches):
                if batch:
                    assert exporter.export(batch) is SpanExportResult.SUCCESS
    finally:
        assert all(w.stop(timeout=5) for w in workers)
    evaluated = [w.evaluator.counters.evaluated for w in workers]
    assert sum(evaluated) == 30 and all(evaluated)  # every worker took its share
    judged: Counter[str] = Counter()
    for n in range(3):
        _, logs = _verdicts(tmp_path / f"worker{n}.jsonl")
        judged.update({log.trace_id for log in logs if log.trace_id})
    assert set(judged) == {trace[0].trace_id for trace in traces}
    assert set(judged.values()) == {1}  # evaluated exactly once: one worker's verdict records per trace ...
    assert all(len(_verdicts(tmp_path / f"worker{n}.jsonl")[1]) == 2 * evaluated[n] for n in range(3))  # ... 2 each


def _serve(*args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    """``agenteval serve`` in a process of its own, in ``cwd`` (its default spool goes there)."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    return subprocess.Popen([sys.executable, "-m", "agenteval_otel.cli", "serve", *args], env=env, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_agenteval_serve_scores_what_it_receives_and_stops_on_sigterm(tmp_path: Path) -> None:
    policies = REPO_ROOT / "examples" / "production_policies.json"
    target = tmp_path / "verdicts.jsonl"
    process = _serve("--port", "0", "--config", str(policies), "--export-results", str(target), cwd=tmp_path)
    try:
        assert process.stdout is not None
        banner = process.stdout.readline()
        assert banner.startswith("agenteval serve: OTLP/HTTP on http://127.0.0.1:"), banner
        port = int(banner.split("http://127.0.0.1:")[1].split(";")[0])
        exporter = HttpSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces", timeout=5)
        [trace] = _traces(1)
        assert exporter.export([_readable(span) for span in trace]) is SpanExportResult.SUCCESS
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "evaluated=1" in out and "verdict records exported=6" in out
    _, logs = _verdicts(target)
    assert {log.trace_id for log in logs} == {trace[0].trace_id} and len(logs) == 6
    [session] = HistoryStore(tmp_path / ".agenteval" / "history.db").runs()  # its summary, recorded when it stopped
    assert (session.command, session.source, session.cases) == ("serve", "serve", 1)
    assert len(session.criteria_means) == 6


@pytest.mark.parametrize("args, expected", [
    ((), "--config"),
    (("--config", "examples/weather_agent.config.json"), "scores an invocation without one"),
    (("--config", "examples/production_policies.json"), "--export-results"),
])
def test_agenteval_serve_refuses_what_it_cannot_do_with_exit_2(
        args: tuple[str, ...], expected: str, tmp_path: Path) -> None:
    process = _serve("--port", "0", *(str(REPO_ROOT / a) if a.startswith("examples/") else a for a in args),
                     cwd=tmp_path)
    out, err = process.communicate(timeout=20)
    assert process.returncode == 2 and expected in err and "Traceback" not in err
