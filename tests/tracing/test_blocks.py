"""``trace_step``: the same steps as ``with`` blocks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import INVALID_SPAN, StatusCode

from agenteval_otel.tracing import current_conversation_id, tool, trace_step


def test_blocks_record_what_the_decorators_record(spans: Any) -> None:
    with trace_step.agent("planner", input="plan a trip", conversation_id="c-1") as run:
        assert current_conversation_id() == "c-1"
        with trace_step.node("plan", input={"goal": "trip"}) as plan:
            with trace_step.message(model="m1") as reply:
                reply.set_result({"role": "assistant", "content": "Go to Oslo"})
            with trace_step.conditional("route", branches={True: "book", False: "end"}) as route:
                route.set_result(True)
            with trace_step.tool("search", arguments={"q": "Oslo", "password": "p"}, call_id="call_7") as search:
                search.span.set_attribute("custom", 1)
                search.set_result(["hotel"])
            plan.set_result({"done": True})
        run.set_result("Booked Oslo")

    names = {s.name: s for s in spans.all()}
    assert set(names) == {
        "invoke_agent planner",
        "invoke_node plan",
        "chat m1",
        "conditional route",
        "execute_tool search",
    }
    agent_span = names["invoke_agent planner"]
    assert agent_span.attributes["agenteval.agent.input"] == "plan a trip"
    assert agent_span.attributes["agenteval.agent.output"] == "Booked Oslo"
    assert agent_span.attributes["gen_ai.conversation.id"] == "c-1"
    assert names["invoke_node plan"].parent.span_id == agent_span.context.span_id
    assert names["invoke_node plan"].attributes["agenteval.node.input"] == '{"goal":"trip"}'
    assert names["invoke_node plan"].attributes["agenteval.node.output"] == '{"done":true}'
    assert names["chat m1"].attributes["agenteval.message.content"] == "Go to Oslo"
    assert names["chat m1"].attributes["gen_ai.conversation.id"] == "c-1"
    assert names["conditional route"].attributes["agenteval.conditional.branch"] == "book"
    search = names["execute_tool search"]
    assert search.parent.span_id == names["invoke_node plan"].context.span_id
    assert search.attributes["gen_ai.tool.call.id"] == "call_7"
    assert json.loads(search.attributes["gen_ai.tool.call.arguments"]) == {"q": "Oslo", "password": "[REDACTED]"}
    assert search.attributes["gen_ai.tool.call.result"] == '["hotel"]'
    assert search.attributes["custom"] == 1
    assert current_conversation_id() is None


def test_block_error_propagates_and_is_recorded(spans: Any) -> None:
    original = KeyError("missing")
    with pytest.raises(KeyError) as caught:
        with trace_step.node("fragile"):
            raise original
    assert caught.value is original
    span = spans.named("invoke_node fragile")
    assert span.attributes["error.type"] == "KeyError"
    assert span.status.status_code is StatusCode.ERROR


def test_a_decorated_tool_inside_a_block_is_its_child(spans: Any) -> None:
    @tool
    def lookup() -> int:
        return 1

    with trace_step.node("outer"):
        lookup()
    outer, inner = spans.named("invoke_node outer"), spans.named("execute_tool lookup")
    assert inner.parent.span_id == outer.context.span_id


def test_block_without_a_result_records_no_output(spans: Any) -> None:
    with trace_step.agent("quiet"):
        pass
    assert "agenteval.agent.output" not in spans.attributes("invoke_agent quiet")
    assert "agenteval.agent.input" not in spans.attributes("invoke_agent quiet")


def test_block_span_is_invalid_before_entering() -> None:
    assert trace_step.node("later").span is INVALID_SPAN
