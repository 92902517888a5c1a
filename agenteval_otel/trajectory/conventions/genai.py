"""Reader for the OpenTelemetry GenAI semantic conventions (``gen_ai.operation.name``).

Operations: ``invoke_agent`` / ``invoke_workflow`` (an agent run), ``chat`` /
``generate_content`` / ``text_completion`` (a model call, with ``gen_ai.input.messages`` and
``gen_ai.output.messages`` as attributes or on a ``gen_ai.client.inference.operation.details``
event), ``execute_tool`` (``gen_ai.tool.*``), ``handoff``; the ``invoke_node`` proposal for graph
nodes. Producers covered include pydantic-ai (``final_result``, ``pydantic_ai.all_messages``;
and its older data format, still chosen by ``event_mode='logs'``: ``agent run`` and ``running
tool`` spans without an operation name, ``all_messages_events``, ``tool_arguments`` and
``tool_response``), Google ADK with semconv content capture, the OpenTelemetry openai instrumentation and newer
OpenLLMetry.
"""

from __future__ import annotations

from typing import Any

from agenteval_otel import semconv as attr
from agenteval_otel.trajectory.conventions.genai_events import event_messages, events_from_attribute
from agenteval_otel.trajectory.conventions.genai_messages import (
    converse_blocks,
    converse_value,
    parse_messages,
)
from agenteval_otel.trajectory.conventions.reading import ChatMessage, Markers, SpanReading, SpanRole
from agenteval_otel.trajectory.conventions.values import (
    decode_result,
    tool_definitions,
    unwrap_call_envelope,
    unwrap_tool_message,
)
from agenteval_otel.trajectory.messages import decode_arguments
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = ["MARKERS", "read_genai"]

NAME = "genai"

_MODEL_OPERATIONS = frozenset({attr.OP_CHAT, attr.OP_GENERATE_CONTENT, attr.OP_TEXT_COMPLETION, "completion"})
_AGENT_OPERATIONS = frozenset({attr.OP_INVOKE_AGENT, "invoke_workflow"})
_OTHER_OPERATIONS = frozenset(
    {"create_agent", "embeddings", "retrieval", "create_conversation", "image_generation"}
)
_HANDOFF_TOOLS = frozenset({"transfer_to_agent"})  # Google ADK's agent transfer
_PHANTOM_TOOLS = frozenset({"(merged tools)", "(merged)"})  # Google ADK after parallel calls
_PYDANTIC_FINAL_RESULT = "final_result"
_PYDANTIC_ALL_MESSAGES = "pydantic_ai.all_messages"
_PYDANTIC_ALL_EVENTS = "all_messages_events"  # data format 1: the run's messages as events
_PYDANTIC_AGENT_NAME = "agent_name"
_PYDANTIC_TOOL_ARGUMENTS = "tool_arguments"  # data formats 1 and 2
_PYDANTIC_TOOL_RESPONSE = "tool_response"
_PYDANTIC_SCOPE = "pydantic-ai"
_PYDANTIC_RETRY = "\n\nFix the errors and try again."  # how pydantic-ai ends a retry prompt to the model
_PYDANTIC_AGENT_SPAN, _PYDANTIC_TOOL_SPAN, _PYDANTIC_OUTPUT_SPAN = "agent run", "running tool", "running output function"
_SESSION_ID = "session.id"
_SEMANTIC_KERNEL = "semantic_kernel."
_INPUT_TOKENS = (attr.GEN_AI_USAGE_INPUT_TOKENS, attr.GEN_AI_USAGE_PROMPT_TOKENS)
_OUTPUT_TOKENS = (attr.GEN_AI_USAGE_OUTPUT_TOKENS, attr.GEN_AI_USAGE_COMPLETION_TOKENS)
MARKERS = Markers(
    frozenset({attr.GEN_AI_OPERATION_NAME, attr.GEN_AI_REQUEST_MODEL, _PYDANTIC_ALL_EVENTS, _PYDANTIC_TOOL_ARGUMENTS}),
    span_names=frozenset({_PYDANTIC_AGENT_SPAN, _PYDANTIC_TOOL_SPAN, _PYDANTIC_OUTPUT_SPAN}),
)


def _suffix(name: str, operation: str) -> str:
    return name[len(operation) :].strip() if name.startswith(operation) else name


def _messages(record: SpanRecord, key: str) -> tuple[ChatMessage, ...]:
    found = parse_messages(record.attributes.get(key))
    if found:
        return found
    for event in record.events:
        if event.name == attr.GEN_AI_INFERENCE_DETAILS_EVENT and key in event.attributes:
            return parse_messages(event.attributes[key])
    return ()


def _content(record: SpanRecord) -> tuple[tuple[ChatMessage, ...], tuple[ChatMessage, ...]]:
    """The messages sent and received: message attributes (or the details event), else the
    message events (span events, log records joined to the span, or an ``events`` attribute)."""
    inputs = _messages(record, attr.GEN_AI_INPUT_MESSAGES)
    outputs = _messages(record, attr.GEN_AI_OUTPUT_MESSAGES)
    if inputs or outputs:
        return inputs, outputs
    listed = record.attributes.get(attr.EVENTS_ATTRIBUTE)
    events = [*record.events, *events_from_attribute(listed)] if listed is not None else record.events
    return event_messages(events)


def _last_text(messages: tuple[ChatMessage, ...], role: str) -> str | None:
    for message in reversed(messages):
        if message.role == role and message.has_text:
            return message.text
    return None


def _conversation(a: dict[str, Any]) -> str | None:
    value = a.get(attr.GEN_AI_CONVERSATION_ID)
    if value is None:
        value = a.get(_SESSION_ID)  # what producers without a conversation id record instead
    return None if value is None else str(value)


def _read_tool(record: SpanRecord, a: dict[str, Any]) -> SpanReading:
    name = str(a.get(attr.GEN_AI_TOOL_NAME) or _suffix(record.name, attr.OP_EXECUTE_TOOL))
    metadata: tuple[tuple[str, Any], ...] = ()
    if record.scope_name is not None and record.scope_name.startswith(_SEMANTIC_KERNEL) and "-" in name:
        plugin, name = name.split("-", 1)  # Semantic Kernel names a function <plugin>-<function>
        metadata = (("plugin", plugin),)
    if name in _PHANTOM_TOOLS or record.name.endswith("(merged)"):
        return SpanReading(SpanRole.IGNORED, name, NAME)
    if name in _HANDOFF_TOOLS:
        return SpanReading(SpanRole.HANDOFF, name, NAME)
    if record.name == _PYDANTIC_OUTPUT_SPAN or str(a.get("logfire.msg", "")).startswith(_PYDANTIC_OUTPUT_SPAN):
        return SpanReading(SpanRole.IGNORED, name, NAME)  # pydantic-ai's output function: the answer, not a tool
    recorded_args = a.get(attr.GEN_AI_TOOL_CALL_ARGUMENTS, a.get(_PYDANTIC_TOOL_ARGUMENTS))
    recorded_result = a.get(attr.GEN_AI_TOOL_CALL_RESULT, a.get(_PYDANTIC_TOOL_RESPONSE))
    if (recorded_args is None or recorded_result is None) and record.events:
        sent, received = _tool_call_events(record)
        recorded_args = sent if recorded_args is None else recorded_args
        recorded_result = received if recorded_result is None else recorded_result
    args, raw = decode_arguments(recorded_args)
    if args is not None:
        args = unwrap_call_envelope(args)
    output = _callback_output(decode_result(recorded_result))
    result, call_id, error = unwrap_tool_message(output, a.get(attr.GEN_AI_TOOL_CALL_ID), record.error)
    if error is None and record.scope_name == _PYDANTIC_SCOPE and isinstance(result, str) and result.endswith(
        _PYDANTIC_RETRY
    ):
        error = result[: -len(_PYDANTIC_RETRY)]  # a retry prompt (older versions raise no error on the span)
    return SpanReading(
        SpanRole.TOOL,
        name,
        NAME,
        args=args,
        raw_args=raw,
        result=result,
        call_id=None if call_id is None else str(call_id),
        error=error,
        conversation_id=_conversation(a),
        metadata=metadata,
    )


def _tool_call_events(record: SpanRecord) -> tuple[Any, Any]:
    """``(arguments, result)`` from a tool span's own events, where Strands Agents records them:
    a ``gen_ai.tool.message`` event with the call's input, a ``gen_ai.choice`` event with its
    output (content blocks). Without the choice, a tool message is the result."""
    sent = received = None
    for event in record.events:
        if event.name == attr.GEN_AI_TOOL_MESSAGE_EVENT:
            sent = event.attributes.get("content")
        elif event.name == attr.GEN_AI_CHOICE_EVENT:
            received = event.attributes.get("message")
    if received is None:
        return None, sent
    blocks = converse_blocks(received)
    return sent, received if blocks is None else converse_value(blocks)


def _callback_output(result: Any) -> Any:
    """The tool's output out of a LangChain ``on_tool_end`` payload (``{"output": ..., "kwargs":
    ...}``, which OpenLLMetry records as the tool call's result); anything else as it is."""
    if isinstance(result, dict) and "output" in result and set(result) <= {"output", "kwargs"}:
        return result["output"]
    return result


def _read_agent(record: SpanRecord, a: dict[str, Any], operation: str) -> SpanReading:
    inputs, outputs = _content(record)
    inputs = inputs or parse_messages(a.get(_PYDANTIC_ALL_MESSAGES))
    if not inputs and _PYDANTIC_ALL_EVENTS in a:
        inputs = event_messages(events_from_attribute(a[_PYDANTIC_ALL_EVENTS]))[0]
    final = a.get(_PYDANTIC_FINAL_RESULT)
    name = (a.get(attr.GEN_AI_AGENT_NAME) or a.get(attr.GEN_AI_WORKFLOW_NAME) or a.get(_PYDANTIC_AGENT_NAME)
            or _suffix(record.name, operation))
    return SpanReading(
        SpanRole.AGENT,
        str(name),
        NAME,
        input=_last_text(inputs, "user"),
        output=final if final is not None else _last_text(outputs, "assistant"),
        output_is_final=final is not None,
        input_messages=inputs,
        output_messages=outputs,
        usage=TokenUsage.from_attributes(a, _INPUT_TOKENS, _OUTPUT_TOKENS),
        conversation_id=_conversation(a),
    )


def _operation_before_names(record: SpanRecord, a: dict[str, Any]) -> str | None:
    """The operation of a span written before ``gen_ai.operation.name``: a model call, or
    pydantic-ai's ``agent run`` / ``running tool`` / ``running output function``."""
    if attr.GEN_AI_REQUEST_MODEL in a and (attr.GEN_AI_SYSTEM in a or attr.GEN_AI_PROVIDER_NAME in a):
        return attr.OP_CHAT
    if attr.GEN_AI_TOOL_NAME in a and (record.name in (_PYDANTIC_TOOL_SPAN, _PYDANTIC_OUTPUT_SPAN)
                                       or _PYDANTIC_TOOL_ARGUMENTS in a):
        return attr.OP_EXECUTE_TOOL
    if _PYDANTIC_ALL_EVENTS in a or (record.name == _PYDANTIC_AGENT_SPAN and _PYDANTIC_AGENT_NAME in a):
        return attr.OP_INVOKE_AGENT
    return None


def read_genai(record: SpanRecord) -> SpanReading | None:
    """Read a span that follows the GenAI semantic conventions; ``None`` for any other."""
    a = record.attributes
    operation = a.get(attr.GEN_AI_OPERATION_NAME)
    if not isinstance(operation, str):
        operation = _operation_before_names(record, a)
        if operation is None:
            return None
    if operation == attr.OP_EXECUTE_TOOL:
        return _read_tool(record, a)
    if operation in _AGENT_OPERATIONS:
        return _read_agent(record, a, operation)
    if operation in _MODEL_OPERATIONS:
        inputs, outputs = _content(record)
        return SpanReading(
            SpanRole.MODEL,
            str(a.get(attr.GEN_AI_RESPONSE_MODEL) or a.get(attr.GEN_AI_REQUEST_MODEL) or record.name),
            NAME,
            input_messages=inputs,
            output_messages=outputs,
            usage=TokenUsage.from_attributes(a, _INPUT_TOKENS, _OUTPUT_TOKENS),
            tool_definitions=tool_definitions(a.get(attr.GEN_AI_TOOL_DEFINITIONS)),
            conversation_id=_conversation(a),
        )
    if operation == attr.OP_INVOKE_NODE:
        return SpanReading(
            SpanRole.NODE,
            str(a.get(attr.GEN_AI_NODE_NAME) or _suffix(record.name, operation)),
            NAME,
            error=record.error,
            conversation_id=_conversation(a),
        )
    if operation == "handoff":
        return SpanReading(SpanRole.HANDOFF, record.name, NAME)
    if operation in _OTHER_OPERATIONS:
        return SpanReading(SpanRole.IGNORED, record.name, NAME)
    return None
