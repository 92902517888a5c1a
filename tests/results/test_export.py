"""TraceExport: verdicts written beside the traces they judge, as ``gen_ai.evaluation.result`` log
records carrying the judged span's ids and, when asked for, evaluation spans in traces of their
own linked to the judged span, with ids derived from the verdict (same verdict, same ids)."""

from __future__ import annotations

import os
import threading
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
from agenteval_otel.results._export import TraceExport, evaluation_attributes, evaluation_id
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


def test_by_default_each_verdict_is_a_log_record_on_the_judged_span_and_no_span(memory) -> None:  # type: ignore[no-untyped-def]
    tracer_provider, spans, logger_provider, logs = memory
    export = TraceExport(tracer_provider, logger_provider, eval_set_id="weather", judge_model="qwen2.5")
    export.submit(_result(PASSED, FAILED, ERRORED))
    assert spans.get_finished_spans() == ()
    records = {r.log_record.attributes[attr.GEN_AI_EVALUATION_NAME]: r.log_record  # type: ignore[index]
               for r in logs.get_finished_logs()}
    assert set(records) == {"max_tool_calls", "response_match", "llm_judge"} and export.exported == 3
    for record in records.values():
        assert record.event_name == attr.GEN_AI_EVALUATION_RESULT_EVENT
        assert (format(record.trace_id or 0, "032x"), format(record.span_id or 0, "016x")) == (TRACE_ID, ROOT_ID)
    assert dict(records["response_match"].attributes or {}) == {
        attr.EVALUATION_MARKER: True, attr.GEN_AI_EVALUATION_NAME: "response_match",
        attr.GEN_AI_EVALUATION_SCORE_VALUE: 0.25, attr.GEN_AI_EVALUATION_SCORE_LABEL: "fail",
        attr.GEN_AI_EVALUATION_EXPLANATION: "the reply differs", attr.EVAL_CRITERION: "response_match",
        attr.EVAL_THRESHOLD: 0.7, attr.EVAL_EVALUATOR_VERSION: export.evaluator_version,
        attr.EVAL_JUDGE_MODEL: "qwen2.5", attr.EVAL_SET_ID: "weather", attr.EVAL_ID: "case_1",
        attr.EVAL_EVALUATION_ID: evaluation_id(TRACE_ID, ROOT_ID, "response_match", "weather").id,
        attr.EVAL_RUN_ID: "weather"}  # the eval set's id is the run id when none is given
    assert records["max_tool_calls"].attributes[attr.GEN_AI_EVALUATION_SCORE_LABEL] == "pass"  # type: ignore[index]
    assert attr.EVAL_JUDGE_MODEL not in records["max_tool_calls"].attributes  # type: ignore[operator]
    assert records["llm_judge"].attributes[attr.ERROR_TYPE] == "TimeoutError"  # type: ignore[index]


def test_with_spans_each_verdict_is_the_root_of_a_trace_of_its_own_linked_to_the_judged_span(memory) -> None:  # type: ignore[no-untyped-def]
    tracer_provider, spans, logger_provider, logs = memory
    export = TraceExport(tracer_provider, logger_provider, write="spans", run_id="nightly")
    export.submit(_result(PASSED, FAILED, ERRORED))
    finished = {s.name: s for s in spans.get_finished_spans()}
    assert set(finished) == {"evaluation max_tool_calls", "evaluation response_match", "evaluation llm_judge"}
    records = {r.log_record.attributes[attr.EVAL_EVALUATION_ID]: r.log_record  # type: ignore[index]
               for r in logs.get_finished_logs()}
    assert len(records) == 3  # the records are written in every mode
    for span in finished.values():
        assert span.parent is None and format(span.context.trace_id, "032x") != TRACE_ID
        assert [(format(link.context.trace_id, "032x"), format(link.context.span_id, "016x"))
                for link in span.links] == [(TRACE_ID, ROOT_ID)]
        assert span.start_time == span.end_time
        assert dict(span.attributes or {}) == dict(records[span.attributes[attr.EVAL_EVALUATION_ID]].attributes or {})  # type: ignore[index]
        assert span.attributes[attr.EVAL_RUN_ID] == "nightly"  # type: ignore[index]
    assert finished["evaluation llm_judge"].status.status_code is StatusCode.ERROR
    assert finished["evaluation response_match"].status.status_code is StatusCode.UNSET


def test_an_unknown_write_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="write must be one of events, spans, both; got 'children'"):
        TraceExport(TracerProvider(), write="children")  # type: ignore[arg-type]


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
    tracer_provider, spans, logger_provider, logs = memory
    before = active_policy()
    set_active_policy(ContentPolicy(redact_patterns=(r"sk-[a-z0-9]+",), max_length=40, capture=True))
    try:
        secret = CriterionResult(criterion="c", score=0.0, passed=False, threshold=1.0,
                                 reason="the key sk-abc123 leaked " + "x" * 100)
        TraceExport(tracer_provider, logger_provider, write="both").submit(_result(secret))
    finally:
        set_active_policy(before)
    for written in (spans.get_finished_spans()[0], logs.get_finished_logs()[0].log_record):
        explanation = written.attributes[attr.GEN_AI_EVALUATION_EXPLANATION]  # type: ignore[index]
        assert "sk-abc123" not in explanation and "[REDACTED]" in explanation and "[truncated" in explanation


def _third_party(shared_data: Path) -> tuple[EvalSet, list[Path], EvalConfig]:
    folder = shared_data / "traces" / "generated" / "google_adk_semconv_content"
    return (EvalSet.load(folder / "adk_weather_generated.evalset.json"), sorted(folder.glob("*.otlp.json")),
            EvalConfig.load(shared_data / "evalsets" / "adk-python__hello_world_agent__test_config.json"))


def _roots(result: EvalCaseResult) -> set[tuple[str, str]]:
    return {(inv.trace_id, inv.span_id) for inv in result.invocation_results if inv.trace_id and inv.span_id}


@pytest.mark.needs_shared_data
def test_a_third_party_trace_gets_its_verdicts_in_a_file_as_records_only(shared_data: Path, tmp_path: Path) -> None:
    eval_set, traces, config = _third_party(shared_data)
    target = tmp_path / "results.jsonl"
    export = TraceExport.to_target(target, eval_set_id=eval_set.eval_set_id)
    report = evaluate_traces(eval_set, traces, config, sinks=[export])
    assert export.shutdown(timeout=5) is True
    roots = set().union(*(_roots(r) for r in report.results))
    original = {(s.trace_id, s.span_id) for path in traces for s in read_spans(path)}
    assert roots and roots <= original
    assert target.stat().st_size == 0  # no span: nothing that could change how a judged trace looks
    records = read_logs([logs_file_for(target)])
    assert len(records) == export.exported and export.delivery is not None
    assert export.delivery.exported == len(records)  # what the delivery counts: the records
    assert {(r.trace_id, r.span_id) for r in records} == roots
    assert {r.name for r in records} == {attr.GEN_AI_EVALUATION_RESULT_EVENT}
    assert all(r.attributes[attr.EVAL_SET_ID] == r.attributes[attr.EVAL_RUN_ID] == eval_set.eval_set_id
               for r in records)


def _export_to_file(target: Path, result: EvalCaseResult, **options: object) -> None:
    export = TraceExport.to_target(target, **options)  # type: ignore[arg-type]
    export.submit(result)
    assert export.shutdown(timeout=5) is True


def test_exporting_the_same_verdicts_twice_writes_the_same_ids(tmp_path: Path) -> None:
    """Two exports of one result (two processes' worth: each its own providers) write the same
    span ids, trace ids and evaluation ids; another run id gives other ones."""
    first, second, other = tmp_path / "first.jsonl", tmp_path / "second.jsonl", tmp_path / "other.jsonl"
    for target, run_id in ((first, "nightly"), (second, "nightly"), (other, "weekly")):
        _export_to_file(target, _result(PASSED, FAILED), write="both", run_id=run_id)

    def ids(target: Path) -> set[tuple[str, str, str]]:
        return {(s.trace_id, s.span_id, s.attributes[attr.EVAL_EVALUATION_ID]) for s in read_spans(target)}

    def record_ids(target: Path) -> set[str]:
        return {r.attributes[attr.EVAL_EVALUATION_ID] for r in read_logs([logs_file_for(target)])}

    assert len(ids(first)) == 2 and ids(first) == ids(second)
    assert record_ids(first) == record_ids(second) == {i for _, _, i in ids(first)}
    assert not ids(other) & ids(first) and not record_ids(other) & record_ids(first)
    expected = evaluation_id(TRACE_ID, ROOT_ID, "response_match", "nightly")
    assert (format(expected.trace_id, "032x"), format(expected.span_id, "016x"), expected.id) in ids(first)


def test_concurrent_submissions_each_get_their_own_verdicts_ids(tmp_path: Path) -> None:
    """The ids set before a span starts are per thread: submissions from many threads at once
    never swap or lose them."""
    target = tmp_path / "verdicts.jsonl"
    export = TraceExport.to_target(target, write="spans", run_id="r")
    roots = [(format(index + 1, "032x"), format(index + 1, "016x")) for index in range(40)]

    def submit(trace_id: str, span_id: str) -> None:
        for _ in range(5):
            export.submit(_result(PASSED, FAILED, trace_id=trace_id, span_id=span_id))

    threads = [threading.Thread(target=submit, args=root) for root in roots]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert export.shutdown(timeout=10) is True
    written = list(read_spans(target))
    assert len(written) == 40 * 2 * 5
    for span in written:
        [link] = span.links
        ids = evaluation_id(link.trace_id, link.span_id, span.attributes[attr.EVAL_CRITERION], "r")
        assert (span.trace_id, span.span_id) == (format(ids.trace_id, "032x"), format(ids.span_id, "016x"))


def test_to_an_otlp_http_endpoint_both_signals_arrive(tmp_path: Path) -> None:
    with http_receiver() as receiver:
        export = TraceExport.to_target(receiver.endpoint, write="both")
        export.submit(_result(PASSED, FAILED))
        assert export.shutdown(timeout=5) is True
    assert sorted(set(receiver.paths)) == ["/v1/logs", "/v1/traces"]
    assert all(s.parent_id is None and s.trace_id != TRACE_ID for s in receiver.spans)
    assert {(link.trace_id, link.span_id) for s in receiver.spans for link in s.links} == {(TRACE_ID, ROOT_ID)}
    assert {s.name for s in receiver.spans} == {"evaluation max_tool_calls", "evaluation response_match"}
    assert {(r.trace_id, r.span_id, r.event_name) for r in receiver.logs} == {
        (TRACE_ID, ROOT_ID, attr.GEN_AI_EVALUATION_RESULT_EVENT)}
    assert {r.attributes[attr.GEN_AI_EVALUATION_SCORE_LABEL] for r in receiver.logs} == {"pass", "fail"}


def test_to_an_otlp_http_endpoint_the_default_sends_no_span() -> None:
    with http_receiver() as receiver:
        export = TraceExport.to_target(receiver.endpoint)
        export.submit(_result(PASSED, FAILED))
        assert export.shutdown(timeout=5) is True
    assert set(receiver.paths) == {"/v1/logs"} and receiver.spans == [] and len(receiver.logs) == 2


def test_to_a_grpc_endpoint_both_signals_arrive() -> None:
    with grpc_receiver() as receiver:
        export = TraceExport.to_target(f"grpc://{receiver.endpoint}", write="spans")
        export.submit(_result(PASSED))
        assert export.shutdown(timeout=5) is True
    assert [(s.parent_id, [(link.trace_id, link.span_id) for link in s.links], s.name) for s in receiver.spans] == [
        (None, [(TRACE_ID, ROOT_ID)], "evaluation max_tool_calls")]
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
