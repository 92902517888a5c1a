"""Messages recorded as events rather than message attributes.

Before ``gen_ai.input.messages`` / ``gen_ai.output.messages``, the GenAI semantic conventions
recorded each message as an event: ``gen_ai.system.message``, ``gen_ai.user.message``,
``gen_ai.assistant.message`` and ``gen_ai.tool.message`` for what was sent, ``gen_ai.choice`` for
what came back, their fields (``content``, ``role``, ``tool_calls``, ``id``) in the event's
attributes, in its body (log records), or as JSON in ``gen_ai.event.content``; older still,
``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events carried the whole list in
``gen_ai.prompt`` / ``gen_ai.completion``. Some producers put a JSON list of such events in one
span attribute (``events``). All of these read the same.

>>> from agenteval_otel.trajectory.spans import SpanEvent
>>> inputs, outputs = event_messages([
...     SpanEvent("gen_ai.user.message", 1, {"content": "Weather in Paris?"}),
...     SpanEvent("gen_ai.choice", 2, {"message": '{"tool_calls": [{"id": "c1", "function": '
...                                    '{"name": "get_weather", "arguments": "{\\\\"city\\\\": \\\\"Paris\\\\"}"}}]}'}),
... ])
>>> inputs[0].text, outputs[0].tool_calls[0].args
('Weather in Paris?', {'city': 'Paris'})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agenteval_otel import semconv as attr
from agenteval_otel.trajectory.conventions.genai_messages import parse_messages
from agenteval_otel.trajectory.conventions.reading import ChatMessage
from agenteval_otel.trajectory.conventions.values import decode_json
from agenteval_otel.trajectory.spans import SpanEvent

__all__ = ["event_messages", "events_from_attribute"]

_ROLES = {
    attr.GEN_AI_SYSTEM_MESSAGE_EVENT: "system",
    attr.GEN_AI_USER_MESSAGE_EVENT: "user",
    attr.GEN_AI_ASSISTANT_MESSAGE_EVENT: "assistant",
    attr.GEN_AI_TOOL_MESSAGE_EVENT: "tool",
}
_NESTED = ("message", "tool_calls")


def _body(attributes: Mapping[str, Any]) -> dict[str, Any]:
    encoded = attributes.get(attr.GEN_AI_EVENT_CONTENT)
    body = decode_json(encoded) if encoded is not None else attributes
    if not isinstance(body, dict):
        return {"content": body}
    return {key: decode_json(value) if key in _NESTED else value for key, value in body.items()}


def event_messages(events: Iterable[SpanEvent]) -> tuple[tuple[ChatMessage, ...], tuple[ChatMessage, ...]]:
    """``(sent, received)``: the messages the events record, in event order."""
    sent: list[ChatMessage] = []
    received: list[ChatMessage] = []
    for event in events:
        if event.name == attr.GEN_AI_CONTENT_PROMPT_EVENT:
            sent += parse_messages(event.attributes.get(attr.GEN_AI_PROMPT))
        elif event.name == attr.GEN_AI_CONTENT_COMPLETION_EVENT:
            received += parse_messages(event.attributes.get(attr.GEN_AI_COMPLETION))
        elif event.name == attr.GEN_AI_CHOICE_EVENT:
            body = _body(event.attributes)
            inner = body.get("message")
            if isinstance(inner, dict):
                message = inner
            elif isinstance(inner, (list, str)):  # content blocks, or the text itself
                message = {"content": inner}
            else:
                message = body
            received += parse_messages([{**message, "role": message.get("role") or "assistant"}])
        elif event.name in _ROLES:
            message = _body(event.attributes)
            message.setdefault("role", _ROLES[event.name])
            if message["role"] == "tool" and "tool_call_id" not in message and "id" in message:
                message["tool_call_id"] = message["id"]
            sent += parse_messages([message])
    return tuple(sent), tuple(received)


def events_from_attribute(value: Any) -> list[SpanEvent]:
    """The events of a JSON list attribute of ``{"event.name": ..., <fields>}`` objects."""
    decoded = decode_json(value)
    if not isinstance(decoded, list):
        return []
    return [
        SpanEvent(str(item["event.name"]), 0, {k: v for k, v in item.items() if k != "event.name"})
        for item in decoded
        if isinstance(item, dict) and isinstance(item.get("event.name"), str)
    ]
