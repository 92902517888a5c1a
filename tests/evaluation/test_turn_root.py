"""One agent span per evaluated turn: an agent decorated with ``@agent`` is the turn's root itself."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel import CriterionConfig, EvalConfig, EvalSet, EvalSetBuilder, ToolCall
from agenteval_otel import semconv as attr
from agenteval_otel.evaluation._agents import load_agent
from agenteval_otel.evaluation._live import evaluate
from agenteval_otel.tracing import agent, tool
from tests.conftest import REPO_ROOT

TOOLS = EvalConfig(criteria={"trajectory_match": CriterionConfig.trajectory(1.0)})


@tool
def lookup(key: int) -> int:
    return key * 2


@agent(name="doubler", conversation_id_arg="thread_id")
async def doubler(query: str, thread_id: str, history: list[dict[str, Any]]) -> str:
    await asyncio.sleep(0)
    return f"value {lookup(int(query.split()[-1]))}"


@agent(name="broken")
def broken(query: str) -> str:
    raise LookupError("no such key")


def _agent_spans(exported: InMemorySpanExporter) -> list[Any]:
    return [s for s in exported.get_finished_spans() if s.attributes.get(attr.STEP_TYPE) == attr.STEP_AGENT]


def test_the_quickstart_has_one_agent_span_per_turn_holding_the_verdicts(exported: InMemorySpanExporter) -> None:
    eval_set = EvalSet.load(REPO_ROOT / "examples" / "weather_agent.evalset.json")
    weather_agent = load_agent(f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent")
    report = evaluate(eval_set, weather_agent, EvalConfig.load(REPO_ROOT / "examples" / "weather_agent.config.json"))
    report.assert_passed()
    turns = [inv for case in report.results for inv in case.invocation_results]
    roots = _agent_spans(exported)
    assert len(roots) == len(turns) == 5
    for root in roots:
        assert root.parent is None and root.name == "invoke_agent weather-agent"
        assert root.attributes["agenteval.evaluation.trajectory_match.label"] == "pass"
        assert root.attributes[attr.AGENT_INPUT] in {inv.user_input for inv in turns}
        assert root.attributes[attr.GEN_AI_CONVERSATION_ID]
    assert {(inv.trace_id, inv.span_id) for inv in turns} == {
        (format(r.context.trace_id, "032x"), format(r.context.span_id, "016x")) for r in roots}


def test_an_async_agent_root_takes_the_turn_input_and_conversation(exported: InMemorySpanExporter) -> None:
    eval_set = (EvalSetBuilder("doubling").add_case(query="double 4", expected="value 8", case_id="four",
                                                    expected_tools=[ToolCall(name="lookup", args={"key": 4})])
                .build())
    evaluate(eval_set, doubler, TOOLS).assert_passed()
    (root,) = _agent_spans(exported)
    assert (root.name, root.attributes[attr.AGENT_INPUT], root.attributes[attr.AGENT_OUTPUT]) == (
        "invoke_agent doubler", "double 4", "value 8")
    tool_span = next(s for s in exported.get_finished_spans() if s.name == "execute_tool lookup")
    assert tool_span.parent.span_id == root.context.span_id
    assert root.end_time <= tool_span.end_time + 50_000_000  # ended when the agent returned, not at scoring

    def plain(query: str) -> str:  # not decorated: the turn's root is a step of the run's own
        return f"value {lookup(3)}"

    exported.clear()
    evaluate(EvalSetBuilder("plain").add_case(query="double 3", expected="value 6", case_id="three").build(),
             plain, TOOLS)
    (root,) = _agent_spans(exported)
    assert root.parent is None and root.attributes[attr.AGENT_INPUT] == "double 3"


@pytest.mark.promise(3, 12)
def test_a_decorated_agent_that_raises_has_one_failed_root(exported: InMemorySpanExporter) -> None:
    eval_set = EvalSetBuilder("broken").add_case(query="anything", expected="-", case_id="one").build()
    report = evaluate(eval_set, broken, TOOLS)
    assert report.results[0].error is not None and "no such key" in report.results[0].error
    (root,) = _agent_spans(exported)
    assert (root.name, root.attributes[attr.ERROR_TYPE]) == ("invoke_agent broken", "LookupError")
