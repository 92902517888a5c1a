"""Reader for Mastra's AI tracing as ``@mastra/otel-exporter`` writes it (``mastra.span.type``).

Every span carries ``mastra.span.type`` and ``gen_ai.operation.name``; the GenAI reader reads
the model calls (``chat``: ``gen_ai.input.messages`` / ``gen_ai.output.messages``) and the tool
calls (``execute_tool``: ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``.arguments``,
``.result``, the error in the span status). The exporter writes any other span's input and output
as ``mastra.<span type>.input`` / ``.output`` (JSON unless a string); this reader reads those:

- ``agent_run`` (``invoke_agent <name>``): the input is what ``agent.generate``/``stream`` was
  given — a string, a list of strings, a list of messages (``{"role", "content"}``, content a
  string or parts; Mastra's stored messages with ``content.parts``), or, from agents on v1
  models, ``{"messages": ...}``; a resumed run records its resume data instead (no user text).
  The output is ``{"text", "files", ...}``. The thread id is ``gen_ai.conversation.id``.
- ``workflow_run`` (``invoke_workflow <name>``): the workflow's input and result, as recorded.
- ``workflow_step`` (``mastra.workflow_step.step_id``): a graph node;
  ``workflow_conditional``: the branch taken, ``mastra.workflow_conditional.selected_steps``.

Memory, processor, model-step and stream-chunk spans are the framework's plumbing: not steps; so
is ``model_generation`` where the exporter writes each model call as a ``model_inference`` span
(``chat``) beneath it; with older ``@mastra/observability`` it is itself the ``chat`` span.
"""

from __future__ import annotations

from typing import Any

from agenteval_otel.trajectory.conventions.reading import Markers, SpanReading, SpanRole
from agenteval_otel.trajectory.conventions.values import decode_json, text_from
from agenteval_otel.trajectory.spans import SpanRecord

__all__ = ["MARKERS", "read_mastra"]

NAME = "mastra"

SPAN_TYPE = "mastra.span.type"
CONVERSATION_ID = "gen_ai.conversation.id"
THREAD_ID = "mastra.metadata.threadId"
_PLUMBING = frozenset({"memory_operation", "processor_run", "model_step", "model_chunk"})
_RESUMED = ("resumeData", "toolCallId")
MARKERS = Markers(frozenset({SPAN_TYPE}))


def _name(a: dict[str, Any], record: SpanRecord, operation: str) -> str:
    name = a.get("gen_ai.agent.name") or record.name.removeprefix(operation).strip()
    return str(name or record.name)


def _conversation(a: dict[str, Any]) -> str | None:
    value = a.get(CONVERSATION_ID) or a.get(THREAD_ID)
    return None if value is None else str(value)


def _user_text(value: Any) -> str | None:
    """The user's text in what an agent run was given; ``None`` for resume data."""
    decoded = decode_json(value)
    if isinstance(decoded, dict) and any(key in decoded for key in _RESUMED):
        return None
    if isinstance(decoded, dict) and isinstance(decoded.get("messages"), (list, str)):
        decoded = decoded["messages"]  # agents on v1 models: {"messages": ...}
    if isinstance(decoded, list) and decoded and all(isinstance(m, str) for m in decoded):
        return str(decoded[-1])
    if isinstance(decoded, dict) and "role" in decoded:
        decoded = [decoded]
    if isinstance(decoded, list):
        decoded = [_stored(m) for m in decoded]
    return text_from(decoded, "user")


def _stored(message: Any) -> Any:
    """A message Mastra stored (``content: {"format": 2, "parts": [...]}``) as a message with parts."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, dict) and isinstance(content.get("parts"), list):
        return {"role": message.get("role"), "parts": content["parts"]}
    return message


def _answer(value: Any) -> str | None:
    decoded = decode_json(value)
    if isinstance(decoded, dict) and isinstance(text := decoded.get("text"), str):
        return text if text.strip() else None  # structured output: no text
    return text_from(decoded, "assistant")


def read_mastra(record: SpanRecord) -> SpanReading | None:
    """Read a span of Mastra's AI tracing; ``None`` for the span types the GenAI reader reads."""
    a = record.attributes
    kind = a.get(SPAN_TYPE)
    if kind == "agent_run":
        return SpanReading(
            SpanRole.AGENT,
            _name(a, record, "invoke_agent"),
            NAME,
            input=_user_text(a.get("mastra.agent_run.input")),
            output=_answer(a.get("mastra.agent_run.output")),
            error=record.error,
            conversation_id=_conversation(a),
        )
    if kind == "workflow_run":
        return SpanReading(
            SpanRole.AGENT,
            record.name.removeprefix("invoke_workflow").strip() or record.name,
            NAME,
            input=decode_json(a.get("mastra.workflow_run.input")),
            output=decode_json(a.get("mastra.workflow_run.output")),
            error=record.error,
            conversation_id=_conversation(a),
        )
    if kind == "workflow_step":
        return SpanReading(
            SpanRole.NODE,
            str(a.get("mastra.workflow_step.step_id") or record.name),
            NAME,
            error=record.error,
            conversation_id=_conversation(a),
        )
    if kind == "workflow_conditional":
        selected = decode_json(a.get("mastra.workflow_conditional.selected_steps"))
        if isinstance(selected, list) and all(isinstance(step, str) for step in selected):
            return SpanReading(
                SpanRole.CONDITIONAL,
                record.name,
                NAME,
                branch=selected[0] if len(selected) == 1 else list(selected),
                conversation_id=_conversation(a),
            )
        return None
    if kind in _PLUMBING or (kind == "model_generation" and a.get("gen_ai.operation.name") != "chat"):
        return SpanReading(SpanRole.IGNORED, record.name, NAME)
    return None
