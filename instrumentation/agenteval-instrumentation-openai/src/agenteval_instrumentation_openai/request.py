"""What a request says: its GenAI request attributes, the messages it sends, the tools it offers.

Read from the keyword arguments of ``chat.completions.create`` / ``responses.create``; values the
caller left out (or gave as openai's ``omit`` / ``NOT_GIVEN``) are not written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval_instrumentation_openai.reply import field_of
from agenteval_otel import semconv as attr

__all__ = ["chat_attributes", "chat_messages", "response_attributes", "response_messages", "tool_definitions"]


def _number(value: Any) -> float | int | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _server(instance: Any, attributes: dict[str, Any]) -> None:
    """``server.address`` / ``server.port`` from the client's base URL."""
    url = getattr(getattr(instance, "_client", None), "base_url", None)
    host = getattr(url, "host", None)
    if isinstance(host, str) and host:
        attributes[attr.SERVER_ADDRESS] = host
        port = getattr(url, "port", None)
        if isinstance(port, int):
            attributes[attr.SERVER_PORT] = port


def _numbers(kwargs: Mapping[str, Any], keys: Mapping[str, str], attributes: dict[str, Any]) -> None:
    for argument, key in keys.items():
        value = _number(kwargs.get(argument))
        if value is not None:
            attributes[key] = value


_CHAT_NUMBERS = {
    "temperature": attr.GEN_AI_REQUEST_TEMPERATURE,
    "top_p": attr.GEN_AI_REQUEST_TOP_P,
    "max_tokens": attr.GEN_AI_REQUEST_MAX_TOKENS,
    "max_completion_tokens": attr.GEN_AI_REQUEST_MAX_TOKENS,
    "seed": attr.GEN_AI_REQUEST_SEED,
    "frequency_penalty": attr.GEN_AI_REQUEST_FREQUENCY_PENALTY,
    "presence_penalty": attr.GEN_AI_REQUEST_PRESENCE_PENALTY,
}
_RESPONSE_NUMBERS = {
    "temperature": attr.GEN_AI_REQUEST_TEMPERATURE,
    "top_p": attr.GEN_AI_REQUEST_TOP_P,
    "max_output_tokens": attr.GEN_AI_REQUEST_MAX_TOKENS,
}


def _output_type(format_type: Any) -> str | None:
    if format_type in ("json_object", "json_schema"):
        return attr.OUTPUT_TYPE_JSON
    return attr.OUTPUT_TYPE_TEXT if format_type == "text" else None


def chat_attributes(instance: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The request attributes of a ``chat.completions.create`` call."""
    attributes: dict[str, Any] = {}
    _server(instance, attributes)
    _numbers(kwargs, _CHAT_NUMBERS, attributes)
    stop = kwargs.get("stop")
    if isinstance(stop, str):
        attributes[attr.GEN_AI_REQUEST_STOP_SEQUENCES] = (stop,)
    elif isinstance(stop, (list, tuple)) and all(isinstance(s, str) for s in stop):
        attributes[attr.GEN_AI_REQUEST_STOP_SEQUENCES] = tuple(stop)
    choices = _number(kwargs.get("n"))
    if isinstance(choices, int) and choices != 1:
        attributes[attr.GEN_AI_REQUEST_CHOICE_COUNT] = choices
    output_type = _output_type(field_of(kwargs.get("response_format"), "type"))
    if output_type is not None:
        attributes[attr.GEN_AI_OUTPUT_TYPE] = output_type
    return attributes


def response_attributes(instance: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The request attributes of a ``responses.create`` call."""
    attributes: dict[str, Any] = {}
    _server(instance, attributes)
    _numbers(kwargs, _RESPONSE_NUMBERS, attributes)
    output_type = _output_type(field_of(field_of(kwargs.get("text"), "format"), "type"))
    if output_type is not None:
        attributes[attr.GEN_AI_OUTPUT_TYPE] = output_type
    return attributes


def chat_messages(kwargs: Mapping[str, Any]) -> Any:
    """The messages a chat request sends (``read_message`` reads them as they are)."""
    return kwargs.get("messages")


def response_messages(kwargs: Mapping[str, Any]) -> list[Any]:
    """The messages a Responses request sends, as chat-style message dicts: its instructions as a
    system message, its input items, function calls as assistant tool calls and function-call
    outputs as tool results."""
    messages: list[Any] = []
    instructions = kwargs.get("instructions")
    if isinstance(instructions, str):
        messages.append({"role": "system", "content": instructions})
    items = kwargs.get("input")
    if isinstance(items, str):
        messages.append({"role": "user", "content": items})
        return messages
    for item in items if isinstance(items, (list, tuple)) else ():
        kind = field_of(item, "type")
        if kind == "function_call":
            function = {"name": field_of(item, "name"), "arguments": field_of(item, "arguments")}
            call = {"id": field_of(item, "call_id"), "type": "function", "function": function}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = field_of(item, "output")
            messages.append({"role": "tool", "tool_call_id": field_of(item, "call_id"), "content": output})
        elif field_of(item, "role") is not None:
            content = field_of(item, "content")
            messages.append({"role": field_of(item, "role"), "content": _text(content)})
    return messages


def _text(content: Any) -> Any:
    """A Responses message's content: a str, or its text parts (``input_text``, ``output_text``) joined."""
    if isinstance(content, str) or not isinstance(content, (list, tuple)):
        return content
    texts = [field_of(part, "text") for part in content]
    return "".join(text for text in texts if isinstance(text, str))


def tool_definitions(kwargs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``gen_ai.tool.definitions``: the function tools offered (either API's shape)."""
    definitions: list[dict[str, Any]] = []
    tools = kwargs.get("tools")
    for tool in tools if isinstance(tools, (list, tuple)) else ():
        function = field_of(tool, "function") or tool
        name = field_of(function, "name")
        if not isinstance(name, str):
            continue
        definition: dict[str, Any] = {"type": "function", "name": name}
        for key in ("description", "parameters"):
            value = field_of(function, key)
            if value is not None:
                definition[key] = value
        definitions.append(definition)
    return definitions
