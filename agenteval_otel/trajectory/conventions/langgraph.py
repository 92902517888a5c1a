"""Reader for LangGraph graphs as traced by the OpenInference and OpenLLMetry LangChain
instrumentations.

LangGraph passes ``langgraph_node`` (and ``langgraph_step``) in the run metadata of every
runnable inside a node. OpenInference records that metadata as the ``metadata`` JSON attribute,
OpenLLMetry inside ``traceloop.entity.input`` (and as ``traceloop.association.properties.*``).
A span named like its ``langgraph_node`` is the node itself. A conditional edge's router runs as a
chain child of the node it leaves and returns the branch taken (a node name, ``__end__``, a
list of names for a fan-out, or ``Send`` objects); such a reading only holds as a direct child
of that node, which trace assembly checks. The graph run itself carries LangGraph's
``ls_integration`` metadata without a node: it is the agent invocation, wherever it sits in the
trace.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agenteval_otel.trajectory.conventions.openllmetry import entity_value
from agenteval_otel.trajectory.conventions.reading import Markers, SpanReading, SpanRole
from agenteval_otel.trajectory.conventions.values import decode_json
from agenteval_otel.trajectory.spans import SpanRecord

__all__ = ["MARKERS", "branch_taken", "read_langgraph"]

NAME = "langgraph"

OPENINFERENCE_METADATA = "metadata"
OPENINFERENCE_KIND = "openinference.span.kind"
OPENINFERENCE_INPUT = "input.value"
OPENINFERENCE_OUTPUT = "output.value"
TRACELOOP_KIND = "traceloop.span.kind"
TRACELOOP_ENTITY_NAME = "traceloop.entity.name"
TRACELOOP_INPUT = "traceloop.entity.input"
TRACELOOP_OUTPUT = "traceloop.entity.output"
TRACELOOP_ASSOCIATION = "traceloop.association.properties."
LANGGRAPH_NODE = "langgraph_node"
LANGGRAPH_STEP = "langgraph_step"

_NOT_GRAPH_PARTS = frozenset({"LLM", "TOOL", "RETRIEVER", "EMBEDDING", "RERANKER", "tool"})
_CHAIN_KINDS = frozenset({"CHAIN", "task"})
_SEND = re.compile(r"Send\(node='([^']+)'")
_MAX_BRANCH_LENGTH = 200
MARKERS = Markers(frozenset({OPENINFERENCE_METADATA, TRACELOOP_INPUT, TRACELOOP_ASSOCIATION + LANGGRAPH_NODE}))


def _metadata(a: Mapping[str, Any]) -> Mapping[str, Any] | None:
    metadata = decode_json(a.get(OPENINFERENCE_METADATA))
    if isinstance(metadata, dict) and LANGGRAPH_NODE in metadata:
        return metadata
    entity = decode_json(a.get(TRACELOOP_INPUT))
    if isinstance(entity, dict):
        metadata = entity.get("metadata")
        if isinstance(metadata, dict) and LANGGRAPH_NODE in metadata:
            return metadata
    node = a.get(TRACELOOP_ASSOCIATION + LANGGRAPH_NODE)
    if node is not None:
        return {LANGGRAPH_NODE: node, LANGGRAPH_STEP: a.get(TRACELOOP_ASSOCIATION + LANGGRAPH_STEP)}
    return None


def _branch_name(item: Any) -> str | None:
    if isinstance(item, dict) and isinstance(item.get("node"), str):
        return str(item["node"])
    if isinstance(item, str):
        match = _SEND.match(item)
        return match.group(1) if match else item
    return None


def branch_taken(output: Any) -> str | list[str] | None:
    """The branch a router returned: a name, or a list of names for a fan-out; ``None`` when the
    output does not look like a branch (an object, a long or multi-line text)."""
    decoded = decode_json(output)
    if isinstance(decoded, list):
        names = [_branch_name(item) for item in decoded]
        return None if not names or None in names else [str(name) for name in names]
    if isinstance(decoded, dict):
        return _branch_name(decoded)
    if isinstance(decoded, bool):
        return str(decoded).lower()
    if isinstance(decoded, str):
        text = decoded.strip()
        if text and len(text) <= _MAX_BRANCH_LENGTH and "\n" not in text:
            return _branch_name(text)
    return None


def _graph_run(record: SpanRecord) -> SpanReading | None:
    metadata = decode_json(record.attributes.get(OPENINFERENCE_METADATA))
    if not isinstance(metadata, dict) or metadata.get("ls_integration") != "langgraph":
        return None
    a = record.attributes
    return SpanReading(
        SpanRole.AGENT,
        record.name,
        NAME,
        input=a.get(OPENINFERENCE_INPUT),
        output=a.get(OPENINFERENCE_OUTPUT),
    )


def read_langgraph(record: SpanRecord) -> SpanReading | None:
    """Read a LangGraph graph run, node or router span; ``None`` for any other."""
    a = record.attributes
    metadata = _metadata(a)
    if metadata is None:
        return _graph_run(record)
    kind = a.get(OPENINFERENCE_KIND) or a.get(TRACELOOP_KIND)
    if kind in _NOT_GRAPH_PARTS:
        return None
    node = str(metadata[LANGGRAPH_NODE])
    traceloop = TRACELOOP_ENTITY_NAME in a
    label = str(a[TRACELOOP_ENTITY_NAME]) if traceloop else record.name
    output = entity_value(a.get(TRACELOOP_OUTPUT)) if traceloop else a.get(OPENINFERENCE_OUTPUT)
    step = metadata.get(LANGGRAPH_STEP)
    if label == node:
        return SpanReading(
            SpanRole.NODE,
            node,
            NAME,
            input=entity_value(a.get(TRACELOOP_INPUT)) if traceloop else a.get(OPENINFERENCE_INPUT),
            output=output,
            error=record.error,
            metadata=(() if step is None else (("langgraph_step", step),)),
        )
    if kind in _CHAIN_KINDS and (branch := branch_taken(output)) is not None:
        return SpanReading(SpanRole.CONDITIONAL, label, NAME, branch=branch, source_node=node)
    return None
