"""Reader for Haystack's own OpenTelemetry tracing (``haystack.*`` attributes): its agent runs
(``haystack.agent.run``), the model call of each step (``haystack.agent.step.llm``) and the tool
calls (``haystack.agent.step.tool``), with content as Haystack's serialised ``ChatMessage``s
(``{"role", "content": [{"text"} | {"tool_call"} | {"tool_call_result"}]}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agenteval_otel.trajectory.conventions.genai_messages import requested_call
from agenteval_otel.trajectory.conventions.reading import (
    ChatMessage,
    Markers,
    SpanReading,
    SpanRole,
    ToolResponse,
)
from agenteval_otel.trajectory.conventions.values import decode_json, decode_result
from agenteval_otel.trajectory.messages import decode_arguments, normalize_role
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = ["MARKERS", "read_haystack"]

NAME = "haystack"

AGENT_INPUT = "haystack.agent.input"
AGENT_OUTPUT = "haystack.agent.output"
LLM_INPUT = "haystack.agent.step.llm.input"
LLM_OUTPUT = "haystack.agent.step.llm.output"
TOOL_NAME = "haystack.tool.name"
TOOL_INPUT = "haystack.agent.step.tool.input"
TOOL_OUTPUT = "haystack.agent.step.tool.output"
TOOL_ERROR = "haystack.tool.error"
STEP = "haystack.agent.step"
MARKERS = Markers(
    frozenset({TOOL_NAME, LLM_INPUT, LLM_OUTPUT, AGENT_INPUT, STEP}), span_names=frozenset({"haystack.agent.run", STEP})
)


def _message(message: Mapping[str, Any]) -> ChatMessage:
    texts: list[str] = []
    calls = []
    responses = []
    for part in message.get("content") or ():
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        call = part.get("tool_call")
        if isinstance(call, dict):
            calls.append(requested_call(call.get("tool_name"), call.get("arguments"), call.get("id")))
        outcome = part.get("tool_call_result")
        if isinstance(outcome, dict):
            origin = outcome.get("origin")
            origin = origin if isinstance(origin, dict) else {}
            responses.append(ToolResponse(origin.get("id"), decode_result(outcome.get("result")), origin.get("tool_name")))
    return ChatMessage(normalize_role(message.get("role")), "".join(texts) or None, tuple(calls), tuple(responses))


def _messages(value: Any, key: str) -> tuple[ChatMessage, ...]:
    decoded = decode_json(value)
    listed = decoded.get(key) if isinstance(decoded, dict) else None
    return tuple(_message(m) for m in listed or () if isinstance(m, dict))


def _last_text(messages: tuple[ChatMessage, ...], role: str) -> str | None:
    return next((m.text for m in reversed(messages) if m.role == role and m.has_text), None)


def _usage(replies: Any) -> TokenUsage | None:
    decoded = decode_json(replies)
    first = (decoded.get("replies") or [None])[0] if isinstance(decoded, dict) else None
    usage = ((first or {}).get("meta") or {}).get("usage") if isinstance(first, dict) else None
    if not isinstance(usage, dict):
        return None
    return TokenUsage.from_attributes(usage, ("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens"))


def _model(replies: Any) -> str | None:
    decoded = decode_json(replies)
    first = (decoded.get("replies") or [None])[0] if isinstance(decoded, dict) else None
    meta = first.get("meta") if isinstance(first, dict) else None
    return str(meta["model"]) if isinstance(meta, dict) and meta.get("model") else None


def _tool_error(output: Any) -> str | None:
    decoded = decode_json(output)
    error = decoded.get("error") if isinstance(decoded, dict) else None
    return error if isinstance(error, str) else str(output)


def read_haystack(record: SpanRecord) -> SpanReading | None:
    """Read a span of Haystack's tracing; ``None`` for any other."""
    a = record.attributes
    if TOOL_NAME in a and (TOOL_INPUT in a or record.name.endswith(".tool")):
        args, raw = decode_arguments(a.get(TOOL_INPUT))
        failed = a.get(TOOL_ERROR) in (True, "true", "True")
        return SpanReading(
            SpanRole.TOOL, str(a[TOOL_NAME]), NAME, args=args, raw_args=raw,
            result=decode_result(a.get(TOOL_OUTPUT)),
            error=record.error or (_tool_error(a.get(TOOL_OUTPUT)) if failed else None),
        )
    if LLM_INPUT in a or LLM_OUTPUT in a:
        return SpanReading(
            SpanRole.MODEL, _model(a.get(LLM_OUTPUT)) or record.name, NAME,
            input_messages=_messages(a.get(LLM_INPUT), "messages"),
            output_messages=_messages(a.get(LLM_OUTPUT), "replies"),
            usage=_usage(a.get(LLM_OUTPUT)),
        )
    if AGENT_INPUT in a or record.name == "haystack.agent.run":
        inputs = _messages(a.get(AGENT_INPUT), "messages")
        outputs = _messages(a.get(AGENT_OUTPUT), "messages")
        return SpanReading(
            SpanRole.AGENT, record.name, NAME,
            input=_last_text(inputs, "user"), output=_last_text(outputs, "assistant"),
            output_is_final=bool(outputs),
        )
    if STEP in a or record.name == STEP:
        return SpanReading(SpanRole.IGNORED, record.name, NAME)
    return None
