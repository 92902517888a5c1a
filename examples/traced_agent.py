"""A small traced agent: a scripted model, two tools, a router and a graph of nodes.

Runs as written, with no network and no API key:

    python examples/traced_agent.py

Every step becomes a span (``invoke_agent weather-agent`` → ``invoke_node`` / ``chat`` /
``conditional`` / ``execute_tool``), written to ``agenteval-traces.jsonl`` in the current
directory, or sent to the OTLP endpoint named by ``OTEL_EXPORTER_OTLP_ENDPOINT``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agenteval_otel.tracing import agent, conditional, configure, message, node, tool, tool_call_id

State = dict[str, Any]


@tool
def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """Today's weather (canned data)."""
    return {"city": city, "temperature": 21 if unit == "celsius" else 70, "sky": "clear"}


@tool(name="convert_time")
def local_time(city: str) -> str:
    """The local time in a city (canned data)."""
    return {"Tokyo": "09:00", "Paris": "02:00"}.get(city, "unknown")


TOOLS: dict[str, Callable[..., Any]] = {"get_weather": get_weather, "convert_time": local_time}


@message(model="scripted-model", provider="scripted")
def call_model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A stand-in for an LLM: asks for the weather once, then answers from the tool result."""
    tool_results = [m for m in messages if m["role"] == "tool"]
    if not tool_results:
        city = messages[0]["content"].rsplit(" ", 1)[-1].strip("?")
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    weather = json.loads(tool_results[-1]["content"])
    return {
        "role": "assistant",
        "content": f"It is {weather['temperature']}°C and {weather['sky']} in {weather['city']}.",
    }


@node("model")
def model_node(state: State) -> State:
    reply = call_model(state["messages"])
    return {**state, "messages": [*state["messages"], reply]}


@conditional(branches={True: "tools", False: "end"})
def wants_tools(state: State) -> bool:
    return bool(state["messages"][-1].get("tool_calls"))


@node("tools")
def tools_node(state: State) -> State:
    results = []
    for call in state["messages"][-1]["tool_calls"]:
        with tool_call_id(call["id"]):
            output = TOOLS[call["function"]["name"]](**json.loads(call["function"]["arguments"]))
        results.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(output)})
    return {**state, "messages": [*state["messages"], *results]}


@agent(name="weather-agent", conversation_id_arg="thread_id")
def run_agent(question: str, thread_id: str) -> str:
    """model → (tools → model)* → end, like a small LangGraph graph."""
    state: State = {"messages": [{"role": "user", "content": question}]}
    state = model_node(state)
    while wants_tools(state):
        state = tools_node(state)
        state = model_node(state)
    return str(state["messages"][-1]["content"])


if __name__ == "__main__":
    handle = configure("traced-agent-example")
    print(run_agent("What is the weather in Tokyo?", thread_id="thread-1"))
    handle.shutdown(timeout=10)
    print(f"traces written to {handle.traces_file}" if handle.traces_file else "traces exported over OTLP")
