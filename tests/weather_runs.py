"""Our own weather runs: a small agent traced by our decorators into OTLP/JSON-lines files.

``write_weather_runs(folder)`` writes, per run, ``<run>.otlp.json`` (the spans, as
``OtlpJsonFileExporter`` writes them) and ``<run>.ground_truth.json`` (what the agent really did,
recorded outside the trace, in the shape of the third-party runs' ground truth), plus
``all_runs.otlp.json`` holding the first three runs. The runs cover sequential and parallel tool
calls, a streaming agent, a two-turn conversation, a graph fan-out and a failing tool.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agenteval_otel.tracing import (
    ContentPolicy,
    ContextThreadPoolExecutor,
    OtlpJsonFileExporter,
    active_policy,
    agent,
    conditional,
    message,
    node,
    routed_to,
    set_active_policy,
    tool,
    tool_call_id,
)

CELSIUS = {"Paris": 18.0, "London": 12.5, "Tokyo": 22.0}
FORECAST = {"Paris": "sunny"}
CONVERSATION_ID = "weather-thread-1"


class Recorder:
    """The ground truth of one run: the user's prompts, the tool calls made, the final responses."""

    def __init__(self) -> None:
        self.turns: list[dict[str, Any]] = []

    def start(self, prompt: str) -> None:
        self.turns.append({"user_prompt": prompt, "expected_tool_trajectory": [], "tool_calls_detail": []})

    def call(self, name: str, args: dict[str, Any], call_id: str, outcome: Callable[[], Any]) -> Any:
        detail: dict[str, Any] = {"tool_name": name, "args": args, "tool_call_id": call_id}
        self.turns[-1]["expected_tool_trajectory"].append({"tool_name": name, "args": args})
        self.turns[-1]["tool_calls_detail"].append(detail)
        try:
            with tool_call_id(call_id):
                detail["result"] = outcome()
        except Exception as error:
            detail["error"] = f"{type(error).__name__}: {error}"
            raise
        return detail["result"]

    def respond(self, response: str) -> str:
        self.turns[-1]["final_response"] = response
        return response

    def truth(self, **extra: Any) -> dict[str, Any]:
        if len(self.turns) == 1:
            return {**self.turns[0], **extra}
        return {"turns": self.turns, **extra}


@tool
def get_weather(city: str) -> dict[str, Any]:
    if city not in CELSIUS:
        raise ValueError(f"unknown city: {city}")
    return {"city": city, "temp_c": CELSIUS[city]}


@tool
def celsius_to_fahrenheit(celsius: float) -> float:
    return round(celsius * 9 / 5 + 32, 1)


@tool
def get_forecast(city: str) -> str:
    return FORECAST[city]


@message(model="scripted-model", provider="scripted")
def model_call(content: str, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {"role": "assistant", "content": content,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}}


def _run1(run: Recorder) -> None:
    @agent(name="weather-agent")
    def weather(question: str) -> str:
        run.start(question)
        model_call("", 60, 10)
        weather = run.call("get_weather", {"city": "Paris"}, "call_W1", lambda: get_weather("Paris"))
        model_call("", 70, 10)
        fahrenheit = run.call("celsius_to_fahrenheit", {"celsius": weather["temp_c"]}, "call_C1",
                              lambda: celsius_to_fahrenheit(weather["temp_c"]))
        answer = f"It is {fahrenheit} F in Paris."
        model_call(answer, 80, 16)
        return run.respond(answer)

    weather("What's the weather in Paris in Fahrenheit?")


def _run2(run: Recorder) -> None:
    @agent(name="weather-agent")
    def weather(question: str) -> str:
        run.start(question)
        model_call("", 50, 12)
        with ContextThreadPoolExecutor(max_workers=2) as pool:
            london = pool.submit(run.call, "get_weather", {"city": "London"}, "call_L1",
                                 lambda: get_weather("London"))
            london.result()  # both run on the pool, in the caller's trace; one after the other, in order
            tokyo = pool.submit(run.call, "get_weather", {"city": "Tokyo"}, "call_T1",
                                lambda: get_weather("Tokyo"))
            temps = [london.result()["temp_c"], tokyo.result()["temp_c"]]
        return run.respond(f"London is {temps[0]} C and Tokyo is {temps[1]} C.")

    weather("What's the weather in London and Tokyo?")


def _run3(run: Recorder) -> None:
    @agent(name="weather-agent")
    def weather(question: str) -> Iterator[str]:
        run.start(question)
        celsius = run.call("get_weather", {"city": "Tokyo"}, "call_W1", lambda: get_weather("Tokyo"))["temp_c"]
        fahrenheit = run.call("celsius_to_fahrenheit", {"celsius": celsius}, "call_C1",
                              lambda: celsius_to_fahrenheit(celsius))
        run.respond(f"It is {fahrenheit} F in Tokyo.")
        yield "It is "
        yield f"{fahrenheit} F"
        yield " in Tokyo."

    assert "".join(weather("What's the weather in Tokyo in Fahrenheit?")) == run.turns[-1]["final_response"]


def _run4(run: Recorder) -> None:
    @agent(name="weather-agent", conversation_id_arg="thread_id")
    def weather(question: str, thread_id: str) -> str:
        run.start(question)
        if "London" in question:
            celsius = run.call("get_weather", {"city": "London"}, "call_W1", lambda: get_weather("London"))
            return run.respond(f"It is {celsius['temp_c']} C in London.")
        fahrenheit = run.call("celsius_to_fahrenheit", {"celsius": 12.5}, "call_C1",
                              lambda: celsius_to_fahrenheit(12.5))
        return run.respond(f"That is {fahrenheit} F.")

    weather("What's the weather in London?", CONVERSATION_ID)
    weather("And in Fahrenheit?", CONVERSATION_ID)


def _run5(run: Recorder) -> None:
    @node
    def plan(state: dict[str, Any]) -> dict[str, Any]:
        return state

    @conditional
    def pick_sources(state: dict[str, Any]) -> list[str]:
        return ["fetch_current", "fetch_forecast"]

    @node
    def fetch_current(state: dict[str, Any]) -> dict[str, Any]:
        weather = run.call("get_weather", {"city": "Paris"}, "call_W1", lambda: get_weather("Paris"))
        return {**state, "now": weather["temp_c"]}

    @node
    def fetch_forecast(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "tomorrow": run.call("get_forecast", {"city": "Paris"}, "call_F1",
                                              lambda: get_forecast("Paris"))}

    @node
    def merge(state: dict[str, Any]) -> str:
        return f"Paris: Now: {state['now']} C; Tomorrow: {state['tomorrow']}"

    @agent(name="weather-graph")
    def weather(question: str) -> str:
        run.start(question)
        state = plan({"question": question})
        branches = {"fetch_current": fetch_current, "fetch_forecast": fetch_forecast}
        for taken in pick_sources(state):
            state = branches[taken](state)
        return run.respond(merge(state))

    weather("Weather now and tomorrow in Paris?")


def _run6(run: Recorder) -> None:
    @agent(name="weather-agent")
    def weather(question: str) -> str:
        run.start(question)
        try:
            run.call("get_weather", {"city": "Atlantis"}, "call_A1", lambda: get_weather("Atlantis"))
        except ValueError:
            return run.respond("I do not know the weather in Atlantis.")
        raise AssertionError("get_weather should have failed")

    weather("What's the weather in Atlantis?")


RUNS: dict[str, tuple[Callable[[Recorder], None], dict[str, Any]]] = {
    "run1_sequential_two_tools": (_run1, {}),
    "run2_parallel_calls": (_run2, {}),
    "run3_streaming_sequential": (_run3, {"streaming": True}),
    "run4_multi_turn": (_run4, {"conversation_id": CONVERSATION_ID}),
    "run5_fanout_two_parallel_nodes": (_run5, {
        "node_order": ["plan", "fetch_current", "fetch_forecast", "merge"],
        "branches": [{"condition": "pick_sources", "taken": ["fetch_current", "fetch_forecast"]}],
    }),
    "run6_tool_error": (_run6, {}),
}


def write_weather_runs(folder: Path) -> Path:
    """Run every weather run under our tracing, its spans into ``folder``; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    policy = active_policy()
    set_active_policy(ContentPolicy(capture=True))
    try:
        for name, (script, extra) in RUNS.items():
            provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
            provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(folder / f"{name}.otlp.json")))
            run = Recorder()
            with routed_to(provider):
                script(run)
            provider.shutdown()
            truth = run.truth(**{k: v for k, v in extra.items() if k != "conversation_id"})
            (folder / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2))
    finally:
        set_active_policy(policy)
    first_three = [folder / f"{name}.otlp.json" for name in list(RUNS)[:3]]
    (folder / "all_runs.otlp.json").write_text("".join(p.read_text() for p in first_three))
    return folder
