"""A LangGraph weather agent traced by agenteval-instrumentation-langgraph (no decorator in the
graph's code) and evaluated against ``langgraph_agent.evalset.json``. No API key, no network: the
chat model is a scripted stand-in built on ``langchain_core``.

    pip install -e . -e "./instrumentation/agenteval-instrumentation-langgraph[instruments]"

    # live: run the graph over the eval set and score each case
    agenteval run examples/langgraph_agent.evalset.json --agent examples/langgraph_agent.py:weather_agent \\
        --config examples/langgraph_agent.config.json

    # offline: run the app on its own (traces to ./agenteval-traces.jsonl), then score its traces
    python examples/langgraph_agent.py
    agenteval eval examples/langgraph_agent.evalset.json --traces agenteval-traces.jsonl \\
        --config examples/langgraph_agent.config.json

The graph: ``agent`` (the model answers or asks for tools) → ``tools_condition`` (a conditional
edge: ``tools`` or ``__end__``) → ``tools`` (a ``ToolNode``) → ``agent`` → ... Each graph run is
an agent step with the thread id as its conversation id, each node a node step, each edge taken
a conditional step, each tool call a tool step with its arguments and result. Content (messages,
states, arguments, results) is recorded because the instrumentor is asked to
(``capture_content=True``): off by default, as for any third-party library.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from agenteval_instrumentation_langgraph import LangGraphInstrumentor
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

LangGraphInstrumentor().instrument(capture_content=True)  # the criteria read messages and tool arguments

WEATHER = {"paris": (18, "sunny"), "tokyo": (22, "clear"), "london": (12, "raining")}


@tool
def get_weather(city: str) -> dict[str, Any]:
    """Today's weather in a city (canned data)."""
    celsius, sky = WEATHER[city.lower()]
    return {"city": city, "celsius": celsius, "sky": sky}


@tool
def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature."""
    return round(celsius * 9 / 5 + 32, 1)


def _city(text: str) -> str | None:
    found = re.search(r"\b(" + "|".join(WEATHER) + r")\b", text, re.IGNORECASE)
    return found.group(1).title() if found else None


def _results(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    """The tool results since the last user message, by tool name."""
    results: dict[str, Any] = {}
    for message in messages:
        if isinstance(message, HumanMessage):
            results = {}
        elif isinstance(message, ToolMessage):
            results[str(message.name)] = json.loads(str(message.content))
    return results


def _earlier_weather(messages: Sequence[BaseMessage]) -> dict[str, Any] | None:
    """The last weather looked up in the conversation (for a follow-up question)."""
    for message in reversed(messages):
        if isinstance(message, ToolMessage) and message.name == "get_weather":
            return dict(json.loads(str(message.content)))
    return None


def _call(name: str, **args: Any) -> AIMessage:
    call_id = f"call_{name}_{'_'.join(str(value).lower() for value in args.values())}"
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


class ScriptedWeatherModel(BaseChatModel):
    """A stand-in for a chat model with tools: reads the conversation and decides what to do."""

    @property
    def _llm_type(self) -> str:
        return "scripted-weather"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedWeatherModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

    def _reply(self, messages: Sequence[BaseMessage]) -> AIMessage:
        question = next(str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage))
        fahrenheit = "fahrenheit" in question.lower()
        results = _results(messages)
        city = _city(question)
        weather = results.get("get_weather")
        if city is None and fahrenheit:  # a follow-up: the city and its temperature are in the conversation
            weather = weather or _earlier_weather(messages)
        if city is None and weather is None:
            return AIMessage("Hello! Ask me about the weather in any city.")
        if weather is None:
            return _call("get_weather", city=city)
        if fahrenheit and "celsius_to_fahrenheit" not in results:
            return _call("celsius_to_fahrenheit", celsius=weather["celsius"])
        if "celsius_to_fahrenheit" not in results:
            return AIMessage(f"It is {weather['celsius']}°C and {weather['sky']} in {weather['city']}.")
        degrees = results["celsius_to_fahrenheit"]
        if "get_weather" in results:
            return AIMessage(f"It is {weather['celsius']}°C ({degrees}°F) in {weather['city']}.")
        return AIMessage(f"It is {degrees}°F in {weather['city']}.")


TOOLS = [get_weather, celsius_to_fahrenheit]
model = ScriptedWeatherModel().bind_tools(TOOLS)


def agent(state: MessagesState) -> dict[str, Any]:
    return {"messages": [model.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode(TOOLS))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile(name="weather-graph", checkpointer=InMemorySaver())


def weather_agent(question: str, thread_id: str) -> str:
    """One turn of the conversation ``thread_id`` (earlier turns come from the checkpointer)."""
    state = graph.invoke({"messages": [("user", question)]}, {"configurable": {"thread_id": thread_id}})
    return str(state["messages"][-1].content)


if __name__ == "__main__":
    from agenteval_otel import configure

    handle = configure("langgraph-weather-agent")  # OTLP if OTEL_EXPORTER_OTLP_ENDPOINT is set, else a file
    conversations = {
        "paris": ["What is the weather in Paris?"],
        "tokyo": ["How warm is Tokyo in Fahrenheit?"],
        "greeting": ["Hello!"],
        "london": ["What is the weather in London?", "And in Fahrenheit?"],
    }
    for thread_id, questions in conversations.items():
        for question in questions:
            print(f"[{thread_id}] {question} -> {weather_agent(question, thread_id)}")
    handle.shutdown(5.0)
