"""Reader for LiteLLM's OpenTelemetry callback (``litellm.callbacks = ["otel"]``).

Each model call is a ``litellm_request`` span (``litellm.call_id``) in a trace of its own. The
messages are GenAI message JSON (``gen_ai.input.messages`` / ``gen_ai.output.messages``, with
OpenAI's ``tool_calls`` and ``tool_call_id`` beside the parts), or in older releases the indexed
``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``. The tool calls a reply asks for are indexed
by call, not by choice: ``gen_ai.completion.<i>.function_call.{name,arguments}`` (no call id).
The tools offered are ``llm.request.functions.<i>.{name,description,parameters}``. A child
``raw_gen_ai_request`` repeats the provider request as Python reprs: not a step.

A tool's run is not traced: its call and result are known from the reply that asked for it
and the next call's messages (see ``trajectory.chains``, which joins a turn's calls).

>>> from agenteval_otel.trajectory.spans import SpanRecord
>>> record = SpanRecord(trace_id="a" * 32, span_id="b" * 16, parent_id=None, name="litellm_request",
...     attributes={"litellm.call_id": "1", "gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
...                 "gen_ai.completion.0.function_call.name": "book",
...                 "gen_ai.completion.0.function_call.arguments": '{"flight_id": "LX92"}'})
>>> [(c.name, c.args) for c in read_litellm(record).requested_tool_calls]
[('book', {'flight_id': 'LX92'})]
"""

from __future__ import annotations

from dataclasses import replace

from agenteval_otel.trajectory.conventions.genai import read_genai
from agenteval_otel.trajectory.conventions.genai_messages import requested_call
from agenteval_otel.trajectory.conventions.openllmetry import offered_tools
from agenteval_otel.trajectory.conventions.reading import ChatMessage, Markers, SpanReading, SpanRole
from agenteval_otel.trajectory.conventions.values import flattened_list
from agenteval_otel.trajectory.spans import SpanRecord

__all__ = ["MARKERS", "read_litellm"]

NAME = "litellm"
CALL_ID = "litellm.call_id"
RAW_REQUEST = "raw_gen_ai_request"
_COMPLETIONS = "gen_ai.completion"

MARKERS = Markers(frozenset({CALL_ID}), span_names=frozenset({RAW_REQUEST}))


def read_litellm(record: SpanRecord) -> SpanReading | None:
    """Read a span of LiteLLM's callback; ``None`` for any other."""
    if record.name == RAW_REQUEST:
        return SpanReading(SpanRole.IGNORED, record.name, NAME)
    a = record.attributes
    if CALL_ID not in a:
        return None
    reading = read_genai(record)
    if reading is None or reading.role is not SpanRole.MODEL:
        return None  # an older release without GenAI keys: the indexed prompts are OpenLLMetry's
    updates: dict[str, object] = {"convention": NAME}
    if not reading.requested_tool_calls:
        calls = tuple(
            requested_call(item["function_call.name"], item.get("function_call.arguments"), None)
            for item in flattened_list(a, _COMPLETIONS)
            if item.get("function_call.name")
        )
        if calls:
            kept = [m for m in reading.output_messages if m.has_text]
            text = "".join(m.text or "" for m in kept) or None
            updates["output_messages"] = (ChatMessage("assistant", text, calls),)
    if not reading.tool_definitions and (offered := offered_tools(a)):
        updates["tool_definitions"] = offered
    return replace(reading, **updates)  # type: ignore[arg-type]
