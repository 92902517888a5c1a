"""Reader for the Langfuse SDK's OpenTelemetry spans (``langfuse.observation.*``), v3 and later.

Every observation is a span of the ``langfuse-sdk`` tracer with ``langfuse.observation.type``:
``agent``, ``tool``, ``generation`` (and ``embedding``), ``chain``, ``span``, ``retriever``,
``evaluator``, ``guardrail`` or ``event``. Its content is JSON (a string stays as it is) in
``langfuse.observation.input`` / ``.output``; a generation adds ``.model.name`` and
``.usage_details``; a failure is ``.level`` = ``ERROR`` with ``.status_message``; metadata is one
attribute per key, ``langfuse.observation.metadata.<key>`` (JSON-encoded since v5). The session is
``session.id`` (``langfuse.session.id``, which Langfuse's ingestion also takes, is read too); v3
and v4 keep a trace's own input and output in ``langfuse.trace.input`` / ``.output``.

What the producers write there:

- ``@observe`` records a function's arguments as ``{"args": [...], "kwargs": {...}}`` and its
  return value as the output;
- ``langfuse.openai`` records a generation's input as the chat messages (``{"messages", "tools"}``
  when tools are offered), a completion's prompt, or a Responses API input (text, items with
  ``function_call`` / ``function_call_output``), and its output as the reply message (a list of
  them for several choices, the text alone when a streamed reply has no tool call);
- the LangChain ``CallbackHandler`` records chat messages as ``{"role", "content", "tool_calls":
  [{"name", "args", "id"}]}`` (before 3.4 the calls are only in OpenAI's shape under
  ``additional_kwargs``), the tools offered as extra ``tool`` messages holding their definitions,
  a tool's input as its arguments (before 4.11, LangChain's input string: a Python repr) and its
  output as the dumped ``ToolMessage`` (``tool_call_id`` also in the metadata), and LangGraph's
  ``langgraph_node`` in the metadata of every run inside a node.

A root ``chain`` or ``span`` observation is the agent invocation, as an ``agent`` one is anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval_otel.trajectory.conventions.genai_messages import parse_messages, requested_call
from agenteval_otel.trajectory.conventions.reading import (
    ChatMessage,
    Markers,
    SpanReading,
    SpanRole,
    ToolDefinition,
    ToolResponse,
)
from agenteval_otel.trajectory.conventions.values import (
    decode_json,
    decode_result,
    tool_definition,
    tool_definitions,
    unwrap_call_envelope,
    unwrap_tool_message,
)
from agenteval_otel.trajectory.messages import decode_arguments
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = ["MARKERS", "read_langfuse"]

NAME = "langfuse"

TYPE = "langfuse.observation.type"
INPUT = "langfuse.observation.input"
OUTPUT = "langfuse.observation.output"
LEVEL = "langfuse.observation.level"
STATUS_MESSAGE = "langfuse.observation.status_message"
MODEL = "langfuse.observation.model.name"
USAGE = "langfuse.observation.usage_details"
METADATA = "langfuse.observation.metadata."
TRACE_INPUT = "langfuse.trace.input"
TRACE_OUTPUT = "langfuse.trace.output"
SESSION_KEYS = ("session.id", "langfuse.session.id")
MARKERS = Markers(frozenset({TYPE}), exclusive=True)

_INPUT_TOKENS = ("input", "prompt_tokens", "input_tokens")
_OUTPUT_TOKENS = ("output", "completion_tokens", "output_tokens")
_MODEL_TYPES = frozenset({"generation"})
_ROOT_AGENT_TYPES = frozenset({"chain", "span"})
_RESPONSE_ITEMS = frozenset({"function_call", "function_call_output"})


def _metadata(a: Mapping[str, Any], key: str) -> Any:
    """A metadata value (v5 JSON-encodes every value, strings included; earlier versions do not)."""
    value = a.get(METADATA + key)
    return None if value is None else decode_result(value)


def _session(a: Mapping[str, Any]) -> str | None:
    for key in SESSION_KEYS:
        value = a.get(key)
        if value is not None:
            return str(value)
    return None


def _error(record: SpanRecord, a: Mapping[str, Any]) -> str | None:
    if a.get(LEVEL) == "ERROR":
        message = a.get(STATUS_MESSAGE)
        return str(message) if message else record.error or "error"
    return record.error


def _payload(value: Any) -> Any:
    """An ``@observe`` input without its ``{"args", "kwargs"}`` envelope: the keyword arguments,
    or the lone positional one; anything else decoded as it is."""
    decoded = decode_json(value)
    if not isinstance(decoded, dict):
        return decoded
    named = unwrap_call_envelope(decoded)
    if named is not decoded and set(named) == {"args"}:
        positional = named["args"]
        return positional[0] if len(positional) == 1 else positional
    return named


# --- model calls ------------------------------------------------------------------------------


def _item(item: dict[str, Any], role: str) -> tuple[ChatMessage, ...]:
    """One message of any of the producers' shapes; a Responses API call or call output too."""
    kind = item.get("type")
    if kind == "function_call":
        return (ChatMessage("assistant", None, (requested_call(item.get("name"), item.get("arguments"),
                                                               item.get("call_id")),)),)
    if kind == "function_call_output":
        call_id = item.get("call_id")
        response = ToolResponse(None if call_id is None else str(call_id), decode_result(item.get("output")))
        return (ChatMessage("tool", None, (), (response,)),)
    extra = item.get("additional_kwargs")
    if "tool_calls" not in item and isinstance(extra, dict) and extra.get("tool_calls"):
        item = {**item, "tool_calls": extra["tool_calls"]}  # the handler before 3.4 kept only these
    return tuple(
        message if message.role != "unknown" else ChatMessage(role, message.text, message.tool_calls,
                                                              message.tool_responses)
        for message in parse_messages(item)
    )


def _is_definition(item: dict[str, Any]) -> bool:
    """The LangChain handler's ``{"role": "tool", "content": <a tool definition>}``."""
    return item.get("role") == "tool" and isinstance(item.get("content"), dict) and "tool_call_id" not in item


def _messages(value: Any, role: str) -> tuple[tuple[ChatMessage, ...], tuple[ToolDefinition, ...]]:
    """The messages of a generation's input or output (``role``: the role of bare text), and the
    tool definitions found among them."""
    decoded = _payload(value)  # the arguments of an @observe(as_type="generation") function
    definitions: tuple[ToolDefinition, ...] = ()
    if isinstance(decoded, dict) and not ("role" in decoded or decoded.get("type") in _RESPONSE_ITEMS):
        definitions = tool_definitions(decoded.get("tools")) or tool_definitions(decoded.get("functions"))
        for key in ("messages", "input", "prompt"):
            if key in decoded:
                decoded = decoded[key]
                break
    if isinstance(decoded, str):
        return (ChatMessage(role, decoded),), definitions
    items = decoded if isinstance(decoded, list) else [decoded]
    messages: list[ChatMessage] = []
    found = list(definitions)
    for item in items:
        if isinstance(item, str):
            messages.append(ChatMessage(role, item))
        elif isinstance(item, dict):
            if _is_definition(item):
                if (definition := tool_definition(item["content"])) is not None:
                    found.append(definition)
            else:
                messages.extend(_item(item, role))
    return tuple(messages), tuple(found)


def _read_model(record: SpanRecord, a: Mapping[str, Any]) -> SpanReading:
    inputs, definitions = _messages(a.get(INPUT), "user")
    outputs, _ = _messages(a.get(OUTPUT), "assistant")
    usage = decode_json(a.get(USAGE))
    return SpanReading(
        SpanRole.MODEL, str(a.get(MODEL) or record.name), NAME,
        error=_error(record, a),
        input_messages=inputs,
        output_messages=outputs,
        usage=TokenUsage.from_attributes(usage, _INPUT_TOKENS, _OUTPUT_TOKENS) if isinstance(usage, dict) else None,
        tool_definitions=definitions,
        conversation_id=_session(a),
    )


# --- tools and agents -------------------------------------------------------------------------


def _read_tool(record: SpanRecord, a: Mapping[str, Any]) -> SpanReading:
    recorded = decode_json(a.get(INPUT))
    raw: Any = None
    if isinstance(recorded, dict):
        payload = _payload(recorded)
        args, raw = (payload, None) if isinstance(payload, dict) else (None, payload)
    else:
        args, raw = decode_arguments(recorded)
    call_id = _metadata(a, "tool_call_id")
    result, call_id, error = unwrap_tool_message(decode_result(a.get(OUTPUT)), call_id, _error(record, a))
    return SpanReading(
        SpanRole.TOOL, record.name, NAME, args=args, raw_args=raw, result=result,
        call_id=None if call_id is None else str(call_id), error=error, conversation_id=_session(a),
    )


def _read_agent(record: SpanRecord, a: Mapping[str, Any]) -> SpanReading:
    recorded_input = a.get(INPUT, a.get(TRACE_INPUT))
    recorded_output = a.get(OUTPUT, a.get(TRACE_OUTPUT))
    return SpanReading(
        SpanRole.AGENT, record.name, NAME,
        input=None if recorded_input is None else _payload(recorded_input),
        output=None if recorded_output is None else decode_json(recorded_output),
        error=_error(record, a),
        conversation_id=_session(a),
    )


def read_langfuse(record: SpanRecord) -> SpanReading | None:
    """Read a Langfuse observation span; ``None`` for any other."""
    a = record.attributes
    kind = a.get(TYPE)
    if not isinstance(kind, str):
        return None
    if kind == "tool":
        return _read_tool(record, a)
    if kind in _MODEL_TYPES:
        return _read_model(record, a)
    if kind == "agent" or (kind in _ROOT_AGENT_TYPES and record.parent_id is None):
        return _read_agent(record, a)
    node = _metadata(a, "langgraph_node")
    if kind == "chain" and node == record.name:
        step = _metadata(a, "langgraph_step")
        return SpanReading(SpanRole.NODE, record.name, NAME, error=_error(record, a),
                           metadata=() if step is None else (("langgraph_step", step),))
    return SpanReading(SpanRole.IGNORED, record.name, NAME)
