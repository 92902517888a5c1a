"""The OpenTelemetry GenAI message JSON (``gen_ai.input.messages``, ``gen_ai.output.messages``).

A message is ``{"role": ..., "parts": [...]}`` with parts of type ``text`` (``content``),
``tool_call`` (``id``, ``name``, ``arguments``) and ``tool_call_response`` (``id``,
``response``). Producers also write ``result`` for ``response``, arguments as a JSON string, and
the older OpenAI-style ``{"role", "content", "tool_calls"}`` messages; all are read.

>>> messages = parse_messages('[{"role": "assistant", "parts": [{"type": "tool_call", '
...     '"name": "get_weather", "arguments": {"city": "Paris"}, "id": "c1"}]}]')
>>> messages[0].tool_calls[0].args
{'city': 'Paris'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval_otel.trajectory.conventions.reading import (
    ChatMessage,
    RequestedToolCall,
    ToolResponse,
)
from agenteval_otel.trajectory.conventions.values import (
    decode_json,
    decode_result,
)
from agenteval_otel.trajectory.messages import decode_arguments, message_text, normalize_role

__all__ = ["parse_messages", "requested_call"]


def requested_call(name: Any, arguments: Any, call_id: Any) -> RequestedToolCall:
    """A requested tool call from its recorded name, arguments and id."""
    args, raw = decode_arguments(arguments)
    return RequestedToolCall(
        name=str(name or ""), args=args, call_id=None if call_id in (None, "") else str(call_id), raw_args=raw
    )


def _from_parts(role: str, parts: list[Any]) -> ChatMessage:
    texts: list[str] = []
    calls: list[RequestedToolCall] = []
    responses: list[ToolResponse] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = part.get("type", "text")
        if kind == "text" and isinstance(part.get("content"), str):
            texts.append(part["content"])
        elif kind == "tool_call":
            calls.append(requested_call(part.get("name"), part.get("arguments"), part.get("id")))
        elif kind == "tool_call_response":
            response = part.get("response", part.get("result"))
            responses.append(ToolResponse(part.get("id"), decode_result(response), part.get("name")))
    text = "".join(texts) if texts else None
    return ChatMessage(role, text, tuple(calls), tuple(responses))


def _from_openai(message: Mapping[str, Any], role: str) -> ChatMessage:
    calls = []
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict):
            function = call["function"] if isinstance(call.get("function"), dict) else call
            calls.append(requested_call(function.get("name"), function.get("arguments"), call.get("id")))
    responses: tuple[ToolResponse, ...] = ()
    text = message_text(message.get("content"))
    if role == "tool" and message.get("tool_call_id"):
        responses = (ToolResponse(message["tool_call_id"], decode_result(text), message.get("name")),)
        text = None
    return ChatMessage(role, text, tuple(calls), responses)


def parse_messages(value: Any) -> tuple[ChatMessage, ...]:
    """The messages of a GenAI message attribute (a JSON string or an already decoded list).

    Anything unreadable yields no messages rather than an error.
    """
    decoded = decode_json(value)
    if isinstance(decoded, dict):
        decoded = [decoded]
    if not isinstance(decoded, list):
        return ()
    messages = []
    for message in decoded:
        if not isinstance(message, dict):
            continue
        role = normalize_role(message.get("role"))
        parts = message.get("parts")
        if isinstance(parts, list):
            messages.append(_from_parts(role, parts))
        else:
            messages.append(_from_openai(message, role))
    return tuple(messages)
