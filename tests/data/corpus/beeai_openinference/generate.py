"""Generate real traces of a BeeAI Framework ``RequirementAgent`` instrumented by OpenInference,
with ground truth.

The travel-booking agent of the corpus kit: a ``beeai-framework`` ``RequirementAgent`` (the
framework's recommended tool-calling agent) with the three travel tools (``@tool`` functions;
the list results returned as ``JSONToolOutput``, ``book``'s sentence as a string) and an
``UnconstrainedMemory``, the model an ``OpenAIChatModel`` (the framework's OpenAI adapter) with
``base_url`` pointed at the scripted OpenAI-compatible server (``../scripted_openai.py``,
scenario ``travel``) on 127.0.0.1. The agent offers the model its own ``final_answer`` tool
and ends a turn when the model calls it; the scripted server answers through that tool when it
is offered. Tracing is ``openinference-instrumentation-beeai``'s
``BeeAIInstrumentor().instrument(tracer_provider=...)``, as its documentation sets it up; spans
go through the real OTel SDK (SimpleSpanProcessor) and the SDK's OTLP encoder into OTLP/JSON.

Ground truth (tool calls with the arguments the Python functions received, their results or
errors; the call ids and order of the tool calls in the agent's memory; the agent's answer text)
is recorded by this program, never read from the trace. The two-turn run asks the same agent
twice: its memory holds the first turn when the second is asked.

Run (from this folder): ``python generate.py`` in a venv made from ``requirements.txt``.
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
from beeai_framework.adapters.openai import OpenAIChatModel  # noqa: E402
from beeai_framework.agents.requirement import RequirementAgent  # noqa: E402
from beeai_framework.backend import AssistantMessage, MessageToolCallContent  # noqa: E402
from beeai_framework.memory import UnconstrainedMemory  # noqa: E402
from beeai_framework.tools import JSONToolOutput, tool  # noqa: E402
from corpus_kit import OtlpJsonCollector, ToolLog, in_asked_order, turn_truth  # noqa: E402
from openinference.instrumentation.beeai import BeeAIInstrumentor  # noqa: E402
from scripted_openai import TRAVEL_RUNS, serve  # noqa: E402

COLLECTOR = OtlpJsonCollector()
PROVIDER = TracerProvider(resource=Resource.create({"service.name": "corpus-beeai-openinference-travel"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(COLLECTOR))
BeeAIInstrumentor().instrument(tracer_provider=PROVIDER)

PRODUCER = (f"openinference-instrumentation-beeai=={version('openinference-instrumentation-beeai')} "
            f"+ beeai-framework=={version('beeai-framework')}")
RECORD = ToolLog()


@tool
def search_flights(route: dict[str, str], dates: list[str]) -> JSONToolOutput[list[dict[str, Any]]]:
    """Search the flights of a route on some dates.

    Args:
        route: Where from and where to, by city: {"from": ..., "to": ...}.
        dates: Dates, YYYY-MM-DD.
    """
    return JSONToolOutput(RECORD.search_flights(route, dates))


@tool
def list_airports() -> JSONToolOutput[list[dict[str, Any]]]:
    """List the airports the agency serves."""
    return JSONToolOutput(RECORD.list_airports())


@tool
def book(flight_id: str) -> str:
    """Book a flight by its id; returns the confirmation.

    Args:
        flight_id: The flight's id.
    """
    return RECORD.book(flight_id)


def make_agent(base_url: str) -> RequirementAgent:
    llm = OpenAIChatModel("gpt-4o-mini", base_url=base_url, api_key="not-needed", allow_parallel_tool_calls=True,
                          tool_choice_support={"required", "none", "single", "auto"})
    return RequirementAgent(llm=llm, tools=[search_flights, list_airports, book], memory=UnconstrainedMemory(),
                            instructions="You are a travel agent. Use the tools to search and book flights.")


async def run_turn(agent: RequirementAgent, prompt: str) -> dict[str, Any]:
    """One user turn: its ground truth."""
    seen = len(agent.memory.messages)
    output = await agent.run(prompt)
    new = agent.memory.messages[seen:]
    asked = [(c.tool_name, json.loads(c.args or "{}"), c.id) for m in new if isinstance(m, AssistantMessage)
             for c in m.get_tool_calls() if isinstance(c, MessageToolCallContent) and c.tool_name != "final_answer"]
    return turn_truth(prompt, in_asked_order(RECORD.take(), asked), output.last_message.text)


async def main() -> None:
    with serve("travel") as base_url:
        for name, prompts in TRAVEL_RUNS.items():
            agent = make_agent(base_url)
            turns = [await run_turn(agent, prompt) for prompt in prompts]
            PROVIDER.force_flush()
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth["producer"] = PRODUCER
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2, ensure_ascii=False) + "\n")
            print(name, json.dumps(truth, ensure_ascii=False)[:300], flush=True)
    PROVIDER.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
