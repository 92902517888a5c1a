"""OpenLLMetry's CrewAI spans in the shapes the corpus (``tests/data/corpus/crewai_openllmetry``)
does not hold, built from the instrumentation's source: releases before 0.50 wrote no
``gen_ai.operation.name`` on the kickoff, agent and task spans (``gen_ai.system`` = ``crewai``
instead), and a task whose description wraps the user's text."""

from __future__ import annotations

import json
from typing import Any

from agenteval_otel.trajectory import StepType, build_trajectories
from agenteval_otel.trajectory.spans import SpanRecord
from tests.trajectory.conftest import SpanFactory

ANSWER = "Done. Booked LX92 Zürich → São Paulo on 2026-12-01, confirmation ZRH-GRU-LX92."


def _crew(make_span: SpanFactory, description: str, **kickoff: Any) -> tuple[SpanRecord, SpanRecord, SpanRecord]:
    crew = make_span("crewai.workflow", {
        "gen_ai.system": "crewai", "crewai.crew.id": "c1", "crewai.crew.result": ANSWER,
        "crewai.crew.tasks": json.dumps([{"description": "{request}", "agent": "Travel agent"}]), **kickoff},
        start=0, end=99_000)
    task = make_span(f"{description}.task", {
        "traceloop.span.kind": "task", "gen_ai.system": "crewai", "crewai.task.description": description,
        "crewai.task.agent": "Travel agent", "crewai.task.expected_output": "A short answer.",
        "traceloop.entity.output": ANSWER}, parent=crew, start=1, end=98_000)
    agent = make_span("Travel agent.agent", {
        "traceloop.span.kind": "agent", "gen_ai.system": "crewai", "crewai.agent.role": "Travel agent"},
        parent=task, start=2, end=97_000)
    return crew, task, agent


def _chat(make_span: SpanFactory, parent: SpanRecord, description: str) -> SpanRecord:
    prompt = f"\nCurrent Task: {description}\n\nThis is the expected criteria for your final answer: A short answer."
    return make_span("openai.chat", {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": prompt}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
            {"type": "tool_call", "id": "call_1", "name": "book", "arguments": {"flight_id": "LX92"}}]}])},
        parent=parent, start=3, end=10)


def test_an_older_crew_reads_to_the_task_the_user_gave_and_the_crew_s_answer(make_span: SpanFactory) -> None:
    request = "Book LX92, please."
    crew, task, agent = _crew(make_span, request)
    (trajectory,) = build_trajectories([crew, task, agent, _chat(make_span, agent, request)])
    assert (trajectory.user_input, trajectory.final_response) == (request, ANSWER)
    assert [(s.name, s.args) for s in trajectory.steps if s.step_type is StepType.TOOL] == [
        ("book", {"flight_id": "LX92"})]


def test_a_task_written_around_the_user_s_text_is_the_input_as_the_crew_was_given_it(make_span: SpanFactory) -> None:
    description = "Handle this travel request: Book LX92, please."
    crew, task, agent = _crew(make_span, description, **{"gen_ai.operation.name": "invoke_agent"})
    (trajectory,) = build_trajectories([crew, task, agent, _chat(make_span, agent, description)])
    assert trajectory.user_input == description
    assert not trajectory.user_input.startswith("\nCurrent Task")
