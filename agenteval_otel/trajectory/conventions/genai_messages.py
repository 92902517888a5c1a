"""The OpenTelemetry GenAI message JSON (``gen_ai.input.messages``, ``gen_ai.output.messages``).

A message is ``{"role": ..., "parts": [...]}`` with parts of type ``text`` (``content``),
``tool_call`` (``id``, ``name``, ``arguments``) and ``tool_call_response`` (``id``,
``response``). Producers also write ``result`` for ``response``, arguments as a JSON string, the
older OpenAI-style ``{"role", "content", "tool_calls" | "function_call"}`` messages (LangChain's
dicts name a call's arguments ``args``), and content as Bedrock Converse blocks (``text``,
``toolUse``, ``toolResult``; Strands Agents records these); all are read.

>>> messages = parse_messages('[{"role": "assistant", "parts": [{"type": "tool_call", '
...     '"name": "get_weather", "arguments": {"city": "Paris"}, "id": "c1"}]}]')
>>> messages[0].tool_calls[0].args
{'city': 'Paris'}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
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

__all__ = ["converse_blocks", "converse_value", "parse_messages", "requested_call"]


def requested_call(name: Any, arguments: Any, call_id: Any) -> RequestedToolCall:
    """A requested tool call from its recorded name, arguments and id."""
    args, raw = decode_arguments(arguments)
    return RequestedToolCall(
        name=str(name or ""), args=args, call_id=None if call_id in (None, "") else str(call_id), raw_args=raw
    )


def _from_parts(role: str, parts: list[Any], message: Mapping[str, Any]) -> ChatMessage:
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
    if not calls and message.get("tool_calls"):
        calls = list(_openai_calls(message))  # OpenAI's calls beside the parts (LiteLLM)
    if role == "tool" and not responses and message.get("tool_call_id"):
        responses.append(ToolResponse(str(message["tool_call_id"]), decode_result(text), message.get("name")))
        text = None
    return ChatMessage(role, text, tuple(calls), tuple(responses))


_CONVERSE_BLOCKS = frozenset({
    "text", "toolUse", "toolResult", "image", "document", "video", "json", "reasoningContent", "cachePoint",
    "guardContent", "citationsContent",
})


def converse_blocks(content: Any) -> list[dict[str, Any]] | None:
    """``content`` as Bedrock Converse content blocks (``[{"text": ...}, {"toolUse": {...}}]``,
    possibly JSON text), or ``None`` when it is not a list of such blocks."""
    decoded = decode_json(content) if isinstance(content, str) else content
    if not isinstance(decoded, list) or not decoded:
        return None
    for block in decoded:
        if not isinstance(block, dict) or len(block) != 1 or next(iter(block)) not in _CONVERSE_BLOCKS:
            return None
    return decoded


def converse_value(content: Any) -> Any:
    """Content blocks (a ``toolResult``'s, or a tool's output) as one value: the JSON or text of
    a single block (JSON text decoded), else the texts joined."""
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        block = content[0]
        if "json" in block:
            return block["json"]
        if isinstance(block.get("text"), str):
            return decode_result(block["text"])
    return message_text(content) if isinstance(content, list) else content


def _from_converse(role: str, blocks: list[dict[str, Any]]) -> ChatMessage:
    texts: list[str] = []
    calls: list[RequestedToolCall] = []
    responses: list[ToolResponse] = []
    for block in blocks:
        ((kind, body),) = block.items()
        if kind == "text" and isinstance(body, str):
            texts.append(body)
        elif kind == "toolUse" and isinstance(body, dict):
            calls.append(requested_call(body.get("name"), body.get("input"), body.get("toolUseId")))
        elif kind == "toolResult" and isinstance(body, dict):
            call_id = body.get("toolUseId")
            responses.append(ToolResponse(None if call_id is None else str(call_id),
                                          converse_value(body.get("content"))))
    return ChatMessage(role, "\n".join(texts) if texts else None, tuple(calls), tuple(responses))


def _from_openai(message: Mapping[str, Any], role: str) -> ChatMessage:
    blocks = converse_blocks(message.get("content"))
    if blocks is not None:
        return _from_converse(role, blocks)
    calls = tuple(_openai_calls(message))
    responses: tuple[ToolResponse, ...] = ()
    text = message_text(message.get("content"))
    if role == "tool" and message.get("tool_call_id"):
        responses = (ToolResponse(message["tool_call_id"], decode_result(text), message.get("name")),)
        text = None
    return ChatMessage(role, text, calls, responses)


def _openai_calls(message: Mapping[str, Any]) -> Iterator[RequestedToolCall]:
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict):
            function = call["function"] if isinstance(call.get("function"), dict) else call
            arguments = function["arguments"] if "arguments" in function else function.get("args")  # LangChain: args
            yield requested_call(function.get("name"), arguments, call.get("id"))
    if isinstance(message.get("function_call"), dict):  # OpenAI's legacy single call
        function = message["function_call"]
        yield requested_call(function.get("name"), function.get("arguments"), None)


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
            messages.append(_from_parts(role, parts, message))
        else:
            messages.append(_from_openai(message, role))
    return tuple(messages)
