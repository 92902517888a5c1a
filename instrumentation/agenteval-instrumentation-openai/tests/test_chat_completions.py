"""``chat.completions.create``, sync and async, plain and streamed, through the real client and a
real local server: the GenAI span, the tool calls as message parts, and streams ending once."""

from __future__ import annotations

import gc
import json
import logging
from typing import Any

import openai
import pytest
from opentelemetry.trace import SpanKind, StatusCode

from agenteval_otel import semconv as attr
from agenteval_otel.tracing import active_conventions, set_conventions

QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]


def test_a_call_is_a_chat_span_in_genai_conventions(client, instrumented, only_span, tools) -> None:
    completion = client.chat.completions.create(
        model="gpt-test", messages=QUESTION, tools=tools["chat"], temperature=0.2, max_tokens=50, seed=7,
        top_p=0.9, stop=["END"], response_format={"type": "text"},
    )
    span = only_span()
    a = span.attributes
    assert span.name == "chat gpt-test"
    assert (a[attr.GEN_AI_OPERATION_NAME], a[attr.GEN_AI_PROVIDER_NAME], a[attr.STEP_TYPE]) == ("chat", "openai", "message")
    assert (a[attr.GEN_AI_REQUEST_MODEL], a[attr.GEN_AI_REQUEST_TEMPERATURE], a[attr.GEN_AI_REQUEST_MAX_TOKENS]) == (
        "gpt-test", 0.2, 50)
    assert (a[attr.GEN_AI_REQUEST_SEED], a[attr.GEN_AI_REQUEST_TOP_P], a[attr.GEN_AI_REQUEST_STOP_SEQUENCES]) == (
        7, 0.9, ("END",))
    assert a[attr.GEN_AI_OUTPUT_TYPE] == "text"
    assert a[attr.SERVER_ADDRESS] == "127.0.0.1" and a[attr.SERVER_PORT] == client.base_url.port
    assert a[attr.GEN_AI_RESPONSE_ID] == completion.id and a[attr.GEN_AI_RESPONSE_MODEL] == "gpt-test"
    assert a[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_call",)
    assert (a[attr.GEN_AI_USAGE_INPUT_TOKENS], a[attr.GEN_AI_USAGE_OUTPUT_TOKENS]) == (
        completion.usage.prompt_tokens, completion.usage.completion_tokens)
    (output,) = json.loads(a[attr.GEN_AI_OUTPUT_MESSAGES])
    assert output["parts"] == [{"type": "tool_call", "id": "call_1", "name": "get_weather",
                                "arguments": {"city": "Paris"}}]
    assert json.loads(a[attr.GEN_AI_INPUT_MESSAGES]) == [
        {"role": "user", "parts": [{"type": "text", "content": "What is the weather in Paris?"}]}]
    assert json.loads(a[attr.GEN_AI_TOOL_DEFINITIONS])[0]["name"] == "get_weather"


def test_the_tool_results_sent_are_tool_call_response_parts(client, instrumented, only_span, tools) -> None:
    messages = [*QUESTION,
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "get_weather",
                                                                      "arguments": '{"city": "Paris"}'}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 C"}]
    completion = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools["chat"])
    assert completion.choices[0].message.content == "The weather in Paris is sunny, 21 C."
    a = only_span().attributes
    sent = json.loads(a[attr.GEN_AI_INPUT_MESSAGES])
    assert sent[1]["parts"][0] == {"type": "tool_call", "id": "call_1", "name": "get_weather",
                                   "arguments": {"city": "Paris"}}
    assert sent[2] == {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                                                  "response": "sunny, 21 C"}]}
    assert a[attr.MESSAGE_CONTENT] == "The weather in Paris is sunny, 21 C."
    assert a[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)


def test_an_error_answer_fails_the_span_and_reaches_the_caller(model_server, instrumented, only_span) -> None:
    with model_server.serve(lambda request: model_server.Turn(status=500)) as failing:
        client = openai.OpenAI(base_url=failing.base_url, api_key="k", max_retries=0, timeout=5)
        with pytest.raises(openai.InternalServerError) as raised:
            client.chat.completions.create(model="gpt-test", messages=QUESTION)
    span = only_span()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[attr.ERROR_TYPE] == "InternalServerError"
    assert raised.value.status_code == 500


def _chunks(stream: Any) -> list[Any]:
    return [chunk for chunk in stream]


def test_an_exhausted_stream_ends_once_with_the_final_chunks_usage(client, instrumented, only_span, tools, caplog):
    caplog.set_level(logging.DEBUG)
    stream = client.chat.completions.create(model="gpt-test", messages=QUESTION, tools=tools["chat"], stream=True,
                                            stream_options={"include_usage": True})
    chunks = _chunks(stream)
    assert chunks[-1].usage is not None and chunks[-1].choices == []
    stream.close()  # closing after the end changes nothing
    span = only_span()
    a = span.attributes
    assert (a[attr.GEN_AI_USAGE_INPUT_TOKENS], a[attr.GEN_AI_USAGE_OUTPUT_TOKENS]) == (
        chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens)
    assert a[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_call",)
    (output,) = json.loads(a[attr.GEN_AI_OUTPUT_MESSAGES])
    assert output["parts"] == [{"type": "tool_call", "id": "call_1", "name": "get_weather",
                                "arguments": {"city": "Paris"}}]
    assert not [r for r in caplog.records if "after the step ended" in r.getMessage()]


def test_the_stream_stays_the_users_stream(client, instrumented, only_span) -> None:
    stream = client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "Hi"}],
                                            stream=True)
    assert isinstance(stream, openai.Stream)
    assert stream.response.status_code == 200
    with stream as entered:
        assert entered is stream
        text = "".join(chunk.choices[0].delta.content or "" for chunk in entered)
    assert text == "Hello! Ask me about the weather in a city."
    assert only_span().attributes[attr.MESSAGE_CONTENT] == text


@pytest.mark.parametrize("how", ["close", "with", "abandon"])
def test_a_stream_left_early_ends_once(client, instrumented, only_span, exporter, how) -> None:
    request = {"model": "gpt-test", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
    if how == "with":
        with client.chat.completions.create(**request) as stream:
            next(stream)
            next(stream)
    else:
        stream = client.chat.completions.create(**request)
        next(stream)
        next(stream)
        assert exporter.get_finished_spans() == ()  # still open
        if how == "close":
            stream.close()
        else:
            del stream
            gc.collect()
    span = only_span()
    assert span.status.status_code is StatusCode.UNSET
    assert span.attributes[attr.GEN_AI_RESPONSE_ID] == "chatcmpl-local"
    assert span.attributes[attr.MESSAGE_CONTENT] == "Hello! Ask m"  # the first 12 characters: what arrived before it was left


def test_a_failing_stream_fails_its_span_with_that_error(model_server, instrumented, only_span) -> None:
    with model_server.serve(lambda request: model_server.Turn("Hello there", stream_error=True)) as failing:
        client = openai.OpenAI(base_url=failing.base_url, api_key="k", max_retries=0, timeout=5)
        stream = client.chat.completions.create(model="gpt-test", messages=QUESTION, stream=True)
        with pytest.raises(openai.APIError, match="scripted stream error"):
            _chunks(stream)
    span = only_span()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[attr.ERROR_TYPE] == "APIError"


async def test_async_calls_and_streams(async_client, instrumented, exporter, tools) -> None:
    completion = await async_client.chat.completions.create(model="gpt-test", messages=QUESTION, tools=tools["chat"])
    assert completion.choices[0].message.tool_calls[0].function.name == "get_weather"
    stream = await async_client.chat.completions.create(
        model="gpt-test", messages=QUESTION, tools=tools["chat"], stream=True, stream_options={"include_usage": True})
    assert isinstance(stream, openai.AsyncStream)
    chunks = [chunk async for chunk in stream]
    left = await async_client.chat.completions.create(model="gpt-test", messages=QUESTION, stream=True)
    async with left:
        await left.__anext__()
    plain, streamed, closed = exporter.get_finished_spans()
    for span in (plain, streamed):
        assert span.attributes[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_call",)
        assert "get_weather" in span.attributes[attr.GEN_AI_OUTPUT_MESSAGES]
    assert streamed.attributes[attr.GEN_AI_USAGE_OUTPUT_TOKENS] == chunks[-1].usage.completion_tokens
    assert closed.status.status_code is StatusCode.UNSET


@pytest.mark.parametrize("capture", [True, False])
def test_a_chat_span_is_a_client_span_with_openinference_keys_when_asked(
        client, instrument, only_span, tools, capture: bool) -> None:
    """With ``set_conventions(("gen_ai", "openinference"))`` the span carries the keys Phoenix
    types spans by, the request and reply keys included; with content off, no messages or values."""
    before = active_conventions()
    set_conventions(("gen_ai", "openinference"))
    try:
        instrument(capture_content=capture)
        completion = client.chat.completions.create(model="gpt-test", messages=QUESTION, tools=tools["chat"])
    finally:
        set_conventions(before)
    span = only_span()
    a = span.attributes
    assert span.kind is SpanKind.CLIENT
    assert (a["openinference.span.kind"], a["llm.model_name"], a["llm.system"]) == ("LLM", "gpt-test", "openai")
    assert (a["llm.token_count.prompt"], a["llm.token_count.completion"]) == (
        completion.usage.prompt_tokens, completion.usage.completion_tokens)
    flattened = {k: v for k, v in a.items() if k.startswith(("llm.input_messages", "llm.output_messages",
                                                             "input.", "output."))}
    if not capture:
        assert flattened == {}
        return
    assert flattened["llm.input_messages.0.message.content"] == "What is the weather in Paris?"
    call = "llm.output_messages.0.message.tool_calls.0.tool_call."
    assert (flattened[call + "id"], flattened[call + "function.name"]) == ("call_1", "get_weather")
