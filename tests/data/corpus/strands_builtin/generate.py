"""Generate real Strands Agents traces (Strands' built-in OpenTelemetry tracing) with ground truth.

A ``strands-agents`` ``Agent`` with ``OpenAIModel(client_args={"base_url": ..., "api_key": ...})``
pointed at the scripted OpenAI-compatible server (``../scripted_openai.py``) on 127.0.0.1, and the two
weather tools as ``@tool`` functions. Tracing is Strands' own: it creates its spans
(``invoke_agent <name>``, ``execute_event_loop_cycle``, ``chat``, ``execute_tool <tool>``) through the
global OpenTelemetry tracer provider, so, as Strands' docs tell users who bring their own provider, an SDK
``TracerProvider`` is set as the global provider before the agent is created. Content is recorded with
Strands' default conventions (no ``OTEL_SEMCONV_STABILITY_OPT_IN``): as span events. Spans are exported
with ``SimpleSpanProcessor`` and encoded by the SDK's OTLP encoder into OTLP/JSON.

Ground truth (the arguments the tool functions really received, their results or errors, the call ids
from the agent's own messages, and the answer the agent returned) is recorded by this program, never
read from the trace. The multi-turn run calls one ``Agent`` twice (it keeps its messages) with the
trace attribute ``session.id``.

Run (from this folder): ``python generate.py`` in a venv made from ``requirements.txt``.
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ.pop("OTEL_SEMCONV_STABILITY_OPT_IN", None)  # Strands' default conventions

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import OtlpJsonCollector, ToolLog, turn_truth  # noqa: E402
from scripted_openai import serve  # noqa: E402

COLLECTOR = OtlpJsonCollector()
PROVIDER = TracerProvider(resource=Resource.create({"service.name": "strands-weather-corpus"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(COLLECTOR))
trace.set_tracer_provider(PROVIDER)  # before any Agent: Strands traces through the global provider

from strands import Agent, tool  # noqa: E402
from strands.models.openai import OpenAIModel  # noqa: E402

PRODUCER = (f"strands-agents=={version('strands-agents')} (built-in OpenTelemetry tracing, default "
            f"conventions) + openai=={version('openai')}")


# --- the tools, and the ground truth they record ---------------------------------------------

RECORD = ToolLog()


@tool
def get_weather(city: str) -> dict:
    """Get the current weather (temperature in Celsius) for a city.

    Args:
        city: The city, e.g. "Paris".
    """
    return RECORD.get_weather(city)


@tool
def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit.

    Args:
        celsius: The temperature in degrees Celsius.
    """
    return RECORD.celsius_to_fahrenheit(celsius)


def make_agent(base_url: str, session_id: str) -> Agent:
    model = OpenAIModel(client_args={"base_url": base_url, "api_key": "x"}, model_id="gpt-4o-mini")
    return Agent(model=model, tools=[get_weather, celsius_to_fahrenheit], name="weather_agent",
                 system_prompt="You are a weather assistant. Use the tools to answer.",
                 callback_handler=None, trace_attributes={"session.id": session_id})


def run_turn(agent: Agent, prompt: str) -> dict[str, Any]:
    before = len(agent.messages)
    result = agent(prompt)
    calls = RECORD.take()
    # The call ids come from the agent's own messages (its toolUse blocks), matched by name and arguments.
    requested = [block["toolUse"] for m in agent.messages[before:] for block in m["content"] if "toolUse" in block]
    details = []
    for call in calls:
        match = next((u for u in requested if u["name"] == call["tool_name"] and u["input"] == call["args"]), None)
        if match is not None:
            requested.remove(match)
        details.append({"tool_name": call["tool_name"], "args": call["args"],
                        **({"tool_call_id": match["toolUseId"]} if match is not None else {}),
                        **{k: call[k] for k in ("result", "error") if k in call}})
    # in the model's order (parallel calls run concurrently, so the record's order may differ)
    order = [u["toolUseId"] for m in agent.messages[before:] for block in m["content"]
             if (u := block.get("toolUse"))]
    details.sort(key=lambda d: order.index(d["tool_call_id"]) if d.get("tool_call_id") in order else len(order))
    # the answer: the text of the returned message (str(result) is the same text with a "\n" after it)
    answer = "".join(block["text"] for block in result.message["content"] if "text" in block)
    return {**turn_truth(prompt, details, answer), "tool_calls_detail": details}


RUNS = [
    ("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
    ("run2_parallel", ["What's the weather in London and Tokyo?"]),
    ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
    ("run4_failing_tool", ["What's the weather in Atlantis?"]),
]


def main() -> None:
    with serve() as base_url:
        for name, prompts in RUNS:
            agent = make_agent(base_url, f"corpus-{name}")
            COLLECTOR.take()
            turns = [run_turn(agent, prompt) for prompt in prompts]  # one Agent: it keeps the conversation
            PROVIDER.force_flush()
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth["producer"] = PRODUCER
            if len(turns) > 1:
                truth["conversation_note"] = ("one Agent called twice (it keeps its messages), trace attribute "
                                              f"session.id=corpus-{name}; each call is its own trace (JSON lines)")
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:400], flush=True)
    PROVIDER.shutdown()


if __name__ == "__main__":
    main()
