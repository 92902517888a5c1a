"""Reader for the OpenInference semantic conventions (``openinference.span.kind``).

Span kinds: ``AGENT`` (and a root ``CHAIN``) is an agent run with ``input.value`` /
``output.value``; ``LLM`` is a model call with flattened ``llm.input_messages.N.message.*`` and
``llm.output_messages.N.message.*`` (``tool_calls.M.tool_call.{id,function.name,
function.arguments}``, ``contents.K.message_content.text``), legacy ``llm.prompts`` /
``llm.choices`` and ``llm.token_count.*``; ``TOOL`` is a tool call with ``tool.name``,
``tool.id``, ``input.value`` (the arguments) and ``output.value`` (the result). A ``TOOL`` span
named ``handoff to X`` without ``tool.name`` is an agent handoff (OpenAI Agents SDK).

Producer shapes read too: BeeAI records tool inputs as ``{"input": {...}, "options": ...}``, a
failed tool as an ERROR span whose ``output.value`` explains the error, its own ``final_answer``
tool (``metadata.class_name`` ``FinalAnswerTool``) and a child span per framework event
(``metadata.path``, no ``metadata.class_name``: not steps). Haystack's instrumentor writes
``llm.input_messages`` with the text only (no tool calls or results) and no tool spans, but
``input.value`` / ``output.value`` hold the ``ChatMessage`` reprs (``{"messages": [...]}``,
``{"replies": [...]}``): the calls, their ids, results and failures are read from those.
"""

from __future__ import annotations

from typing import Any

from agenteval_otel.trajectory.conventions.genai_messages import requested_call
from agenteval_otel.trajectory.conventions.reading import (
    ChatMessage,
    Markers,
    RequestedToolCall,
    SpanReading,
    SpanRole,
    ToolDefinition,
    ToolResponse,
)
from agenteval_otel.trajectory.conventions.values import (
    decode_json,
    decode_result,
    flattened_list,
    object_repr_fields,
    tool_definition,
    unwrap_call_envelope,
    unwrap_tool_message,
    unwrap_tool_output,
)
from agenteval_otel.trajectory.messages import decode_arguments, message_text, normalize_role
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = ["MARKERS", "read_openinference"]

NAME = "openinference"

SPAN_KIND = "openinference.span.kind"
INPUT_VALUE = "input.value"
OUTPUT_VALUE = "output.value"
TOOL_NAME = "tool.name"
TOOL_ID = "tool.id"
TOOL_PARAMETERS = "tool.parameters"
TOOL_JSON_SCHEMA = "tool.json_schema"
LLM_TOOLS = "llm.tools"
AGENT_NAME = "agent.name"
SESSION_ID = "session.id"
LLM_MODEL_NAME = "llm.model_name"
LLM_INPUT_MESSAGES = "llm.input_messages"
LLM_OUTPUT_MESSAGES = "llm.output_messages"
LLM_PROMPTS = "llm.prompts"
LLM_CHOICES = "llm.choices"
_INPUT_TOKENS = ("llm.token_count.prompt",)
_OUTPUT_TOKENS = ("llm.token_count.completion",)
CLASS_NAME = "metadata.class_name"
EVENT_PATH = "metadata.path"
OUTPUT_MIME_TYPE = "output.mime_type"
MARKERS = Markers(frozenset({SPAN_KIND}))
_IGNORED_KINDS = frozenset(
    {"RETRIEVER", "RERANKER", "EMBEDDING", "GUARDRAIL", "EVALUATOR", "PROMPT", "CHAIN", "UNKNOWN"}
)


def _message(item: dict[str, Any]) -> ChatMessage:
    role = normalize_role(item.get("message.role"))
    text = item.get("message.content")
    if text is None:
        parts = flattened_list(item, "message.contents")
        texts = [
            str(p["message_content.text"]) for p in parts if isinstance(p.get("message_content.text"), str)
        ]
        text = "\n".join(texts) if texts else None
    calls = [
        requested_call(
            call.get("tool_call.function.name"),
            call.get("tool_call.function.arguments"),
            call.get("tool_call.id"),
        )
        for call in flattened_list(item, "message.tool_calls")
    ]
    if item.get("message.function_call_name"):
        calls.append(
            requested_call(
                item["message.function_call_name"], item.get("message.function_call_arguments_json"), None
            )
        )
    responses: tuple[ToolResponse, ...] = ()
    call_id = item.get("message.tool_call_id")
    if call_id is None and role == "tool":  # BeeAI writes it on the content part
        call_id = next((p["message.tool_call_id"] for p in flattened_list(item, "message.contents")
                        if p.get("message.tool_call_id") is not None), None)
    if role == "tool" and call_id is not None:
        responses = (ToolResponse(str(call_id), decode_result(text), item.get("message.name")),)
        text = None
    return ChatMessage(role, message_text(text), tuple(calls), responses)


def _messages(
    a: dict[str, Any], prefix: str, legacy: str, legacy_key: str, role: str
) -> tuple[ChatMessage, ...]:
    found = tuple(_message(item) for item in flattened_list(a, prefix))
    if found:
        return found
    return tuple(
        ChatMessage(role, str(item[legacy_key]))
        for item in flattened_list(a, legacy)
        if item.get(legacy_key) is not None
    )


_REPR_HEAD = "ChatMessage(_role="  # Haystack's dataclass (LlamaIndex's starts "ChatMessage(role=")


def _repr_message(text: Any) -> ChatMessage | None:
    """A Haystack ``ChatMessage`` from its repr: texts, tool calls and tool results."""
    fields = object_repr_fields(text) if isinstance(text, str) and text.startswith(_REPR_HEAD) else None
    if fields is None or "_role" not in fields or "_content" not in fields:  # another ChatMessage (LlamaIndex)
        return None
    texts: list[str] = []
    calls: list[RequestedToolCall] = []
    responses: list[ToolResponse] = []
    for part in fields.get("_content") or ():
        kind = part.get("__type__") if isinstance(part, dict) else None
        if kind == "TextContent" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "ToolCall":
            calls.append(requested_call(part.get("tool_name"), part.get("arguments"), part.get("id")))
        elif kind == "ToolCallResult":
            origin = part.get("origin") if isinstance(part.get("origin"), dict) else {}
            result = decode_result(part.get("result"))
            error = str(part.get("result")) if part.get("error") is True else None
            responses.append(ToolResponse(origin.get("id"), None if error else result, origin.get("tool_name"), error))
    return ChatMessage(
        normalize_role(fields.get("_role")), "".join(texts) or None, tuple(calls), tuple(responses)
    )


def _repr_messages(value: Any, key: str) -> tuple[ChatMessage, ...]:
    """The messages of an ``input.value``/``output.value`` that lists ``ChatMessage`` reprs under
    ``key``; ``()`` for any other value (decoded only when it starts that way)."""
    if not isinstance(value, str) or not value.startswith(f'{{"{key}": ["{_REPR_HEAD}'):
        return ()
    listed = decode_json(value).get(key) if isinstance(decode_json(value), dict) else None
    found = [_repr_message(item) for item in listed or ()]
    return tuple(m for m in found if m is not None) if found and None not in found else ()


def _offered_tools(a: dict[str, Any]) -> tuple[ToolDefinition, ...]:
    found = (
        tool_definition(item.get(TOOL_JSON_SCHEMA) or item.get(TOOL_PARAMETERS), item.get(TOOL_NAME))
        for item in flattened_list(a, LLM_TOOLS)
    )
    return tuple(definition for definition in found if definition is not None)


def _is_builtin_finish(record: SpanRecord, name: str, result: Any) -> bool:
    """A framework's own tool that only ends the run with the answer: smolagents'
    ``final_answer`` (span ``FinalAnswerTool``), BeeAI's (class ``FinalAnswerTool``), DSPy
    ReAct's ``finish`` ("Completed.")."""
    finish_class = record.name == "FinalAnswerTool" or record.attributes.get(CLASS_NAME) == "FinalAnswerTool"
    return (finish_class and name == "final_answer") or (
        record.name == "finish.__call__" and result == "Completed."
    )


def _is_event_span(a: dict[str, Any]) -> bool:
    """A span BeeAI's instrumentor opens for one framework event (``error``, ``retry``,
    ``final_answer`` ...) under the span of the run that emitted it: not a step of its own."""
    return EVENT_PATH in a and CLASS_NAME not in a and TOOL_NAME not in a


def _read_tool(record: SpanRecord, a: dict[str, Any]) -> SpanReading:
    name = a.get(TOOL_NAME)
    if not name and record.name.startswith("handoff to "):
        return SpanReading(SpanRole.HANDOFF, record.name, NAME)
    name = str(name or record.name.removesuffix(".__call__"))  # DSPy names tool spans "<tool>.__call__"
    definition = tool_definition(a.get(TOOL_PARAMETERS) or a.get(TOOL_JSON_SCHEMA), name)
    args, raw = decode_arguments(a.get(INPUT_VALUE))
    if args is not None:
        args = unwrap_call_envelope(args, definition.parameters if definition else ())
    output = a.get(OUTPUT_VALUE)
    failed_with_text = record.error is not None and isinstance(output, str) and output.strip() and (
        a.get(OUTPUT_MIME_TYPE) == "text/plain"
    )
    if failed_with_text:  # the error explained (BeeAI: the whole cause chain), not a result
        return _tool_reading(a, name, args, raw, None, a.get(TOOL_ID), str(output).strip(), definition)
    result: Any = decode_result(output)
    result, call_id, error = unwrap_tool_message(result, a.get(TOOL_ID), record.error)
    result, failed = unwrap_tool_output(result)
    if failed and error is None:
        error = str(result)
    if _is_builtin_finish(record, name, result):
        return SpanReading(SpanRole.IGNORED, name, NAME)
    return _tool_reading(a, name, args, raw, result, call_id, error, definition)


def _tool_reading(
    a: dict[str, Any], name: str, args: dict[str, Any] | None, raw: Any, result: Any, call_id: Any,
    error: str | None, definition: ToolDefinition | None,
) -> SpanReading:
    return SpanReading(
        SpanRole.TOOL,
        name,
        NAME,
        args=args,
        raw_args=raw,
        result=result,
        call_id=None if call_id is None else str(call_id),
        error=error,
        tool_definitions=() if definition is None else (definition,),
        conversation_id=_session(a),
    )


def _session(a: dict[str, Any]) -> str | None:
    value = a.get(SESSION_ID)
    return None if value is None else str(value)


def read_openinference(record: SpanRecord) -> SpanReading | None:
    """Read a span that follows the OpenInference conventions; ``None`` for any other."""
    a = record.attributes
    kind = a.get(SPAN_KIND)
    if not isinstance(kind, str):
        return None
    kind = kind.upper()
    if EVENT_PATH in a and _is_event_span(a):
        return SpanReading(SpanRole.IGNORED, record.name, NAME)
    if kind == "TOOL":
        return _read_tool(record, a)
    if kind == "LLM":
        return SpanReading(
            SpanRole.MODEL,
            str(a.get(LLM_MODEL_NAME) or record.name),
            NAME,
            input_messages=_repr_messages(a.get(INPUT_VALUE), "messages")
            or _messages(a, LLM_INPUT_MESSAGES, LLM_PROMPTS, "prompt.text", "user"),
            output_messages=_repr_messages(a.get(OUTPUT_VALUE), "replies")
            or _messages(a, LLM_OUTPUT_MESSAGES, LLM_CHOICES, "completion.text", "assistant"),
            usage=TokenUsage.from_attributes(a, _INPUT_TOKENS, _OUTPUT_TOKENS),
            tool_definitions=_offered_tools(a),
            conversation_id=_session(a),
        )
    if kind == "AGENT" or (kind == "CHAIN" and record.parent_id is None):
        return SpanReading(
            SpanRole.AGENT,
            str(a.get(AGENT_NAME) or record.name),
            NAME,
            input=a.get(INPUT_VALUE),
            output=a.get(OUTPUT_VALUE),
            conversation_id=_session(a),
        )
    if kind in _IGNORED_KINDS:
        return SpanReading(SpanRole.IGNORED, record.name, NAME)
    return None
