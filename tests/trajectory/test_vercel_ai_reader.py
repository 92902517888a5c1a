"""The Vercel AI SDK's ``ai.*`` spans in the shapes the corpus (``tests/data/corpus/vercel_ai_sdk4``,
``vercel_ai_sdk5``) does not hold, built from the SDK's source: a ``prompt`` instead of messages,
the typed tool outputs of AI SDK 5 and later, a tool that throws, AI SDK 7's runtime context,
``generateObject`` and the spans that are no steps."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agenteval_otel.trajectory import StepType, build_trajectories
from agenteval_otel.trajectory.conventions import SpanRole, read_span
from agenteval_otel.trajectory.conventions.vercel_ai import read_vercel_ai
from agenteval_otel.trajectory.spans import SpanEvent
from agenteval_otel.trajectory.usage import TokenUsage
from tests.trajectory.conftest import SpanFactory

LX92 = "Booked LX92 Zürich → São Paulo on 2026-12-01."


def _op(operation: str, **attributes: Any) -> dict[str, Any]:
    return {"operation.name": f"{operation} travel_agent", "ai.operationId": operation,
            "ai.telemetry.functionId": "travel_agent", **attributes}


def _tool_result(output: dict[str, Any]) -> dict[str, Any]:
    return {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "call_1", "toolName": "book",
                                         "output": output}]}


def test_an_ai_sdk_4_call_given_a_prompt_reads_to_its_tool_calls_input_and_answer(make_span: SpanFactory) -> None:
    root = make_span("ai.generateText", _op("ai.generateText", **{
        "ai.prompt": json.dumps({"system": "You are a travel agent.", "prompt": "Book LX92, please."}),
        "ai.response.text": LX92, "ai.settings.maxSteps": 5}), start=0, end=9000)
    asking = make_span("ai.generateText.doGenerate", _op("ai.generateText.doGenerate", **{
        "gen_ai.system": "openai.chat", "gen_ai.request.model": "gpt-4o-mini",
        "ai.prompt.messages": json.dumps([{"role": "user", "content": [{"type": "text", "text": "Book LX92, please."}]}]),
        "ai.response.toolCalls": json.dumps([{"toolCallType": "function", "toolCallId": "call_1", "toolName": "book",
                                              "args": '{"flight_id": "LX92"}'}]),
        "ai.usage.promptTokens": 50, "ai.usage.completionTokens": 10}), parent=root)
    tool = make_span("ai.toolCall", _op("ai.toolCall", **{
        "ai.toolCall.name": "book", "ai.toolCall.id": "call_1", "ai.toolCall.args": '{"flight_id":"LX92"}',
        "ai.toolCall.result": json.dumps(LX92)}), parent=root)
    answering = make_span("ai.generateText.doGenerate", _op("ai.generateText.doGenerate", **{
        "ai.response.text": LX92, "ai.response.finishReason": "stop"}), parent=root)

    (trajectory,) = build_trajectories([root, asking, tool, answering])

    (step,) = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
    assert (step.name, step.args, step.result, step.call_id) == ("book", {"flight_id": "LX92"}, LX92, "call_1")
    assert (trajectory.user_input, trajectory.final_response) == ("Book LX92, please.", LX92)
    assert trajectory.agent_name == "travel_agent"
    assert trajectory.usage.input_tokens == 50


@pytest.mark.parametrize(("output", "expected"), [
    ({"type": "json", "value": [{"code": "ZRH"}]}, [{"code": "ZRH"}]),
    ({"type": "text", "value": "64.4"}, "64.4"),
    ({"type": "error-text", "value": "unknown flight: LX99"}, "unknown flight: LX99"),
    ({"type": "error-json", "value": {"error": "unknown flight"}}, {"error": "unknown flight"}),
    ({"type": "content", "value": [{"type": "text", "text": LX92}]}, LX92),
    ({"type": "execution-denied", "reason": "not approved"}, "not approved"),
], ids=["json", "text", "error-text", "error-json", "content", "execution-denied"])
def test_the_typed_tool_outputs_of_ai_sdk_5_and_later_are_the_responses_sent(
    make_span: SpanFactory, output: dict[str, Any], expected: Any
) -> None:
    span = make_span("ai.streamText.doStream", _op("ai.streamText.doStream", **{
        "ai.prompt.messages": json.dumps([_tool_result(output)])}))

    reading = read_vercel_ai(span)

    assert reading is not None
    (response,) = reading.input_messages[0].tool_responses
    assert (response.call_id, response.name, response.response) == ("call_1", "book", expected)


def test_an_ai_sdk_4_tool_result_is_its_value(make_span: SpanFactory) -> None:
    message = {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "call_1", "toolName": "book",
                                            "result": "64.4"}]}
    span = make_span("ai.generateText.doGenerate", _op("ai.generateText.doGenerate", **{
        "ai.prompt.messages": json.dumps([message])}))

    reading = read_vercel_ai(span)

    assert reading is not None and reading.input_messages[0].tool_responses[0].response == "64.4"


def test_a_tool_that_throws_is_an_error_without_the_text_the_model_was_sent(make_span: SpanFactory) -> None:
    root = make_span("ai.generateText", _op("ai.generateText", **{
        "ai.prompt": json.dumps({"messages": [{"role": "user", "content": "Book LX99."}]}),
        "ai.response.text": "There is no LX99."}), start=0, end=9000)
    asking = make_span("ai.generateText.doGenerate", _op("ai.generateText.doGenerate", **{
        "ai.response.toolCalls": json.dumps([{"toolCallId": "call_1", "toolName": "book",
                                              "input": '{"flight_id":"LX99"}'}])}), parent=root)
    tool = make_span("ai.toolCall", _op("ai.toolCall", **{
        "ai.toolCall.name": "book", "ai.toolCall.id": "call_1", "ai.toolCall.args": '{"flight_id":"LX99"}'}),
        parent=root, status="error",
        events=(SpanEvent("exception", attributes={"exception.type": "ValueError",
                                                   "exception.message": "unknown flight: LX99"}),))
    answering = make_span("ai.generateText.doGenerate", _op("ai.generateText.doGenerate", **{
        "ai.prompt.messages": json.dumps([_tool_result({"type": "error-text", "value": "unknown flight: LX99"})]),
        "ai.response.text": "There is no LX99."}), parent=root)

    (trajectory,) = build_trajectories([root, asking, tool, answering])

    (step,) = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
    assert (step.args, step.result, step.error) == ({"flight_id": "LX99"}, None, "ValueError: unknown flight: LX99")


@pytest.mark.parametrize("key", ["ai.telemetry.metadata.sessionId", "ai.settings.context.sessionId",
                                 "ai.telemetry.metadata.conversationId"])
def test_a_session_in_telemetry_metadata_or_runtime_context_joins_the_calls(make_span: SpanFactory, key: str) -> None:
    spans = []
    for turn, (trace_id, prompt) in enumerate([("1" * 32, "Which flights go?"), ("2" * 32, "Book LX94.")]):
        spans.append(make_span("ai.streamText", _op("ai.streamText", **{
            key: "conversation-7", "ai.prompt": json.dumps({"messages": [{"role": "user", "content": prompt}]}),
            "ai.response.text": f"answer {turn}"}), trace_id=trace_id))

    (conversation,) = build_trajectories(spans, group="conversation")

    assert conversation.conversation_id == "conversation-7"
    assert [t.user_input for t in conversation.turns] == ["Which flights go?", "Book LX94."]


def test_generate_object_answers_with_its_object(make_span: SpanFactory) -> None:
    span = make_span("ai.generateObject", _op("ai.generateObject", **{
        "ai.prompt": json.dumps({"prompt": "Cheapest flight?"}), "ai.response.object": '{"flight_id":"LX92"}'}))

    (trajectory,) = build_trajectories([span])

    assert (trajectory.user_input, trajectory.final_response) == ("Cheapest flight?", '{"flight_id":"LX92"}')


def test_model_calls_are_read_from_the_sdk_keys_not_their_few_genai_keys(make_span: SpanFactory) -> None:
    tools = [json.dumps({"type": "function", "name": "book", "parameters": {
        "type": "object", "properties": {"flight_id": {"type": "string"}}}})]
    span = make_span("ai.streamText.doStream", _op("ai.streamText.doStream", **{
        "gen_ai.system": "openai.chat", "gen_ai.request.model": "gpt-4o-mini", "ai.response.model": "gpt-4o-mini",
        "ai.prompt.tools": tools, "ai.response.text": "Hello.", "ai.usage.inputTokens": 3,
        "ai.usage.outputTokens": 2}), events=(SpanEvent("ai.stream.firstChunk"),))

    reading = read_span(span)

    assert reading is not None and (reading.convention, reading.role) == ("vercel-ai", SpanRole.MODEL)
    assert [(d.name, d.parameters) for d in reading.tool_definitions] == [("book", ("flight_id",))]
    assert reading.output_messages[0].text == "Hello."
    assert reading.usage == TokenUsage(input_tokens=3, output_tokens=2)


def test_embeddings_are_no_run(make_span: SpanFactory) -> None:
    root = make_span("ai.embedMany", _op("ai.embedMany", **{"ai.values": ["Zürich"]}))
    call = make_span("ai.embedMany.doEmbed", _op("ai.embedMany.doEmbed"), parent=root)

    readings = [read_span(span) for span in (root, call)]
    assert [r.role if r else None for r in readings] == [SpanRole.IGNORED, SpanRole.IGNORED]
    assert build_trajectories([root, call]) == []
