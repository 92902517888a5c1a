"""Model messages: reading what an LLM call returned, writing GenAI semantic-convention JSON.

``read_message`` understands a plain str, OpenAI-style message dicts and objects
(``role``/``content``/``tool_calls``), OpenAI chat completions (``choices[0].message``, ``model``,
``usage``), Anthropic messages (content blocks, ``stop_reason``) and LangChain messages
(``tool_calls`` with ``args``). The JSON follows ``gen_ai.input.messages`` /
``gen_ai.output.messages``: ``[{"role": ..., "parts": [{"type": "text", "content": ...}]}]``.
An instrumentor reads its client's responses with these instead of writing its own reader:

>>> reply = read_message({"role": "assistant", "content": "Hi!", "model": "m1"}, "assistant")
>>> reply.content, reply.model, reply.finish_reason
('Hi!', 'm1', None)
>>> text_messages_json("user", "Hello")
'[{"role":"user","parts":[{"type":"text","content":"Hello"}]}]'
>>> input_messages([{"role": "system", "content": "Be brief."}, "Hello"])[0]
{'role': 'system', 'parts': [{'type': 'text', 'content': 'Be brief.'}]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

__all__ = ["ModelMessage", "input_messages", "read_message", "text_messages_json"]

_FINISH_REASONS: Final = {
    "tool_calls": "tool_call",
    "tool_use": "tool_call",
    "function_call": "tool_call",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
}


@dataclass(slots=True)
class ModelMessage:
    """The parts of a model message that our spans record."""

    role: str
    content: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    def output_messages(self, content: str | None) -> list[dict[str, Any]]:
        """``gen_ai.output.messages`` for this message, with ``content`` as its (cleaned) text."""
        parts: list[dict[str, Any]] = []
        if content is not None:
            parts.append({"type": "text", "content": content})
        parts.extend(self.tool_calls)
        reason = self.finish_reason or ("tool_call" if self.tool_calls else "stop")
        return [{"role": self.role, "parts": parts, "finish_reason": reason}]


def text_messages_json(role: str, content: str, finish_reason: str | None = None) -> str:
    """One text message as semconv JSON (``finish_reason`` is set for output messages)."""
    message: dict[str, Any] = {"role": role, "parts": [{"type": "text", "content": content}]}
    if finish_reason is not None:
        message["finish_reason"] = finish_reason
    return orjson.dumps([message]).decode()


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _tokens(usage: Any, *names: str) -> int | None:
    for name in names:
        value = _field(usage, name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _arguments(value: Any) -> Any:
    if isinstance(value, (str, bytes)):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _tool_call(call: Any) -> dict[str, Any] | None:
    """A ``tool_call`` part; ``None`` for a call with no name to read (a part always names its tool)."""
    if isinstance(call, str):  # a bare tool name, as a scripted model may give
        return {"type": "tool_call", "name": call} if call else None
    function = _field(call, "function")
    if function is not None:  # OpenAI: {"id", "function": {"name", "arguments": "<json>"}}
        name, arguments = _field(function, "name"), _field(function, "arguments")
    else:  # LangChain {"name", "args"}; Anthropic tool_use {"name", "input"}
        name = _field(call, "name")
        arguments = next((a for a in (_field(call, k) for k in ("args", "input", "arguments")) if a is not None), None)
    if not isinstance(name, str) or not name:
        return None
    part: dict[str, Any] = {"type": "tool_call", "name": name}
    call_id = _field(call, "id")
    if call_id is not None:
        part["id"] = call_id
    if arguments is not None:
        part["arguments"] = _arguments(arguments)
    return part


def _tool_calls(calls: Sequence[Any]) -> list[dict[str, Any]]:
    """The ``tool_call`` parts of ``calls``, those with no name left out."""
    return [part for part in map(_tool_call, calls) if part is not None]


def _content(value: Any, tool_calls: list[dict[str, Any]]) -> str | None:
    """Text of a message's content: a str, or text parts/blocks joined (tool_use blocks to ``tool_calls``)."""
    if value is None or isinstance(value, str):
        return value
    if not isinstance(value, Sequence):
        return None
    texts: list[str] = []
    for block in value:
        if isinstance(block, str):
            texts.append(block)
            continue
        kind = _field(block, "type")
        if kind == "tool_use":
            tool_calls.extend(_tool_calls((block,)))
            continue
        text = _field(block, "text")
        if not isinstance(text, str) and kind == "text":
            text = _field(block, "content")
        if isinstance(text, str):
            texts.append(text)
    return "".join(texts) if texts else None


def read_message(value: Any, default_role: str) -> ModelMessage | None:
    """The model message in ``value``, or ``None`` when ``value`` does not look like one."""
    if isinstance(value, str):
        return ModelMessage(role=default_role, content=value)
    response: Any = None
    choices = _field(value, "choices")
    if isinstance(choices, Sequence) and not isinstance(choices, str) and choices:
        response, choice = value, choices[0]
        value = _field(choice, "message")
        reason = _field(choice, "finish_reason")
    else:
        reason = _field(value, "stop_reason") or _field(value, "finish_reason")
    content_field = _field(value, "content")
    raw_calls = _field(value, "tool_calls")
    if content_field is None and raw_calls is None:
        return None
    role = _field(value, "role")
    message = ModelMessage(role=role if isinstance(role, str) else default_role)
    if isinstance(raw_calls, Sequence) and not isinstance(raw_calls, str):
        message.tool_calls = _tool_calls(raw_calls)
    message.content = _content(content_field, message.tool_calls)
    if isinstance(reason, str):
        message.finish_reason = _FINISH_REASONS.get(reason, reason)
    source = response if response is not None else value
    model = _field(source, "model")
    message.model = model if isinstance(model, str) else None
    usage = _field(source, "usage")
    if usage is not None:
        message.input_tokens = _tokens(usage, "input_tokens", "prompt_tokens")
        message.output_tokens = _tokens(usage, "output_tokens", "completion_tokens")
    return message


def input_messages(value: Any, default_role: str = "user") -> list[dict[str, Any]]:
    """``gen_ai.input.messages`` for what was sent to a model: a str, one message or a sequence of them.

    Tool results (``role="tool"`` with ``tool_call_id``) become ``tool_call_response`` parts; a
    str in a sequence is a ``default_role`` text message; what reads as no message is left out.
    """
    items = value if isinstance(value, Sequence) and not isinstance(value, (str, bytes)) else (value,)
    messages: list[dict[str, Any]] = []
    for item in items:
        if _field(item, "role") == "tool" and _field(item, "tool_call_id") is not None:
            response = {"type": "tool_call_response", "id": _field(item, "tool_call_id")}
            response["response"] = _field(item, "content")
            messages.append({"role": "tool", "parts": [response]})
            continue
        message = read_message(item, default_role)
        if message is None:
            continue
        parts: list[dict[str, Any]] = []
        if message.content is not None:
            parts.append({"type": "text", "content": message.content})
        parts.extend(message.tool_calls)
        messages.append({"role": message.role, "parts": parts})
    return messages
