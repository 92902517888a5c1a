"""``agenteval serve`` under load and faults: spans in any order scored once on all of them
(promise 24), memory bounded in bytes (22), nothing acknowledged lost silently across a SIGKILL,
a restart or an export target that is down (23), and user code that raises ``SystemExit``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from agenteval_otel import semconv as attr
from agenteval_otel.criteria import CriterionContext, EvalConfig, criterion
from agenteval_otel.evaluation import CallbackSink, OnlineEvaluator
from agenteval_otel.evaluation._worker import EvaluationWorker
from agenteval_otel.results import EvalCaseResult
from agenteval_otel.traces.files import read_logs
from agenteval_otel.tracing import logs_file_for
from agenteval_otel.trajectory.spans import SpanRecord
from tests.conftest import REPO_ROOT

FORBIDDEN = EvalConfig.model_validate({"criteria": {"forbidden_tools": {"params": {"tools": ["delete_records"]}}}})
EXITS = {"calls": 0}


@criterion("exits_once", reference_free=True)
def exits_once(ctx: CriterionContext) -> float:
    """A user's criterion that calls ``sys.exit`` the first time it runs."""
    EXITS["calls"] += 1
    if EXITS["calls"] == 1:
        raise SystemExit(3)
    return 1.0


def _trace(number: int, tools: tuple[str, ...] = ("lookup", "delete_records")) -> list[SpanRecord]:
    """An agent invocation: its root first, then one span per tool call."""
    trace_id = f"{number + 1:032x}"
    root = SpanRecord(trace_id=trace_id, span_id=f"{number + 1:016x}", parent_id=None, name="invoke_agent records",
                      start_ns=1_000, end_ns=9_000,
                      attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "records",
                                  "agenteval.step.type": "agent", "agenteval.step.output": "done"})
    children = [SpanRecord(trace_id=trace_id, span_id=f"{number + 1:08x}{index + 1:08x}", parent_id=root.span_id,
                           name=f"execute_tool {name}", start_ns=2_000 + index, end_ns=3_000 + index,
                           attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                                       "agenteval.step.type": "tool"})
                for index, name in enumerate(tools)]
    return [root, *children]


def _wait(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _scores(results: list[EvalCaseResult]) -> list[tuple[float | None, bool]]:
    return [(r.invocation_results[0].criterion_results[0].score, r.passed) for r in results]


@pytest.mark.promise(24)
def test_spans_in_any_order_give_the_in_order_verdict() -> None:
    """The root first and its children in two later requests (as retries after a 429 deliver
    them) give the verdict of the whole trace in one request: the forbidden call is seen."""
    verdicts: dict[str, list[EvalCaseResult]] = {}
    for order in ("in order", "root first"):
        results: list[EvalCaseResult] = []
        evaluator = OnlineEvaluator(FORBIDDEN, sinks=[CallbackSink(results.append)], settle_s=0.4)
        root, lookup, delete = _trace(0)
        if order == "in order":
            assert evaluator.feed([lookup, delete, root])
        else:
            assert evaluator.feed([root])
            time.sleep(0.15)
            assert evaluator.feed([lookup])
            time.sleep(0.15)
            assert evaluator.feed([delete])
        assert _wait(lambda e=evaluator: e.counters.evaluated + e.counters.errored == 1)  # type: ignore[misc]
        evaluator.shutdown(5000)
        verdicts[order] = results
    assert _scores(verdicts["root first"]) == _scores(verdicts["in order"]) == [(0.0, False)]
    assert evaluator.counters.late_spans == 0


@pytest.mark.promise(24)
def test_a_span_after_its_trace_was_scored_is_counted_not_scored_again() -> None:
    results: list[EvalCaseResult] = []
    evaluator = OnlineEvaluator(FORBIDDEN, sinks=[CallbackSink(results.append)], settle_s=0.05)
    root, lookup, delete = _trace(0)
    assert evaluator.feed([root, lookup])
    assert _wait(lambda: evaluator.counters.evaluated == 1)
    assert evaluator.feed([delete])
    evaluator.force_flush(2000)
    assert _wait(lambda: evaluator.counters.late_spans == 1)
    evaluator.shutdown(5000)
    assert len(results) == 1 and evaluator.counters.received == 1


def _readable(record: SpanRecord, *, remote_parent: bool = False) -> ReadableSpan:
    def context(span_id: str, remote: bool = False) -> SpanContext:
        return SpanContext(int(record.trace_id, 16), int(span_id, 16), is_remote=remote,
                           trace_flags=TraceFlags(TraceFlags.SAMPLED))

    parent = record.parent_id or ("ab" * 8 if remote_parent else None)
    return ReadableSpan(
        name=record.name, context=context(record.span_id),
        parent=context(parent, remote_parent and not record.parent_id) if parent else None,
        resource=Resource({}), attributes=dict(record.attributes), kind=SpanKind.INTERNAL,
        status=Status(StatusCode.UNSET), start_time=record.start_ns, end_time=record.end_ns)


@pytest.mark.promise(24)
def test_an_agent_behind_a_traced_gateway_is_scored_without_waiting_for_the_ttl(tmp_path: Path) -> None:
    """The agent's root has a remote parent (the gateway's span, never sent here): the official
    exporter marks it in the span flags, and the trace is scored once it settles."""
    target = tmp_path / "verdicts.jsonl"
    worker = EvaluationWorker(FORBIDDEN, export_target=str(target), http_port=0,
                              evaluator_options={"settle_s": 0.2, "trace_ttl_s": 300.0}).start()
    try:
        exporter = HttpSpanExporter(endpoint=f"http://127.0.0.1:{worker.receiver.http_port}/v1/traces", timeout=5)
        spans = [_readable(record, remote_parent=True) for record in _trace(0)]
        assert exporter.export(spans[1:]) is SpanExportResult.SUCCESS  # the children, then the root
        assert exporter.export(spans[:1]) is SpanExportResult.SUCCESS
        assert _wait(lambda: worker.evaluator.counters.evaluated == 1, timeout=5)
    finally:
        assert worker.stop(None)
    assert worker.evaluator.counters.dropped_traces == 0
    [verdict] = read_logs([logs_file_for(target)])
    assert verdict.attributes[attr.GEN_AI_EVALUATION_SCORE_LABEL] == "fail"


def test_an_invocation_recorded_with_content_capture_off_is_scored_as_offline() -> None:
    """A single agent span with no content (capture off): offline eval scores it, so serve does."""
    results: list[EvalCaseResult] = []
    evaluator = OnlineEvaluator(FORBIDDEN, sinks=[CallbackSink(results.append)])
    root = SpanRecord(trace_id="c" * 32, span_id="d" * 16, parent_id=None, name="invoke_agent records",
                      start_ns=1, end_ns=2, attributes={"gen_ai.operation.name": "invoke_agent"})
    assert evaluator.feed([root])
    evaluator.shutdown(5000)
    assert _scores(results) == [(1.0, True)]


def test_systemexit_in_a_criterion_is_an_errored_result_and_scoring_goes_on() -> None:
    EXITS["calls"] = 0
    config = EvalConfig.model_validate({"criteria": {"exits_once": 1.0}})
    results: list[EvalCaseResult] = []
    evaluator = OnlineEvaluator(config, sinks=[CallbackSink(results.append)], concurrency=1)
    assert evaluator.feed(_trace(0))
    assert _wait(lambda: evaluator.counters.errored == 1)
    assert evaluator.feed(_trace(1))
    assert _wait(lambda: evaluator.counters.evaluated == 1)
    assert evaluator.healthy
    evaluator.shutdown(5000)
    assert [r.errored for r in results] == [True, False]
    verdict = results[0].invocation_results[0].criterion_results[0]
    assert "SystemExit" in f"{verdict.error} {verdict.error_type}"


@pytest.mark.promise(22)
def test_fed_spans_are_bounded_in_bytes_and_the_excess_is_refused() -> None:
    """Rootless spans with 50 KB attributes (they wait for a root that never comes): past the
    byte budget every batch is refused, so the sender backs off, and nothing grows."""
    budget = 4 << 20
    evaluator = OnlineEvaluator(FORBIDDEN, sinks=[], max_pending_bytes=budget, trace_ttl_s=300.0)
    payload = "x" * 50_000
    accepted = refused = 0
    for batch in range(60):  # 60 batches of 20 spans of 50 KB: 60 MB offered
        spans = [SpanRecord(trace_id=f"{batch:016x}{index:016x}", span_id=f"{index + 1:016x}", parent_id="e" * 16,
                            name="child", attributes={"blob": payload}) for index in range(20)]
        if evaluator.feed(spans):
            accepted += 1
        else:
            refused += 1
    counters = evaluator.counters
    evaluator.shutdown(2000)
    assert refused >= 50 and accepted >= 3
    assert counters.pending_bytes <= budget + 20 * 51_000
    assert counters.refused_batches == refused


def test_the_receiver_answers_429_past_the_byte_budget(tmp_path: Path) -> None:
    worker = EvaluationWorker(FORBIDDEN, export_target=str(tmp_path / "v.jsonl"), http_port=0,
                              evaluator_options={"max_pending_bytes": 1 << 20}).start()
    try:
        statuses = Counter[int]()
        for batch in range(12):
            exporter_spans = [_readable(SpanRecord(
                trace_id=f"{batch + 1:016x}{index + 1:016x}", span_id=f"{index + 1:016x}", parent_id="e" * 16,
                name="child", attributes={"blob": "y" * 50_000})) for index in range(5)]
            body = encode_spans(exporter_spans).SerializeToString()
            request = urllib.request.Request(f"http://127.0.0.1:{worker.receiver.http_port}/v1/traces", data=body,
                                             headers={"Content-Type": "application/x-protobuf"})
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    statuses[response.status] += 1
            except urllib.error.HTTPError as error:
                statuses[error.code] += 1
                assert error.headers["Retry-After"]
        assert statuses[200] >= 3 and statuses[429] >= 5
        assert worker.evaluator.counters.pending_bytes <= (1 << 20) + 5 * 51_000
    finally:
        worker.stop(2)


# --- nothing acknowledged is lost silently (promise 23) --------------------------------------

SLOW_CRITERIA = '''
import asyncio, os
from agenteval_otel.criteria import criterion

@criterion("slow_policy", reference_free=True)
async def slow_policy(ctx):
    await asyncio.sleep(float(os.environ.get("SLOW_POLICY_S", "0")))
    return 1.0
'''


def _serve(tmp_path: Path, target: Path, slow_s: float) -> tuple[subprocess.Popen[str], int]:
    (tmp_path / "slow_criteria.py").write_text(SLOW_CRITERIA)
    (tmp_path / "slow.json").write_text(json.dumps({"criteria": {"slow_policy": 1.0}}))
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "SLOW_POLICY_S": str(slow_s)}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "agenteval_otel.cli", "serve", "--port", "0", "--config", "slow.json",
         "--criteria-module", "slow_criteria.py", "--export-results", str(target), "--settle", "0.1"],
        env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    banner = process.stdout.readline()
    assert "spooled in .agenteval/spool" in banner, banner + (process.stderr.read() if process.stderr else "")
    return process, int(banner.split("http://127.0.0.1:")[1].split(";")[0])


@pytest.mark.promise(23)
def test_acknowledged_traces_survive_a_sigkill_and_are_scored_exactly_once_after_restart(tmp_path: Path) -> None:
    target = tmp_path / "verdicts.jsonl"
    traces = [_trace(number, tools=("lookup",)) for number in range(40)]
    process, port = _serve(tmp_path, target, slow_s=60)  # a judge that never answers in time
    try:
        exporter = HttpSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces", timeout=5)
        for trace in traces:
            assert exporter.export([_readable(span) for span in trace]) is SpanExportResult.SUCCESS
        time.sleep(0.5)  # settled and being scored
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=10)
    assert not _judged(target)

    process, port = _serve(tmp_path, target, slow_s=0)
    try:
        assert _wait(lambda: len(_judged(target)) >= 40, timeout=30)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 0, err
    judged = _judged(target)
    assert set(judged) == {trace[0].trace_id for trace in traces} and set(judged.values()) == {1}
    assert "replaying 40 trace(s)" in err and "left in the spool" not in out


def _judged(target: Path) -> Counter[str]:
    """Verdict records per judged trace in an export file (none while it is missing or empty)."""
    logs = logs_file_for(target)
    if not logs.exists() or not logs.stat().st_size:
        return Counter()
    return Counter(r.trace_id for r in read_logs([logs]) if r.attributes.get(attr.EVALUATION_MARKER))


@pytest.mark.promise(23)
def test_verdicts_that_cannot_be_exported_are_counted_and_kept_for_the_next_start(tmp_path: Path) -> None:
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{closed.getsockname()[1]}"
    spool = tmp_path / "spool"
    worker = EvaluationWorker(FORBIDDEN, export_target=dead, http_port=0, spool=spool,
                              evaluator_options={"settle_s": 0.05}).start()
    exporter = HttpSpanExporter(endpoint=f"http://127.0.0.1:{worker.receiver.http_port}/v1/traces", timeout=5)
    assert exporter.export([_readable(span) for span in _trace(0)]) is SpanExportResult.SUCCESS
    assert _wait(lambda: worker.evaluator.counters.evaluated == 1)
    assert worker.stop(1.0) is False  # said: not everything got out
    verdicts = worker.health["verdicts"]
    assert verdicts["received"] == 1 and verdicts["exported"] == 0
    assert verdicts["lost"] + verdicts["queued"] == 1
    assert worker.health["spool"]["pending_traces"] == 1

    target = tmp_path / "verdicts.jsonl"
    restarted = EvaluationWorker(FORBIDDEN, export_target=str(target), http_port=0, spool=spool,
                                 evaluator_options={"settle_s": 0.05}).start()
    assert restarted.replayed == 1
    assert restarted.stop(5.0)
    assert list(_judged(target).values()) == [1]
    assert restarted.health["spool"]["pending_traces"] == 0


def test_a_refused_batch_leaves_the_spool_as_it_was(tmp_path: Path) -> None:
    """Rows written for a batch the evaluator then refused are taken back: a trace held only by
    them is no longer held, one with earlier rows still is, and the bytes are given back."""
    from agenteval_otel.evaluation import Spool

    spool = Spool(tmp_path / "spool")
    first, second = _trace(0), _trace(1)
    assert spool.add_spans(first[:1]) is not None
    held = spool.counters.pending_bytes
    rows = spool.add_spans([*first[1:], *second])
    assert rows is not None and spool.pending_traces == 2
    spool.discard(rows)
    assert spool.pending_traces == 1 and spool.counters.pending_bytes == held
    assert [(trace_id, len(spans)) for trace_id, spans, _ in spool.replay()] == [(first[0].trace_id, 1)]
    spool.close()
