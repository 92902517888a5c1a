"""Reader for OpenLLMetry (Traceloop) spans.

``traceloop.span.kind`` is ``workflow`` / ``agent`` (an agent run), ``task``, ``tool`` or
``handoff``; ``traceloop.entity.name``, ``traceloop.entity.input`` and
``traceloop.entity.output`` carry the name and the JSON of the inputs and outputs (the SDK
decorators write ``{"args": [...], "kwargs": {...}}``; the LangChain instrumentation writes
``{"inputs": ..., "metadata": ...}`` and ``{"outputs": ...}`` / ``{"output": ...}``). Model calls
carry ``llm.request.type`` and either the flattened ``gen_ai.prompt.N.*`` /
``gen_ai.completion.N.*`` (with ``tool_calls.M.{id,name,arguments}``) or the newer
``gen_ai.input.messages`` / ``gen_ai.output.messages`` JSON.

The CrewAI instrumentation writes ``crewai.*`` attributes instead of entity input and output: the
kickoff span ``crewai.workflow`` (no span kind) holds ``crewai.crew.*`` and the crew's answer in
``crewai.crew.result``; a task span (kind ``task``) holds ``crewai.task.description`` (the task
as the crew was given it, ``{placeholders}`` filled in from the kickoff inputs: what the user
asked, where CrewAI's model prompt wraps it in its ``Current Task: ...`` template) and its answer
in ``traceloop.entity.output``; an agent span (kind ``agent``) holds ``crewai.agent.role``.
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
    flattened_list,
    tool_definition,
    tool_definitions,
    unwrap_tool_message,
    unwrap_tool_output,
)
from agenteval_otel.trajectory.messages import decode_arguments, message_text, normalize_role
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.usage import TokenUsage

__all__ = ["MARKERS", "entity_value", "offered_tools", "read_openllmetry"]

NAME = "openllmetry"

SPAN_KIND = "traceloop.span.kind"
ENTITY_NAME = "traceloop.entity.name"
ENTITY_INPUT = "traceloop.entity.input"
ENTITY_OUTPUT = "traceloop.entity.output"
WORKFLOW_NAME = "traceloop.workflow.name"
ASSOCIATION = "traceloop.association.properties."
REQUEST_TYPE = "llm.request.type"
PROMPTS = "gen_ai.prompt"
COMPLETIONS = "gen_ai.completion"
AGENT_NAME = "gen_ai.agent.name"
TOOL_NAME = "gen_ai.tool.name"
REQUEST_FUNCTIONS = "llm.request.functions"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
TASK_TOOL_NAME = "tool.name"
TASK_TOOL_ARGUMENTS = "tool.arguments"
_INPUT_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
_OUTPUT_TOKENS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")
_SESSION_KEYS = ("session_id", "conversation_id", "thread_id")
CREW_ID = "crewai.crew.id"
CREW_NAME = "crewai.crew.name"
CREW_RESULT = "crewai.crew.result"
TASK_DESCRIPTION = "crewai.task.description"
TASK_AGENT = "crewai.task.agent"
AGENT_ROLE = "crewai.agent.role"
MARKERS = Markers(frozenset({SPAN_KIND, REQUEST_TYPE, CREW_ID}), (PROMPTS + ".", COMPLETIONS + "."))


def entity_value(value: Any) -> Any:
    """The payload of a ``traceloop.entity.input`` / ``.output`` JSON: the single argument, the
    keyword arguments, or what the LangChain instrumentation wrapped in ``inputs`` /
    ``outputs`` / ``output``. The value is always JSON (a returned string arrives quoted)."""
    decoded = decode_result(value)
    if not isinstance(decoded, dict):
        return decoded
    for key in ("inputs", "outputs", "output"):
        if key in decoded:
            return decoded[key]
    if "args" in decoded or "kwargs" in decoded:
        kwargs = decoded.get("kwargs") or {}
        args = decoded.get("args") or []
        if kwargs:
            return dict(kwargs)
        return args[0] if len(args) == 1 else (args or None)
    return decoded


def _suffix_removed(name: str, suffix: str) -> str:
    return name[: -len(suffix)] if name.endswith(suffix) else name


def _session(a: Mapping[str, Any]) -> str | None:
    for key in _SESSION_KEYS:
        value = a.get(ASSOCIATION + key)
        if value is not None:
            return str(value)
    return None


def _read_tool(record: SpanRecord, a: Mapping[str, Any]) -> SpanReading:
    decoded = decode_json(a.get(ENTITY_INPUT))
    if (
        isinstance(decoded, dict)
        and "input_str" in decoded
        and not isinstance(decoded.get("inputs"), dict)
    ):
        args, raw = decode_arguments(decoded["input_str"])
    else:
        args, raw = decode_arguments(entity_value(a.get(ENTITY_INPUT)))
    result: Any = decode_result(entity_value(a.get(ENTITY_OUTPUT)))
    result, call_id, error = unwrap_tool_message(result, None, record.error)
    name = a.get(TOOL_NAME) or a.get(ENTITY_NAME) or _suffix_removed(record.name, ".tool")
    return SpanReading(
        SpanRole.TOOL,
        str(name),
        NAME,
        args=args,
        raw_args=raw,
        result=result,
        call_id=call_id,
        error=error,
        conversation_id=_session(a),
    )


def _read_tool_task(record: SpanRecord, a: Mapping[str, Any]) -> SpanReading:
    """A task span that calls a tool (LlamaIndex's ``call_tool`` workflow step): ``tool.name``,
    ``tool.arguments``, and an output holding the ``tool_id`` and the ``tool_output``."""
    args, raw = decode_arguments(a.get(TASK_TOOL_ARGUMENTS))
    output = decode_result(a.get(ENTITY_OUTPUT))
    result: Any = output
    call_id = None
    error = record.error
    if isinstance(output, dict) and "tool_output" in output:
        call_id = output.get("tool_id")
        result, failed = unwrap_tool_output(output["tool_output"])
        if failed and error is None:
            error = str(result)
    return SpanReading(
        SpanRole.TOOL,
        str(a[TASK_TOOL_NAME]),
        NAME,
        args=args,
        raw_args=raw,
        result=result,
        call_id=None if call_id is None else str(call_id),
        error=error,
        conversation_id=_session(a),
    )


def _flat_message(item: dict[str, Any], default_role: str) -> ChatMessage:
    role = normalize_role(item.get("role") or default_role)
    text = message_text(decode_json(item.get("content")))
    calls = [
        requested_call(call.get("name"), call.get("arguments"), call.get("id"))
        for call in flattened_list(item, "tool_calls")
    ]
    if item.get("function_call.name"):
        calls.append(requested_call(item["function_call.name"], item.get("function_call.arguments"), None))
    responses: tuple[ToolResponse, ...] = ()
    if role == "tool" and item.get("tool_call_id") is not None:
        responses = (ToolResponse(str(item["tool_call_id"]), decode_result(text)),)
        text = None
    return ChatMessage(role, text, tuple(calls), responses)


def _model_messages(a: Mapping[str, Any], prefix: str, json_key: str, role: str) -> tuple[ChatMessage, ...]:
    flat = tuple(_flat_message(item, role) for item in flattened_list(a, prefix))
    return flat or parse_messages(a.get(json_key))


def offered_tools(a: Mapping[str, Any]) -> tuple[ToolDefinition, ...]:
    """The tools a model call offered: ``llm.request.functions.<i>.*``, else the JSON list."""
    flat = tuple(
        d
        for item in flattened_list(a, REQUEST_FUNCTIONS)
        if (d := tool_definition(item.get("parameters") or {}, item.get("name"))) is not None
    )
    return flat or tool_definitions(a.get(TOOL_DEFINITIONS))


def _is_model_call(a: Mapping[str, Any]) -> bool:
    return REQUEST_TYPE in a or any(key.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for key in a)


def _read_crewai(record: SpanRecord, a: Mapping[str, Any]) -> SpanReading:
    """A CrewAI crew kickoff (its answer) or task (what it was asked, its answer) as an agent run."""
    if TASK_DESCRIPTION in a:
        name, text, output = a.get(TASK_AGENT) or record.name, a[TASK_DESCRIPTION], a.get(ENTITY_OUTPUT)
    else:
        name, text, output = a.get(CREW_NAME) or record.name, None, a.get(CREW_RESULT)
    return SpanReading(
        SpanRole.AGENT,
        str(name),
        NAME,
        input=None if text is None else str(text),
        output=None if output is None else str(output),
        conversation_id=_session(a),
    )


def read_openllmetry(record: SpanRecord) -> SpanReading | None:
    """Read an OpenLLMetry span; ``None`` for any other."""
    a = record.attributes
    kind = a.get(SPAN_KIND)
    if kind is None:
        if CREW_ID in a:
            return _read_crewai(record, a)
        if _is_model_call(a):
            return SpanReading(
                SpanRole.MODEL,
                str(a.get("gen_ai.response.model") or a.get("gen_ai.request.model") or record.name),
                NAME,
                input_messages=_model_messages(a, PROMPTS, "gen_ai.input.messages", "user"),
                output_messages=_model_messages(a, COMPLETIONS, "gen_ai.output.messages", "assistant"),
                usage=TokenUsage.from_attributes(a, _INPUT_TOKENS, _OUTPUT_TOKENS),
                tool_definitions=offered_tools(a),
                conversation_id=_session(a),
            )
        return None
    kind = str(kind).lower()
    if kind == "tool":
        return _read_tool(record, a)
    if kind == "task" and a.get(TASK_TOOL_NAME):
        return _read_tool_task(record, a)
    if kind == "task" and TASK_DESCRIPTION in a:
        return _read_crewai(record, a)
    if kind == "handoff":
        return SpanReading(SpanRole.HANDOFF, record.name, NAME)
    if kind in ("workflow", "agent") or (kind == "task" and record.parent_id is None):
        name = (
            a.get(AGENT_NAME)
            or a.get(AGENT_ROLE)
            or a.get(ENTITY_NAME)
            or a.get(WORKFLOW_NAME)
            or _suffix_removed(_suffix_removed(record.name, ".agent"), ".workflow")
        )
        return SpanReading(
            SpanRole.AGENT,
            str(name),
            NAME,
            input=entity_value(a.get(ENTITY_INPUT)),
            output=entity_value(a.get(ENTITY_OUTPUT)),
            conversation_id=_session(a),
        )
    return SpanReading(SpanRole.IGNORED, record.name, NAME)
