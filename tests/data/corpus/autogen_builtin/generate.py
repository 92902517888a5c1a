"""Generate real AutoGen AgentChat traces (built-in OpenTelemetry tracing) with recorded ground truth.

An ``autogen_agentchat`` AssistantAgent with an ``autogen_ext`` OpenAIChatCompletionClient talks to the
scripted OpenAI-compatible server (``../scripted_openai.py``) on 127.0.0.1. Tracing is AutoGen's own:
autogen-core emits GenAI-semconv spans (``invoke_agent``, ``create_agent``, ``execute_tool``) on the
global tracer provider; nothing else is instrumented. Spans are exported with the real OTel SDK
(SimpleSpanProcessor) and encoded by the SDK's OTLP encoder into OTLP/JSON.

Ground truth (tool calls with the arguments the Python functions received, their results or errors,
and the final answer the framework returned) is recorded by this program, never read from the trace.

Run (from this folder): ``python generate.py`` in a venv made from ``requirements.txt``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from importlib.metadata import version  # noqa: E402

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.messages import ToolCallExecutionEvent, ToolCallRequestEvent  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402
from corpus_kit import OtlpJsonCollector, ToolLog, turn_truth  # noqa: E402
from scripted_openai import serve  # noqa: E402

PRODUCER = (f"autogen-core=={version('autogen-core')} built-in OpenTelemetry tracing + "
            f"autogen-agentchat=={version('autogen-agentchat')} + autogen-ext=={version('autogen-ext')}")


COLLECTOR = OtlpJsonCollector()
PROVIDER = TracerProvider(resource=Resource.create({"service.name": "autogen-weather-corpus"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(COLLECTOR))
trace.set_tracer_provider(PROVIDER)


# --- the tools, and the ground truth they record ---------------------------------------------

RECORD = ToolLog()


def get_weather(city: str) -> dict:
    """Get the current weather (temperature in Celsius) for a city."""
    return RECORD.get_weather(city)


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit."""
    return RECORD.celsius_to_fahrenheit(celsius)


def make_agent(base_url: str) -> AssistantAgent:
    client = OpenAIChatCompletionClient(
        model="gpt-4o-mini", base_url=base_url, api_key="not-needed",
        model_info={"vision": False, "function_calling": True, "json_output": False,
                    "family": "unknown", "structured_output": False},
    )
    return AssistantAgent(
        "weather_agent", model_client=client, tools=[get_weather, celsius_to_fahrenheit],
        system_message="You are a weather assistant. Use the tools to answer.",
        description="Answers weather questions with tools.", max_tool_iterations=5,
    )


async def run_turn(agent: AssistantAgent, prompt: str) -> dict[str, Any]:
    result = await agent.run(task=prompt)
    calls = RECORD.take()
    # The call ids come from the framework's own events (not the trace), matched by name+args in order.
    requested = [c for m in result.messages if isinstance(m, ToolCallRequestEvent) for c in m.content]
    executed = [r for m in result.messages if isinstance(m, ToolCallExecutionEvent) for r in m.content]
    details = []
    for call in calls:
        for req in requested:
            if req.name == call["tool_name"] and json.loads(req.arguments) == call["args"]:
                requested.remove(req)
                details.append({"tool_name": call["tool_name"], "args": call["args"], "tool_call_id": req.id,
                                **{k: call[k] for k in ("result", "error") if k in call}})
                break
        else:
            details.append(dict(call))
    assert len(executed) == len(calls), (executed, calls)
    return {**turn_truth(prompt, calls, result.messages[-1].to_text()), "tool_calls_detail": details}


RUNS = [
    ("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
    ("run2_parallel", ["What's the weather in London and Tokyo?"]),
    ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
    ("run4_failing_tool", ["What's the weather in Atlantis?"]),
]


async def main() -> None:
    with serve() as base_url:
        for name, prompts in RUNS:
            agent = make_agent(base_url)  # one agent per run; its model context carries the conversation
            turns = [await run_turn(agent, prompt) for prompt in prompts]
            PROVIDER.force_flush()
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth["producer"] = PRODUCER
            if len(turns) > 1:
                truth["conversation_note"] = ("one AssistantAgent, two agent.run() calls; AutoGen has no "
                                              "session/thread id, each run() is its own trace (JSON lines)")
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:300])


if __name__ == "__main__":
    asyncio.run(main())
