"""Logfire's spans of the OpenAI Agents SDK in the shapes the corpus runs do not hold, built as
``logfire/_internal/integrations/openai_agents.py`` writes them: a Responses API call, a tool
failure Logfire records with its exception, the ``str()`` of a result older versions record, a
handoff, and the turns of one SDK trace joined by its ``group_id``."""

from __future__ import annotations

import json

from agenteval_otel.trajectory import StepType, build_trajectories
from agenteval_otel.trajectory.conventions import SpanRole, read_span
from agenteval_otel.trajectory.spans import SpanEvent

TEMPLATE = "logfire.msg_template"
RESPONSE = {
    "id": "resp_1", "model": "gpt-4o-mini", "object": "response",
    "output": [{"type": "function_call", "call_id": "c1", "name": "book", "arguments": '{"flight_id": "LX92"}',
                "id": "fc_1", "status": "completed"},
               {"type": "function_call", "call_id": "c2", "name": "list_airports", "arguments": "{}",
                "id": "fc_2", "status": "completed"}],
}


def _responses_span(make_span, **attributes):
    return make_span("Responses API with {gen_ai.request.model!r}", {
        TEMPLATE: "Responses API with {gen_ai.request.model!r}", "gen_ai.operation.name": "chat",
        "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini",
        "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 10, **attributes})


def test_a_responses_call_reads_its_input_items_and_the_calls_it_asked_for(make_span) -> None:
    reading = read_span(_responses_span(make_span, response=json.dumps(RESPONSE), raw_input=json.dumps([
        {"role": "user", "content": "Book LX92."},
        {"type": "function_call", "call_id": "c0", "name": "search_flights", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c0", "output": '[{"flight_id": "LX92"}]'}])))
    assert reading.role is SpanRole.MODEL and reading.usage is not None
    assert [(m.role, m.text) for m in reading.input_messages][0] == ("user", "Book LX92.")
    assert reading.input_messages[2].tool_responses[0].response == [{"flight_id": "LX92"}]
    assert [(c.name, c.args, c.call_id) for c in reading.requested_tool_calls] == [
        ("book", {"flight_id": "LX92"}, "c1"), ("list_airports", {}, "c2")]


def test_a_responses_call_given_plain_text_and_answering_with_a_message(make_span) -> None:
    answer = {**RESPONSE, "output": [{"type": "message", "role": "assistant", "id": "m1", "status": "completed",
                                      "content": [{"type": "output_text", "text": "Booked.", "annotations": []}]}]}
    reading = read_span(_responses_span(make_span, response=json.dumps(answer), raw_input="Book LX92."))
    assert [(m.role, m.text) for m in (*reading.input_messages, *reading.output_messages)] == [
        ("user", "Book LX92."), ("assistant", "Booked.")]


def test_a_failure_logfire_recorded_with_its_exception_is_the_exception(make_span) -> None:
    reading = read_span(make_span("Function: {name}", {
        TEMPLATE: "Function: {name}", "name": "book", "input": '{"flight_id": "LX99"}',
        "output": "Error: unknown flight: LX99",
        "error": json.dumps({"message": "Error running tool (non-fatal)",
                             "data": {"tool_name": "book", "error": "unknown flight: LX99"}}),
        "logfire.json_schema": json.dumps({"type": "object", "properties": {"name": {}, "input": {}, "output": {},
                                                                            "error": {"type": "object"}}}),
    }, status="error", events=(SpanEvent("exception", 2, {"exception.type": "ValueError",
                                                         "exception.message": "unknown flight: LX99"}),)))
    assert (reading.role, reading.args, reading.error) == (
        SpanRole.TOOL, {"flight_id": "LX99"}, "ValueError: unknown flight: LX99")


def test_a_result_recorded_as_text_stays_text(make_span) -> None:
    """Older Logfire versions record the SDK's ``str()`` of the result: text, not JSON."""
    reading = read_span(make_span("Function: {name}", {
        TEMPLATE: "Function: {name}", "name": "list_airports", "input": "{}", "output": "[{'code': 'ZRH'}]",
        "logfire.json_schema": json.dumps({"type": "object", "properties": {"name": {}, "input": {}, "output": {}}}),
    }))
    assert (reading.role, reading.args, reading.result) == (SpanRole.TOOL, {}, "[{'code': 'ZRH'}]")


def test_a_handoff_is_not_a_tool_call(make_span) -> None:
    reading = read_span(make_span("Handoff: {from_agent} → {to_agent}", {
        TEMPLATE: "Handoff: {from_agent} → {to_agent}", "from_agent": "triage", "to_agent": "booking"}))
    assert (reading.role, reading.name) == (SpanRole.HANDOFF, "booking")


def test_the_turns_of_one_sdk_trace_are_one_conversation(make_span) -> None:
    root = make_span("OpenAI Agents trace: {name}", {TEMPLATE: "OpenAI Agents trace: {name}", "name": "Trip",
                                                    "group_id": "trip-1"}, start=0, end=10_000)
    spans = [root]
    for prompt, answer in (("Which flights?", "LX92 or LX94."), ("Book LX94.", "Booked LX94.")):
        agent = make_span("Agent run: {name!r}", {TEMPLATE: "Agent run: {name!r}", "name": "travel_agent"},
                          parent=root)
        chat = make_span("Chat completion with {gen_ai.request.model!r}", {
            TEMPLATE: "Chat completion with {gen_ai.request.model!r}", "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.system": "openai", "input": json.dumps([{"role": "user", "content": prompt}]),
            "output": json.dumps([{"role": "assistant", "content": answer}])}, parent=agent)
        spans += [agent, chat]
    (conversation,) = build_trajectories(spans, group="conversation")
    assert conversation.conversation_id == "trip-1"
    assert [(t.user_input, t.final_response) for t in conversation.turns] == [
        ("Which flights?", "LX92 or LX94."), ("Book LX94.", "Booked LX94.")]
    assert not [s for t in conversation.turns for s in t.steps if s.step_type is StepType.TOOL]
    (whole,) = build_trajectories(spans, group="trace")
    assert whole.conversation_id == "trip-1"
