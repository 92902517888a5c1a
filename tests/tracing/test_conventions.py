"""OpenInference keys beside the GenAI ones: one kind per step, values only under the content policy."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.trace import SpanKind

from agenteval_otel import semconv as attr
from agenteval_otel.errors import ConfigError
from agenteval_otel.tracing import (
    ContentPolicy,
    active_conventions,
    agent,
    conditional,
    configure,
    conventions,
    conversation,
    message,
    node,
    start_step,
    tool,
    trace_step,
    with_conventions,
)
from agenteval_otel.trajectory import SpanRecord, build_trajectories
from tests.tracing.conftest import Spans

OPENINFERENCE_PREFIXES = ("openinference.", "input.", "output.", "llm.", "tool.", "session.", "agent.name")


@pytest.fixture(autouse=True)
def _restore_conventions() -> Iterator[None]:
    before = conventions.openinference
    yield
    conventions.openinference = before


@tool
def get_weather(city: str, password: str = "") -> dict[str, Any]:
    return {"city": city, "sky": "clear"}


@message(model="scripted-model", provider="scripted")
def call_model(prompt: str) -> dict[str, Any]:
    if "weather" in prompt:
        call = {"id": "call_1", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
        return {"role": "assistant", "content": None, "tool_calls": [call],
                "model": "scripted-model-1", "usage": {"prompt_tokens": 7, "completion_tokens": 3}}
    return {"role": "assistant", "content": "It is clear in Paris."}


@conditional(branches={True: "tools", False: "respond"})
def wants_tools(state: dict[str, Any]) -> bool:
    return bool(state["reply"].get("tool_calls"))


@node("plan", capture_io=True)
def plan(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "reply": call_model(state["question"])}


@agent(name="weather-agent")
def run_agent(question: str) -> str:
    state = plan({"question": question})
    if wants_tools(state):
        get_weather("Paris", password="hunter2")
    with trace_step.message(model="scripted-model-2") as step:
        step.set_input([{"role": "user", "content": question},
                        {"role": "tool", "tool_call_id": "call_1", "content": '{"sky": "clear"}'}])
        step.set_result("It is clear in Paris.")
    return "It is clear in Paris."


def _run(spans: Spans, provider: TracerProvider, *, names: tuple[str, ...], capture: bool) -> dict[str, ReadableSpan]:
    configure(tracer_provider=provider, set_global=False, conventions=names, capture_content=capture)
    with conversation("thread-7"):
        run_agent("What is the weather in Paris?")
    found = {span.name: span for span in spans.all()}
    assert len(found) == 6, sorted(found)
    return found


def _openinference_keys(span: ReadableSpan) -> dict[str, Any]:
    return {k: v for k, v in (span.attributes or {}).items() if k.startswith(OPENINFERENCE_PREFIXES)}


@pytest.mark.promise(10)
@pytest.mark.parametrize("capture", [True, False])
def test_without_openinference_no_key_of_it_is_written(spans: Spans, provider: TracerProvider, capture: bool) -> None:
    found = _run(spans, provider, names=("gen_ai",), capture=capture)
    assert active_conventions() == ("gen_ai",)
    assert {name: _openinference_keys(span) for name, span in found.items()} == {name: {} for name in found}


def test_each_step_kind_has_its_openinference_kind_and_values(spans: Spans, provider: TracerProvider) -> None:
    found = _run(spans, provider, names=("gen_ai", "openinference"), capture=True)
    kinds = {name: span.attributes[attr.OI_SPAN_KIND] for name, span in found.items()}
    assert kinds == {"invoke_agent weather-agent": "AGENT", "invoke_node plan": "CHAIN",
                     "conditional wants_tools": "CHAIN", "execute_tool get_weather": "TOOL",
                     "chat scripted-model": "LLM", "chat scripted-model-2": "LLM"}

    root = dict(found["invoke_agent weather-agent"].attributes or {})
    assert (root["input.value"], root["input.mime_type"]) == ("What is the weather in Paris?", "text/plain")
    assert (root["output.value"], root["output.mime_type"]) == ("It is clear in Paris.", "text/plain")
    assert (root["session.id"], root["agent.name"]) == ("thread-7", "weather-agent")

    node_span = dict(found["invoke_node plan"].attributes or {})
    assert node_span["input.mime_type"] == node_span["output.mime_type"] == "application/json"
    assert json.loads(node_span["input.value"]) == {"question": "What is the weather in Paris?"}

    router = dict(found["conditional wants_tools"].attributes or {})
    assert (router["output.value"], router["output.mime_type"]) == ("tools", "text/plain")

    tool_span = dict(found["execute_tool get_weather"].attributes or {})
    assert (tool_span["tool.name"], tool_span["input.mime_type"]) == ("get_weather", "application/json")
    assert json.loads(tool_span["input.value"]) == {"city": "Paris", "password": "[REDACTED]"}
    assert json.loads(tool_span["output.value"]) == {"city": "Paris", "sky": "clear"}
    assert tool_span["tool.id"] == tool_span[attr.GEN_AI_TOOL_CALL_ID]

    chats = [span for span in found.values() if span.name.startswith("chat")]
    asked = next(dict(s.attributes or {}) for s in chats if "llm.token_count.prompt" in (s.attributes or {}))
    assert (asked["llm.model_name"], asked["llm.provider"], asked["session.id"]) == (
        "scripted-model-1", "scripted", "thread-7")
    assert (asked["llm.token_count.prompt"], asked["llm.token_count.completion"],
            asked["llm.token_count.total"]) == (7, 3, 10)
    call = "llm.output_messages.0.message.tool_calls.0.tool_call."
    assert (asked[call + "id"], asked[call + "function.name"]) == ("call_1", "get_weather")
    assert json.loads(asked[call + "function.arguments"]) == {"city": "Paris"}
    answered = next(dict(s.attributes or {}) for s in chats if "llm.token_count.prompt" not in (s.attributes or {}))
    assert answered["llm.input_messages.0.message.role"] == "user"
    assert answered["llm.input_messages.0.message.content"] == "What is the weather in Paris?"
    assert answered["llm.input_messages.1.message.role"] == "tool"
    assert answered["llm.input_messages.1.message.tool_call_id"] == "call_1"
    assert answered["llm.output_messages.0.message.content"] == "It is clear in Paris."
    assert (answered["output.value"], answered["output.mime_type"]) == ("It is clear in Paris.", "text/plain")
    assert all(span.kind is SpanKind.CLIENT for span in chats)


@pytest.mark.promise(10, 19)
def test_with_content_off_only_kinds_names_models_and_counts(spans: Spans, provider: TracerProvider) -> None:
    found = _run(spans, provider, names=("gen_ai", "openinference"), capture=False)
    for span in found.values():
        keys = _openinference_keys(span)
        assert attr.OI_SPAN_KIND in keys
        assert not [k for k in keys if k.startswith(("input.", "output.", "llm.input_messages",
                                                     "llm.output_messages"))], span.name
        assert "hunter2" not in json.dumps(dict(span.attributes or {}))
    tool_span = dict(found["execute_tool get_weather"].attributes or {})
    assert tool_span["tool.name"] == "get_weather"
    asked = next(dict(s.attributes or {}) for s in found.values() if "llm.token_count.total" in (s.attributes or {}))
    assert asked["llm.model_name"] == "scripted-model-1"


def test_a_failed_step_carries_its_kind_and_input(spans: Spans, provider: TracerProvider) -> None:
    configure(tracer_provider=provider, set_global=False, conventions=("openinference",))

    @tool
    def broken(city: str) -> None:
        raise LookupError(city)

    with pytest.raises(LookupError):
        broken("Atlantis")
    failed = spans.attributes("execute_tool broken")
    assert (failed["openinference.span.kind"], failed["input.value"]) == ("TOOL", '{"city":"Atlantis"}')
    assert failed[attr.ERROR_TYPE] == "LookupError"


@pytest.mark.promise(2)
def test_a_failure_writing_the_keys_leaves_the_call_and_its_span_alone(
        spans: Spans, provider: TracerProvider, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    configure(tracer_provider=provider, set_global=False, conventions=("gen_ai", "openinference"))

    def raising(attributes: Any, *, content: bool = True) -> dict[str, Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr("agenteval_otel.tracing._steps.openinference_attributes", raising)
    with caplog.at_level(logging.WARNING):
        assert get_weather("Paris") == {"city": "Paris", "sky": "clear"}
    recorded = spans.attributes("execute_tool get_weather")
    assert recorded[attr.GEN_AI_TOOL_NAME] == "get_weather" and "openinference.span.kind" not in recorded
    assert "adding the OpenInference keys failed" in caplog.text


def test_the_environment_turns_them_on_and_a_bad_name_is_refused(
        provider: TracerProvider, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("AGENTEVAL_CONVENTIONS", "gen_ai, OpenInference")
    configure(tracer_provider=provider, set_global=False).shutdown(timeout=5)
    assert active_conventions() == ("gen_ai", "openinference")
    monkeypatch.setenv("AGENTEVAL_CONVENTIONS", "gen_ai,opentracing")
    with caplog.at_level(logging.WARNING):
        configure(tracer_provider=provider, set_global=False).shutdown(timeout=5)
    assert active_conventions() == ("gen_ai",)
    assert "AGENTEVAL_CONVENTIONS: unknown convention 'opentracing' ignored" in caplog.text
    with pytest.raises(ConfigError, match=r"^conventions: unknown convention 'openinfrence'; expected some of "
                                          r"gen_ai, openinference$"):
        configure(tracer_provider=provider, set_global=False, conventions=("gen_ai", "openinfrence"))
    with pytest.raises(ConfigError, match="not the str 'openinference'"):
        configure(tracer_provider=provider, set_global=False, conventions="openinference")


def test_an_instrumentor_step_gets_them_from_the_lifecycle(spans: Spans, provider: TracerProvider) -> None:
    configure(tracer_provider=provider, set_global=False, conventions=("gen_ai", "openinference"))
    run = start_step("message", model="m1", provider="openai", input="Hello")
    run.set_attributes({attr.GEN_AI_USAGE_INPUT_TOKENS: 2, attr.GEN_AI_USAGE_OUTPUT_TOKENS: 1})
    run.set_result({"role": "assistant", "content": "Hi!"})
    run.end()
    span = spans.named("chat m1")
    assert span.kind is SpanKind.CLIENT
    recorded = dict(span.attributes or {})
    assert (recorded["openinference.span.kind"], recorded["llm.model_name"], recorded["llm.system"]) == (
        "LLM", "m1", "openai")
    assert (recorded["llm.token_count.total"], recorded["llm.output_messages.0.message.content"]) == (3, "Hi!")


def test_evaluation_spans_are_evaluators_under_the_content_policy() -> None:
    verdict = {attr.EVALUATION_MARKER: True, attr.GEN_AI_EVALUATION_NAME: "response_match",
               attr.GEN_AI_EVALUATION_SCORE_VALUE: 0.5, attr.GEN_AI_EVALUATION_SCORE_LABEL: "fail",
               attr.GEN_AI_EVALUATION_EXPLANATION: "too short"}
    conventions.set_conventions(("gen_ai",))
    assert with_conventions(verdict) == verdict
    conventions.set_conventions(("gen_ai", "openinference"))
    found = with_conventions(verdict, content=True)
    assert (found["openinference.span.kind"], found["input.value"]) == ("EVALUATOR", "response_match")
    assert json.loads(found["output.value"]) == {"score": 0.5, "label": "fail", "explanation": "too short"}
    assert with_conventions(verdict, content=False) == verdict | {"openinference.span.kind": "EVALUATOR"}


def test_our_readers_read_the_same_trajectory_with_them_on(spans: Spans, provider: TracerProvider) -> None:
    def trajectory(names: tuple[str, ...]) -> Any:
        spans.exporter.clear()
        found = _run(spans, provider, names=names, capture=True)
        (read,) = build_trajectories(map(SpanRecord.from_readable_span, found.values()))
        return ([(c.name, c.args) for c in read.tool_calls()], read.node_order(), read.final_response,
                read.user_input, [m.role for m in read.messages])

    assert trajectory(("gen_ai", "openinference")) == trajectory(("gen_ai",))


def test_a_long_value_keeps_its_truncation_marker(spans: Spans, provider: TracerProvider) -> None:
    configure(tracer_provider=provider, set_global=False, conventions=("gen_ai", "openinference"),
              content_policy=ContentPolicy(max_length=40, capture=True))
    run_agent("What is the weather in Paris? " + "x" * 100)
    root = spans.attributes("invoke_agent weather-agent")
    assert root["input.value"] == root[attr.AGENT_INPUT] and "[truncated" in root["input.value"]
    assert root["input.mime_type"] == "text/plain"


def test_attributes_set_without_the_sdk_check_are_what_the_sdk_would_keep() -> None:
    """Plain values go straight into the span's attribute map; a list, a value length limit or a
    full attribute map take the SDK's own path (its conversion, truncation and count limit)."""
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider

    from agenteval_otel.tracing._steps import _set_plain

    def attributes_after(values: dict[str, object], limits: SpanLimits | None = None) -> dict[str, object]:
        span = TracerProvider(span_limits=limits or SpanLimits()).get_tracer("t").start_span("s")
        _set_plain(span, dict(values))
        span.end()
        return dict(getattr(span, "attributes", None) or {})

    plain = {"gen_ai.tool.name": "get_weather", "gen_ai.usage.input_tokens": 12, "ok": True, "score": 0.5}
    assert attributes_after(plain) == plain
    assert attributes_after({"names": ["a", "b"]}) == {"names": ("a", "b")}  # the SDK's conversion
    assert attributes_after({"text": "abcdef"}, SpanLimits(max_span_attribute_length=3)) == {"text": "abc"}
    assert len(attributes_after({f"k{i}": i for i in range(5)}, SpanLimits(max_span_attributes=3))) == 3
