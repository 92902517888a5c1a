"""Generate real traces of Logfire instrumenting the OpenAI Agents SDK, with ground truth.

The travel-booking agent of the corpus kit: an ``agents.Agent`` with three ``@function_tool``
tools (``search_flights``, ``list_airports``, ``book``), run by ``Runner.run`` over
``OpenAIChatCompletionsModel`` (an ``AsyncOpenAI`` client whose ``base_url`` is the scripted
OpenAI-compatible server, ``../scripted_openai.py``, scenario ``travel``, on 127.0.0.1). Tracing is
Logfire's, as its documentation sets it up: ``logfire.configure(send_to_logfire=False, ...)`` then
``logfire.instrument_openai_agents()``. Logfire's own OpenTelemetry ``TracerProvider`` hands every
span to the processor given in ``additional_span_processors`` (``SimpleSpanProcessor`` ->
``corpus_kit.OtlpJsonCollector``, OTLP/JSON through the SDK's own encoder); the console output is
off. Nothing else is instrumented and the program opens no span of its own, besides the Agents
SDK's ``trace()`` that holds both turns of the two-turn run.

The ground truth is recorded by this program: every call the tool functions really receive
(``corpus_kit.ToolLog``: arguments, result or raised error), the call ids and the model's order
from the run result's ``ToolCallItem`` items, what the SDK handed the model for each call
(``ToolCallOutputItem``), and the run's ``final_output``. Nothing is read back from the trace. The
two-turn run passes the first result's ``to_input_list()`` plus the new user message to the second
``Runner.run``, both inside one ``trace(..., group_id=...)``.

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

PRODUCER = (f"logfire=={version('logfire')} (instrument_openai_agents) + openai-agents=={version('openai-agents')}"
            f" + openai=={version('openai')}")
RECORD = ToolLog()
Route = TypedDict("Route", {"from": str, "to": str})


def search_flights(route: Route, dates: list[str]) -> list[dict[str, Any]]:
    """Search the flights of a route on some dates.

    Args:
        route: Where from and where to, by city.
        dates: Dates, YYYY-MM-DD.
    """
    return RECORD.search_flights(dict(route), list(dates))


def list_airports() -> list[dict[str, Any]]:
    """List the airports the agency serves."""
    return RECORD.list_airports()


def book(flight_id: str) -> str:
    """Book a flight by its id; returns the confirmation."""
    return RECORD.book(flight_id)


def truth_of(prompt: str, result: Any) -> dict[str, Any]:
    from agents import ToolCallItem, ToolCallOutputItem

    asked = [(item.raw_item.name, json.loads(item.raw_item.arguments), item.raw_item.call_id)
             for item in result.new_items if isinstance(item, ToolCallItem)]
    given = {item.raw_item["call_id"]: item.output for item in result.new_items
             if isinstance(item, ToolCallOutputItem)}
    calls = in_asked_order(RECORD.take(), asked)
    for call in calls:
        if "tool_call_id" in call:
            call["output_to_model"] = given.get(call["tool_call_id"])
    return turn_truth(prompt, calls, result.final_output)


async def main() -> None:
    import logfire
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, trace
    from openai import AsyncOpenAI
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    collector = OtlpJsonCollector()
    logfire.configure(send_to_logfire=False, console=False, service_name="corpus-logfire-openai-agents-travel",
                      additional_span_processors=[SimpleSpanProcessor(collector)])
    logfire.instrument_openai_agents()

    with serve("travel") as base_url:
        model = OpenAIChatCompletionsModel(model="gpt-4o-mini",
                                           openai_client=AsyncOpenAI(base_url=base_url, api_key="x"))
        agent = Agent(name="travel_agent",
                      instructions="You are a travel agent. Use the tools to search and book flights.",
                      tools=[function_tool(search_flights), function_tool(list_airports), function_tool(book)],
                      model=model)
        for name, prompts in TRAVEL_RUNS.items():
            collector.take()
            turns = []
            history: list[Any] = []
            with trace("Travel conversation", group_id=f"corpus-{name}"):
                for prompt in prompts:
                    # the first turn as a plain string, a later one as the history plus the new message
                    given = history + [{"role": "user", "content": prompt}] if history else prompt
                    result = await Runner.run(agent, given)
                    turns.append(truth_of(prompt, result))
                    history = result.to_input_list()
            logfire.force_flush()
            collector.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth = {**truth, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2, ensure_ascii=False) + "\n")
            print(name, json.dumps(truth, ensure_ascii=False)[:300])
    logfire.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
