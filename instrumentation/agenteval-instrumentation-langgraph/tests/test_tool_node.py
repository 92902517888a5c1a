"""ToolNode's tool calls as tool steps, with a fake chat model asking for them."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage
from opentelemetry.trace import StatusCode
from sample_graphs import broken_lookup, get_weather, tool_agent, tool_call

from agenteval_otel import semconv as attr


def _ask(city: str, *calls: dict[str, Any]) -> list[AIMessage]:
    return [AIMessage("", tool_calls=list(calls)), AIMessage(f"It is 18°C in {city}.")]


def test_each_tool_call_is_a_tool_step_with_arguments_call_id_and_result(captured: Any) -> None:
    graph = tool_agent(_ask("Paris", tool_call("get_weather", "call_1", city="Paris"),
                            tool_call("get_weather", "call_2", city="Tokyo")))
    output = graph.invoke({"messages": [("user", "Weather in Paris and Tokyo?")]},
                          {"configurable": {"thread_id": "t-1"}})

    assert output["messages"][-1].content == "It is 18°C in Paris."
    trajectory = captured.trajectory()
    calls = [(call.name, call.args, call.call_id, call.result) for call in trajectory.tool_calls()]
    assert sorted(calls, key=lambda call: str(call[2])) == [
        ("get_weather", {"city": "Paris"}, "call_1", {"city": "Paris", "celsius": 18}),
        ("get_weather", {"city": "Tokyo"}, "call_2", {"city": "Tokyo", "celsius": 18}),
    ]
    assert trajectory.node_order() == ["agent", "tools", "agent"]
    assert trajectory.branches() == [("tools_condition", "tools"), ("tools_condition", "__end__")]
    assert (trajectory.user_input, trajectory.final_response) == ("Weather in Paris and Tokyo?", "It is 18°C in Paris.")
    assert trajectory.conversation_id == "t-1"
    tools_node = captured.span("invoke_node tools").context.span_id
    assert all(span.parent is not None and span.parent.span_id == tools_node
               for span in captured.spans() if span.name == "execute_tool get_weather")


async def test_async_tool_calls(captured: Any) -> None:
    graph = tool_agent(_ask("Paris", tool_call("get_weather", "call_9", city="Paris")))
    await graph.ainvoke({"messages": [("user", "Weather in Paris?")]})

    (call,) = captured.trajectory().tool_calls()
    assert (call.name, call.args, call.call_id, call.result) == (
        "get_weather", {"city": "Paris"}, "call_9", {"city": "Paris", "celsius": 18})


def test_a_tool_error_handed_back_to_the_model_is_a_failed_tool_step(captured: Any) -> None:
    graph = tool_agent(_ask("Paris", tool_call("broken_lookup", "call_3", city="Paris")),
                       tools=[get_weather, broken_lookup], handle_tool_errors=True)
    output = graph.invoke({"messages": [("user", "Weather in Paris?")]})

    assert output["messages"][2].status == "error"  # ToolNode handled it; the run went on
    tool = captured.span("execute_tool broken_lookup")
    assert tool.status.status_code is StatusCode.ERROR
    assert tool.attributes[attr.ERROR_TYPE] == "ToolCallError"
    assert "no station in Paris" in (tool.status.description or "")
    (call,) = captured.trajectory().tool_calls()
    assert (call.name, call.args, call.call_id) == ("broken_lookup", {"city": "Paris"}, "call_3")


def test_an_unhandled_tool_error_propagates_unchanged(captured: Any) -> None:
    graph = tool_agent(_ask("Paris", tool_call("broken_lookup", "call_4", city="Paris")),
                       tools=[broken_lookup], handle_tool_errors=False)
    with pytest.raises(LookupError, match="no station in Paris"):
        graph.invoke({"messages": [("user", "Weather in Paris?")]})

    tool = captured.span("execute_tool broken_lookup")
    assert tool.attributes[attr.ERROR_TYPE] == "LookupError"
    assert tool.attributes[attr.GEN_AI_TOOL_CALL_ID] == "call_4"
