"""Reader for Google ADK's own ``gcp.vertex.agent.*`` keys (ADK before GenAI semconv content).

Tool spans carry ``gcp.vertex.agent.tool_call_args`` and ``gcp.vertex.agent.tool_response``
(JSON); ``call_llm`` spans carry ``gcp.vertex.agent.llm_request`` (``contents[].parts[]`` with
``text``, ``function_call``, ``function_response``) and ``gcp.vertex.agent.llm_response``. The
``(merged tools)`` span ADK adds after parallel calls is a phantom, and ``transfer_to_agent`` is
an agent handoff, not a tool call.
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
    ToolDefinition,
    ToolResponse,
)
from agenteval_otel.trajectory.conventions.values import (
    decode_json,
    tool_definition,
)
from agenteval_otel.trajectory.messages import decode_arguments, normalize_role
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = ["MARKERS", "read_adk"]

NAME = "adk"

TOOL_CALL_ARGS = "gcp.vertex.agent.tool_call_args"
TOOL_RESPONSE = "gcp.vertex.agent.tool_response"
LLM_REQUEST = "gcp.vertex.agent.llm_request"
LLM_RESPONSE = "gcp.vertex.agent.llm_response"
SESSION_ID = "gcp.vertex.agent.session_id"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
_NOT_RECORDED = ("N/A", "<not specified>", "<not serializable>", "{}")
MARKERS = Markers(frozenset({TOOL_CALL_ARGS, TOOL_RESPONSE, LLM_REQUEST}))


def _content(content: Any) -> ChatMessage | None:
    if not isinstance(content, dict):
        return None
    texts: list[str] = []
    calls = []
    responses = []
    for part in content.get("parts") or ():
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str) and not part.get("thought"):
            texts.append(part["text"])
        if isinstance(call := part.get("function_call"), dict):
            calls.append(requested_call(call.get("name"), call.get("args"), call.get("id")))
        if isinstance(response := part.get("function_response"), dict):
            responses.append(ToolResponse(response.get("id"), response.get("response"), response.get("name")))
    return ChatMessage(
        normalize_role(content.get("role") or "user"),
        "".join(texts) if texts else None,
        tuple(calls),
        tuple(responses),
    )


def _request_messages(value: Any) -> tuple[ChatMessage, ...]:
    request = decode_json(value)
    if not isinstance(request, dict):
        return ()
    return tuple(m for c in request.get("contents") or () if (m := _content(c)) is not None)


def _declared_tools(value: Any) -> tuple[ToolDefinition, ...]:
    request = decode_json(value)
    config = request.get("config") if isinstance(request, dict) else None
    tools = config.get("tools") if isinstance(config, dict) else None
    found = []
    for tool in tools or ():
        for declaration in (tool.get("function_declarations") or ()) if isinstance(tool, dict) else ():
            if (definition := tool_definition(declaration)) is not None:
                found.append(definition)
    return tuple(found)


def _response(value: Any) -> tuple[tuple[ChatMessage, ...], TokenUsage | None]:
    response = decode_json(value)
    if not isinstance(response, dict):
        return (), None
    message = _content(response.get("content"))
    usage = None
    metadata = response.get("usage_metadata")
    if isinstance(metadata, dict):
        usage = TokenUsage.from_attributes(metadata, ("prompt_token_count",), ("candidates_token_count",))
    return ((message,) if message else ()), usage


def _session(a: Mapping[str, Any]) -> str | None:
    value = a.get(SESSION_ID)
    return None if value is None else str(value)


def read_adk(record: SpanRecord) -> SpanReading | None:
    """Read a span with Google ADK's ``gcp.vertex.agent.*`` content keys; ``None`` otherwise."""
    a = record.attributes
    if TOOL_CALL_ARGS in a or TOOL_RESPONSE in a:
        name = str(a.get(TOOL_NAME) or record.name.removeprefix("execute_tool").strip())
        if a.get(TOOL_CALL_ARGS) == "N/A" or name.startswith("(merged"):
            return SpanReading(SpanRole.IGNORED, name, NAME)
        if name == "transfer_to_agent":
            return SpanReading(SpanRole.HANDOFF, name, NAME)
        raw_args = a.get(TOOL_CALL_ARGS)
        args, raw = decode_arguments(None if raw_args in _NOT_RECORDED else raw_args)
        response = a.get(TOOL_RESPONSE)
        call_id = a.get(TOOL_CALL_ID)
        return SpanReading(
            SpanRole.TOOL,
            name,
            NAME,
            args=args,
            raw_args=raw,
            result=None if response in _NOT_RECORDED else decode_json(response),
            call_id=None if call_id in (None, "<not specified>") else str(call_id),
            error=record.error,
            conversation_id=_session(a),
        )
    request = a.get(LLM_REQUEST)
    if request is not None and request not in _NOT_RECORDED:
        outputs, usage = _response(a.get(LLM_RESPONSE))
        return SpanReading(
            SpanRole.MODEL,
            str(a.get("gen_ai.request.model") or record.name),
            NAME,
            input_messages=_request_messages(request),
            output_messages=outputs,
            usage=usage,
            tool_definitions=_declared_tools(request),
            conversation_id=_session(a),
        )
    return None
