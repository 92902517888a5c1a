"""Reading model messages and writing GenAI semantic-convention message JSON."""

from __future__ import annotations

import importlib.util
import json

from agenteval_otel import semconv as attr
from agenteval_otel.tracing import read_message
from agenteval_otel.tracing.messages import input_messages, text_messages_json
from tests.tracing.conftest import EXAMPLES, Spans


def test_an_openai_completion_reads_as_its_first_choice() -> None:
    completion = {
        "model": "gpt-4o-mini",
        "choices": [{"message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    }
    message = read_message(completion, "assistant")
    assert message is not None
    assert (message.content, message.model, message.finish_reason) == ("Hi", "gpt-4o-mini", "stop")
    assert (message.input_tokens, message.output_tokens) == (3, 1)


def test_something_that_is_no_message_reads_as_none() -> None:
    assert read_message({"unrelated": 1}, "assistant") is None


def test_input_messages_of_a_str_a_message_and_a_conversation() -> None:
    user = {"role": "user", "parts": [{"type": "text", "content": "Hello"}]}
    assert input_messages("Hello") == [user]
    assert input_messages({"role": "user", "content": "Hello"}) == [user]
    conversation = input_messages(
        [
            "Hello",
            {"unrelated": 1},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "42"},
        ]
    )
    assert conversation == [
        user,
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "42"}]},
    ]


def test_text_messages_json_marks_output_messages_with_a_finish_reason() -> None:
    assert json.loads(text_messages_json("assistant", "Done", "stop")) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "Done"}], "finish_reason": "stop"}
    ]


def test_every_tool_call_part_names_its_tool() -> None:
    """A bare tool name (a scripted model's ``tool_calls: ["get_weather"]``) is the call's name;
    a call with no name to read is left out rather than written with a null name."""
    message = read_message({"role": "assistant", "tool_calls": ["get_weather", {"id": "c2"},
                                                                {"id": "c3", "name": "convert", "args": {"x": 1}}]},
                           "assistant")
    assert message is not None
    assert message.tool_calls == [{"type": "tool_call", "name": "get_weather"},
                                  {"type": "tool_call", "name": "convert", "id": "c3", "arguments": {"x": 1}}]
    parts = message.output_messages(None)[0]["parts"]
    assert all(isinstance(part["name"], str) and part["name"] for part in parts)
    anthropic = read_message({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "input": {}}]},
                             "assistant")
    assert anthropic is not None and anthropic.tool_calls == []


def test_the_quickstart_model_names_the_tools_it_calls(spans: Spans) -> None:
    """``examples/weather_agent.py``'s scripted model lists the tools it calls by name."""
    spec = importlib.util.spec_from_file_location("weather_agent_example", EXAMPLES / "weather_agent.py")
    assert spec is not None and spec.loader is not None
    weather = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(weather)
    weather.weather_agent("How warm is Tokyo in Fahrenheit?", thread_id="t", history=[])
    output = json.loads(spans.attributes("chat scripted-weather-model")[attr.GEN_AI_OUTPUT_MESSAGES])
    assert [part.get("name") for part in output[0]["parts"]] == ["get_weather", "celsius_to_fahrenheit"]
