"""Generate real smolagents traces (OpenInference instrumentation) with ground truth.

A ``ToolCallingAgent`` over ``OpenAIServerModel`` talks to the scripted OpenAI-compatible server
(``../scripted_openai.py``) on 127.0.0.1; ``SmolagentsInstrumentor`` traces it as a user would set
it up, into an OpenTelemetry SDK ``TracerProvider`` whose ``SimpleSpanProcessor`` hands the spans
to an exporter that encodes them with the SDK's own OTLP encoder and writes OTLP/JSON.

The ground truth is recorded by this program: every call the tool functions really receive (their
arguments, result or raised error), the call ids from the agent's own memory, and the answer
``agent.run`` returns. Nothing is read back from the trace.

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

PRODUCER = (f"openinference-instrumentation-smolagents=={version('openinference-instrumentation-smolagents')}"
            f" + smolagents=={version('smolagents')}")


RECORD = ToolLog()


from smolagents import OpenAIServerModel, ToolCallingAgent, tool  # noqa: E402
from smolagents.memory import ActionStep  # noqa: E402


@tool
def get_weather(city: str) -> dict:
    """Get the current weather for a city.

    Args:
        city: The name of the city, e.g. "Paris".
    """
    return RECORD.get_weather(city)


@tool
def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit.

    Args:
        celsius: The temperature in degrees Celsius.
    """
    return RECORD.celsius_to_fahrenheit(celsius)


def model_calls(agent: ToolCallingAgent, first_step: int) -> list[tuple[str, dict[str, Any], str]]:
    """(name, arguments, id) of the tool calls the model asked for, in its order, from the agent's memory."""
    calls = []
    for step in agent.memory.steps[first_step:]:
        if isinstance(step, ActionStep) and step.model_output_message and step.model_output_message.tool_calls:
            for call in step.model_output_message.tool_calls:
                args = call.function.arguments
                calls.append((call.function.name, json.loads(args) if isinstance(args, str) else args, call.id))
    return calls


def turn_truth(agent: ToolCallingAgent, prompt: str, first_step: int, answer: Any) -> dict[str, Any]:
    # the executed calls (parallel ones run on threads) in the order the model asked for them
    return corpus_turn_truth(prompt, in_asked_order(RECORD.take(), model_calls(agent, first_step)), answer)


def main() -> None:
    from openinference.instrumentation import using_session
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    collector = OtlpJsonCollector()
    provider = TracerProvider(resource=Resource.create({"service.name": "corpus-smolagents-weather"}))
    provider.add_span_processor(SimpleSpanProcessor(collector))
    SmolagentsInstrumentor().instrument(tracer_provider=provider)

    runs = [("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
            ("run2_parallel", ["What's the weather in London and Tokyo?"]),
            ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
            ("run4_failing_tool", ["What's the weather in Atlantis?"])]
    with serve() as base_url:
        for name, prompts in runs:
            model = OpenAIServerModel(model_id="gpt-4o-mini", api_base=base_url, api_key="not-needed")
            agent = ToolCallingAgent(tools=[get_weather, celsius_to_fahrenheit], model=model,
                                     max_steps=5, verbosity_level=0)
            collector.take()
            turns = []
            with using_session(f"corpus-{name}"):
                for index, prompt in enumerate(prompts):
                    first_step = len(agent.memory.steps)
                    answer = agent.run(prompt, reset=index == 0)  # later turns continue the same memory
                    turns.append(turn_truth(agent, prompt, first_step, answer))
            collector.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth = {**truth, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:300])
    provider.shutdown()


if __name__ == "__main__":
    main()
