"""Generate real Haystack Agent traces (Haystack's OpenTelemetry tracer, content tracing on) with ground truth.

A ``haystack-ai`` ``Agent`` with an ``OpenAIChatGenerator(api_base_url=...)`` pointed at the scripted
OpenAI-compatible server (``../scripted_openai.py``) on 127.0.0.1, and the two weather tools as
``haystack.tools.Tool`` objects. Tracing is Haystack's own: its tracer spans (``haystack.agent.run``,
``haystack.agent.step``, ``haystack.agent.step.llm``, ``haystack.agent.step.tool``) go through
``OpenTelemetryTracer`` (in Haystack 3.x it ships as the deepset integration ``opentelemetry-haystack``,
``haystack_integrations.tracing.opentelemetry``; in 2.x it was ``haystack.tracing.OpenTelemetryTracer``),
enabled with ``haystack.tracing.enable_tracing`` and content tracing on
(``HAYSTACK_CONTENT_TRACING_ENABLED=true``). Spans are exported with the real OTel SDK
(SimpleSpanProcessor) and encoded by the SDK's OTLP encoder into OTLP/JSON.

Ground truth (tool calls with the arguments the Python functions received, their results or errors,
and the final answer the framework returned) is recorded by this program, never read from the trace.

Run (from this folder): ``python generate.py`` in a venv made from ``requirements.txt``.
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ["HAYSTACK_CONTENT_TRACING_ENABLED"] = "true"
os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import OtlpJsonCollector, ToolLog, turn_truth  # noqa: E402
from haystack import tracing  # noqa: E402
from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools import Tool  # noqa: E402
from haystack.utils import Secret  # noqa: E402
from haystack_integrations.tracing.opentelemetry import OpenTelemetryTracer  # noqa: E402
from scripted_openai import serve  # noqa: E402

PRODUCER = (f"opentelemetry-haystack=={version('opentelemetry-haystack')} (Haystack OpenTelemetryTracer, "
            f"content tracing on) + haystack-ai=={version('haystack-ai')}")


COLLECTOR = OtlpJsonCollector()
PROVIDER = TracerProvider(resource=Resource.create({"service.name": "haystack-weather-corpus"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(COLLECTOR))
trace.set_tracer_provider(PROVIDER)
tracing.enable_tracing(OpenTelemetryTracer(trace.get_tracer("haystack")))
tracing.tracer.is_content_tracing_enabled = True


# --- the tools, and the ground truth they record ---------------------------------------------

RECORD = ToolLog()


def get_weather(city: str) -> dict:
    """Get the current weather (temperature in Celsius) for a city."""
    return RECORD.get_weather(city)


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit."""
    return RECORD.celsius_to_fahrenheit(celsius)


TOOLS = [
    Tool(name="get_weather", description="Get the current weather (temperature in Celsius) for a city.",
         parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
         function=get_weather),
    Tool(name="celsius_to_fahrenheit", description="Convert a temperature from Celsius to Fahrenheit.",
         parameters={"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
         function=celsius_to_fahrenheit),
]


def make_agent(base_url: str) -> Agent:
    generator = OpenAIChatGenerator(model="gpt-4o-mini", api_base_url=base_url,
                                    api_key=Secret.from_token("not-needed"))
    agent = Agent(chat_generator=generator, tools=TOOLS,
                  system_prompt="You are a weather assistant. Use the tools to answer.", max_agent_steps=6)
    agent.warm_up()
    return agent


def run_turn(agent: Agent, history: list[ChatMessage], prompt: str) -> tuple[dict[str, Any], list[ChatMessage]]:
    result = agent.run(messages=[*history, ChatMessage.from_user(prompt)])
    calls = RECORD.take()
    messages: list[ChatMessage] = result["messages"]
    new = messages[len(history) + 1:] if messages[:len(history)] == history else messages
    # The call ids come from the framework's own messages (not the trace), matched by name+args in order.
    requested = [tc for m in new for tc in (m.tool_calls or [])]
    details = []
    for call in calls:
        match = next((tc for tc in requested if tc.tool_name == call["tool_name"] and tc.arguments == call["args"]),
                     None)
        if match is not None:
            requested.remove(match)
        details.append({"tool_name": call["tool_name"], "args": call["args"],
                        **({"tool_call_id": match.id} if match is not None and match.id else {}),
                        **{k: call[k] for k in ("result", "error") if k in call}})
    turn = {**turn_truth(prompt, calls, result["last_message"].text), "tool_calls_detail": details}
    return turn, [m for m in messages if m.role.value != "system"]


RUNS = [
    ("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
    ("run2_parallel", ["What's the weather in London and Tokyo?"]),
    ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
    ("run4_failing_tool", ["What's the weather in Atlantis?"]),
]


def main() -> None:
    with serve() as base_url:
        for name, prompts in RUNS:
            agent = make_agent(base_url)
            history: list[ChatMessage] = []
            turns = []
            for prompt in prompts:  # the conversation is the message list passed back in
                turn, history = run_turn(agent, history, prompt)
                turns.append(turn)
            PROVIDER.force_flush()
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth["producer"] = PRODUCER
            if len(turns) > 1:
                truth["conversation_note"] = ("one Agent, run twice with the first run's messages passed back in; "
                                              "Haystack has no session/thread id, each run is its own trace "
                                              "(JSON lines)")
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:400], flush=True)


if __name__ == "__main__":
    main()
