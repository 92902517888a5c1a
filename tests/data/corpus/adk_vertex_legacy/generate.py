"""Generate real traces of Google ADK 1.0's own ``gcp.vertex.agent.*`` telemetry with ground truth.

A travel-booking ``LlmAgent`` (google-adk 1.0.0, the first 1.x release; its spans carry their
content only in ``gcp.vertex.agent.*`` keys, with tool calls and tool responses on spans of
their own) with the three travel tools, its model ``LiteLlm(model="openai/gpt-4o-mini",
api_base=<scripted server>)`` against the scripted OpenAI-compatible server
(``../scripted_openai.py``, scenario ``travel``) on 127.0.0.1, run by an ``InMemoryRunner``.
Tracing is ADK's own: it asks the global OpenTelemetry tracer provider for the tracer
``gcp.vertex.agent``; the generator sets an SDK ``TracerProvider`` globally before ADK is
imported (``SimpleSpanProcessor`` -> ``corpus_kit.OtlpJsonCollector``, OTLP/JSON through the
SDK's own encoder). Nothing else is instrumented and the program opens no span of its own.

The ground truth is recorded by this program: every call the tool functions really receive
(``corpus_kit.ToolLog``: arguments, result or raised error), the call ids and order of the
model's function calls (from the runner's events), and the text of the agent's final response
event. Nothing is read back from the trace. ADK 1.0 lets an exception a tool raises end the
whole run, so the tools given to the agent report a failure the way ADK's own ``FunctionTool``
does: they return ``{"error": "<message>"}`` to the model. The two-turn run sends both prompts
to one session (id ``corpus-run3_multi_turn``).

The tools' annotations must be real types (no ``from __future__ import annotations``): ADK 1.0
builds the function declarations from them.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

import asyncio
import json
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # the bundled price list, no download

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import OtlpJsonCollector, ToolLog, in_asked_order, turn_truth  # noqa: E402
from scripted_openai import TRAVEL_RUNS, serve  # noqa: E402

PRODUCER = f"google-adk=={version('google-adk')} (gcp.vertex.agent telemetry) + litellm=={version('litellm')}"
RECORD = ToolLog()
APP, USER = "corpus_travel", "corpus-traveller"


def _reported(call: Any) -> Any:
    """``call()``'s result, or ADK's error object for a tool that failed."""
    try:
        return call()
    except Exception as error:  # ADK 1.0 would end the run: the model is told instead
        return {"error": str(error)}


def search_flights(route: dict[str, str], dates: list[str]) -> Any:
    """Search the flights of a route on some dates.

    Args:
      route: Where from and where to, by city: {"from": ..., "to": ...}.
      dates: Dates, YYYY-MM-DD.
    """
    return _reported(lambda: RECORD.search_flights(route, dates))


def list_airports() -> Any:
    """List the airports the agency serves."""
    return _reported(RECORD.list_airports)


def book(flight_id: str) -> Any:
    """Book a flight by its id; returns the confirmation.

    Args:
      flight_id: The flight's id.
    """
    return _reported(lambda: RECORD.book(flight_id))


async def run_turn(runner: Any, session_id: str, prompt: str) -> dict[str, Any]:
    """One user turn; its ground truth."""
    from google.genai import types

    asked: list[tuple[str, dict[str, Any], str]] = []
    answer = None
    message = types.Content(role="user", parts=[types.Part(text=prompt)])
    async for event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
        for call in event.get_function_calls():
            asked.append((call.name, dict(call.args or {}), call.id))
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(p.text for p in event.content.parts if p.text) or answer
    return turn_truth(prompt, in_asked_order(RECORD.take(), asked), answer)


async def main() -> None:
    collector = OtlpJsonCollector()
    provider = TracerProvider(resource=Resource.create({"service.name": "corpus-adk-travel"}))
    provider.add_span_processor(SimpleSpanProcessor(collector))
    trace.set_tracer_provider(provider)

    from google.adk.agents import LlmAgent
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.runners import InMemoryRunner

    with serve("travel") as base_url:
        agent = LlmAgent(
            name="travel_agent",
            model=LiteLlm(model="openai/gpt-4o-mini", api_base=base_url, api_key="not-needed"),
            instruction="You are a travel agent. Use the tools to search and book flights.",
            tools=[search_flights, list_airports, book],
        )
        runner = InMemoryRunner(agent=agent, app_name=APP)
        for name, prompts in TRAVEL_RUNS.items():
            collector.take()
            session_id = f"corpus-{name}"
            await runner.session_service.create_session(app_name=APP, user_id=USER, session_id=session_id)
            turns = [await run_turn(runner, session_id, prompt) for prompt in prompts]
            collector.write(HERE / f"{name}.otlp.json")
            doc: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            doc = {**doc, "producer": PRODUCER}
            if len(turns) > 1:
                doc["conversation_note"] = (f"two runner.run_async calls in one InMemoryRunner session "
                                            f"{session_id!r}; each call is its own trace (JSON lines)")
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
            print(name, json.dumps(doc, ensure_ascii=False)[:300])
    provider.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
