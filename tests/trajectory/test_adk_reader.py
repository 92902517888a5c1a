"""Google ADK's own ``gcp.vertex.agent.*`` telemetry in the shapes the corpus run
(``tests/data/corpus/adk_vertex_legacy``, ADK 1.0) does not hold: a tool that raised (ADK 1.0
ends the run), the documented error dict, and ADK 1.2+'s single ``execute_tool`` span."""

from __future__ import annotations

import json
from typing import Any

from agenteval_otel.trajectory import StepType, build_trajectories
from agenteval_otel.trajectory.conventions import SpanRole, read_span
from agenteval_otel.trajectory.spans import SpanRecord, SpanStatus

ARGS = {"flight_id": "LX99"}


def _response_event(call_id: str, name: str, response: dict[str, Any]) -> str:
    """``tool_response`` as ADK 1.0 writes it: the whole function-response event."""
    return json.dumps({
        "content": {"role": "user", "parts": [{"function_response": {"id": call_id, "name": name,
                                                                      "response": response}}]},
        "invocation_id": "e-1", "author": "travel_agent", "actions": {"state_delta": {}}, "id": "ev1",
    })


def _llm(make_span, parent: SpanRecord, contents: list[dict[str, Any]], reply: dict[str, Any]) -> SpanRecord:
    return make_span("call_llm", {
        "gen_ai.system": "gcp.vertex.agent", "gen_ai.request.model": "openai/gpt-4o-mini",
        "gcp.vertex.agent.session_id": "s-1",
        "gcp.vertex.agent.llm_request": json.dumps({"model": "openai/gpt-4o-mini", "config": {},
                                                     "contents": contents}),
        "gcp.vertex.agent.llm_response": json.dumps({"content": reply}),
    }, parent=parent)


def test_a_tool_that_raised_is_its_argument_span_with_the_error(make_span) -> None:
    """ADK 1.0: the exception ends the run inside ``tool_call [book]``; no response span follows."""
    root = make_span("agent_run [travel_agent]")
    user = {"role": "user", "parts": [{"text": "Book LX99."}]}
    asked = {"role": "model", "parts": [{"function_call": {"id": "call_1", "name": "book", "args": ARGS}}]}
    llm = _llm(make_span, root, [user], asked)
    failed = SpanRecord(trace_id=root.trace_id, span_id="f" * 16, parent_id=llm.span_id, name="tool_call [book]",
                        start_ns=9000, end_ns=9500, status=SpanStatus("error", "ValueError: unknown flight: LX99"),
                        attributes={"gen_ai.system": "gcp.vertex.agent",
                                    "gcp.vertex.agent.tool_call_args": json.dumps(ARGS)})
    (trajectory,) = build_trajectories([root, llm, failed])
    (step,) = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
    assert (step.name, step.args, step.call_id) == ("book", ARGS, "call_1")
    assert step.error is not None and "unknown flight: LX99" in step.error
    assert (trajectory.user_input, trajectory.conversation_id) == ("Book LX99.", "s-1")


def test_the_documented_error_dict_is_the_step_error(make_span) -> None:
    reading = read_span(make_span("tool_response [book]", {
        "gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.llm_request": "{}",
        "gcp.vertex.agent.tool_response": _response_event(
            "call_1", "book", {"status": "error", "error_message": "unknown flight: LX99"}),
    }))
    assert (reading.role, reading.name, reading.call_id, reading.result, reading.error) == (
        SpanRole.TOOL, "book", "call_1", None, "unknown flight: LX99")


def test_a_response_dict_is_kept_whole(make_span) -> None:
    found = {"status": "success", "flights": ["LX92"]}
    reading = read_span(make_span("tool_response [search_flights]", {
        "gcp.vertex.agent.tool_response": _response_event("call_2", "search_flights", found)}))
    assert (reading.result, reading.error) == (found, None)


def test_adk_1_2_execute_tool_span_unwraps_result_and_reads_the_error_dict(make_span) -> None:
    def execute(response: dict[str, Any]) -> Any:
        return read_span(make_span("execute_tool book", {
            "gen_ai.system": "gcp.vertex.agent", "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "book", "gen_ai.tool.call.id": "call_3",
            "gcp.vertex.agent.tool_call_args": json.dumps(ARGS),
            "gcp.vertex.agent.tool_response": json.dumps(response),
            "gcp.vertex.agent.llm_request": "{}", "gcp.vertex.agent.llm_response": "{}",
        }))

    booked = execute({"result": "Booked LX92."})
    failed = execute({"error": "unknown flight: LX99"})
    assert (booked.name, booked.args, booked.result, booked.error) == ("book", ARGS, "Booked LX92.", None)
    assert (failed.result, failed.error) == (None, "unknown flight: LX99")


def test_adk_1_0_spans_are_one_step_per_call_named_by_the_tool(make_span) -> None:
    root = make_span("agent_run [travel_agent]")
    user = {"role": "user", "parts": [{"text": "Book LX92."}]}
    asked = {"role": "model", "parts": [{"function_call": {"id": "call_4", "name": "book", "args": {"flight_id": "LX92"}}}]}
    llm = _llm(make_span, root, [user], asked)
    call = make_span("tool_call [book]", {"gen_ai.system": "gcp.vertex.agent",
                                          "gcp.vertex.agent.tool_call_args": json.dumps({"flight_id": "LX92"})},
                     parent=llm)
    response = make_span("tool_response [book]", {
        "gen_ai.system": "gcp.vertex.agent", "gcp.vertex.agent.llm_request": "{}",
        "gcp.vertex.agent.tool_response": _response_event("call_4", "book", {"result": "Booked LX92."})}, parent=llm)
    answer = _llm(make_span, root, [user, asked], {"role": "model", "parts": [{"text": "Done: Booked LX92."}]})
    (trajectory,) = build_trajectories([root, llm, call, response, answer])
    tools = [(s.name, s.args, s.result, s.call_id) for s in trajectory.steps if s.step_type is StepType.TOOL]
    assert tools == [("book", {"flight_id": "LX92"}, "Booked LX92.", "call_4")]
    assert trajectory.final_response == "Done: Booked LX92."
