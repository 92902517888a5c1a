"""Reader for the Vercel AI SDK's own ``ai.*`` spans: AI SDK 4 to 6 with ``experimental_telemetry``,
and AI SDK 7's ``LegacyOpenTelemetry`` integration, which writes the same family.

``ai.operationId`` says what a span is: ``ai.generateText`` / ``ai.streamText`` (one call, the
agent run: the call's input as ``ai.prompt`` = ``{"system", "prompt", "messages"}`` JSON, its
answer as ``ai.response.text``), ``ai.generateText.doGenerate`` / ``ai.streamText.doStream`` (one
model call: ``ai.prompt.messages`` in the SDK's own message shape, ``ai.response.text``,
``ai.response.toolCalls``, ``ai.prompt.tools``, usage) and ``ai.toolCall`` (``ai.toolCall.name``,
``.id``, ``.args``, ``.result``; a thrown error is the span's status and ``exception`` event). The
``generateObject`` / ``streamObject`` pair reads the same way, its answer ``ai.response.object``;
embedding, reranking, speech and transcription spans are not part of a trajectory.

The shapes differ by version: a tool call's arguments are ``args`` (AI SDK 4) or ``input`` (5+),
a JSON text (``doGenerate``) or an object (``doStream``, messages); a tool result is ``result``
(4) or ``output`` = ``{"type": "json" | "text" | "error-text" | "error-json" | "content" | ...,
"value"}`` (5+). Users label a session in ``ai.telemetry.metadata.<key>`` (AI SDK 7: the runtime
context, ``ai.settings.context.<key>``); ``sessionId`` or ``conversationId`` there is read as the
conversation id.

>>> record = SpanRecord(trace_id="a" * 32, span_id="b" * 16, parent_id=None, name="ai.toolCall",
...     attributes={"ai.operationId": "ai.toolCall", "ai.toolCall.name": "book",
...                 "ai.toolCall.id": "call_1", "ai.toolCall.args": '{"flight_id": "LX92"}'})
>>> read_vercel_ai(record).args
{'flight_id': 'LX92'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval_otel.trajectory.conventions.genai_messages import requested_call
from agenteval_otel.trajectory.conventions.reading import (
    ChatMessage,
    Markers,
    RequestedToolCall,
    SpanReading,
    SpanRole,
    ToolResponse,
)
from agenteval_otel.trajectory.conventions.values import (
    decode_json,
    decode_result,
    text_from,
    tool_definitions,
)
from agenteval_otel.trajectory.messages import decode_arguments, message_text, normalize_role
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = ["MARKERS", "read_vercel_ai"]

NAME = "vercel-ai"

OPERATION_ID = "ai.operationId"
FUNCTION_ID = "ai.telemetry.functionId"
PROMPT = "ai.prompt"
PROMPT_MESSAGES = "ai.prompt.messages"
PROMPT_TOOLS = "ai.prompt.tools"
RESPONSE_TEXT = "ai.response.text"
RESPONSE_OBJECT = "ai.response.object"
RESPONSE_TOOL_CALLS = "ai.response.toolCalls"
TOOL_NAME = "ai.toolCall.name"
TOOL_ID = "ai.toolCall.id"
TOOL_ARGS = "ai.toolCall.args"
TOOL_RESULT = "ai.toolCall.result"
TOOL_CALL = "ai.toolCall"
MARKERS = Markers(frozenset({OPERATION_ID, TOOL_NAME}), exclusive=True)

_CALLS = frozenset({"ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject"})
_MODEL_CALLS = frozenset({f"{call}.{step}" for call in _CALLS for step in ("doGenerate", "doStream")})
_NOT_STEPS = ("ai.embed", "ai.rerank", "ai.generateImage", "ai.generateSpeech", "ai.transcribe", "ai.generateVideo")
_SESSION_KEYS = tuple(
    prefix + key
    for prefix in ("ai.telemetry.metadata.", "ai.settings.context.")
    for key in ("sessionId", "session.id", "session_id", "conversationId", "conversation.id", "conversation_id")
)
_INPUT_TOKENS = ("gen_ai.usage.input_tokens", "ai.usage.inputTokens", "ai.usage.promptTokens")
_OUTPUT_TOKENS = ("gen_ai.usage.output_tokens", "ai.usage.outputTokens", "ai.usage.completionTokens")


def _conversation(a: Mapping[str, Any]) -> str | None:
    for key in _SESSION_KEYS:
        value = a.get(key)
        if value is not None and value != "":
            return str(value)
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _call(part: Mapping[str, Any]) -> RequestedToolCall:
    arguments = part.get("input", part.get("args"))
    return requested_call(part.get("toolName"), arguments, part.get("toolCallId"))


def _tool_output(part: Mapping[str, Any]) -> Any:
    """The value of a ``tool-result`` part (already JSON, never a JSON text): AI SDK 4's
    ``result``, or the ``value`` of AI SDK 5+'s typed ``output`` (the text of ``content`` parts)."""
    if "output" not in part:
        return part.get("result")
    output = part["output"]
    if not isinstance(output, dict) or "type" not in output:
        return output
    value = output.get("value", output.get("reason"))
    return message_text(value) if output["type"] == "content" and isinstance(value, list) else value


def _message(message: Mapping[str, Any]) -> ChatMessage:
    """One message of the SDK's prompt: ``{"role", "content": text | [parts]}`` with ``text``,
    ``reasoning``, ``file``, ``tool-call`` and ``tool-result`` parts."""
    role = normalize_role(message.get("role"))
    content = message.get("content")
    if not isinstance(content, list):
        return ChatMessage(role, message_text(content))
    texts: list[str] = []
    calls: list[RequestedToolCall] = []
    responses: list[ToolResponse] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "tool-call":
            calls.append(_call(part))
        elif kind == "tool-result":
            call_id = part.get("toolCallId")
            responses.append(ToolResponse(None if call_id is None else str(call_id), _tool_output(part),
                                          part.get("toolName")))
    return ChatMessage(role, "".join(texts) or None, tuple(calls), tuple(responses))


def _messages(value: Any) -> tuple[ChatMessage, ...]:
    decoded = decode_json(value)
    if not isinstance(decoded, list):
        return ()
    return tuple(_message(m) for m in decoded if isinstance(m, dict))


def _response(a: Mapping[str, Any]) -> tuple[ChatMessage, ...]:
    """The model's reply: ``ai.response.text`` and the calls of ``ai.response.toolCalls``."""
    text = a.get(RESPONSE_TEXT)
    listed = decode_json(a.get(RESPONSE_TOOL_CALLS))
    calls = tuple(_call(c) for c in listed if isinstance(c, dict)) if isinstance(listed, list) else ()
    if not calls and not isinstance(text, str):
        return ()
    return (ChatMessage("assistant", text if isinstance(text, str) else None, calls),)


def _read_tool(record: SpanRecord, a: Mapping[str, Any]) -> SpanReading:
    args, raw = decode_arguments(a.get(TOOL_ARGS))
    call_id = a.get(TOOL_ID)
    return SpanReading(
        SpanRole.TOOL,
        str(a.get(TOOL_NAME) or record.name),
        NAME,
        args=args,
        raw_args=raw,
        result=decode_result(a.get(TOOL_RESULT)),
        call_id=None if call_id is None else str(call_id),
        error=record.error,
        conversation_id=_conversation(a),
    )


def _read_call(record: SpanRecord, a: Mapping[str, Any], operation: str) -> SpanReading:
    answer = _text(a.get(RESPONSE_TEXT)) or _text(a.get(RESPONSE_OBJECT))
    return SpanReading(
        SpanRole.AGENT,
        str(a.get(FUNCTION_ID) or operation),
        NAME,
        input=text_from(decode_json(a.get(PROMPT)), "user"),
        output=answer,
        output_is_final=answer is not None,
        conversation_id=_conversation(a),
        error=record.error,
    )


def _read_model(record: SpanRecord, a: Mapping[str, Any]) -> SpanReading:
    model = a.get("ai.response.model") or a.get("ai.model.id") or a.get("gen_ai.request.model") or record.name
    return SpanReading(
        SpanRole.MODEL,
        str(model),
        NAME,
        input_messages=_messages(a.get(PROMPT_MESSAGES)),
        output_messages=_response(a),
        usage=TokenUsage.from_attributes(a, _INPUT_TOKENS, _OUTPUT_TOKENS),
        tool_definitions=tool_definitions(a.get(PROMPT_TOOLS)),
        conversation_id=_conversation(a),
    )


def read_vercel_ai(record: SpanRecord) -> SpanReading | None:
    """Read a span of the Vercel AI SDK's ``ai.*`` telemetry; ``None`` for any other."""
    a = record.attributes
    operation = a.get(OPERATION_ID)
    if not isinstance(operation, str):
        operation = TOOL_CALL if TOOL_NAME in a else None
    if operation == TOOL_CALL:
        return _read_tool(record, a)
    if operation in _MODEL_CALLS:
        return _read_model(record, a)
    if operation in _CALLS:
        return _read_call(record, a, operation)
    if isinstance(operation, str) and operation.startswith(_NOT_STEPS):
        return SpanReading(SpanRole.IGNORED, record.name, NAME)
    return None
