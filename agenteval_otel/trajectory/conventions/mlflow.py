"""Reader for MLflow 3 tracing (``mlflow.spanType``), as its OTLP export sends it.

MLflow JSON-encodes every attribute value (``mlflow.spanType`` is ``"\\"TOOL\\""``). A span's
content is ``mlflow.spanInputs`` (a traced function's arguments by name; an autologged call's
request) and ``mlflow.spanOutputs`` (its return value; the client's response). Span types:
``AGENT`` (and a root of another type) is an agent run; ``CHAT_MODEL`` / ``LLM`` a model call,
with ``mlflow.llm.model``, ``mlflow.chat.tokenUsage`` and ``mlflow.chat.tools``, whose request
and response follow ``mlflow.message.format`` (OpenAI Chat Completions ``{"messages"}`` /
``{"choices"}``, the Responses API's ``{"input"}`` / ``{"output"}`` items, or plain message
lists); a streamed call's response is rebuilt by MLflow without its tool calls, which are in the
``mlflow.chunk.item.<n>`` events (``mlflow.chunk.value``, one chunk each). ``TOOL`` is a tool
call: its name is the span's, its arguments the inputs, its result the outputs, a raised
exception the span's error. A ``CHAIN`` whose output is ``{"to_agent"}`` is a handoff (the OpenAI
Agents SDK's, autologged). Embeddings, parsers and other plumbing are not steps; a nested span of
another type (a function traced without ``span_type``) is left to the other readers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agenteval_otel.trajectory.conventions.genai_messages import parse_messages, requested_call
from agenteval_otel.trajectory.conventions.reading import (
    ChatMessage,
    Markers,
    RequestedToolCall,
    SpanReading,
    SpanRole,
    ToolResponse,
)
from agenteval_otel.trajectory.conventions.values import (
    decode_result,
    tool_definitions,
    unwrap_call_envelope,
)
from agenteval_otel.trajectory.messages import decode_arguments, message_text
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = ["MARKERS", "read_mlflow"]

NAME = "mlflow"

SPAN_TYPE = "mlflow.spanType"
INPUTS = "mlflow.spanInputs"
OUTPUTS = "mlflow.spanOutputs"
MODEL = "mlflow.llm.model"
CHAT_TOOLS = "mlflow.chat.tools"
CHAT_USAGE = "mlflow.chat.tokenUsage"
SESSION_ID = "session.id"
CHUNK_EVENT = "mlflow.chunk.item."
CHUNK_VALUE = "mlflow.chunk.value"
MARKERS = Markers(frozenset({SPAN_TYPE}))
_MODEL_TYPES = frozenset({"CHAT_MODEL", "LLM"})
_RUN_TYPES = frozenset({"CHAIN", "UNKNOWN", "WORKFLOW", "TASK"})
_PLUMBING_TYPES = frozenset({"EMBEDDING", "PARSER", "RERANKER", "MEMORY", "GUARDRAIL", "EVALUATOR"})
_TOOL_CALLS = '"tool_calls": ['
_USAGE_IN = ("input_tokens",)
_USAGE_OUT = ("output_tokens",)


def _decoded(a: dict[str, Any], key: str) -> Any:
    """An attribute as MLflow meant it: its JSON text decoded (a plain string left as it is)."""
    return decode_result(a.get(key))


def _item_message(item: dict[str, Any]) -> ChatMessage | None:
    """A Responses API item that is not a plain message: a function call or its output."""
    kind = item.get("type")
    if kind == "function_call":
        return ChatMessage("assistant", tool_calls=(
            requested_call(item.get("name"), item.get("arguments"), item.get("call_id") or item.get("id")),))
    if kind == "function_call_output":
        call_id = item.get("call_id")
        return ChatMessage("tool", tool_responses=(
            ToolResponse(None if call_id is None else str(call_id), decode_result(item.get("output"))),))
    return None


def _messages(items: Iterable[Any]) -> tuple[ChatMessage, ...]:
    """Chat messages, or Responses API items (messages, function calls and their outputs)."""
    found: list[ChatMessage] = []
    for item in items:
        if isinstance(item, str):
            found.append(ChatMessage("user", item))
        elif isinstance(item, dict):
            message = _item_message(item)
            found.extend((message,) if message is not None else parse_messages(item))
    return tuple(found)


def _request(inputs: Any) -> tuple[ChatMessage, ...]:
    """The messages of a model call's recorded request."""
    if isinstance(inputs, list):
        return _messages(inputs)
    if not isinstance(inputs, dict):
        return ()
    for key in ("messages", "input", "prompt"):
        value = inputs.get(key)
        if isinstance(value, str):
            return (ChatMessage("user", value),)
        if isinstance(value, list):
            return _messages(value)
    return ()


def _response(outputs: Any) -> tuple[ChatMessage, ...]:
    """The messages of a model call's recorded response."""
    if isinstance(outputs, str):
        return (ChatMessage("assistant", outputs),)
    if isinstance(outputs, list):
        return _messages(outputs)
    if not isinstance(outputs, dict):
        return ()
    choices = outputs.get("choices")
    if isinstance(choices, list):
        first = choices[0] if choices and isinstance(choices[0], dict) else {}
        if isinstance(first.get("message"), dict):
            return parse_messages(first["message"])
        text = first.get("text")
        return (ChatMessage("assistant", text),) if isinstance(text, str) else ()
    if isinstance(outputs.get("output"), list):
        return _messages(outputs["output"])
    if "role" in outputs:
        return parse_messages(outputs)
    text = message_text(outputs.get("content"))
    return (ChatMessage("assistant", text),) if text is not None else ()


def _streamed_calls(record: SpanRecord) -> tuple[RequestedToolCall, ...]:
    """The tool calls of a streamed Chat Completions response, put together from its chunk
    events (each call's id and name come in its first delta, its arguments in pieces)."""
    calls: dict[int, dict[str, str]] = {}
    for event in record.events:
        raw = event.attributes.get(CHUNK_VALUE)
        if not (event.name.startswith(CHUNK_EVENT) and isinstance(raw, str) and _TOOL_CALLS in raw):
            continue  # a chunk of text only is not decoded
        chunk = decode_result(raw)
        for choice in chunk.get("choices") or () if isinstance(chunk, dict) else ():
            delta = choice.get("delta") if isinstance(choice, dict) else None
            for part in (delta.get("tool_calls") or () if isinstance(delta, dict) else ()):
                if not isinstance(part, dict):
                    continue
                call = calls.setdefault(int(part.get("index") or 0), {"id": "", "name": "", "arguments": ""})
                function = part.get("function")
                if not isinstance(function, dict):
                    function = {}
                call["id"] = call["id"] or str(part.get("id") or "")
                call["name"] += str(function.get("name") or "")
                call["arguments"] += str(function.get("arguments") or "")
    return tuple(requested_call(c["name"], c["arguments"], c["id"]) for _, c in sorted(calls.items()))


def _read_model(record: SpanRecord, a: dict[str, Any]) -> SpanReading:
    outputs = _response(_decoded(a, OUTPUTS))
    if record.events and not any(m.tool_calls for m in outputs) and (calls := _streamed_calls(record)):
        last = outputs[-1] if outputs else ChatMessage("assistant")
        outputs = (*outputs[:-1], ChatMessage(last.role, last.text or None, calls, last.tool_responses))
    usage = _decoded(a, CHAT_USAGE)
    model = _decoded(a, MODEL)
    return SpanReading(
        SpanRole.MODEL,
        str(model or record.name),
        NAME,
        input_messages=_request(_decoded(a, INPUTS)),
        output_messages=outputs,
        usage=TokenUsage.from_attributes(usage, _USAGE_IN, _USAGE_OUT) if isinstance(usage, dict) else None,
        tool_definitions=tool_definitions(a.get(CHAT_TOOLS)),
        conversation_id=_session(a),
    )


def _read_tool(record: SpanRecord, a: dict[str, Any]) -> SpanReading:
    args, raw = decode_arguments(_decoded(a, INPUTS))
    return SpanReading(
        SpanRole.TOOL,
        record.name,
        NAME,
        args=None if args is None else unwrap_call_envelope(args),
        raw_args=raw,
        result=_decoded(a, OUTPUTS),
        error=record.error,
        conversation_id=_session(a),
    )


def _agent_input(inputs: Any) -> Any:
    """A traced agent function's arguments: the text itself when it took one text argument."""
    if isinstance(inputs, dict) and len(inputs) == 1:
        (value,) = inputs.values()
        if isinstance(value, str):
            return value
    return inputs


def _handoff_target(a: dict[str, Any]) -> Any:
    """The agent a handoff span (the OpenAI Agents SDK's, as MLflow records it) passed control to."""
    raw = a.get(OUTPUTS)
    outputs = decode_result(raw) if isinstance(raw, str) and '"to_agent"' in raw else None
    return outputs.get("to_agent") if isinstance(outputs, dict) and len(outputs) == 1 else None


def _session(a: dict[str, Any]) -> str | None:
    value = a.get(SESSION_ID)
    return None if value is None else str(decode_result(value))


def read_mlflow(record: SpanRecord) -> SpanReading | None:
    """Read a span of MLflow tracing; ``None`` for any other."""
    a = record.attributes
    kind = _decoded(a, SPAN_TYPE)
    if not isinstance(kind, str):
        return None
    kind = kind.upper()
    if kind == "TOOL":
        return _read_tool(record, a)
    if kind in _MODEL_TYPES:
        return _read_model(record, a)
    if kind == "AGENT" or (kind in _RUN_TYPES and record.is_local_root):
        return SpanReading(
            SpanRole.AGENT,
            record.name,
            NAME,
            input=_agent_input(_decoded(a, INPUTS)),
            output=_decoded(a, OUTPUTS),
            conversation_id=_session(a),
        )
    if kind == "CHAIN" and (target := _handoff_target(a)) is not None:
        return SpanReading(SpanRole.HANDOFF, str(target), NAME)
    if kind in _PLUMBING_TYPES:
        return SpanReading(SpanRole.IGNORED, record.name, NAME)
    return None  # a nested function traced without a type (or a retriever): maybe a tool, left to others
