"""Reader for agenteval-otel's own spans: ``agenteval.step.type`` says what each span is.

Evaluation spans (``agenteval.evaluation`` = true) are never part of a trajectory.
"""

from __future__ import annotations

from typing import Any

from agenteval_otel import semconv as attr
from agenteval_otel.trajectory.conventions.genai_messages import parse_messages
from agenteval_otel.trajectory.conventions.reading import ChatMessage, Markers, SpanReading, SpanRole
from agenteval_otel.trajectory.conventions.values import (
    decode_json,
    decode_result,
    tool_definitions,
)
from agenteval_otel.trajectory.messages import decode_arguments, normalize_role
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = ["MARKERS", "read_ours"]

NAME = "agenteval"
MARKERS = Markers(frozenset({attr.EVALUATION_MARKER, attr.STEP_TYPE}), exclusive=True)
_INPUT_TOKENS = (attr.GEN_AI_USAGE_INPUT_TOKENS, attr.GEN_AI_USAGE_PROMPT_TOKENS)
_OUTPUT_TOKENS = (attr.GEN_AI_USAGE_OUTPUT_TOKENS, attr.GEN_AI_USAGE_COMPLETION_TOKENS)


def _without_prefix(name: str, prefix: str) -> str:
    return name[len(prefix) :].strip() if name.startswith(prefix) else name


def _branch(value: Any) -> str | list[str] | None:
    decoded = decode_json(value)
    if isinstance(decoded, list):
        return [str(item) for item in decoded]
    return None if decoded is None else str(decoded)


def _usage(a: dict[str, Any]) -> TokenUsage | None:
    return TokenUsage.from_attributes(a, _INPUT_TOKENS, _OUTPUT_TOKENS)


def _read_message(record: SpanRecord, a: dict[str, Any], conversation: str | None) -> SpanReading:
    role = normalize_role(a.get(attr.MESSAGE_ROLE) or "assistant")
    content = a.get(attr.MESSAGE_CONTENT)
    text = content if isinstance(content, str) or content is None else str(content)
    outputs = parse_messages(a.get(attr.GEN_AI_OUTPUT_MESSAGES)) or (ChatMessage(role, text),)
    model = a.get(attr.GEN_AI_RESPONSE_MODEL) or a.get(attr.GEN_AI_REQUEST_MODEL)
    return SpanReading(
        SpanRole.MODEL if role == "assistant" else SpanRole.MESSAGE,
        str(model or role),
        NAME,
        result=text,
        input_messages=parse_messages(a.get(attr.GEN_AI_INPUT_MESSAGES)),
        output_messages=outputs,
        usage=_usage(a),
        tool_definitions=tool_definitions(a.get(attr.GEN_AI_TOOL_DEFINITIONS)),
        conversation_id=conversation,
    )


def read_ours(record: SpanRecord) -> SpanReading | None:
    """Read a span written by agenteval-otel's capture decorators; ``None`` for any other."""
    a = record.attributes
    if a.get(attr.EVALUATION_MARKER) in (True, "true", "True"):
        return SpanReading(SpanRole.IGNORED, record.name, NAME)
    step_type = a.get(attr.STEP_TYPE)
    if not isinstance(step_type, str):
        return None
    conversation = a.get(attr.GEN_AI_CONVERSATION_ID)
    conversation = None if conversation is None else str(conversation)
    kind = step_type.lower()
    if kind == attr.STEP_AGENT:
        return SpanReading(
            SpanRole.AGENT,
            str(a.get(attr.GEN_AI_AGENT_NAME) or _without_prefix(record.name, attr.OP_INVOKE_AGENT)),
            NAME,
            input=a.get(attr.AGENT_INPUT),
            output=a.get(attr.AGENT_OUTPUT),
            output_is_final=attr.AGENT_OUTPUT in a,
            input_messages=parse_messages(a.get(attr.GEN_AI_INPUT_MESSAGES)),
            output_messages=parse_messages(a.get(attr.GEN_AI_OUTPUT_MESSAGES)),
            usage=_usage(a),
            conversation_id=conversation,
        )
    if kind == attr.STEP_TOOL:
        args, raw = decode_arguments(a.get(attr.GEN_AI_TOOL_CALL_ARGUMENTS))
        call_id = a.get(attr.GEN_AI_TOOL_CALL_ID)
        return SpanReading(
            SpanRole.TOOL,
            str(a.get(attr.GEN_AI_TOOL_NAME) or _without_prefix(record.name, attr.OP_EXECUTE_TOOL)),
            NAME,
            args=args,
            raw_args=raw,
            result=decode_result(a.get(attr.GEN_AI_TOOL_CALL_RESULT)),
            call_id=None if call_id is None else str(call_id),
            error=record.error,
            conversation_id=conversation,
        )
    if kind == attr.STEP_NODE:
        return SpanReading(
            SpanRole.NODE,
            str(a.get(attr.GEN_AI_NODE_NAME) or _without_prefix(record.name, attr.OP_INVOKE_NODE)),
            NAME,
            input=a.get(attr.NODE_INPUT),
            output=a.get(attr.NODE_OUTPUT),
            error=record.error,
            conversation_id=conversation,
        )
    if kind == attr.STEP_CONDITIONAL:
        return SpanReading(
            SpanRole.CONDITIONAL,
            str(a.get(attr.CONDITION_NAME) or _without_prefix(record.name, "conditional")),
            NAME,
            branch=_branch(a.get(attr.CONDITION_BRANCH)),
            value=decode_json(a.get(attr.CONDITION_VALUE)),
            conversation_id=conversation,
        )
    if kind == attr.STEP_MESSAGE:
        return _read_message(record, a, conversation)
    return SpanReading(SpanRole.IGNORED, record.name, NAME)
