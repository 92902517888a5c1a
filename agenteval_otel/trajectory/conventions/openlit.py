"""Reader for OpenLIT's own keys beside the GenAI semantic conventions it writes.

OpenLIT (``openlit.init()``) writes GenAI spans (``chat``, ``invoke_workflow``,
``invoke_agent``, ``execute_tool``; messages as ``gen_ai.input.messages`` /
``gen_ai.output.messages``, or in older releases as ``gen_ai.content.prompt`` /
``gen_ai.content.completion`` events), which the GenAI reader reads. Of its own keys one matters
to a trajectory: a model call's reply that asks for tools also records the calls as
``gen_ai.tool.name``, ``gen_ai.tool.call.id`` and ``gen_ai.tool.args``, one value per call
joined with ", " (the arguments as the model's JSON text), written whether or not message
content is captured. Without content they are all the span says of the calls, so they are read
then, and only then.

>>> from agenteval_otel.trajectory.spans import SpanRecord
>>> record = SpanRecord(trace_id="a" * 32, span_id="b" * 16, parent_id=None, name="chat gpt-4o-mini",
...     attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
...                 "gen_ai.tool.name": "list_airports, book", "gen_ai.tool.call.id": "call_1, call_2",
...                 "gen_ai.tool.args": '{}, {"flight_id": "LX92"}'})
>>> [(c.name, c.args, c.call_id) for c in read_openlit(record).requested_tool_calls]
[('list_airports', {}, 'call_1'), ('book', {'flight_id': 'LX92'}, 'call_2')]
"""

from __future__ import annotations

import json
from typing import Any

from agenteval_otel import semconv as attr
from agenteval_otel.trajectory.conventions.genai_messages import requested_call
from agenteval_otel.trajectory.conventions.reading import ChatMessage, Markers, SpanReading, SpanRole
from agenteval_otel.trajectory.spans import SpanRecord

__all__ = ["MARKERS", "read_openlit"]

NAME = "openlit"
TOOL_ARGS = "gen_ai.tool.args"
_SEPARATOR = ", "
_DECODER = json.JSONDecoder()
MARKERS = Markers(frozenset({TOOL_ARGS}))


def _joined(value: Any) -> list[str]:
    return [] if not isinstance(value, str) or not value else value.split(_SEPARATOR)


def _joined_json(value: Any) -> list[str] | None:
    """The JSON texts OpenLIT joined with ", " (a plain split would cut inside them), or ``None``
    when the value is not such a list."""
    if not isinstance(value, str):
        return None
    texts: list[str] = []
    index = 0
    while index < len(value):
        try:
            _, end = _DECODER.raw_decode(value, index)
        except ValueError:
            return None
        texts.append(value[index:end])
        index = end + len(_SEPARATOR) if value.startswith(_SEPARATOR, end) else end
        if index == end and index < len(value):
            return None
    return texts


def read_openlit(record: SpanRecord) -> SpanReading | None:
    """The tool calls an OpenLIT model-call span asked for, when it captured no messages;
    ``None`` for any other span."""
    a = record.attributes
    if a.get(attr.GEN_AI_OPERATION_NAME) != attr.OP_CHAT or attr.GEN_AI_OUTPUT_MESSAGES in a:
        return None
    names = _joined(a.get(attr.GEN_AI_TOOL_NAME))
    ids = _joined(a.get(attr.GEN_AI_TOOL_CALL_ID))
    arguments: list[str] | list[None] | None = _joined_json(a.get(TOOL_ARGS))
    if not names:
        return None
    if len(ids) != len(names):
        ids = [""] * len(names)  # an empty id was left out of the join: which is which is unknown
    if arguments is None or len(arguments) != len(names):
        arguments = [None] * len(names)
    calls = tuple(requested_call(name, args, call_id) for name, args, call_id in zip(names, arguments, ids))
    return SpanReading(
        SpanRole.MODEL,
        str(a.get(attr.GEN_AI_RESPONSE_MODEL) or a.get(attr.GEN_AI_REQUEST_MODEL) or record.name),
        NAME,
        output_messages=(ChatMessage("assistant", None, calls),),
    )
