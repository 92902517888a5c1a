"""Generate real OpenAI Agents SDK traces (OpenInference instrumentation) with ground truth.

An ``agents.Agent`` with two ``@function_tool`` tools, run by ``Runner.run`` over
``OpenAIChatCompletionsModel`` (an ``AsyncOpenAI`` client whose ``base_url`` is the scripted
OpenAI-compatible server, ``../scripted_openai.py``, on 127.0.0.1). ``OpenAIAgentsInstrumentor``
traces it as its docs tell users to, into an OpenTelemetry SDK ``TracerProvider`` whose
``SimpleSpanProcessor`` hands the spans to an exporter that encodes them with the SDK's own OTLP
encoder and writes OTLP/JSON.

The instrumentor registers itself as the Agents SDK's only trace processor (its default
``exclusive_processor=True``), which takes out the SDK's own exporter to the OpenAI tracing
backend. ``set_tracing_disabled(True)`` is not called: it turns the SDK's whole tracing off, so
the instrumentor would get no spans at all.

The ground truth is recorded by this program: every call the tool functions really receive (their
arguments, result or raised error), the call ids and the model's order from the run result's
``ToolCallItem`` items, what the SDK handed the model for each call (``ToolCallOutputItem``), and
the run's ``final_output``. Nothing is read back from the trace. The multi-turn run passes the
first result's ``to_input_list()`` plus the new user message to the second ``Runner.run``, with one
``RunConfig(group_id=...)`` and one OpenInference session id for both turns.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import OtlpJsonCollector, ToolLog, in_asked_order  # noqa: E402
from corpus_kit import turn_truth as corpus_turn_truth  # noqa: E402
from scripted_openai import serve  # noqa: E402

PRODUCER = (f"openinference-instrumentation-openai-agents=={version('openinference-instrumentation-openai-agents')}"
            f" + openai-agents=={version('openai-agents')} + openai=={version('openai')}")

RECORD = ToolLog()


def get_weather(city: str) -> dict:
    """Get the current weather for a city, e.g. "Paris"."""
    return RECORD.get_weather(city)


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit."""
    return RECORD.celsius_to_fahrenheit(celsius)


def turn_truth(prompt: str, result: Any) -> dict[str, Any]:
    from agents import ToolCallItem, ToolCallOutputItem

    asked = [(item.raw_item.name, json.loads(item.raw_item.arguments), item.raw_item.call_id)
             for item in result.new_items if isinstance(item, ToolCallItem)]
    given = {item.raw_item["call_id"]: item.output for item in result.new_items
             if isinstance(item, ToolCallOutputItem)}
    # the executed calls (parallel ones run concurrently) in the order the model asked for them,
    # each with the text the SDK gave the model for it
    calls = in_asked_order(RECORD.take(), asked)
    for call in calls:
        if "tool_call_id" in call:
            call["output_to_model"] = given.get(call["tool_call_id"])
    return corpus_turn_truth(prompt, calls, result.final_output)


async def main() -> None:
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
    from openai import AsyncOpenAI
    from openinference.instrumentation import using_session
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    collector = OtlpJsonCollector()
    provider = TracerProvider(resource=Resource.create({"service.name": "corpus-openai-agents-weather"}))
    provider.add_span_processor(SimpleSpanProcessor(collector))
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)

    runs = [("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
            ("run2_parallel", ["What's the weather in London and Tokyo?"]),
            ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
            ("run4_failing_tool", ["What's the weather in Atlantis?"])]
    with serve() as base_url:
        model = OpenAIChatCompletionsModel(model="gpt-4o-mini",
                                           openai_client=AsyncOpenAI(base_url=base_url, api_key="x"))
        agent = Agent(name="weather_agent",
                      instructions="You are a weather assistant. Use the tools to answer.",
                      tools=[function_tool(get_weather), function_tool(celsius_to_fahrenheit)],
                      model=model)
        for name, prompts in runs:
            collector.take()
            turns = []
            history: list[Any] = []
            config = RunConfig(group_id=f"corpus-{name}")
            with using_session(f"corpus-{name}"):
                for prompt in prompts:
                    # the first turn as a plain string, a later one as the history plus the new message
                    given = history + [{"role": "user", "content": prompt}] if history else prompt
                    result = await Runner.run(agent, given, run_config=config)
                    turns.append(turn_truth(prompt, result))
                    history = result.to_input_list()
            collector.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth = {**truth, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:300])
    provider.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
