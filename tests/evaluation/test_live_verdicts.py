"""Live runs write their verdicts where the traces they judge are seen: on each turn's root span
before it ends (with the turn's true duration), and as ``gen_ai.evaluation.result`` log records on
it; the turn's trace takes no evaluation span."""

from __future__ import annotations

import time

import pytest
from opentelemetry import _logs
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel import semconv as attr
from agenteval_otel.criteria._config import CriterionConfig, EvalConfig
from agenteval_otel.criteria._registry import criterion
from agenteval_otel.evalsets._builder import EvalSetBuilder
from agenteval_otel.evaluation._live import evaluate
from agenteval_otel.tracing import tool

SLOW_S = 0.3


@criterion("slow_reply_check", default_threshold=1.0)
def slow_reply_check(ctx):  # type: ignore[no-untyped-def]
    time.sleep(SLOW_S)  # scoring outlasts the agent: the root must not
    return "sunny" in (ctx.actual.final_response or "")


@tool
def get_weather(city: str) -> str:
    return "sunny"


def weather_agent(query: str) -> str:
    return f"It is {get_weather('Paris')} in Paris." if "Paris" in query else "I do not know."


@pytest.fixture
def exported() -> tuple[TracerProvider, InMemorySpanExporter]:
    provider, exporter = TracerProvider(), InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _roots(spans: tuple[ReadableSpan, ...]) -> list[ReadableSpan]:
    return [s for s in spans if s.parent is None]


def test_each_turns_root_span_carries_its_verdicts_and_ends_when_the_agent_returned(exported) -> None:  # type: ignore[no-untyped-def]
    provider, exporter = exported
    eval_set = (EvalSetBuilder("live", eval_set_id="live")
                .add_multi_turn([("Weather in Paris?", "It is sunny in Paris."), ("And in Rome?", "Sunny.")],
                                case_id="two_turns").build())
    config = EvalConfig(criteria={"slow_reply_check": CriterionConfig(threshold=1.0),
                                  "response_match": CriterionConfig.response(0.99)})
    report = evaluate(eval_set, weather_agent, config, tracer_provider=provider)
    assert provider.force_flush(5000)
    first, second = sorted(_roots(exporter.get_finished_spans()), key=lambda s: s.start_time or 0)
    assert dict(first.attributes or {})["agenteval.evaluation.slow_reply_check.label"] == "pass"
    assert dict(first.attributes or {})["agenteval.evaluation.slow_reply_check.score"] == 1.0
    assert dict(second.attributes or {})["agenteval.evaluation.slow_reply_check.label"] == "fail"
    scored = report.results[0].invocation_results
    for root, invocation in zip((first, second), scored):
        for verdict in invocation.criterion_results:
            assert dict(root.attributes or {})[f"agenteval.evaluation.{verdict.criterion}.score"] == verdict.score
        assert (root.end_time or 0) - (root.start_time or 0) < SLOW_S * 1e9  # scoring time is not the turn's


def test_a_live_run_writes_a_record_per_verdict_on_each_turn_and_no_span(  # type: ignore[no-untyped-def]
        exported, monkeypatch: pytest.MonkeyPatch) -> None:
    provider, exporter = exported
    logger_provider, logs = LoggerProvider(), InMemoryLogRecordExporter()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    monkeypatch.setattr(_logs, "get_logger_provider", lambda: logger_provider)  # the global one, for this test
    eval_set = EvalSetBuilder.quick(("Weather in Paris?", "It is sunny in Paris."))
    report = evaluate(eval_set, weather_agent, EvalConfig(criteria={"response_match": CriterionConfig.response(0.5)}),
                      tracer_provider=provider, run_id="live-1")
    assert provider.force_flush(5000)
    spans = exporter.get_finished_spans()
    assert not [s for s in spans if (s.attributes or {}).get(attr.EVALUATION_MARKER)]
    [root] = _roots(spans)
    [record] = [r.log_record for r in logs.get_finished_logs()]
    assert (record.trace_id, record.span_id) == (root.context.trace_id, root.context.span_id)
    assert record.event_name == attr.GEN_AI_EVALUATION_RESULT_EVENT
    assert record.attributes[attr.EVAL_ID] == report.results[0].eval_id  # type: ignore[index]
    assert record.attributes[attr.EVAL_RUN_ID] == "live-1"  # type: ignore[index]
    assert report.summary.passed_cases == 1


def test_without_export_no_evaluation_span_is_written(exported) -> None:  # type: ignore[no-untyped-def]
    provider, exporter = exported
    evaluate(EvalSetBuilder.quick(("Weather in Paris?", "It is sunny in Paris.")), weather_agent,
             tracer_provider=provider, export_results=False)
    assert provider.force_flush(5000)
    spans = exporter.get_finished_spans()
    assert not [s for s in spans if (s.attributes or {}).get(attr.EVALUATION_MARKER)]
    assert [k for s in _roots(spans) for k in (s.attributes or {}) if k.endswith(".label")]  # still on the root


def test_an_agent_that_raises_ends_its_root_at_once_with_the_error(exported) -> None:  # type: ignore[no-untyped-def]
    provider, exporter = exported

    def broken(query: str) -> str:
        raise ValueError("no weather today")

    report = evaluate(EvalSetBuilder.quick(("Weather in Paris?", "sunny")), broken, tracer_provider=provider)
    assert provider.force_flush(5000)
    [root] = _roots(exporter.get_finished_spans())
    assert report.results[0].status == "errored"
    assert dict(root.attributes or {})[attr.ERROR_TYPE] == "ValueError"
