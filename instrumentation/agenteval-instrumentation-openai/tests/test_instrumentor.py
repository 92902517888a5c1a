"""The instrumentor's promises (``../shared/RELIABILITY.md`` 2, 8, 9), content capture and its
policy, and the tool trajectory our converter reads from an openai-only agent's trace."""

from __future__ import annotations

import json
import logging
import sys
from importlib.metadata import entry_points

import openai
import pytest
from agenteval_instrumentation_openai import OpenAIInstrumentor, patch, reply, request
from openai.resources.chat.completions import AsyncCompletions, Completions
from openai.resources.responses import AsyncResponses, Responses
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

from agenteval_otel import semconv as attr
from agenteval_otel.tracing import ContentPolicy, set_active_policy

CLASSES = (Completions, AsyncCompletions, Responses, AsyncResponses)
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]


# --- promise 8: idempotent, symmetric, skipped when the library is missing or too old ------------


@pytest.mark.promise(8)
def test_instrument_twice_is_once_and_uninstrument_restores_the_very_same_functions(provider, client, exporter):
    originals = [cls.__dict__["create"] for cls in CLASSES]
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    wrapped = [cls.__dict__["create"] for cls in CLASSES]
    instrumentor.instrument(tracer_provider=provider)
    assert [cls.__dict__["create"] for cls in CLASSES] == wrapped
    assert all(w is not o for w, o in zip(wrapped, originals))
    client.chat.completions.create(model="m", messages=QUESTION)
    assert len(exporter.get_finished_spans()) == 1  # one span per call, not one per instrument()
    instrumentor.uninstrument()
    assert all(cls.__dict__["create"] is o for cls, o in zip(CLASSES, originals))
    client.chat.completions.create(model="m", messages=QUESTION)
    assert len(exporter.get_finished_spans()) == 1


@pytest.mark.promise(8)
def test_a_too_old_openai_is_skipped_with_one_log_line(tmp_path, monkeypatch, caplog) -> None:
    metadata = tmp_path / "openai-0.28.0.dist-info"
    metadata.mkdir()
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: openai\nVersion: 0.28.0\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    originals = [cls.__dict__["create"] for cls in CLASSES]
    with caplog.at_level(logging.INFO):
        OpenAIInstrumentor().instrument()
    try:
        assert [cls.__dict__["create"] for cls in CLASSES] == originals
        lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(lines) == 1 and "openai 0.28.0" in lines[0].getMessage()
    finally:
        OpenAIInstrumentor().uninstrument()


def test_the_entry_point_names_the_instrumentor() -> None:
    (point,) = [p for p in entry_points(group="opentelemetry_instrumentor", name="openai")
                if p.value.startswith("agenteval_instrumentation_openai")]
    assert point.load() is OpenAIInstrumentor


# --- promise 9: suppression and sampling ---------------------------------------------------------


@pytest.mark.promise(9)
def test_suppressed_instrumentation_makes_a_plain_call(client, instrumented, exporter) -> None:
    with suppress_instrumentation():
        completion = client.chat.completions.create(model="m", messages=QUESTION)
        stream = client.chat.completions.create(model="m", messages=QUESTION, stream=True)
    assert completion.choices[0].message.tool_calls is None
    assert type(stream) is openai.Stream
    list(stream)
    assert exporter.get_finished_spans() == ()


@pytest.mark.promise(9)
def test_no_attribute_work_for_a_span_that_is_not_recording(client, instrument, monkeypatch, tools) -> None:
    calls: list[str] = []
    for module, name in ((request, "tool_definitions"), (patch, "_reply_attributes")):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _o=original, _n=name: calls.append(_n) or _o(*a))
    instrument(tracer_provider=TracerProvider(sampler=ALWAYS_OFF), capture_content=True)
    client.chat.completions.create(model="m", messages=QUESTION, tools=tools["chat"])
    stream = client.chat.completions.create(model="m", messages=QUESTION, stream=True)
    assert type(stream) is openai.Stream  # no proxy: nothing to record
    list(stream)
    assert calls == []


# --- promise 2: an error of ours leaves the user's call untouched -------------------------------


def _raise(*args: object) -> None:
    raise RuntimeError("broken extractor")


@pytest.mark.promise(2)
def test_an_error_reading_the_reply_leaves_the_return_value_alone(client, instrumented, monkeypatch, caplog):
    monkeypatch.setattr(patch, "_reply_attributes", _raise)
    monkeypatch.setattr(patch, "_reported", set())
    with caplog.at_level(logging.WARNING):
        completion = client.chat.completions.create(model="m", messages=QUESTION)
    assert type(completion).__name__ == "ChatCompletion"
    assert completion.choices[0].message.tool_calls is None and completion.usage.prompt_tokens > 0
    assert any("recording the reply failed" in r.getMessage() for r in caplog.records)


@pytest.mark.promise(2)
def test_an_error_reading_the_request_or_chunks_leaves_the_call_and_stream_alone(
    client, instrumented, monkeypatch, caplog, tools, exporter
) -> None:
    monkeypatch.setattr(request, "tool_definitions", _raise)
    monkeypatch.setattr(reply.ChatChunks, "add", _raise)
    monkeypatch.setattr(patch, "_reported", set())
    with caplog.at_level(logging.WARNING):
        completion = client.chat.completions.create(model="m", messages=QUESTION, tools=tools["chat"])
        chunks = list(client.chat.completions.create(model="m", messages=QUESTION, tools=tools["chat"],
                                                     stream=True))
    assert completion.choices[0].message.tool_calls[0].function.arguments == '{"city": "Paris"}'
    assert "".join(c.choices[0].delta.tool_calls[0].function.arguments for c in chunks
                   if c.choices and c.choices[0].delta.tool_calls) == '{"city": "Paris"}'
    messages = {r.getMessage() for r in caplog.records}
    assert any("recording the request failed" in m for m in messages)
    assert any("reading a stream chunk failed" in m for m in messages)
    assert len(exporter.get_finished_spans()) == 2


# --- content -------------------------------------------------------------------------------------


@pytest.mark.promise(10)
def test_content_is_off_by_default(client, instrument, only_span, monkeypatch, tools) -> None:
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    instrument()
    client.chat.completions.create(model="m", messages=QUESTION, tools=tools["chat"])
    a = only_span().attributes
    assert a[attr.GEN_AI_USAGE_INPUT_TOKENS] > 0 and a[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_call",)
    content = {attr.GEN_AI_INPUT_MESSAGES, attr.GEN_AI_OUTPUT_MESSAGES, attr.MESSAGE_CONTENT, attr.GEN_AI_TOOL_DEFINITIONS}
    assert not content & set(a)


def test_the_environment_turns_content_on_and_our_policy_cleans_it(client, instrument, only_span, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    set_active_policy(ContentPolicy(capture=True, redact_patterns=(r"sk-\w+",), max_length=100))
    instrument()
    client.chat.completions.create(model="m", messages=[
        {"role": "user", "content": "Hi, my key is sk-abc123. " + "x" * 100}])
    a = only_span().attributes
    sent = a[attr.GEN_AI_INPUT_MESSAGES]
    assert "sk-abc123" not in sent and "[REDACTED]" in sent and "...[truncated" in sent


def test_our_policy_turning_content_off_wins(client, instrument, only_span) -> None:
    set_active_policy(ContentPolicy(capture=False))
    instrument(capture_content=True)
    client.chat.completions.create(model="m", messages=QUESTION)
    assert attr.GEN_AI_INPUT_MESSAGES not in only_span().attributes


# --- the trajectory of an openai-only agent ------------------------------------------------------


def test_an_openai_only_agent_yields_its_tool_trajectory(client, instrumented, exporter, trajectory_of, tools, provider):
    with provider.get_tracer("my-app").start_as_current_span("weather loop"):  # the app's own span, no agent step
        _chat_agent(client, tools, "What is the weather in Paris and in Rome?")
    trajectory = trajectory_of(exporter.get_finished_spans())
    assert [(c.name, c.args, c.result) for c in trajectory.tool_calls()] == [
        ("get_weather", {"city": "Paris"}, "sunny, 21 C"), ("get_weather", {"city": "Rome"}, "cloudy, 18 C")]
    assert trajectory.final_response == "The weather in Paris is sunny, 21 C. The weather in Rome is cloudy, 18 C."


def _chat_agent(client: openai.OpenAI, tools: dict[str, list[object]], question: str) -> None:
    weather = {"Paris": "sunny, 21 C", "Rome": "cloudy, 18 C"}
    messages: list[dict[str, object]] = [{"role": "user", "content": question}]
    while True:
        message = client.chat.completions.create(model="m", messages=messages, tools=tools["chat"]).choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            city = json.loads(call.function.arguments)["city"]
            messages.append({"role": "tool", "tool_call_id": call.id, "content": weather[city]})


@pytest.mark.parametrize("stream", [False, True])
async def test_an_async_responses_agent_yields_its_tool_trajectory(
    async_client, instrumented, exporter, trajectory_of, tools, stream, provider
) -> None:
    with provider.get_tracer("my-app").start_as_current_span("weather loop"):
        await _responses_agent(async_client, tools, stream)
    trajectory = trajectory_of(exporter.get_finished_spans())
    assert [(c.name, c.args, c.result) for c in trajectory.tool_calls()] == [("get_weather", {"city": "Lima"}, "foggy")]


async def _responses_agent(async_client: openai.AsyncOpenAI, tools: dict[str, list[object]], stream: bool) -> None:
    items: list[object] = [{"role": "user", "content": "Weather in Lima?"}]
    first = await async_client.responses.create(model="m", input=items, tools=tools["responses"], stream=stream)
    if stream:
        calls = [e.item async for e in first if e.type == "response.output_item.done"]
    else:
        calls = list(first.output)
    items += [*calls, *({"type": "function_call_output", "call_id": c.call_id, "output": "foggy"} for c in calls)]
    await async_client.responses.create(model="m", input=items, tools=tools["responses"])
