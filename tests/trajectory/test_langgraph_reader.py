"""LangGraph under OpenInference, in the shapes the corpus lacks: a tool's one string argument,
which OpenInference records as the bare string (``_convert_io`` drops the key of a one-key dict
of a string), gets its name back from what the trace holds where no model call names it; a graph
given its messages as ``("user", text)`` pairs has that text as its user input."""

from __future__ import annotations

import json
from typing import Any

from agenteval_otel.trajectory import SpanRecord, StepType, Trajectory, trajectories_from_trace


def _graph(make_span: Any) -> SpanRecord:
    return make_span("travel_agent", {"openinference.span.kind": "CHAIN", "input.value": "{}",
                                      "metadata": json.dumps({"ls_integration": "langgraph"})})


def _node(make_span: Any, name: str, given: Any, parent: SpanRecord) -> SpanRecord:
    metadata = {"ls_integration": "langgraph", "langgraph_step": 2, "langgraph_node": name}
    return make_span(name, {"openinference.span.kind": "CHAIN", "input.value": json.dumps(given),
                            "input.mime_type": "application/json", "metadata": json.dumps(metadata)},
                     parent=parent)


def _tool(make_span: Any, value: str, parent: SpanRecord, **attributes: Any) -> SpanRecord:
    return make_span("book", {"openinference.span.kind": "TOOL", "tool.name": "book", "input.value": value,
                              "tool.description": "Book a flight by its id.", **attributes}, parent=parent)


def _tool_steps(trajectory: Trajectory) -> list[tuple[dict[str, Any], str | None, Any]]:
    return [(s.args, s.call_id, s.metadata.get("raw_args"))
            for s in trajectory.steps if s.step_type is StepType.TOOL]


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def test_a_send_payload_names_the_argument_of_the_tool_run_in_its_node(make_span: Any) -> None:
    graph = _graph(make_span)
    spans = [graph]
    for flight, call_id in (("LX92", "call_1"), ("LX94", "call_2")):  # two Sends to one node, run in parallel
        node = _node(make_span, "run_tool", {"call": _call("book", {"flight_id": flight}, call_id)}, graph)
        spans += [node, _tool(make_span, flight, node)]
    (trajectory,) = trajectories_from_trace(spans)
    assert _tool_steps(trajectory) == [({"flight_id": "LX92"}, None, None), ({"flight_id": "LX94"}, None, None)]


def test_a_tool_node_names_the_argument_from_the_calls_in_its_input_messages(make_span: Any) -> None:
    graph = _graph(make_span)
    asking = {"type": "ai", "data": {"content": "", "tool_calls": [
        _call("search_flights", {"route": {"from": "Zürich", "to": "São Paulo"}, "dates": []}, "c1"),
        _call("book", {"flight_id": "LX94"}, "c2")]}}
    node = _node(make_span, "tools", {"messages": [{"type": "human", "data": {"content": "Book LX94"}}, asking]},
                 graph)
    (trajectory,) = trajectories_from_trace([graph, node, _tool(make_span, "LX94", node)])
    assert _tool_steps(trajectory) == [({"flight_id": "LX94"}, None, None)]


def test_a_state_field_names_the_argument_only_when_exactly_one_holds_it(make_span: Any) -> None:
    graph = _graph(make_span)
    one = _node(make_span, "fetch", {"request": "Book LX92 for me", "flight": "LX92", "reports": []}, graph)
    two = _node(make_span, "fetch", {"flight": "LX92", "previous": "LX92"}, graph)
    (trajectory,) = trajectories_from_trace(
        [graph, one, _tool(make_span, "LX92", one), two, _tool(make_span, "LX92", two)])
    assert _tool_steps(trajectory) == [({"flight": "LX92"}, None, None), ({}, None, "LX92")]


def test_a_bare_value_pairs_with_the_call_that_asked_for_it(make_span: Any) -> None:
    """Two parallel calls of one tool, the failing one first and without a call id: each is
    paired with the model's call of its own value, not the first call of its name."""
    graph = _graph(make_span)
    model = make_span("ChatOpenAI", {
        "openinference.span.kind": "LLM",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "book",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"flight_id": "LX92"}',
        "llm.output_messages.0.message.tool_calls.1.tool_call.id": "call_2",
        "llm.output_messages.0.message.tool_calls.1.tool_call.function.name": "book",
        "llm.output_messages.0.message.tool_calls.1.tool_call.function.arguments": '{"flight_id": "LX99"}',
    }, parent=graph)
    failed = make_span("book", {"openinference.span.kind": "TOOL", "tool.name": "book", "input.value": "LX99"},
                       parent=graph, status="error")
    booked = _tool(make_span, "LX92", graph)
    (trajectory,) = trajectories_from_trace([graph, model, failed, booked])
    assert _tool_steps(trajectory) == [({"flight_id": "LX99"}, "call_2", None),
                                       ({"flight_id": "LX92"}, "call_1", None)]


def test_a_graph_given_role_pairs_has_the_users_text_as_input(make_span: Any) -> None:
    graph = make_span("travel_agent", {
        "openinference.span.kind": "CHAIN", "metadata": json.dumps({"ls_integration": "langgraph"}),
        "input.value": json.dumps({"messages": [["user", "Book flight LX92, please."]]}, ensure_ascii=False),
        "output.value": json.dumps({"messages": [{"type": "ai", "data": {"content": "Booked LX92."}}]}),
    })
    (trajectory,) = trajectories_from_trace([graph])
    assert (trajectory.user_input, trajectory.final_response) == ("Book flight LX92, please.", "Booked LX92.")
