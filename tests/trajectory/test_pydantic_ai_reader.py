"""pydantic-ai's older instrumentation data format (version 1, still what ``event_mode='logs'``
selects; version 2 shares its span names and tool keys), in the shapes the corpus run does not
hold: spans written before pydantic-ai named their operation, a retry prompt that raised nothing
on the span, a tool span without content, and output-function spans, which are not tool calls."""

from __future__ import annotations

import json
from dataclasses import replace

from agenteval_otel.trajectory import StepType, build_trajectories
from agenteval_otel.trajectory.conventions import SpanRole, read_span
from agenteval_otel.trajectory.spans import SpanRecord

EVENTS = json.dumps([
    {"role": "system", "content": "You book flights.", "gen_ai.message.index": 0, "event.name": "gen_ai.system.message"},
    {"content": "Book LX99.", "role": "user", "gen_ai.message.index": 0, "event.name": "gen_ai.user.message"},
    {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "book", "arguments": '{"flight_id": "LX99"}'}}], "gen_ai.message.index": 1,
     "event.name": "gen_ai.assistant.message"},
    {"content": "unknown flight: LX99\n\nFix the errors and try again.", "role": "tool", "id": "c1", "name": "book",
     "gen_ai.message.index": 2, "event.name": "gen_ai.tool.message"},
    {"role": "assistant", "content": "There is no LX99.", "gen_ai.message.index": 3,
     "event.name": "gen_ai.assistant.message"},
])


def _old_run(make_span) -> list[SpanRecord]:
    """A run as pydantic-ai 0.x and 1.0 wrote it: no ``gen_ai.operation.name`` on the agent and
    tool spans, a retry prompt returned (not raised) as the tool's response."""
    agent = make_span("agent run", {"model_name": "gpt-4o-mini", "agent_name": "travel_agent",
                                    "logfire.msg": "travel_agent run", "all_messages_events": EVENTS,
                                    "final_result": "There is no LX99."})
    chat = make_span("chat gpt-4o-mini", {"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
                                          "gen_ai.request.model": "gpt-4o-mini"}, parent=agent)
    tool = make_span("running tool", {"gen_ai.tool.name": "book", "gen_ai.tool.call.id": "c1",
                                      "tool_arguments": '{"flight_id": "LX99"}', "logfire.msg": "running tool: book",
                                      "tool_response": "unknown flight: LX99\n\nFix the errors and try again."},
                     parent=agent)
    return [agent, chat, replace(tool, scope_name="pydantic-ai")]


def test_spans_without_an_operation_name_read_as_the_run_and_its_tool(make_span) -> None:
    (trajectory,) = build_trajectories(_old_run(make_span))
    (step,) = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
    assert (trajectory.agent_name, trajectory.user_input, trajectory.final_response) == (
        "travel_agent", "Book LX99.", "There is no LX99.")
    assert (step.name, step.args, step.call_id) == ("book", {"flight_id": "LX99"}, "c1")
    assert read_span(make_span("agent run", {"service": "x"})) is None  # not every span of that name


def test_a_retry_prompt_returned_without_an_error_is_the_tool_error(make_span) -> None:
    record = make_span("running tool", {"gen_ai.tool.name": "book", "gen_ai.tool.call.id": "c1",
                                        "tool_arguments": '{"flight_id": "LX99"}',
                                        "tool_response": "unknown flight: LX99\n\nFix the errors and try again."})
    reading = read_span(replace(record, scope_name="pydantic-ai"))
    assert (reading.role, reading.error) == (SpanRole.TOOL, "unknown flight: LX99")
    assert read_span(record).error is None  # another producer's text is not taken for pydantic-ai's


def test_a_tool_span_without_content_still_names_its_call(make_span) -> None:
    reading = read_span(make_span("running tool", {"gen_ai.tool.name": "list_airports", "gen_ai.tool.call.id": "c2",
                                                   "logfire.msg": "running tool: list_airports"}))
    assert (reading.role, reading.name, reading.call_id, reading.args) == (SpanRole.TOOL, "list_airports", "c2", None)


def test_the_first_format_records_arguments_without_a_response(make_span) -> None:
    reading = read_span(make_span("running tool", {"gen_ai.tool.name": "book", "gen_ai.tool.call.id": "c3",
                                                   "tool_arguments": '{"flight_id": "LX92"}'}))
    assert (reading.role, reading.args, reading.result) == (SpanRole.TOOL, {"flight_id": "LX92"}, None)


def test_output_function_spans_are_not_tool_calls(make_span) -> None:
    old = read_span(make_span("running output function", {"gen_ai.tool.name": "final_result",
                                                           "tool_arguments": '{"answer": 1}'}))
    new = read_span(make_span("execute_tool final_result", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "final_result",
        "gen_ai.tool.call.arguments": '{"answer": 1}', "logfire.msg": "running output function: final_result"}))
    assert (old.role, new.role) == (SpanRole.IGNORED, SpanRole.IGNORED)

