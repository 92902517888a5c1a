"""Small deterministic LangGraph graphs the tests run (no model, or a fake chat model)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Send


class Route(TypedDict):
    question: str
    answer: str
    log: Annotated[list[str], operator.add]


def classify(state: Route) -> dict[str, Any]:
    return {"log": ["classify"]}


def weather(state: Route) -> dict[str, Any]:
    return {"answer": "It is sunny.", "log": ["weather"]}


def smalltalk(state: Route) -> dict[str, Any]:
    return {"answer": "Hello!", "log": ["smalltalk"]}


def is_weather(state: Route) -> bool:
    return "weather" in state["question"].lower()


def router_graph() -> Any:
    """classify → is_weather (True: weather, False: smalltalk) → END."""
    builder = StateGraph(Route)
    builder.add_node("classify", classify)
    builder.add_node("weather", weather)
    builder.add_node("smalltalk", smalltalk)
    builder.add_edge(START, "classify")
    builder.add_conditional_edges("classify", is_weather, {True: "weather", False: "smalltalk"})
    builder.add_edge("weather", END)
    builder.add_edge("smalltalk", END)
    return builder.compile(name="router")


async def aclassify(state: Route) -> dict[str, Any]:
    return {"log": ["classify"]}


async def aweather(state: Route) -> dict[str, Any]:
    return {"answer": "It is sunny.", "log": ["weather"]}


def async_router_graph() -> Any:
    """The router with async nodes."""
    builder = StateGraph(Route)
    builder.add_node("classify", aclassify)
    builder.add_node("weather", aweather)
    builder.add_node("smalltalk", smalltalk)
    builder.add_edge(START, "classify")
    builder.add_conditional_edges("classify", is_weather, {True: "weather", False: "smalltalk"})
    builder.add_edge("weather", END)
    builder.add_edge("smalltalk", END)
    return builder.compile(name="router")


class Cities(TypedDict):
    cities: list[str]
    reports: Annotated[list[str], operator.add]


def plan(state: Cities) -> dict[str, Any]:
    return {}


def fan_out(state: Cities) -> list[Send]:
    return [Send("report", {"cities": [city], "reports": []}) for city in state["cities"]]


def report(state: Cities) -> dict[str, Any]:
    return {"reports": [f"{state['cities'][0]}: sunny"]}


def fan_out_graph() -> Any:
    """plan → fan_out (a Send per city) → report (once per city) → END."""
    builder = StateGraph(Cities)
    builder.add_node("plan", plan)
    builder.add_node("report", report)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", fan_out, ["report"])
    builder.add_edge("report", END)
    return builder.compile(name="cities")


def step_up(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage("inner done")]}


def check(state: MessagesState) -> Literal["inner_end", "__end__"]:
    return "__end__"


def nested_graph() -> Any:
    """outer: prepare → inner (a compiled subgraph: step_up) → finish."""
    inner = StateGraph(MessagesState)
    inner.add_node("step_up", step_up)
    inner.add_edge(START, "step_up")
    inner.add_edge("step_up", END)
    outer = StateGraph(MessagesState)
    outer.add_node("prepare", lambda state: {"messages": [AIMessage("prepared")]})
    outer.add_node("inner", inner.compile(name="inner"))
    outer.add_node("finish", lambda state: {"messages": [AIMessage("All done.")]})
    outer.add_edge(START, "prepare")
    outer.add_edge("prepare", "inner")
    outer.add_edge("inner", "finish")
    outer.add_edge("finish", END)
    return outer.compile(name="outer")


@tool
def get_weather(city: str) -> dict[str, Any]:
    """Today's weather in a city."""
    return {"city": city, "celsius": 18}


@tool
def broken_lookup(city: str) -> str:
    """A tool that fails."""
    raise LookupError(f"no station in {city}")


def tool_call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def tool_agent(replies: list[BaseMessage], tools: list[Any] | None = None, **tool_node: Any) -> Any:
    """agent (a fake chat model answering ``replies`` in turn) → tools_condition → tools → agent."""
    model = FakeMessagesListChatModel(responses=replies)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    async def aagent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    from langchain_core.runnables import RunnableLambda

    builder = StateGraph(MessagesState)
    builder.add_node("agent", RunnableLambda(agent, afunc=aagent, name="agent"))
    builder.add_node("tools", ToolNode(tools or [get_weather], **tool_node))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(name="weather-agent")
