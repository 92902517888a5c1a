"""TraceExport: verdicts written into the traces they judge, as evaluation spans under the
invocation's root span and ``gen_ai.evaluation.result`` log records carrying its ids."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agenteval_otel import semconv as attr
from agenteval_otel.criteria._config import EvalConfig
from agenteval_otel.evalsets._models import EvalSet
from agenteval_otel.evaluation._offline import evaluate_traces
from agenteval_otel.judge import JudgeUsage
from agenteval_otel.results import AgentFailure
from agenteval_otel.results._export import TraceExport, evaluation_attributes
from agenteval_otel.results._results import CriterionResult, EvalCaseResult, InvocationResult
from agenteval_otel.traces.files import read_logs, read_spans
from agenteval_otel.tracing import ContentPolicy, logs_file_for, set_active_policy
from agenteval_otel.tracing.content import active_policy
from tests.otlp_receiver import closed_port, grpc_receiver, hanging_endpoint, http_receiver

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
ROOT_ID = "00f067aa0ba902b7"


def _result(*verdicts: CriterionResult, trace_id: str | None = TRACE_ID, span_id: str | None = ROOT_ID,
            eval_id: str = "case_1") -> EvalCaseResult:
    return EvalCaseResult(eval_id=eval_id, passed=all(v.passed for v in verdicts), criterion_results=list(verdicts),
                          invocation_results=[InvocationResult(invocation_id="i1", trace_id=trace_id,
                                                               span_id=span_id, criterion_results=list(verdicts))])


PASSED = CriterionResult(criterion="max_tool_calls", score=1.0, passed=True, threshold=1.0, reason="2 calls")
FAILED = CriterionResult(criterion="response_match", score=0.25, passed=False, threshold=0.7,
                         reason="the reply differs", judge_usage=JudgeUsage(calls=1))
ERRORED = CriterionResult.failure("llm_judge", 0.5, "judge timed out", error_type="TimeoutError")


@pytest.fixture
def memory() -> tuple[TracerProvider, InMemorySpanExporter, LoggerProvider, InMemoryLogRecordExporter]:
    tracer_provider, spans = TracerProvider(), InMemorySpanExporter()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider, logs = LoggerProvider(), InMemoryLogRecordExporter()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    return tracer_provider, spans, logger_provider, logs


def test_each_verdict_becomes_a_span_under_the_root_and_a_log_record_with_its_ids(memory) -> None:  # type: ignore[no-untyped-def]
    tracer_provider, spans, logger_provider, logs = memory
    export = TraceExport(tracer_provider, logger_provider, eval_set_id="weather", judge_model="qwen2.5")
    export.submit(_result(PASSED, FAILED, ERRORED))
    finished = {s.name: s for s in spans.get_finished_spans()}
    assert set(finished) == {"evaluation max_tool_calls", "evaluation response_match", "evaluation llm_judge"}
    for span in finished.values():
        assert format(span.context.trace_id, "032x") == TRACE_ID
        assert span.parent is not None and span.parent.is_remote and format(span.parent.span_id, "016x") == ROOT_ID
        assert span.attributes[attr.EVALUATION_MARKER] is True  # type: ignore[index]
    failed = dict(finished["evaluation response_match"].attributes or {})
    assert failed == {
        attr.EVALUATION_MARKER: True, attr.GEN_AI_EVALUATION_NAME: "response_match",
        attr.GEN_AI_EVALUATION_SCORE_VALUE: 0.25, attr.GEN_AI_EVALUATION_SCORE_LABEL: "fail",
        attr.GEN_AI_EVALUATION_EXPLANATION: "the reply differs", attr.EVAL_CRITERION: "response_match",
        attr.EVAL_THRESHOLD: 0.7, attr.EVAL_EVALUATOR_VERSION: export.evaluator_version,
        attr.EVAL_JUDGE_MODEL: "qwen2.5", attr.EVAL_SET_ID: "weather", attr.EVAL_ID: "case_1"}
    assert finished["evaluation max_tool_calls"].attributes[attr.GEN_AI_EVALUATION_SCORE_LABEL] == "pass"  # type: ignore[index]
    assert attr.EVAL_JUDGE_MODEL not in finished["evaluation max_tool_calls"].attributes  # type: ignore[operator]
    errored = finished["evaluation llm_judge"]
    assert errored.status.status_code is StatusCode.ERROR
    assert errored.attributes[attr.ERROR_TYPE] == "TimeoutError"  # type: ignore[index]
    records = [r.log_record for r in logs.get_finished_logs()]
    assert len(records) == 3 and export.exported == 3
    for record in records:
        assert record.event_name == attr.GEN_AI_EVALUATION_RESULT_EVENT
        assert (format(record.trace_id or 0, "032x"), format(record.span_id or 0, "016x")) == (TRACE_ID, ROOT_ID)
    assert {r.attributes[attr.GEN_AI_EVALUATION_NAME] for r in records} == set(  # type: ignore[index]
        s.attributes[attr.GEN_AI_EVALUATION_NAME] for s in finished.values())  # type: ignore[index]


def test_invocations_without_a_root_span_and_results_after_shutdown_are_skipped(memory) -> None:  # type: ignore[no-untyped-def]
    tracer_provider, spans, logger_provider, logs = memory
    export = TraceExport(tracer_provider, logger_provider)
    export.submit(_result(PASSED, span_id=None))
    export.submit(_result(PASSED, trace_id="not-hex"))
    assert spans.get_finished_spans() == () and export.skipped == 2
    assert export.shutdown(timeout=1) is True and export.shutdown(timeout=1) is True
    export.submit(_result(PASSED))
    assert spans.get_finished_spans() == () and logs.get_finished_logs() == ()


def test_the_explanation_follows_the_content_policy(memory) -> None:  # type: ignore[no-untyped-def]
    tracer_provider, spans, logger_provider, _ = memory
    before = active_policy()
    set_active_policy(ContentPolicy(redact_patterns=(r"sk-[a-z0-9]+",), max_length=40, capture=True))
    try:
        secret = CriterionResult(criterion="c", score=0.0, passed=False, threshold=1.0,
                                 reason="the key sk-abc123 leaked " + "x" * 100)
        TraceExport(tracer_provider, logger_provider).submit(_result(secret))
    finally:
        set_active_policy(before)
    explanation = spans.get_finished_spans()[0].attributes[attr.GEN_AI_EVALUATION_EXPLANATION]  # type: ignore[index]
    assert "sk-abc123" not in explanation and "[REDACTED]" in explanation and "[truncated" in explanation


def _third_party(shared_data: Path) -> tuple[EvalSet, list[Path], EvalConfig]:
    folder = shared_data / "traces" / "generated" / "google_adk_semconv_content"
    return (EvalSet.load(folder / "adk_weather_generated.evalset.json"), sorted(folder.glob("*.otlp.json")),
            EvalConfig.load(shared_data / "evalsets" / "adk-python__hello_world_agent__test_config.json"))


def _roots(result: EvalCaseResult) -> set[tuple[str, str]]:
    return {(inv.trace_id, inv.span_id) for inv in result.invocation_results if inv.trace_id and inv.span_id}


@pytest.mark.needs_shared_data
def test_a_third_party_trace_gets_its_verdicts_in_a_file(shared_data: Path, tmp_path: Path) -> None:
    eval_set, traces, config = _third_party(shared_data)
    target = tmp_path / "results.jsonl"
    export = TraceExport.to_target(target, eval_set_id=eval_set.eval_set_id)
    report = evaluate_traces(eval_set, traces, config, sinks=[export])
    assert export.shutdown(timeout=5) is True
    roots = set().union(*(_roots(r) for r in report.results))
    original = {(s.trace_id, s.span_id) for path in traces for s in read_spans(path)}
    assert roots and roots <= original
    written = list(read_spans(target))
    assert {(s.trace_id, s.parent_id) for s in written} == roots
    assert all(s.name.startswith("evaluation ") and s.attributes[attr.EVALUATION_MARKER] is True for s in written)
    assert all(s.attributes[attr.EVAL_SET_ID] == eval_set.eval_set_id for s in written)
    records = read_logs([logs_file_for(target)])
    assert len(records) == len(written) == export.exported
    assert {(r.trace_id, r.span_id) for r in records} == roots
    assert {r.name for r in records} == {attr.GEN_AI_EVALUATION_RESULT_EVENT}


def test_to_an_otlp_http_endpoint_both_signals_arrive(tmp_path: Path) -> None:
    with http_receiver() as receiver:
        export = TraceExport.to_target(receiver.endpoint)
        export.submit(_result(PASSED, FAILED))
        assert export.shutdown(timeout=5) is True
    assert sorted(set(receiver.paths)) == ["/v1/logs", "/v1/traces"]
    assert {(s.trace_id, s.parent_id) for s in receiver.spans} == {(TRACE_ID, ROOT_ID)}
    assert {s.name for s in receiver.spans} == {"evaluation max_tool_calls", "evaluation response_match"}
    assert {(r.trace_id, r.span_id, r.event_name) for r in receiver.logs} == {
        (TRACE_ID, ROOT_ID, attr.GEN_AI_EVALUATION_RESULT_EVENT)}
    assert {r.attributes[attr.GEN_AI_EVALUATION_SCORE_LABEL] for r in receiver.logs} == {"pass", "fail"}


def test_to_a_grpc_endpoint_both_signals_arrive() -> None:
    with grpc_receiver() as receiver:
        export = TraceExport.to_target(f"grpc://{receiver.endpoint}")
        export.submit(_result(PASSED))
        assert export.shutdown(timeout=5) is True
    assert [(s.trace_id, s.parent_id, s.name) for s in receiver.spans] == [
        (TRACE_ID, ROOT_ID, "evaluation max_tool_calls")]
    assert [(r.trace_id, r.span_id) for r in receiver.logs] == [(TRACE_ID, ROOT_ID)]


@pytest.mark.promise(5)
def test_an_endpoint_that_is_down_neither_blocks_nor_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reliability promise 5: a closed port costs bounded time and raises nothing."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    export = TraceExport.to_target(f"http://127.0.0.1:{closed_port()}")
    started = time.process_time(), time.monotonic()
    for index in range(200):
        export.submit(_result(PASSED, FAILED, eval_id=f"case_{index}"))
    submit_cpu, submit_wall = time.process_time() - started[0], time.monotonic() - started[1]
    assert export.exported == 400 and export.errors == 0
    assert submit_wall < 5 and submit_cpu < 5
    stopping = time.monotonic()
    export.shutdown(timeout=1)
    assert time.monotonic() - stopping < 2


@pytest.mark.promise(7, 20)
def test_shutdown_against_a_hanging_endpoint_keeps_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reliability promise 7: one overall deadline, the failure reported, later work dropped."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "3")
    with hanging_endpoint() as endpoint:
        export = TraceExport.to_target(endpoint)
        export.submit(_result(PASSED))
        started = time.monotonic()
        assert export.shutdown(timeout=0.5) is False
        assert time.monotonic() - started < 1.5
        assert export.shutdown(timeout=0.5) is False  # idempotent: the first call's answer
        export.submit(_result(FAILED))
        assert export.exported == 1


def test_a_file_that_cannot_be_opened_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        TraceExport.to_target(tmp_path / "no" / "such" / "dir" / "results.jsonl")
    assert not os.path.exists(tmp_path / "no")


@pytest.mark.promise(19)
def test_credentials_in_failure_text_and_explanations_are_masked() -> None:
    """An agent's or a criterion's exception text that quotes a key, and a verdict explanation
    that does, are written with the key masked, whatever redaction patterns are configured."""
    key = "sk-proj-" + "q7" * 12
    try:
        raise RuntimeError(f"401 from the tool API: Incorrect API key provided: {key}")
    except RuntimeError as error:
        failure = AgentFailure.of(error)
    assert key[:12] not in failure.message and key[:12] not in (failure.traceback or "")
    verdict = CriterionResult(criterion="exact_match", score=0.0, passed=False, threshold=1.0,
                              reason=f"the agent printed {key}")
    explanation = evaluation_attributes(verdict)[attr.GEN_AI_EVALUATION_EXPLANATION]
    assert key[:12] not in str(explanation)
