"""Reader for Logfire's spans of the OpenAI Agents SDK (``logfire.instrument_openai_agents()``).

Logfire turns each SDK span into a span of its own API, named by its message template
(``logfire.msg_template``, the span's name too) and holding the SDK span's exported fields as
attributes, values that are not text or numbers as JSON (``logfire.json_schema`` says which):

- ``Agent run: {name!r}``: an agent run (``name``); no input or output is recorded, so the user's
  text and the answer come from its model calls;
- ``Chat completion with {gen_ai.request.model!r}``: a Chat Completions call, ``input`` and
  ``output`` the messages sent and received (OpenAI's shape), ``gen_ai.usage.*``;
- ``Responses API`` / ``Responses API with {gen_ai.request.model!r}``: a Responses call,
  ``raw_input`` the input items, ``response`` the response (its ``output`` items);
- ``Function: {name}``: a tool call, ``input`` the arguments' JSON, ``output`` the result (JSON
  when the tool returned a list or an object; older Logfire versions record the SDK's ``str()`` of
  it), ``error`` (``{"message", "data": {"tool_name", "error"}}``) when it failed, with the
  exception as an event when the SDK did not redact it; no call id (the model call's has it);
- ``Handoff: {from_agent} → {to_agent}``: a handoff;
- ``OpenAI Agents trace: {name}``: the SDK trace, ``group_id`` its conversation; ``Task: ...``,
  ``Turn {turn} for agent ...``, guardrails, custom, MCP listing and speech spans: plumbing.

Other Logfire spans (the user's own, other integrations) are left to the other readers.
"""

from __future__ import annotations

from typing import Any

from agenteval_otel import semconv as attr
from agenteval_otel.trajectory.conventions.genai_messages import parse_messages
from agenteval_otel.trajectory.conventions.reading import ChatMessage, Markers, SpanReading, SpanRole
from agenteval_otel.trajectory.conventions.values import decode_json, unwrap_call_envelope
from agenteval_otel.trajectory.messages import decode_arguments
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = ["MARKERS", "read_logfire"]

NAME = "logfire"

TEMPLATE = "logfire.msg_template"
JSON_SCHEMA = "logfire.json_schema"
MARKERS = Markers(frozenset({TEMPLATE}))

_AGENT = "Agent run: {name!r}"
_FUNCTION = "Function: {name}"
_CHAT = "Chat completion with {gen_ai.request.model!r}"
_RESPONSES = "Responses API"
_HANDOFF = "Handoff: {from_agent} → {to_agent}"
_TRACE = "OpenAI Agents trace: {name}"
_PLUMBING = ("Task: ", "Turn {turn} for agent ", "Guardrail {name!r}", "Custom span: {name}", "MCP: list tools",
             "Text → Speech", "Speech → Text", "OpenAI agents: {type} span")
_INPUT_TOKENS = (attr.GEN_AI_USAGE_INPUT_TOKENS,)
_OUTPUT_TOKENS = (attr.GEN_AI_USAGE_OUTPUT_TOKENS,)


def _recorded_as_json(a: dict[str, Any], key: str) -> bool:
    """Whether Logfire serialised ``key``'s value to JSON (a list, a mapping, a model), rather
    than recording text as it was."""
    schema = decode_json(a.get(JSON_SCHEMA))
    properties = schema.get("properties") if isinstance(schema, dict) else None
    field = properties.get(key) if isinstance(properties, dict) else None
    return isinstance(field, dict) and bool(field)


def _tool_error(record: SpanRecord, a: dict[str, Any]) -> str | None:
    """The exception when the span holds it; else the SDK's error, its message and detail."""
    if any(event.name == "exception" for event in record.events):
        return record.error
    error = decode_json(a.get("error"))
    if not isinstance(error, dict):
        return record.error
    message = str(error.get("message") or "error")
    data = error.get("data")
    detail = data.get("error") if isinstance(data, dict) else None
    return f"{message}: {detail}" if detail else message


def _read_function(record: SpanRecord, a: dict[str, Any]) -> SpanReading:
    args, raw = decode_arguments(a.get("input"))
    output = a.get("output")
    if isinstance(output, str) and _recorded_as_json(a, "output"):
        output = decode_json(output)
    return SpanReading(
        SpanRole.TOOL,
        str(a.get("name") or record.name),
        NAME,
        args=None if args is None else unwrap_call_envelope(args),
        raw_args=raw,
        result=output,
        error=_tool_error(record, a),
    )


def _item_message(item: Any) -> dict[str, Any] | None:
    """A Responses API item as a Chat Completions message (``parse_messages`` reads those)."""
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind == "function_call":
        return {"role": "assistant", "tool_calls": [
            {"id": item.get("call_id"), "function": {"name": item.get("name"), "arguments": item.get("arguments")}}]}
    if kind == "function_call_output":
        return {"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output")}
    if kind in (None, "message") and "role" in item:
        return {"role": item["role"], "content": item.get("content")}
    return None


def _items(value: Any) -> tuple[ChatMessage, ...]:
    decoded = decode_json(value)
    if isinstance(decoded, str):
        return parse_messages([{"role": "user", "content": decoded}])
    if not isinstance(decoded, list):
        return ()
    return parse_messages([m for item in decoded if (m := _item_message(item)) is not None])


def _read_model(record: SpanRecord, a: dict[str, Any], responses: bool) -> SpanReading:
    if responses:
        response = decode_json(a.get("response"))
        inputs = _items(a.get("raw_input"))
        outputs = _items(response.get("output")) if isinstance(response, dict) else ()
    else:
        inputs, outputs = parse_messages(a.get("input")), parse_messages(a.get("output"))
    return SpanReading(
        SpanRole.MODEL,
        str(a.get(attr.GEN_AI_RESPONSE_MODEL) or a.get(attr.GEN_AI_REQUEST_MODEL) or record.name),
        NAME,
        input_messages=inputs,
        output_messages=outputs,
        usage=TokenUsage.from_attributes(a, _INPUT_TOKENS, _OUTPUT_TOKENS),
    )


def read_logfire(record: SpanRecord) -> SpanReading | None:
    """Read a Logfire span of the OpenAI Agents SDK; ``None`` for any other."""
    a = record.attributes
    template = a.get(TEMPLATE)
    if not isinstance(template, str):
        return None
    if template == _FUNCTION:
        return _read_function(record, a)
    if template == _CHAT or template.startswith(_RESPONSES):
        return _read_model(record, a, responses=template.startswith(_RESPONSES))
    if template == _AGENT:
        return SpanReading(SpanRole.AGENT, str(a.get("name") or record.name), NAME)
    if template == _HANDOFF:
        return SpanReading(SpanRole.HANDOFF, str(a.get("to_agent") or record.name), NAME)
    if template == _TRACE:
        group = a.get("group_id")
        return SpanReading(SpanRole.IGNORED, record.name, NAME, conversation_id=None if group is None else str(group))
    if template.startswith(_PLUMBING):
        return SpanReading(SpanRole.IGNORED, record.name, NAME)
    return None
