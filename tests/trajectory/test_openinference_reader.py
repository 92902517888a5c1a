"""Shapes of the OpenInference instrumentors for BeeAI and Haystack that the corpus runs do not
hold, built from the instrumentors' source."""

from __future__ import annotations

import json

import pytest

from agenteval_otel.trajectory import StepType, build_trajectories
from agenteval_otel.trajectory.conventions import SpanRole, read_span
from agenteval_otel.trajectory.conventions.values import object_repr_fields
from agenteval_otel.trajectory.spans import SpanEvent

USER = "ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='Book LX92, please.')], _name=None, _meta={})"
CALL = ("ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, _content=[ToolCall(tool_name='book', "
        "arguments={'flight_id': 'LX92'}, id='call_7', extra=None)], _name=None, _meta={'model': 'gpt-4o-mini'})")
FAILED = ("ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(result=\"Failed to invoke Tool `book`. "
          "Error: sold out\", origin=ToolCall(tool_name='book', arguments={'flight_id': 'LX92'}, id='call_7', "
          "extra=None), error=True)], _name=None, _meta={})")
ANSWER = ("ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, _content=[TextContent(text='LX92 is sold out.')], "
          "_name=None, _meta={})")


def _llm(make_span, parent, messages: list[str], replies: list[str]):
    """A Haystack generator span: the flattened messages hold the text only, as the instrumentor writes them."""
    return make_span("OpenAIChatGenerator.run", {
        "openinference.span.kind": "LLM",
        "input.value": json.dumps({"messages": messages, "tools": ["Tool(name='book', ...)"]}),
        "output.value": json.dumps({"replies": replies}),
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Book LX92, please.",
        "llm.token_count.prompt": 50,
    }, parent=parent)


def test_a_haystack_pipeline_reads_its_calls_from_the_messages_and_never_its_payload(make_span) -> None:
    """An Agent run inside a Pipeline: the root is the pipeline's CHAIN span, whose input and output
    are the pipeline payload full of reprs; the failed call is known only from the tool message."""
    root = make_span("Pipeline.run", {
        "openinference.span.kind": "CHAIN",
        "input.value": json.dumps({"data": {"agent": {"messages": [USER]}}, "include_outputs_from": None}),
        "output.value": json.dumps({"agent": {"messages": [USER, CALL, FAILED, ANSWER], "last_message": ANSWER}}),
    })
    agent = make_span("Agent.run", {"openinference.span.kind": "CHAIN", "input.value": "{}"}, parent=root)
    spans = [root, agent, _llm(make_span, agent, [USER], [CALL]), _llm(make_span, agent, [USER, CALL, FAILED], [ANSWER])]
    (trajectory,) = build_trajectories(spans)
    (step,) = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
    assert (step.name, step.args, step.call_id, step.result) == ("book", {"flight_id": "LX92"}, "call_7", None)
    assert step.error is not None and "sold out" in step.error
    assert (trajectory.user_input, trajectory.final_response) == ("Book LX92, please.", "LX92 is sold out.")


def test_a_payload_or_an_object_repr_is_never_the_input_or_the_answer(make_span) -> None:
    root = make_span("Pipeline.run", {
        "openinference.span.kind": "CHAIN",
        "input.value": json.dumps({"data": {"agent": {"messages": [USER]}}}),
        "output.value": "<haystack.core.pipeline.pipeline.Pipeline object at 0x7f3ac1d2e0d0>",
    })
    (trajectory,) = build_trajectories([root])
    assert (trajectory.user_input, trajectory.final_response) == (None, None)


def test_a_beeai_tool_input_envelope_is_unwrapped(make_span) -> None:
    reading = read_span(make_span("search_flights", {
        "openinference.span.kind": "TOOL", "tool.name": "search_flights",
        "input.value": json.dumps({"input": {"route": {"from": "ZRH"}, "dates": []}, "options": {"retry": 1}}),
        "output.value": "[]", "metadata.class_name": "FunctionTool",
    }))
    assert (reading.role, reading.args, reading.result) == (SpanRole.TOOL, {"route": {"from": "ZRH"}, "dates": []}, [])


def test_beeai_event_spans_and_its_final_answer_tool_are_not_steps(make_span) -> None:
    agent = make_span("RequirementAgent", {"openinference.span.kind": "AGENT", "input.value": '{"input": "Hi"}',
                                           "output.value": "Hello!", "metadata.class_name": "RequirementAgent"})
    spans = [
        agent,
        make_span("retry", {"openinference.span.kind": "TOOL", "input.value": '{"error": "x"}',
                            "metadata.path": "tool.custom.book.retry", "metadata.trace.run_id": "r1"}, parent=agent),
        make_span("final_answer", {"openinference.span.kind": "AGENT", "input.value": '{"delta": "Hello!"}',
                                   "metadata.path": "agent.requirement.final_answer"}, parent=agent),
        make_span("final_answer", {"openinference.span.kind": "TOOL", "tool.name": "final_answer",
                                   "input.value": '{"input": {"response": "Hello!"}, "options": null}',
                                   "output.value": "Message has been sent", "metadata.class_name": "FinalAnswerTool"},
                  parent=agent),
    ]
    (trajectory,) = build_trajectories(spans)
    assert [s for s in trajectory.steps if s.step_type is StepType.TOOL] == []
    assert (trajectory.user_input, trajectory.final_response) == ("Hi", "Hello!")


def test_a_failed_tool_span_is_a_failed_call_with_its_explained_error(make_span) -> None:
    reading = read_span(make_span("book", {
        "openinference.span.kind": "TOOL", "tool.name": "book",
        "input.value": '{"input": {"flight_id": "LX99"}, "options": null}',
        "output.value": "ToolError(beeai_framework.tools.errors): Tool Error\n  ValueError(builtins): unknown flight: LX99",
        "output.mime_type": "text/plain",
    }, status="error", events=(SpanEvent("exception", 1, {"exception.type": "ToolError",
                                                           "exception.message": "Tool Error"}),)))
    assert (reading.role, reading.args, reading.result) == (SpanRole.TOOL, {"flight_id": "LX99"}, None)
    assert reading.error is not None and "unknown flight: LX99" in reading.error


def test_a_beeai_tool_result_message_keeps_its_call_id_on_the_content_part(make_span) -> None:
    reading = read_span(make_span("OpenAIChatModel", {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "tool",
        "llm.input_messages.0.message.contents.0.message.tool_call_id": "call_3",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": '[{"code": "ZRH"}]',
    }))
    (response,) = reading.input_messages[0].tool_responses
    assert (response.call_id, response.response) == ("call_3", [{"code": "ZRH"}])


@pytest.mark.promise(16)
def test_a_recorded_repr_is_read_as_data_never_run() -> None:
    fields = object_repr_fields("ChatMessage(_role='user', _content=[__import__('os').system('exit 3')], _meta={})")
    assert fields == {"__type__": "ChatMessage", "_role": "user", "_content": [{"__type__": "system"}], "_meta": {}}
    assert object_repr_fields("ChatMessage(_role='user', _content=[") is None
