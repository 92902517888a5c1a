"""Graph runs, nodes, conditional edges and subgraphs of the real ``langgraph``, read back through
our converter."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from opentelemetry.trace import StatusCode
from sample_graphs import async_router_graph, fan_out_graph, nested_graph, router_graph

from agenteval_otel import semconv as attr

THREAD = {"configurable": {"thread_id": "thread-7"}}


def test_a_graph_run_is_an_agent_step_with_its_nodes_and_the_branch_taken(captured: Any) -> None:
    output = router_graph().invoke({"question": "Weather today?", "answer": "", "log": []}, THREAD)

    assert output["log"] == ["classify", "weather"]
    trajectory = captured.trajectory()
    assert trajectory.agent_name == "router"
    assert trajectory.conversation_id == "thread-7"
    assert (trajectory.user_input, trajectory.final_response) == ("Weather today?", "It is sunny.")
    assert trajectory.node_order() == ["classify", "weather"]
    assert trajectory.branches() == [("is_weather", "weather")]
    conditional = captured.span("conditional is_weather").attributes
    assert conditional[attr.CONDITION_VALUE] is True  # the routing function's own value
    node = captured.span("invoke_node weather").attributes
    assert node[attr.NODE_OUTPUT] == '{"answer":"It is sunny.","log":["weather"]}'
    assert [span.name for span in captured.spans() if span.name.startswith("invoke_node")] == [
        "invoke_node classify", "invoke_node weather"]  # no step for LangGraph's __start__ writer


def test_the_other_branch(captured: Any) -> None:
    router_graph().invoke({"question": "Hi there", "answer": "", "log": []})

    trajectory = captured.trajectory()
    assert trajectory.node_order() == ["classify", "smalltalk"]
    assert trajectory.branches() == [("is_weather", "smalltalk")]
    assert trajectory.conversation_id is None


def test_a_fan_out_is_recorded_as_the_list_of_nodes(captured: Any) -> None:
    output = fan_out_graph().invoke({"cities": ["Paris", "Tokyo"], "reports": []})

    assert sorted(output["reports"]) == ["Paris: sunny", "Tokyo: sunny"]
    trajectory = captured.trajectory()
    assert trajectory.branches() == [("fan_out", ["report", "report"])]
    assert trajectory.node_order() == ["plan", "report", "report"]
    assert trajectory.final_response is None  # a state with no response in it is not one
    assert attr.AGENT_OUTPUT not in captured.span("invoke_agent cities").attributes


async def test_async_nodes_and_ainvoke(captured: Any) -> None:
    graph = async_router_graph()
    outputs = await asyncio.gather(
        graph.ainvoke({"question": "Weather?", "answer": "", "log": []}, {"configurable": {"thread_id": "a"}}),
        graph.ainvoke({"question": "Hello", "answer": "", "log": []}, {"configurable": {"thread_id": "b"}}),
    )

    assert [output["answer"] for output in outputs] == ["It is sunny.", "Hello!"]
    by_thread = {t.conversation_id: t for t in captured.trajectories()}
    assert by_thread["a"].node_order() == ["classify", "weather"]  # concurrent runs never mix
    assert by_thread["b"].node_order() == ["classify", "smalltalk"]
    assert by_thread["b"].branches() == [("is_weather", "smalltalk")]


def test_a_subgraph_run_nests_inside_its_node(captured: Any) -> None:
    output = nested_graph().invoke({"messages": [HumanMessage("Go")]}, THREAD)

    assert output["messages"][-1].content == "All done."
    trajectory = captured.trajectory()  # one invocation: the subgraph is part of it
    assert trajectory.node_order() == ["prepare", "inner", "step_up", "finish"]
    assert trajectory.user_input == "Go"
    assert trajectory.final_response == "All done."
    inner_run = captured.span("invoke_agent inner")
    assert inner_run.parent is not None
    assert inner_run.parent.span_id == captured.span("invoke_node inner").context.span_id
    step_up = captured.span("invoke_node step_up")
    assert step_up.parent is not None and step_up.parent.span_id == inner_run.context.span_id


def test_the_user_input_and_final_response_are_the_messages(captured: Any) -> None:
    nested_graph().invoke({"messages": [("user", "Go now")]})

    agent = captured.span("invoke_agent outer").attributes
    assert agent[attr.AGENT_INPUT] == "Go now"
    assert agent[attr.AGENT_OUTPUT] == "All done."


def test_stream_is_one_agent_step_ending_with_the_stream(captured: Any) -> None:
    graph = router_graph()
    chunks = list(graph.stream({"question": "Weather?", "answer": "", "log": []}, THREAD, stream_mode="values"))

    assert chunks[-1]["answer"] == "It is sunny."
    (agent,) = [span for span in captured.spans() if span.name == "invoke_agent router"]
    assert agent.attributes[attr.GEN_AI_CONVERSATION_ID] == "thread-7"
    assert captured.trajectory().node_order() == ["classify", "weather"]


def test_stream_updates_then_closed_early_ends_once(captured: Any) -> None:
    graph = router_graph()
    stream = graph.stream({"question": "Weather?", "answer": "", "log": []}, stream_mode="updates")
    first = next(stream)
    stream.close()

    assert "classify" in first
    agents = [span for span in captured.spans() if span.name == "invoke_agent router"]
    assert len(agents) == 1 and agents[0].end_time is not None
    assert [span.name for span in captured.spans() if span.name.startswith("invoke_node")] == ["invoke_node classify"]


async def test_astream_is_one_agent_step(captured: Any) -> None:
    graph = async_router_graph()
    chunks = [chunk async for chunk in graph.astream({"question": "Weather?", "answer": "", "log": []},
                                                      stream_mode=["updates", "values"])]

    assert chunks[-1][0] == "values"
    trajectory = captured.trajectory()
    assert trajectory.node_order() == ["classify", "weather"]
    agents = [span for span in captured.spans() if span.name == "invoke_agent router"]
    assert len(agents) == 1


def test_a_failing_node_fails_its_step_and_the_run_with_the_same_exception(captured: Any) -> None:
    from langgraph.graph import END, START, StateGraph
    from sample_graphs import Route

    failure = RuntimeError("station offline")

    def broken(state: Route) -> dict[str, Any]:
        raise failure

    builder = StateGraph(Route)
    builder.add_node("broken", broken)
    builder.add_edge(START, "broken")
    builder.add_edge("broken", END)
    with pytest.raises(RuntimeError) as raised:
        builder.compile().invoke({"question": "x", "answer": "", "log": []})

    assert raised.value is failure
    node = captured.span("invoke_node broken")
    assert node.status.status_code is StatusCode.ERROR
    assert node.attributes[attr.ERROR_TYPE] == "RuntimeError"
    assert captured.span("invoke_agent LangGraph").status.status_code is StatusCode.ERROR


def test_an_interrupt_is_not_an_error(captured: Any) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import Command, interrupt

    def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt("Which city?")
        return {"messages": [AIMessage(f"Weather in {answer}: sunny.")]}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t-interrupt"}}
    paused = graph.invoke({"messages": [("user", "Weather?")]}, config)
    done = graph.invoke(Command(resume="Paris"), config)

    assert "__interrupt__" in paused and done["messages"][-1].content == "Weather in Paris: sunny."
    assert all(span.status.status_code is not StatusCode.ERROR for span in captured.spans())
    first, second = captured.trajectories()
    assert (first.user_input, second.final_response) == ("Weather?", "Weather in Paris: sunny.")
    assert first.conversation_id == second.conversation_id == "t-interrupt"
