"""What the model answered: a :class:`Reply` read from a chat completion or a Responses-API
response, whole or assembled chunk by chunk from a stream.

Finish reasons are written as the GenAI output-message values (``stop``, ``length``,
``tool_call``, ``content_filter``, ``error``), the values our own ``@message`` steps write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["ChatChunks", "Reply", "ResponseEvents", "chat_reply", "field_of", "response_reply"]

_CHAT_FINISH: Final = {"tool_calls": "tool_call", "function_call": "tool_call"}
_INCOMPLETE: Final = {"max_output_tokens": "length", "content_filter": "content_filter"}


def field_of(obj: Any, name: str) -> Any:
    """``obj[name]`` of a mapping, else ``obj.name``; ``None`` when absent."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(slots=True)
class Reply:
    """The parts of a model's answer our spans record."""

    response_id: str | None = None
    model: str | None = None
    finish_reasons: list[str] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    text: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """OpenAI-shaped: ``{"id", "type": "function", "function": {"name", "arguments"}}``."""

    def read_usage(self, usage: Any) -> None:
        if usage is None:
            return
        self.input_tokens = _int(field_of(usage, "prompt_tokens") or field_of(usage, "input_tokens"))
        self.output_tokens = _int(field_of(usage, "completion_tokens") or field_of(usage, "output_tokens"))

    def message(self) -> dict[str, Any]:
        """The answer as an assistant message dict, as ``read_message`` reads it."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text, "tool_calls": self.tool_calls}
        if len(self.finish_reasons) == 1:
            message["finish_reason"] = self.finish_reasons[0]
        return message


def _tool_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def chat_reply(completion: Any) -> Reply:
    """The reply in a ``ChatCompletion``: the first choice's message, every choice's finish reason."""
    reply = Reply(response_id=field_of(completion, "id"), model=field_of(completion, "model"))
    reply.read_usage(field_of(completion, "usage"))
    choices = field_of(completion, "choices") or []
    for choice in choices:
        reason = field_of(choice, "finish_reason")
        if isinstance(reason, str):
            reply.finish_reasons.append(_CHAT_FINISH.get(reason, reason))
    if choices:
        message = field_of(choices[0], "message")
        content = field_of(message, "content")
        reply.text = content if isinstance(content, str) else None
        for call in field_of(message, "tool_calls") or []:
            function = field_of(call, "function")
            reply.tool_calls.append(
                _tool_call(field_of(call, "id"), field_of(function, "name"), field_of(function, "arguments"))
            )
    return reply


def response_reply(response: Any) -> Reply:
    """The reply in a Responses-API ``Response``: its output text and function calls."""
    reply = Reply(response_id=field_of(response, "id"), model=field_of(response, "model"))
    reply.read_usage(field_of(response, "usage"))
    texts: list[str] = []
    for item in field_of(response, "output") or []:
        kind = field_of(item, "type")
        if kind == "message":
            for part in field_of(item, "content") or []:
                text = field_of(part, "text")
                if field_of(part, "type") == "output_text" and isinstance(text, str):
                    texts.append(text)
        elif kind == "function_call":
            reply.tool_calls.append(
                _tool_call(field_of(item, "call_id"), field_of(item, "name"), field_of(item, "arguments"))
            )
    reply.text = "".join(texts) if texts else None
    status = field_of(response, "status")
    if status == "incomplete":
        reason = field_of(field_of(response, "incomplete_details"), "reason")
        reply.finish_reasons = [_INCOMPLETE.get(reason, str(reason))]
    elif status == "failed":
        reply.finish_reasons = ["error"]
    elif status == "completed":
        reply.finish_reasons = ["tool_call" if reply.tool_calls else "stop"]
    return reply


class ChatChunks:
    """A chat-completion stream's reply, assembled from its chunks (usage from the final chunk)."""

    __slots__ = ("_calls", "_finish", "_texts", "reply")

    def __init__(self) -> None:
        self.reply = Reply()
        self._texts: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: dict[int, str] = {}

    def add(self, chunk: Any) -> None:
        reply = self.reply
        if reply.response_id is None:
            reply.response_id = field_of(chunk, "id")
            reply.model = field_of(chunk, "model")
        usage = field_of(chunk, "usage")
        if usage is not None:
            reply.read_usage(usage)
        for choice in field_of(chunk, "choices") or ():
            index = field_of(choice, "index") or 0
            reason = field_of(choice, "finish_reason")
            if isinstance(reason, str):
                self._finish[index] = _CHAT_FINISH.get(reason, reason)
            if index != 0:
                continue
            delta = field_of(choice, "delta")
            text = field_of(delta, "content")
            if isinstance(text, str) and text:
                self._texts.append(text)
            for call in field_of(delta, "tool_calls") or ():
                self._add_call(call)

    def _add_call(self, call: Any) -> None:
        slot = self._calls.setdefault(field_of(call, "index") or 0, {"id": None, "name": None, "arguments": []})
        slot["id"] = field_of(call, "id") or slot["id"]
        function = field_of(call, "function")
        slot["name"] = field_of(function, "name") or slot["name"]
        arguments = field_of(function, "arguments")
        if isinstance(arguments, str):
            slot["arguments"].append(arguments)

    def result(self) -> Reply:
        reply = self.reply
        reply.text = "".join(self._texts) if self._texts else None
        reply.tool_calls = [
            _tool_call(slot["id"], slot["name"], "".join(slot["arguments"]))
            for _, slot in sorted(self._calls.items())
        ]
        reply.finish_reasons = [reason for _, reason in sorted(self._finish.items())]
        return reply


class ResponseEvents:
    """A Responses-API stream's reply: the final response of its last event, else what arrived."""

    __slots__ = ("_error", "_final", "_partial", "_texts")

    def __init__(self) -> None:
        self._final: Any = None
        self._partial: Any = None
        self._texts: list[str] = []
        self._error = False

    def add(self, event: Any) -> None:
        kind = field_of(event, "type")
        if kind == "response.output_text.delta":
            delta = field_of(event, "delta")
            if isinstance(delta, str):
                self._texts.append(delta)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            self._final = field_of(event, "response")
        elif kind in ("response.created", "response.in_progress"):
            self._partial = field_of(event, "response")
        elif kind == "error":
            self._error = True

    def result(self) -> Reply:
        if self._final is not None:
            return response_reply(self._final)
        reply = response_reply(self._partial) if self._partial is not None else Reply()
        reply.finish_reasons = ["error"] if self._error else []
        reply.text = "".join(self._texts) if self._texts else None
        return reply
