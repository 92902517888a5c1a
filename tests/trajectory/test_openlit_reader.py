"""OpenLIT's spans in the shapes the corpus (``tests/data/corpus/openlit_crewai``) does not hold,
built from its source: message content not captured (the calls only in OpenLIT's own
``gen_ai.tool.*`` keys of the model-call span), CrewAI tools written with ``@tool`` (no tool span:
the failure only in the text CrewAI sends its model)."""

from __future__ import annotations

import json
from typing import Any

from agenteval_otel.trajectory import StepType, build_trajectories
from agenteval_otel.trajectory.conventions import read_span
from agenteval_otel.trajectory.spans import SpanRecord
from tests.trajectory.conftest import SpanFactory

ROUTE = {"from": "Zürich", "to": "São Paulo"}


def _chat(**attributes: Any) -> dict[str, Any]:
    return {"telemetry.sdk.name": "openlit", "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini", **attributes}


def _crew(make_span: SpanFactory, prompt: str, answer: str) -> tuple[SpanRecord, SpanRecord]:
    crew = make_span("invoke_workflow crew", {"gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": "crew",
                                              "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                                                  {"type": "text", "content": answer}]}])}, start=0, end=99_000)
    task = make_span("invoke_agent Travel agent", {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Travel agent",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": prompt}]}])},
        parent=crew, start=1, end=98_000)
    return crew, task


def test_without_content_the_calls_a_reply_asked_for_are_read_from_openlit_s_own_keys(
    make_span: SpanFactory,
) -> None:
    crew, task = _crew(make_span, "Airports and flights?", "Here they are.")
    asking = make_span("chat gpt-4o-mini", _chat(**{
        "gen_ai.tool.name": "list_airports, search_flights", "gen_ai.tool.call.id": "call_1, call_2",
        "gen_ai.tool.args": '{}, {"route": {"from": "Zürich", "to": "São Paulo"}, "dates": ["2026-12-01", "2026-12-03"]}',
        "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 10}), parent=task)
    answering = make_span("chat gpt-4o-mini", _chat(), parent=task)
    (trajectory,) = build_trajectories([crew, task, asking, answering])
    tools = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
    assert [(s.name, s.args, s.call_id) for s in tools] == [
        ("list_airports", {}, "call_1"),
        ("search_flights", {"route": ROUTE, "dates": ["2026-12-01", "2026-12-03"]}, "call_2"),
    ]
    reading = read_span(asking)
    assert reading is not None and reading.usage is not None and reading.usage.input_tokens == 50


def test_arguments_that_are_not_a_joined_json_list_leave_the_calls_without_arguments(make_span: SpanFactory) -> None:
    asking = make_span("chat gpt-4o-mini", _chat(**{
        "gen_ai.tool.name": "book, book", "gen_ai.tool.call.id": "call_1, call_2",
        "gen_ai.tool.args": '{"flight_id": "LX92"} {"flight_id": "LX94"}'}))
    reading = read_span(asking)
    assert reading is not None
    assert [(c.name, c.args, c.call_id) for c in reading.requested_tool_calls] == [
        ("book", None, "call_1"), ("book", None, "call_2")]
    captured = make_span("chat gpt-4o-mini", {**asking.attributes, "gen_ai.output.messages": json.dumps([
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_3", "name": "book",
                                         "arguments": {"flight_id": "LX94"}}]}])})
    reading = read_span(captured)  # captured messages outrank OpenLIT's own keys
    assert reading is not None and reading.convention == "genai"
    assert [(c.name, c.args) for c in reading.requested_tool_calls] == [("book", {"flight_id": "LX94"})]


def test_a_crewai_tool_without_a_span_fails_in_the_text_crewai_sends_its_model(make_span: SpanFactory) -> None:
    crew, task = _crew(make_span, "Book flight LX99.", "There is no flight LX99.")
    asking = make_span("chat gpt-4o-mini", _chat(**{"gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
        {"type": "tool_call", "id": "call_1", "name": "book", "arguments": {"flight_id": "LX99"}}]}])}), parent=task)
    answering = make_span("chat gpt-4o-mini", _chat(**{"gen_ai.input.messages": json.dumps([
        {"role": "user", "parts": [{"type": "text", "content": "\nCurrent Task: Book flight LX99."}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_1", "name": "book",
                                         "arguments": {"flight_id": "LX99"}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                                    "response": "Error executing tool: unknown flight: LX99"}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
            {"type": "text", "content": "There is no flight LX99."}]}])}), parent=task)
    (trajectory,) = build_trajectories([crew, task, asking, answering])
    (book,) = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
    assert (book.args, book.call_id, book.result) == ({"flight_id": "LX99"}, "call_1", None)
    assert book.error == "Error executing tool: unknown flight: LX99"
    assert (trajectory.user_input, trajectory.final_response) == ("Book flight LX99.", "There is no flight LX99.")
