"""MLflow tracing's span shapes that the corpus (``tests/data/corpus/mlflow_tracing``) does not
hold, built as MLflow writes them: every attribute value JSON-encoded, content in
``mlflow.spanInputs`` / ``mlflow.spanOutputs``, the type in ``mlflow.spanType``."""

from __future__ import annotations

import json
from typing import Any

from agenteval_otel.trajectory import StepType, Trajectory, build_trajectories
from agenteval_otel.trajectory.conventions import SpanRole, read_span
from agenteval_otel.trajectory.conventions.mlflow import read_mlflow
from agenteval_otel.trajectory.spans import SpanEvent, SpanRecord, SpanStatus

TRACE = "a" * 32
ROOT = "1" * 16
OK = SpanStatus("ok")


def _span(span_id: str, name: str, span_type: str, inputs: Any = None, outputs: Any = None, *,
          parent: str | None = ROOT, start: int = 0, events: tuple[SpanEvent, ...] = (),
          status: SpanStatus = OK, **extra: Any) -> SpanRecord:
    attributes = {"mlflow.traceRequestId": json.dumps("tr-" + TRACE), "mlflow.spanType": json.dumps(span_type)}
    if inputs is not None:
        attributes["mlflow.spanInputs"] = json.dumps(inputs)
    if outputs is not None:
        attributes["mlflow.spanOutputs"] = json.dumps(outputs)
    attributes.update({key.replace("__", "."): json.dumps(value) for key, value in extra.items()})
    return SpanRecord(TRACE, span_id, None if span_id == ROOT else parent, name, start_ns=start, end_ns=start + 1,
                      attributes=attributes, events=events, status=status)


def _agent(*children: SpanRecord, span_type: str = "AGENT", inputs: Any = None, outputs: Any = None,
           **extra: Any) -> Trajectory:
    root = _span(ROOT, "run", span_type, {"question": "Flights to Rome?"} if inputs is None else inputs,
                 outputs, start=0, **extra)
    (trajectory,) = build_trajectories([root, *children])
    return trajectory


def _tools(trajectory: Trajectory) -> list[tuple[str, Any, str | None, Any, str | None]]:
    return [(s.name, s.args, s.call_id, s.result, s.error) for s in trajectory.steps if s.step_type is StepType.TOOL]


def test_a_responses_api_call_gives_its_function_calls_with_ids_and_its_answer() -> None:
    tool_call = {"arguments": '{"city": "Rome"}', "call_id": "call_r1", "name": "search", "type": "function_call",
                 "id": "fc_1", "status": "completed"}
    first = _span("2" * 16, "Responses", "CHAT_MODEL", {"model": "gpt-4o", "input": "Flights to Rome?"},
                  {"id": "resp_1", "output": [tool_call]}, start=1, mlflow__message__format="openai")
    tool = _span("3" * 16, "search", "TOOL", {"city": "Rome"}, ["AZ1"], start=2)
    answer = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
              "content": [{"type": "output_text", "text": "AZ1 flies to Rome.", "annotations": []}]}
    second = _span("4" * 16, "Responses", "CHAT_MODEL",
                   {"model": "gpt-4o", "input": [{"role": "user", "content": "Flights to Rome?"}, tool_call,
                                                 {"type": "function_call_output", "call_id": "call_r1",
                                                  "output": '["AZ1"]'}]},
                   {"id": "resp_2", "output": [answer]}, start=3, mlflow__chat__tokenUsage={
                       "input_tokens": 7, "output_tokens": 3, "total_tokens": 10})
    trajectory = _agent(first, tool, second, inputs={"question": "Flights to Rome?", "user": "u1"})
    assert _tools(trajectory) == [("search", {"city": "Rome"}, "call_r1", ["AZ1"], None)]
    assert (trajectory.user_input, trajectory.final_response) == ("Flights to Rome?", "AZ1 flies to Rome.")


def test_a_streamed_chat_call_gives_the_tool_calls_of_its_chunks_arguments_in_pieces() -> None:
    def chunk(index: int, delta: dict[str, Any]) -> SpanEvent:
        value = {"id": "c1", "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        return SpanEvent(f"mlflow.chunk.item.{index}", 0, {"mlflow.chunk.value": json.dumps(value)})

    events = (
        chunk(0, {"role": "assistant", "content": None}),
        chunk(1, {"tool_calls": [{"index": 0, "id": "call_s1", "type": "function",
                                  "function": {"name": "search", "arguments": ""}}]}),
        chunk(2, {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]}),
        chunk(3, {"tool_calls": [{"index": 0, "function": {"arguments": '"Rome"}'}}]}),
    )
    rebuilt = {"id": "c1", "object": "chat.completion", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "", "tool_calls": None}}]}
    model = _span("2" * 16, "Completions", "CHAT_MODEL", {"messages": [{"role": "user", "content": "Flights?"}],
                                                          "stream": True}, rebuilt, start=1, events=events)
    tool = _span("3" * 16, "search", "TOOL", {"city": "Rome"}, ["AZ1"], start=2)
    assert _tools(_agent(model, tool, outputs="AZ1.")) == [("search", {"city": "Rome"}, "call_s1", ["AZ1"], None)]


def test_a_legacy_completion_gives_its_text_as_the_answer() -> None:
    model = _span("2" * 16, "Completions", "LLM", {"model": "m", "prompt": "Flights to Rome?"},
                  {"id": "x", "object": "text_completion", "choices": [{"index": 0, "text": "AZ1."}]}, start=1)
    trajectory = _agent(model, span_type="CHAIN", inputs={"a": 1, "b": 2})
    assert (trajectory.user_input, trajectory.final_response) == ("Flights to Rome?", "AZ1.")


def test_a_root_traced_without_a_type_is_the_agent_and_its_one_text_argument_the_input() -> None:
    trajectory = _agent(span_type="UNKNOWN", inputs={"user_message": "Flights to Rome?"}, outputs="AZ1 it is.")
    assert (trajectory.user_input, trajectory.final_response) == ("Flights to Rome?", "AZ1 it is.")


def test_tool_arguments_are_unwrapped_from_args_and_kwargs_and_a_raised_error_is_the_steps_error() -> None:
    failed = SpanStatus("error", "ValueError: no such city")
    tools = (
        _span("2" * 16, "lookup", "TOOL", {"args": [], "kwargs": {"city": "Rome"}}, {"code": "FCO"}, start=1),
        _span("3" * 16, "book", "TOOL", {"flight_id": "XX"}, start=2, status=failed),
        _span("4" * 16, "ping", "TOOL", {}, start=3),
    )
    assert _tools(_agent(*tools, outputs="Done.")) == [
        ("lookup", {"city": "Rome"}, None, {"code": "FCO"}, None),
        ("book", {"flight_id": "XX"}, None, None, "ValueError: no such city"),
        ("ping", {}, None, None, None),
    ]


def test_plumbing_and_handoffs_are_not_tool_calls_and_untyped_nested_spans_are_left_to_other_readers() -> None:
    embed = _span("2" * 16, "embed", "EMBEDDING", {"input": "x"}, [0.1], start=1)
    handoff = _span("3" * 16, "Handoff", "CHAIN", {"from_agent": "Triage"}, {"to_agent": "Booker"}, start=2)
    named = _span("4" * 16, "execute_tool lookup", "UNKNOWN", {"city": "Rome"}, "FCO", start=3)
    helper = _span("5" * 16, "helper", "UNKNOWN", {"x": 1}, 2, start=4)
    assert [(r.role, r.name, r.convention) for r in map(read_span, (embed, handoff, named))] == [
        (SpanRole.IGNORED, "embed", "mlflow"), (SpanRole.HANDOFF, "Booker", "mlflow"),
        (SpanRole.TOOL, "lookup", "span-name"),
    ]
    assert read_span(helper) is None
    trajectory = _agent(embed, handoff, named, helper, outputs="Done.")
    assert [(s.step_type, s.name) for s in trajectory.steps] == [(StepType.TOOL, "lookup")]


def test_the_session_id_joins_turns_into_a_conversation() -> None:
    trajectory = _agent(outputs="Hi.", session__id="s-42")
    assert trajectory.conversation_id == "s-42"


def test_values_of_the_wrong_shape_read_to_nothing_rather_than_failing() -> None:
    odd = SpanRecord(TRACE, "2" * 16, ROOT, "Completions", start_ns=1, end_ns=2, attributes={
        "mlflow.spanType": '"CHAT_MODEL"', "mlflow.spanInputs": "{not json", "mlflow.spanOutputs": '{"choices": []}',
        "mlflow.chat.tokenUsage": "[1]", "mlflow.chat.tools": '"none"'},
        events=(SpanEvent("mlflow.chunk.item.0", 0, {"mlflow.chunk.value": '{"choices": [{"delta": [1]}]}'}),))
    typeless = SpanRecord(TRACE, "3" * 16, ROOT, "odd", start_ns=3, end_ns=4, attributes={"mlflow.spanType": "7"})
    reading = read_mlflow(odd)
    assert reading is not None and (reading.role, reading.input_messages, reading.output_messages, reading.usage,
                                    reading.tool_definitions) == (SpanRole.MODEL, (), (), None, ())
    assert read_mlflow(typeless) is None
