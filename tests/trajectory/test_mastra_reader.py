"""Mastra's AI tracing as ``@mastra/otel-exporter`` writes it, in the shapes the corpus run
(``tests/data/corpus/mastra_otel``) does not hold: what else ``agent.generate`` can be given,
workflows, and the older pairing where ``model_generation`` is the model call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agenteval_otel.trajectory import StepType, build_trajectories
from agenteval_otel.trajectory.conventions import SpanRole, read_span

QUESTION = "Which flights go from Zürich to São Paulo?"


def _agent_run(make_span, run_input: Any, output: Any = None, **extra: Any):
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "mastra.span.type": "agent_run",
        "gen_ai.agent.name": "travel_agent",
        "mastra.agent_run.input": run_input if isinstance(run_input, str) else json.dumps(run_input),
        **extra,
    }
    if output is not None:
        attributes["mastra.agent_run.output"] = json.dumps(output)
    return make_span("invoke_agent travel_agent", attributes)


@pytest.mark.parametrize(
    "run_input",
    [
        QUESTION,
        ["Hello", QUESTION],
        [{"role": "user", "content": QUESTION}],
        {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
        [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": QUESTION}]}],
        [{"id": "m1", "role": "user", "content": {"format": 2, "parts": [{"type": "text", "text": QUESTION}]}}],
        {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTION}]},
        {"messages": QUESTION},
    ],
    ids=["string", "strings", "messages", "one-message-parts", "ui-message", "stored-message", "v1-envelope",
         "v1-string"],
)
def test_the_user_text_of_every_input_an_agent_run_records(make_span, run_input: Any) -> None:
    reading = read_span(_agent_run(make_span, run_input, {"text": "LX92 and LX94.", "files": []}))
    assert (reading.role, reading.name, reading.input, reading.output) == (
        SpanRole.AGENT, "travel_agent", QUESTION, "LX92 and LX94.")


def test_resume_data_is_no_user_text_and_structured_output_no_answer_text(make_span) -> None:
    resumed = read_span(_agent_run(make_span, {"approved": True, "toolName": "book", "toolCallId": "call_1"},
                                   {"text": "Booked LX92.", "files": []}))
    structured = read_span(_agent_run(make_span, QUESTION, {"text": "", "object": {"flight": "LX92"}, "files": []}))
    assert (resumed.input, resumed.output) == (None, "Booked LX92.")
    assert (structured.input, structured.output) == (QUESTION, None)


def test_the_thread_id_is_the_conversation(make_span) -> None:
    reading = read_span(_agent_run(make_span, QUESTION, **{"mastra.metadata.threadId": "thread-7"}))
    assert reading.conversation_id == "thread-7"


def test_plumbing_spans_are_not_steps_but_an_older_model_generation_is_the_model_call(make_span) -> None:
    chunk = read_span(make_span("model_chunk travel_agent", {
        "gen_ai.operation.name": "model_chunk", "mastra.span.type": "model_chunk",
        "mastra.model_chunk.output": json.dumps({"text": "LX92"})}))
    loop = read_span(make_span("model_generation gpt-4o-mini", {
        "gen_ai.operation.name": "model_generation", "mastra.span.type": "model_generation",
        "mastra.model_generation.input": json.dumps({"messages": []})}))
    older = read_span(make_span("chat gpt-4o-mini", {
        "gen_ai.operation.name": "chat", "mastra.span.type": "model_generation", "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": QUESTION}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "LX92"}]}]),
    }))
    assert (chunk.role, loop.role, older.role) == (SpanRole.IGNORED, SpanRole.IGNORED, SpanRole.MODEL)
    assert older.input_messages[0].text == QUESTION


def test_a_workflow_run_with_its_steps_and_the_branch_taken(make_span) -> None:
    run = make_span("invoke_workflow trip", {
        "gen_ai.operation.name": "invoke_workflow", "mastra.span.type": "workflow_run",
        "mastra.workflow_run.input": json.dumps({"city": "Zürich"}),
        "mastra.workflow_run.output": json.dumps({"booked": "LX92"})})
    step = make_span("workflow step: 'search'", {
        "gen_ai.operation.name": "workflow_step", "mastra.span.type": "workflow_step",
        "mastra.workflow_step.step_id": "search", "mastra.workflow_step.input": json.dumps({"city": "Zürich"})},
        parent=run)
    branch = make_span("workflow conditional", {
        "gen_ai.operation.name": "workflow_conditional", "mastra.span.type": "workflow_conditional",
        "mastra.workflow_conditional.condition_count": 2,
        "mastra.workflow_conditional.selected_steps": json.dumps(["book"])}, parent=run)
    booked = make_span("workflow step: 'book'", {
        "gen_ai.operation.name": "workflow_step", "mastra.span.type": "workflow_step",
        "mastra.workflow_step.step_id": "book"}, parent=run)
    (trajectory,) = build_trajectories([run, step, branch, booked])
    assert [(s.step_type, s.name) for s in trajectory.steps] == [
        (StepType.NODE, "search"), (StepType.CONDITIONAL, "workflow conditional"), (StepType.NODE, "book")]
    assert trajectory.steps[1].result == "book"
    assert trajectory.agent_name == "trip"
