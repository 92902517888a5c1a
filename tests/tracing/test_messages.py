"""Reading model messages and writing GenAI semantic-convention message JSON."""

from __future__ import annotations

import json

from agenteval_otel.tracing import read_message
from agenteval_otel.tracing.messages import input_messages, text_messages_json


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
