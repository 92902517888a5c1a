"""Generate real pydantic-ai traces with ``event_mode='logs'``, of which only the spans are kept.

The travel-booking agent of the corpus kit: a pydantic-ai ``Agent`` over ``OpenAIChatModel``
(``OpenAIProvider(base_url=<scripted server>)``, the scripted OpenAI-compatible server
``../scripted_openai.py``, scenario ``travel``, on 127.0.0.1) with three plain tools
(``search_flights``, ``list_airports``, ``book``). Instrumentation is pydantic-ai's own, as its
documentation sets it up: ``Agent(instrument=InstrumentationSettings(tracer_provider=...,
event_mode='logs'))``. ``event_mode='logs'`` selects the instrumentation's data format version 1,
in which the messages of each model call are emitted as OpenTelemetry log events instead of span
attributes. No logger provider is configured, so those log events go to OpenTelemetry's default
no-op one and are lost: the program keeps only the spans (``SimpleSpanProcessor`` ->
``corpus_kit.OtlpJsonCollector``, OTLP/JSON through the SDK's own encoder), as a user exporting
only traces does.

A failing booking is reported to the model the way pydantic-ai documents it: the tool raises
``ModelRetry`` with the error's message, and the model is asked to try again.

The ground truth is recorded by this program: every call the tool functions really receive
(``corpus_kit.ToolLog``: arguments, result or raised error), the call ids and the model's order
from the run's ``ToolCallPart``s, and the run's ``output``. Nothing is read back from the trace.
The two-turn run passes the first run's ``all_messages()`` as the second's ``message_history``.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import OtlpJsonCollector, ToolLog, in_asked_order, turn_truth  # noqa: E402
from scripted_openai import TRAVEL_RUNS, serve  # noqa: E402

PRODUCER = f"pydantic-ai-slim=={version('pydantic-ai-slim')} (event_mode='logs', spans only) + openai=={version('openai')}"
RECORD = ToolLog()
Route = TypedDict("Route", {"from": str, "to": str})
"""Where from and where to, by city."""


def truth_of(prompt: str, result: Any) -> dict[str, Any]:
    from pydantic_ai.messages import ModelResponse, ToolCallPart

    asked = [(part.tool_name, part.args_as_dict(), part.tool_call_id)
             for message in result.new_messages() if isinstance(message, ModelResponse)
             for part in message.parts if isinstance(part, ToolCallPart)]
    return turn_truth(prompt, in_asked_order(RECORD.take(), asked), result.output)


async def main() -> None:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    collector = OtlpJsonCollector()
    provider = TracerProvider(resource=Resource.create({"service.name": "corpus-pydantic-ai-travel"}))
    provider.add_span_processor(SimpleSpanProcessor(collector))

    with serve("travel") as base_url:
        model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=base_url, api_key="x"))
        agent = Agent(model, name="travel_agent",
                      system_prompt="You are a travel agent. Use the tools to search and book flights.",
                      instrument=InstrumentationSettings(tracer_provider=provider, event_mode="logs"))

        @agent.tool_plain
        def search_flights(route: Route, dates: list[str]) -> list[dict[str, Any]]:
            """Search the flights of a route on some dates.

            Args:
                route: Where from and where to, by city.
                dates: Dates, YYYY-MM-DD.
            """
            return RECORD.search_flights(dict(route), list(dates))

        @agent.tool_plain
        def list_airports() -> list[dict[str, Any]]:
            """List the airports the agency serves."""
            return RECORD.list_airports()

        @agent.tool_plain
        def book(flight_id: str) -> str:
            """Book a flight by its id; returns the confirmation."""
            try:
                return RECORD.book(flight_id)
            except ValueError as error:
                raise ModelRetry(str(error)) from error

        for name, prompts in TRAVEL_RUNS.items():
            collector.take()
            turns = []
            history: list[Any] | None = None
            for prompt in prompts:
                result = await agent.run(prompt, message_history=history)
                turns.append(truth_of(prompt, result))
                history = result.all_messages()
            collector.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth = {**truth, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2, ensure_ascii=False) + "\n")
            print(name, json.dumps(truth, ensure_ascii=False)[:300])
    provider.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
