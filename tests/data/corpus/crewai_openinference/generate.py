"""Generate real CrewAI traces (OpenInference instrumentation) with recorded ground truth.

A CrewAI ``Crew`` (one ``Agent``, one ``Task``) with the two weather tools; its ``LLM`` is
``openai/gpt-4o-mini`` with ``base_url`` at the scripted OpenAI-compatible server
(``../scripted_openai.py``) on 127.0.0.1. CrewAI 1.x talks to OpenAI models through its native
OpenAI provider (the ``openai`` SDK, not litellm), so the instrumentation a user sets up is
``openinference-instrumentation-crewai`` (crew, agent and tool spans) plus
``openinference-instrumentation-openai`` (the LLM calls). CrewAI's own anonymous telemetry is off
with ``CREWAI_DISABLE_TELEMETRY=true`` (not ``OTEL_SDK_DISABLED``, which would disable our SDK too).
Spans are exported with the real OTel SDK (SimpleSpanProcessor) and encoded by the SDK's OTLP encoder
into OTLP/JSON.

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

os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"
os.environ.setdefault("OPENAI_API_KEY", "not-needed")

from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import OtlpJsonCollector, ToolLog, turn_truth  # noqa: E402
from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.tools import tool  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.crewai import CrewAIInstrumentor  # noqa: E402
from openinference.instrumentation.openai import OpenAIInstrumentor  # noqa: E402
from scripted_openai import serve  # noqa: E402

PRODUCER = (f"openinference-instrumentation-crewai=={version('openinference-instrumentation-crewai')} + "
            f"openinference-instrumentation-openai=={version('openinference-instrumentation-openai')} + "
            f"crewai=={version('crewai')}")


COLLECTOR = OtlpJsonCollector()
PROVIDER = TracerProvider(resource=Resource.create({"service.name": "crewai-weather-corpus"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(COLLECTOR))
CrewAIInstrumentor().instrument(tracer_provider=PROVIDER)
OpenAIInstrumentor().instrument(tracer_provider=PROVIDER)


# --- the tools, and the ground truth they record ---------------------------------------------

RECORD = ToolLog()


@tool("get_weather")
def get_weather(city: str) -> dict:
    """Get the current weather (temperature in Celsius) for a city."""
    return RECORD.get_weather(city)


@tool("celsius_to_fahrenheit")
def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit."""
    return RECORD.celsius_to_fahrenheit(celsius)


def make_crew(base_url: str) -> Crew:
    llm = LLM(model="openai/gpt-4o-mini", base_url=base_url, api_key="not-needed")
    agent = Agent(role="Weather assistant", goal="Answer weather questions with the tools.",
                  backstory="You know nothing about the weather yourself; you always use the tools.",
                  tools=[get_weather, celsius_to_fahrenheit], llm=llm, allow_delegation=False, max_iter=5)
    task = Task(description="{question}", expected_output="A short answer.", agent=agent)
    return Crew(agents=[agent], tasks=[task])


def run_turn(crew: Crew, prompt: str) -> dict[str, Any]:
    output = crew.kickoff(inputs={"question": prompt})
    return turn_truth(prompt, RECORD.take(), output.raw)


RUNS = [
    ("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
    ("run2_parallel", ["What's the weather in London and Tokyo?"]),
    ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
    ("run4_failing_tool", ["What's the weather in Atlantis?"]),
]
SESSION_ID = "crewai-trip-session-1"


def main() -> None:
    with serve() as base_url:
        for name, prompts in RUNS:
            crew = make_crew(base_url)
            if len(prompts) > 1:
                # A Crew keeps no conversation between kickoffs (short-term memory needs an embedder);
                # the session is OpenInference's session id, set as a user would with using_session.
                with using_session(SESSION_ID):
                    turns = [run_turn(crew, prompt) for prompt in prompts]
            else:
                turns = [run_turn(crew, prompts[0])]
            PROVIDER.force_flush()
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth["producer"] = PRODUCER
            if len(turns) > 1:
                truth["session_id"] = SESSION_ID
                truth["conversation_note"] = ("one Crew kicked off twice inside openinference using_session(); "
                                              "each kickoff is its own trace (JSON lines)")
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:400], flush=True)


if __name__ == "__main__":
    main()
