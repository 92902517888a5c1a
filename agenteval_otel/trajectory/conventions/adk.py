"""Reader for Google ADK's own ``gcp.vertex.agent.*`` keys (ADK before GenAI semconv content).

``call_llm`` spans carry ``gcp.vertex.agent.llm_request`` (``contents[].parts[]`` with ``text``,
``function_call``, ``function_response``: the user's text is the last user part) and
``gcp.vertex.agent.llm_response`` (the model's reply: the answer, or the calls it asks for), and
``gcp.vertex.agent.session_id``. Tools come in two shapes:

- ADK 1.2 and later: one ``execute_tool <name>`` span with ``gcp.vertex.agent.tool_call_args``
  and ``gcp.vertex.agent.tool_response`` (the response dict, JSON) beside ``gen_ai.tool.*``;
- ADK 1.0 and 1.1 (and 0.x): a ``tool_call [<name>]`` span with the arguments only, then a
  sibling ``tool_response [<name>]`` span whose ``tool_response`` is the whole response event
  (``{"content": {"parts": [{"function_response": {"id", "name", "response"}}]}, ...}``). The
  response span is the step (its call id, result, error); its arguments are those of the
  model's call with that id. The argument span is a step only when the tool raised (then no
  response follows); a bare ``tool_response`` span repeats parallel responses merged.

ADK sends a tool's non-dict return value as ``{"result": value}``: the value is the result. A
tool reports a failure to the model as ``{"error": "<message>"}`` (what ADK's own
``FunctionTool`` returns) or ``{"status": "error", "error_message": ...}`` (ADK's documented
tool convention): that is the step's error. The ``(merged tools)`` span ADK adds after parallel
calls is a phantom, and ``transfer_to_agent`` is an agent handoff, not a tool call.
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


def _tool_name(record: SpanRecord) -> str:
    name = record.attributes.get(TOOL_NAME)
    if name:
        return str(name)
    text = record.name
    for prefix in ("execute_tool", "tool_call", "tool_response"):
        if text.startswith(prefix):
            text = text[len(prefix):]
            break
    return text.strip().removeprefix("[").removesuffix("]").strip()


def _outcome(response: Any) -> tuple[Any, str | None]:
    """``(result, error)`` of a tool's response dict as ADK sent it to the model."""
    if not isinstance(response, dict):
        return response, None
    if len(response) == 1:
        if "result" in response:
            return response["result"], None
        if isinstance(response.get("error"), str):
            return None, response["error"]
    if response.get("status") == "error" and isinstance(response.get("error_message"), str):
        return None, response["error_message"]
    return response, None


def _function_response(event: Any) -> dict[str, Any] | None:
    """The first ``function_response`` of an ADK response event (ADK 1.0's ``tool_response``)."""
    content = event.get("content") if isinstance(event, dict) else None
    for part in (content.get("parts") or ()) if isinstance(content, dict) else ():
        if isinstance(part, dict) and isinstance(found := part.get("function_response"), dict):
            return found
    return None


def _response_span(record: SpanRecord, name: str) -> SpanReading:
    """ADK 1.0's ``tool_response [<name>]`` span: the step's call id, result and error."""
    a = record.attributes
    found = _function_response(decode_json(a.get(TOOL_RESPONSE))) if name else None
    if found is None:
        return SpanReading(SpanRole.IGNORED, name or record.name, NAME)
    result, error = _outcome(found.get("response"))
    call_id = found.get("id")
    return SpanReading(
        SpanRole.TOOL,
        str(found.get("name") or name),
        NAME,
        result=result,
        call_id=None if call_id is None else str(call_id),
        error=record.error or error,
        conversation_id=_session(a),
    )


def read_adk(record: SpanRecord) -> SpanReading | None:
    """Read a span with Google ADK's ``gcp.vertex.agent.*`` content keys; ``None`` otherwise."""
    a = record.attributes
    if TOOL_CALL_ARGS in a or TOOL_RESPONSE in a:
        name = _tool_name(record)
        if a.get(TOOL_CALL_ARGS) == "N/A" or name.startswith("(merged"):
            return SpanReading(SpanRole.IGNORED, name, NAME)
        if name == "transfer_to_agent":
            return SpanReading(SpanRole.HANDOFF, name, NAME)
        if TOOL_CALL_ARGS not in a:
            return _response_span(record, name)
        if TOOL_RESPONSE not in a and record.error is None and record.name.startswith("tool_call"):
            return SpanReading(SpanRole.IGNORED, record.name, NAME)  # its response span is the step
        raw_args = a.get(TOOL_CALL_ARGS)
        args, raw = decode_arguments(None if raw_args in _NOT_RECORDED else raw_args)
        response = a.get(TOOL_RESPONSE)
        result, error = (None, None) if response in _NOT_RECORDED else _outcome(decode_json(response))
        call_id = a.get(TOOL_CALL_ID)
        return SpanReading(
            SpanRole.TOOL,
            name,
            NAME,
            args=args,
            raw_args=raw,
            result=result,
            call_id=None if call_id in (None, "<not specified>") else str(call_id),
            error=record.error or error,
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
