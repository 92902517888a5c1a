"""A scripted weather agent, traced with agenteval-otel and evaluated against
``weather_agent.evalset.json``. No API key, no network.

    agenteval run examples/weather_agent.evalset.json --agent examples/weather_agent.py:weather_agent \\
        --config examples/weather_agent.config.json

and run over the query set ``weather_queries.jsonl`` (by ``module:attr`` or by its YAML spec)::

    agenteval simulate examples/weather_queries.jsonl --agent examples/weather_agent.yaml --out run.jsonl

The agent is a small graph: ``plan`` (a scripted model decides which tools to call) →
``route`` (a conditional edge) → ``tools`` → ``respond``. Every step is a span.
"""

from __future__ import annotations

import re
from typing import Any

from agenteval_otel.tracing import agent, conditional, message, node, tool

WEATHER = {"paris": (18, "sunny"), "tokyo": (22, "clear"), "london": (12, "raining")}
State = dict[str, Any]


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


@message(model="scripted-weather-model", provider="scripted")
def plan_reply(question: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    """A stand-in for an LLM: reads the conversation and decides which tools to call."""
    fahrenheit = "fahrenheit" in question.lower()
    city = _city(question)
    known_celsius = None
    if city is None:  # a follow-up: the city and its temperature come from the conversation
        for turn in reversed(history):
            city = _city(turn["content"])
            degrees = re.search(r"(-?\d+)°C", turn["content"])
            if city and degrees:
                known_celsius = int(degrees.group(1))
                break
    calls = []
    if city and known_celsius is None:
        calls.append("get_weather")
    if city and fahrenheit:
        calls.append("celsius_to_fahrenheit")
    return {"role": "assistant", "city": city, "celsius": known_celsius, "tool_calls": calls}


@node("plan")
def plan(state: State) -> State:
    return {**state, "plan": plan_reply(state["question"], state["history"])}


@conditional(branches={True: "tools", False: "respond"})
def route(state: State) -> bool:
    return bool(state["plan"]["tool_calls"])


@node("tools")
def run_tools(state: State) -> State:
    plan_ = state["plan"]
    results: State = {"city": plan_["city"], "celsius": plan_["celsius"]}
    if "get_weather" in plan_["tool_calls"]:
        weather = get_weather(plan_["city"])
        results.update(celsius=weather["celsius"], sky=weather["sky"])
    if "celsius_to_fahrenheit" in plan_["tool_calls"]:
        results["fahrenheit"] = celsius_to_fahrenheit(results["celsius"])
    return {**state, "results": results}


@node("respond")
def respond(state: State) -> str:
    results = state.get("results")
    if not results:
        return "Hello! Ask me about the weather in any city."
    city, celsius = results["city"], results["celsius"]
    if "sky" not in results:
        return f"It is {results['fahrenheit']}°F in {city}."
    if "fahrenheit" in results:
        return f"It is {celsius}°C ({results['fahrenheit']}°F) in {city}."
    return f"It is {celsius}°C and {results['sky']} in {city}."


@agent(name="weather-agent", conversation_id_arg="thread_id")
def weather_agent(question: str, thread_id: str, history: list[dict[str, Any]]) -> str:
    """plan → route → (tools →) respond."""
    state = plan({"question": question, "history": history})
    if route(state):
        state = run_tools(state)
    return respond(state)


class WeatherAgent:
    """The agent as a class with ``run``, as a YAML spec names it (``weather_agent.yaml``)."""

    def run(self, query: str, thread_id: str) -> str:
        """A reply to a single query, as a new conversation."""
        return weather_agent(query, thread_id=thread_id, history=[])


if __name__ == "__main__":
    print(weather_agent("How warm is Tokyo in Fahrenheit?", thread_id="demo", history=[]))
