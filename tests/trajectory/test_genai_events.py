"""Messages recorded as events, in every form producers use."""

from __future__ import annotations

import json

from agenteval_otel.trajectory import build_trajectories
from agenteval_otel.trajectory.conventions.genai_events import event_messages, events_from_attribute
from agenteval_otel.trajectory.spans import SpanEvent, SpanRecord

CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}


def test_span_event_attributes() -> None:
    sent, received = event_messages([
        SpanEvent("gen_ai.system.message", 1, {"content": "Be brief."}),
        SpanEvent("gen_ai.user.message", 2, {"content": "Weather in Paris?"}),
        SpanEvent("gen_ai.assistant.message", 3, {"tool_calls": json.dumps([CALL])}),
        SpanEvent("gen_ai.tool.message", 4, {"content": '{"temp_c": 18}', "id": "call_1"}),
        SpanEvent("gen_ai.choice", 5, {"index": 0, "finish_reason": "stop", "message": '{"content": "18 C."}'}),
        SpanEvent("exception", 6, {"exception.message": "ignored"}),
    ])
    assert [m.role for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2].tool_calls[0].args == {"city": "Paris"}
    assert sent[3].tool_responses[0].call_id == "call_1" and sent[3].tool_responses[0].response == {"temp_c": 18}
    assert [(m.role, m.text) for m in received] == [("assistant", "18 C.")]


def test_event_content_as_one_json_attribute() -> None:
    sent, received = event_messages([
        SpanEvent("gen_ai.user.message", 1, {"gen_ai.event.content": '{"role": "user", "content": "Hi"}'}),
        SpanEvent("gen_ai.choice", 2, {"gen_ai.event.content": json.dumps(
            {"message": {"role": "assistant", "tool_calls": [CALL]}, "finish_reason": "tool_calls"})}),
    ])
    assert sent[0].text == "Hi" and received[0].tool_calls[0].name == "get_weather"


def test_the_oldest_prompt_and_completion_events() -> None:
    sent, received = event_messages([
        SpanEvent("gen_ai.content.prompt", 1, {"gen_ai.prompt": '[{"role": "user", "content": "Hi"}]'}),
        SpanEvent("gen_ai.content.completion", 2, {"gen_ai.completion": '[{"role": "assistant", "content": "Hello"}]'}),
    ])
    assert (sent[0].text, received[0].text) == ("Hi", "Hello")


def test_a_json_list_of_events_in_one_attribute() -> None:
    events = events_from_attribute(json.dumps([
        {"event.name": "gen_ai.user.message", "content": "Hi", "role": "user"},
        {"event.name": "gen_ai.choice", "message": {"role": "assistant", "content": "Hello"}},
        {"no": "name"},
    ]))
    assert [e.name for e in events] == ["gen_ai.user.message", "gen_ai.choice"]
    assert events_from_attribute("not json") == []


def test_a_model_span_with_events_and_no_operation_name_is_read() -> None:
    span = SpanRecord("a" * 32, "b" * 16, None, "openai.chat",
                      attributes={"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini",
                                  "events": json.dumps([
                                      {"event.name": "gen_ai.user.message", "content": "Hi"},
                                      {"event.name": "gen_ai.choice", "message": {"content": "Hello"}}])})
    trajectory = build_trajectories([span])[0]
    assert (trajectory.user_input, trajectory.final_response) == ("Hi", "Hello")
