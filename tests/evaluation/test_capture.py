"""The turn spans of a live evaluation follow the content policy in force, like the agent's own spans."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel import CriterionConfig, EvalConfig, EvalSet, EvalSetBuilder
from agenteval_otel import semconv as attr
from agenteval_otel.evaluation._capture import DELIVERY_TIMEOUT_S
from agenteval_otel.evaluation._live import evaluate
from agenteval_otel.tracing import (
    ContentPolicy,
    active_policy,
    configure,
    release_provider,
    set_active_policy,
)

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CONTENT_KEYS = {attr.AGENT_INPUT, attr.AGENT_OUTPUT, attr.GEN_AI_INPUT_MESSAGES, attr.GEN_AI_OUTPUT_MESSAGES}
TOOLS_ONLY = EvalConfig(criteria={"trajectory_match": CriterionConfig.trajectory(1.0)})
SECRET = "hunter2-7f3a9c"
PATTERN = r"hunter2-\w+"
LONG_INPUT = "tell me " + "x" * 100_000


@pytest.fixture(autouse=True)
def _restore_policy() -> Iterator[None]:
    policy = active_policy()
    yield
    set_active_policy(policy)


def _capture(**options: object) -> Iterator[InMemorySpanExporter]:
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handle = configure(tracer_provider=provider, set_global=False, **options)  # type: ignore[arg-type]
    yield exporter
    release_provider(provider)
    handle.shutdown(timeout=5)


@pytest.fixture
def capture_off(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    """Content capture switched off by the environment, as an operator would."""
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "NO_CONTENT")
    yield from _capture()


@pytest.fixture
def capture_on(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
    yield from _capture()


def echo(query: str) -> str:
    """A plain (undecorated) agent: the turn's span is the only span with its input and reply."""
    return f"you said: {query}"


def leaky(query: str) -> str:
    """An agent whose reply and exception quote a secret."""
    if "fail" in query:
        raise PermissionError(f"password {SECRET} rejected")
    return f"your key is {SECRET}"


def _one_case(query: str) -> EvalSet:
    return EvalSetBuilder("capture").add_case(query=query, expected="anything", case_id="c1").build()


def _turn_span(spans: list[ReadableSpan]) -> ReadableSpan:
    (turn,) = [span for span in spans if span.attributes.get(attr.EVAL_ID) == "c1" and span.parent is None]
    return turn


def test_with_capture_off_the_turn_span_carries_no_input_or_reply(capture_off: InMemorySpanExporter) -> None:
    started = time.monotonic()
    report = evaluate(_one_case(LONG_INPUT), echo, TOOLS_ONLY)
    assert time.monotonic() - started < DELIVERY_TIMEOUT_S / 2  # its (empty) trajectory arrived
    (result,) = report.results
    assert result.error is None
    # scored on what was said, not on what the spans hold
    assert result.invocation_results[0].actual_response == echo(LONG_INPUT)
    turn = _turn_span(list(capture_off.get_finished_spans()))
    assert turn.name == f"invoke_agent {echo.__name__}"
    assert turn.attributes[attr.STEP_TYPE] == attr.STEP_AGENT
    assert not set(turn.attributes) & CONTENT_KEYS
    assert all(len(str(value)) < 1000 for value in turn.attributes.values())


def test_with_capture_on_the_turn_span_truncates_with_the_marker(capture_on: InMemorySpanExporter) -> None:
    evaluate(_one_case(LONG_INPUT), echo, TOOLS_ONLY)
    turn = _turn_span(list(capture_on.get_finished_spans()))
    limit = ContentPolicy().max_length
    for key in (attr.AGENT_INPUT, attr.AGENT_OUTPUT):
        value = turn.attributes[key]
        assert value.endswith(" chars]") and "...[truncated " in value
        assert len(value) < limit + 40
    assert turn.attributes[attr.AGENT_INPUT].startswith("tell me xxx")


def test_no_secret_of_a_live_run_reaches_a_span_a_log_record_or_the_traces_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
    path = tmp_path / "traces.jsonl"
    exporter = InMemorySpanExporter()
    handle = configure(
        "secrets", traces_file=path, set_global=False, span_processors=[SimpleSpanProcessor(exporter)],
        content_policy=ContentPolicy(redact_patterns=(PATTERN,)),
    )

    eval_set = (EvalSetBuilder("secrets")
                .add_case(query=f"remember {SECRET}", expected="ok", case_id="reply")
                .add_case(query="fail please", expected="ok", case_id="raise")
                .build())
    with caplog.at_level(logging.DEBUG, logger="agenteval_otel"):
        try:
            evaluate(eval_set, leaky, TOOLS_ONLY)
        finally:
            assert handle.shutdown(timeout=5)

    spans = list(exporter.get_finished_spans())
    assert {span.attributes[attr.EVAL_ID] for span in spans} == {"reply", "raise"}
    failed = next(span for span in spans if span.attributes[attr.EVAL_ID] == "raise")
    assert failed.attributes[attr.ERROR_TYPE] == "PermissionError"
    assert failed.status.description == "PermissionError: password [REDACTED] rejected"
    assert [event.name for event in failed.events] == ["exception"]
    texts = [str(value) for span in spans for value in span.attributes.values()]
    texts += [str(value) for span in spans for event in span.events for value in event.attributes.values()]
    texts += [span.status.description or "" for span in spans]
    assert "your key is [REDACTED]" in texts
    assert not [text for text in texts if SECRET in text]
    written = path.read_text()
    assert "invoke_agent leaky" in written and SECRET not in written
    assert not [record for record in caplog.records if SECRET in record.getMessage()]
