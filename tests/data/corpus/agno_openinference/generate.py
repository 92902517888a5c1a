"""Generate real Agno traces (OpenInference instrumentation) with ground truth.

An Agno ``Agent`` over ``OpenAILike`` talks to the scripted OpenAI-compatible server
(``../scripted_openai.py``) on 127.0.0.1; ``AgnoInstrumentor`` traces it as a user would set it up,
into an OpenTelemetry SDK ``TracerProvider`` whose ``SimpleSpanProcessor`` hands the spans to an
exporter that encodes them with the SDK's own OTLP encoder and writes OTLP/JSON.

The ground truth is recorded by this program: every call the tool functions really receive (their
arguments, result or raised error), the call ids from the returned ``RunOutput.tools``, and the
answer ``agent.run`` returns (``RunOutput.content``). Nothing is read back from the trace. The
multi-turn run keeps one Agent with one ``session_id``, an ``InMemoryDb`` and
``add_history_to_context=True``, so the second turn sends the first one to the model.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

from __future__ import annotations

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

PRODUCER = (f"openinference-instrumentation-agno=={version('openinference-instrumentation-agno')}"
            f" + agno=={version('agno')}")


RECORD = ToolLog()


def get_weather(city: str) -> dict:
    """Get the current weather for a city, e.g. "Paris".

    Args:
        city: The name of the city.
    """
    return RECORD.get_weather(city)


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit.

    Args:
        celsius: The temperature in degrees Celsius.
    """
    return RECORD.celsius_to_fahrenheit(celsius)


def turn_truth(prompt: str, output: Any) -> dict[str, Any]:
    # the executed calls in the order the model asked for them (RunOutput.tools), with their ids
    asked = [(tool.tool_name, dict(tool.tool_args or {}), tool.tool_call_id) for tool in output.tools or []]
    return corpus_turn_truth(prompt, in_asked_order(RECORD.take(), asked), output.content)


def main() -> None:
    from agno.agent import Agent
    from agno.db.in_memory import InMemoryDb
    from agno.models.openai import OpenAILike
    from openinference.instrumentation.agno import AgnoInstrumentor

    collector = OtlpJsonCollector()
    provider = TracerProvider(resource=Resource.create({"service.name": "corpus-agno-weather"}))
    provider.add_span_processor(SimpleSpanProcessor(collector))
    AgnoInstrumentor().instrument(tracer_provider=provider)

    runs = [("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
            ("run2_parallel", ["What's the weather in London and Tokyo?"]),
            ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
            ("run4_failing_tool", ["What's the weather in Atlantis?"])]
    with serve() as base_url:
        for name, prompts in runs:
            agent = Agent(
                name="weather_agent",
                model=OpenAILike(id="gpt-4o-mini", base_url=base_url, api_key="not-needed"),
                instructions="You are a weather assistant. Use the tools to answer.",
                tools=[get_weather, celsius_to_fahrenheit],
                db=InMemoryDb(),  # one conversation: later turns see the earlier ones
                session_id=f"corpus-{name}",
                add_history_to_context=True,
                telemetry=False)
            collector.take()
            turns = [turn_truth(prompt, agent.run(prompt)) for prompt in prompts]
            collector.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth = {**truth, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:400])
    provider.shutdown()


if __name__ == "__main__":
    main()
