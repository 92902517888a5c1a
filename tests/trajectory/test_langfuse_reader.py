"""The Langfuse reader on the shapes the corpus (langfuse 5, ``@observe`` + ``langfuse.openai``, and
the LangChain ``CallbackHandler``) does not hold, built from the SDK's source: streamed and
multi-choice replies, completions, the Responses API, legacy function calls, positional
``@observe`` arguments, v3/v4 trace-level input and output, unencoded metadata, LangChain's older
tool input and handled tool errors."""

from __future__ import annotations

import json
from typing import Any

from agenteval_otel.trajectory import StepType, build_trajectories
from agenteval_otel.trajectory.conventions import SpanRole, read_span
from agenteval_otel.trajectory.spans import SpanRecord, SpanStatus

TRACE = "a" * 32
ROOT = "b" * 16


def _span(name: str, kind: str, parent: str | None = ROOT, span_id: str = "c" * 16, start: int = 2,
          status: SpanStatus | None = None, **attributes: Any) -> SpanRecord:
    attrs = {"langfuse.observation.type": kind}
    for key, value in attributes.items():
        attrs["langfuse.observation." + key] = value if isinstance(value, str) else json.dumps(value)
    return SpanRecord(TRACE, span_id, parent, name, start_ns=start, end_ns=start + 1, attributes=attrs,
                      status=status or SpanStatus(), scope_name="langfuse-sdk")


def _model(output: Any, input: Any = None) -> Any:
    reading = read_span(_span("OpenAI-generation", "generation", input=input or [], output=output))
    assert reading is not None and reading.role is SpanRole.MODEL
    return reading


def test_a_streamed_reply_without_tool_calls_is_its_text() -> None:
    reading = _model("It is sunny.")
    assert [(m.role, m.text) for m in reading.output_messages] == [("assistant", "It is sunny.")]


def test_a_streamed_reply_with_tool_calls_has_no_content_key() -> None:
    reading = _model({"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "book", "arguments": '{"flight_id": "LX92"}'}}]})
    assert [(c.name, c.args, c.call_id) for c in reading.requested_tool_calls] == [
        ("book", {"flight_id": "LX92"}, "call_1")]


def test_several_choices_are_a_list_of_replies() -> None:
    reading = _model([{"role": "assistant", "content": "One."}, {"role": "assistant", "content": "Two."}])
    assert [m.text for m in reading.output_messages] == ["One.", "Two."]


def test_a_legacy_function_call_is_a_requested_call() -> None:
    reading = _model({"role": "assistant", "content": None,
                      "function_call": {"name": "list_airports", "arguments": "{}"}})
    assert [(c.name, c.args) for c in reading.requested_tool_calls] == [("list_airports", {})]


def test_a_completion_prompt_and_its_text() -> None:
    reading = _model("Paris.", input="The capital of France is")
    assert [(m.role, m.text) for m in reading.input_messages] == [("user", "The capital of France is")]
    assert reading.output_messages[0].text == "Paris."


def test_responses_api_items() -> None:
    reading = _model(
        [{"type": "reasoning", "summary": []},
         {"type": "function_call", "call_id": "call_2", "name": "book", "arguments": '{"flight_id": "LX94"}'}],
        input={"input": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "input_text", "text": "Book LX94."}]},
            {"type": "function_call", "call_id": "call_1", "name": "list_airports", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": '[{"code": "ZRH"}]'},
        ], "tools": [{"type": "function", "name": "book", "parameters": {"properties": {"flight_id": {}}}}]},
    )
    assert [(m.role, m.text) for m in reading.input_messages[:2]] == [("system", "Be brief."), ("user", "Book LX94.")]
    assert reading.input_messages[2].tool_calls[0].call_id == "call_1"
    assert [(r.call_id, r.response) for r in reading.input_messages[3].tool_responses] == [("call_1", [{"code": "ZRH"}])]
    assert [(c.name, c.args, c.call_id) for c in reading.requested_tool_calls] == [
        ("book", {"flight_id": "LX94"}, "call_2")]
    assert [(d.name, d.parameters) for d in reading.tool_definitions] == [("book", ("flight_id",))]


def test_a_responses_api_text_reply() -> None:
    reading = _model({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
                     input="Book LX94.")
    assert [(m.role, m.text) for m in reading.output_messages] == [("assistant", "Done.")]


def test_an_observed_generation_function() -> None:
    by_name = _model("Hi!", input={"args": [], "kwargs": {"messages": [{"role": "user", "content": "Hello"}],
                                                         "model": "m"}})
    by_position = _model("Hi!", input={"args": [[{"role": "user", "content": "Hello"}]], "kwargs": {}})
    for reading in (by_name, by_position):
        assert [(m.role, m.text) for m in reading.input_messages] == [("user", "Hello")]


def test_early_langchain_handlers_keep_the_calls_in_additional_kwargs() -> None:
    reading = _model({"role": "assistant", "content": "", "additional_kwargs": {"tool_calls": [
        {"id": "call_5", "type": "function", "function": {"name": "book", "arguments": '{"flight_id": "LX92"}'}}]}})
    assert [(c.name, c.args, c.call_id) for c in reading.requested_tool_calls] == [
        ("book", {"flight_id": "LX92"}, "call_5")]


def test_usage_of_every_key_set_and_a_failed_generation() -> None:
    span = _span("gen", "generation", output="x", usage_details={"input_tokens": 7, "output_tokens": 3},
                 level="ERROR", status_message="rate limited")
    reading = read_span(span)
    assert reading is not None and reading.usage is not None
    assert (reading.usage.input_tokens, reading.usage.output_tokens, reading.error) == (7, 3, "rate limited")


def _observe_trace(tool: SpanRecord) -> list[SpanRecord]:
    return [
        SpanRecord(TRACE, ROOT, None, "handle", start_ns=1, end_ns=9, attributes={
            "langfuse.observation.type": "span", "session.id": "s-1",
            "langfuse.trace.input": json.dumps({"question": "Book LX92."}), "langfuse.trace.output": "Booked."}),
        _span("OpenAI-generation", "generation", span_id="d" * 16, start=2, output={
            "role": "assistant", "content": None, "tool_calls": [
                {"id": "call_7", "type": "function", "function": {"name": "book", "arguments": '{"flight_id": "LX92"}'}}]}),
        tool,
    ]


def test_positional_observe_arguments_take_their_names_from_the_call_asked_for() -> None:
    tool = _span("book", "tool", span_id="e" * 16, start=4, input={"args": ["LX92"], "kwargs": {}}, output="Booked.")
    (trajectory,) = build_trajectories(_observe_trace(tool))
    (step,) = [s for s in trajectory.steps if s.step_type is StepType.TOOL]
    assert (step.name, step.args, step.result, step.call_id) == ("book", {"flight_id": "LX92"}, "Booked.", "call_7")


def test_a_root_span_with_trace_level_input_and_output_is_the_invocation() -> None:
    tool = _span("book", "tool", span_id="e" * 16, start=4, input={"args": [], "kwargs": {"flight_id": "LX92"}})
    (trajectory,) = build_trajectories(_observe_trace(tool))
    assert (trajectory.user_input, trajectory.final_response, trajectory.conversation_id) == (
        "Book LX92.", "Booked.", "s-1")


def test_an_older_langchain_tool_span_and_a_handled_tool_error() -> None:
    older = read_span(_span("search_flights", "tool", input="{'route': {'from': 'Zürich'}, 'dates': ['2026-12-01']}",
                            output="[]", **{"metadata.tool_call_id": "call_3"}))
    assert older is not None
    assert (older.args, older.result, older.call_id) == ({"route": {"from": "Zürich"}, "dates": ["2026-12-01"]},
                                                         [], "call_3")
    handled = read_span(_span("book", "tool", input={"flight_id": "LX99"}, output={
        "content": "Error: unknown flight: LX99", "type": "tool", "name": "book", "tool_call_id": "call_4",
        "status": "error"}))
    assert handled is not None
    assert (handled.call_id, handled.error) == ("call_4", "Error: unknown flight: LX99")


def test_a_failed_observed_tool_without_level_reads_its_status() -> None:
    reading = read_span(_span("book", "tool", status=SpanStatus("error", "unknown flight: LX99")))
    assert reading is not None and reading.error == "unknown flight: LX99"


def test_events_retrievers_and_inner_spans_are_not_steps_and_other_spans_are_not_ours() -> None:
    for kind in ("event", "retriever", "evaluator", "guardrail", "embedding", "span", "chain"):
        reading = read_span(_span("x", kind))
        assert reading is not None and reading.role is SpanRole.IGNORED, kind
    propagated_only = SpanRecord(TRACE, "f" * 16, ROOT, "x", attributes={"session.id": "s", "user.id": "u"})
    assert read_span(propagated_only) is None
