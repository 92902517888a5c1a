"""``responses.create``, sync and async, plain and streamed, through the real client and a real
local server."""

from __future__ import annotations

import gc
import json

import openai
import pytest
from opentelemetry.trace import StatusCode

from agenteval_otel import semconv as attr


def test_a_response_is_a_chat_span_with_its_function_calls(client, instrumented, only_span, tools) -> None:
    response = client.responses.create(model="gpt-test", input="What is the weather in Tokyo?",
                                       instructions="Be brief.", tools=tools["responses"], max_output_tokens=64)
    a = only_span().attributes
    assert only_span().name == "chat gpt-test"
    assert a[attr.GEN_AI_RESPONSE_ID] == response.id and a[attr.GEN_AI_REQUEST_MAX_TOKENS] == 64
    assert a[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_call",)
    assert (a[attr.GEN_AI_USAGE_INPUT_TOKENS], a[attr.GEN_AI_USAGE_OUTPUT_TOKENS]) == (
        response.usage.input_tokens, response.usage.output_tokens)
    assert json.loads(a[attr.GEN_AI_INPUT_MESSAGES]) == [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "What is the weather in Tokyo?"}]}]
    (output,) = json.loads(a[attr.GEN_AI_OUTPUT_MESSAGES])
    assert output["parts"] == [{"type": "tool_call", "id": "call_1", "name": "get_weather",
                                "arguments": {"city": "Tokyo"}}]


def test_function_call_outputs_are_tool_call_response_parts(client, instrumented, exporter, tools) -> None:
    first = client.responses.create(model="gpt-test", input="Weather in Tokyo?", tools=tools["responses"])
    (call,) = first.output
    follow_up = [{"role": "user", "content": "Weather in Tokyo?"}, call,
                 {"type": "function_call_output", "call_id": call.call_id, "output": "rainy, 17 C"}]
    answer = client.responses.create(model="gpt-test", input=follow_up, tools=tools["responses"])
    assert answer.output_text == "The weather in Tokyo is rainy, 17 C."
    sent = json.loads(exporter.get_finished_spans()[1].attributes[attr.GEN_AI_INPUT_MESSAGES])
    assert sent[1]["parts"] == [{"type": "tool_call", "id": "call_1", "name": "get_weather",
                                 "arguments": {"city": "Tokyo"}}]
    assert sent[2] == {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                                                  "response": "rainy, 17 C"}]}


def test_a_response_stream_ends_once_with_the_completed_response(client, instrumented, only_span) -> None:
    stream = client.responses.create(model="gpt-test", input="Hi", stream=True)
    assert isinstance(stream, openai.Stream)
    events = list(stream)
    completed = events[-1].response
    a = only_span().attributes
    assert a[attr.MESSAGE_CONTENT] == "Hello! Ask me about the weather in a city."
    assert a[attr.GEN_AI_USAGE_OUTPUT_TOKENS] == completed.usage.output_tokens
    assert a[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)


def test_an_abandoned_response_stream_ends_with_what_arrived(client, instrumented, only_span, exporter) -> None:
    stream = client.responses.create(model="gpt-test", input="Hi", stream=True)
    for _ in range(3):
        next(stream)
    assert exporter.get_finished_spans() == ()
    del stream
    gc.collect()
    a = only_span().attributes
    assert a[attr.GEN_AI_RESPONSE_ID] == "resp_local"
    assert a[attr.MESSAGE_CONTENT] == "Hello! Ask m"
    assert attr.GEN_AI_RESPONSE_FINISH_REASONS not in a


def test_a_cut_response_stream_fails_its_span_with_the_clients_error(model_server, instrumented, only_span):
    with model_server.serve(lambda request: model_server.Turn("Hello", stream_drop=True)) as failing:
        client = openai.OpenAI(base_url=failing.base_url, api_key="k", max_retries=0, timeout=5)
        with pytest.raises(openai.APIConnectionError):
            list(client.responses.create(model="gpt-test", input="Hi", stream=True))
    span = only_span()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes[attr.ERROR_TYPE] == "APIConnectionError"


def test_an_error_event_is_an_error_finish(model_server, instrumented, only_span) -> None:
    with model_server.serve(lambda request: model_server.Turn("Hello", stream_error=True)) as failing:
        client = openai.OpenAI(base_url=failing.base_url, api_key="k", max_retries=0, timeout=5)
        events = list(client.responses.create(model="gpt-test", input="Hi", stream=True))
    assert events[-1].type == "error"
    assert only_span().attributes[attr.GEN_AI_RESPONSE_FINISH_REASONS] == ("error",)


async def test_async_responses(async_client, instrumented, exporter, tools) -> None:
    response = await async_client.responses.create(model="gpt-test", input="Weather in Oslo?",
                                                   tools=tools["responses"])
    assert response.output[0].name == "get_weather"
    stream = await async_client.responses.create(model="gpt-test", input="Hi", stream=True)
    assert isinstance(stream, openai.AsyncStream)
    events = [event async for event in stream]
    plain, streamed = exporter.get_finished_spans()
    assert '"city":"Oslo"' in plain.attributes[attr.GEN_AI_OUTPUT_MESSAGES]
    assert streamed.attributes[attr.GEN_AI_USAGE_OUTPUT_TOKENS] == events[-1].response.usage.output_tokens
