"""Generate real CrewAI traces (OpenLIT instrumentation) with recorded ground truth.

A CrewAI ``Crew`` (one ``Agent``, one ``Task`` whose description is ``{request}``, the user's
text put in by ``crew.kickoff(inputs={"request": ...})``) with the three travel tools; its ``LLM``
is ``openai/gpt-4o-mini`` with ``base_url`` at the scripted OpenAI-compatible server
(``../scripted_openai.py``, scenario ``travel``) on 127.0.0.1. CrewAI 1.x talks to OpenAI models
through its native OpenAI provider (the ``openai`` SDK). Tracing is OpenLIT's, set up as its
documentation says: one ``openlit.init(...)`` call, which instruments every library it finds
(here CrewAI: crew, task and tool spans; and openai: the model calls; and the HTTP client) and reuses the OpenTelemetry
SDK ``TracerProvider`` already set globally (``SimpleSpanProcessor`` -> our collector) instead of
making its own. Message content is captured (its default), metrics and log events are off
(``disable_metrics``, ``disable_events``: no backend to send them to). CrewAI's own anonymous
telemetry is off with ``CREWAI_DISABLE_TELEMETRY=true`` (not ``OTEL_SDK_DISABLED``, which would
disable our SDK too). Spans are encoded by the SDK's OTLP encoder into OTLP/JSON.

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

import openlit  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import OtlpJsonCollector, ToolLog, turn_truth  # noqa: E402
from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.tools import BaseTool  # noqa: E402
from scripted_openai import TRAVEL_RUNS, serve  # noqa: E402

PRODUCER = f"openlit=={version('openlit')} + crewai=={version('crewai')}"

COLLECTOR = OtlpJsonCollector()
PROVIDER = TracerProvider(resource=Resource.create({"service.name": "crewai-travel-corpus"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(COLLECTOR))
trace.set_tracer_provider(PROVIDER)
PRICES = HERE / "pricing.json"  # no prices: OpenLIT would download its price list otherwise
openlit.init(application_name="travel-agent", environment="corpus", pricing_json=str(PRICES),
             disable_metrics=True, disable_events=True)


# --- the tools, and the ground truth they record ---------------------------------------------
# BaseTool subclasses, one of CrewAI's two documented ways to write a tool: OpenLIT traces
# ``BaseTool.run``, which the other way, the ``@tool`` decorator's ``Tool``, overrides (its calls
# get no span).

RECORD = ToolLog()


class SearchFlights(BaseTool):
    name: str = "search_flights"
    description: str = "Search the flights of a route ({\"from\": city, \"to\": city}) on some dates (YYYY-MM-DD)."

    def _run(self, route: dict[str, str], dates: list[str]) -> list[dict[str, Any]]:
        return RECORD.search_flights(route, dates)


class ListAirports(BaseTool):
    name: str = "list_airports"
    description: str = "List the airports the agency serves."

    def _run(self) -> list[dict[str, Any]]:
        return RECORD.list_airports()


class Book(BaseTool):
    name: str = "book"
    description: str = "Book a flight by its id; returns the confirmation."

    def _run(self, flight_id: str) -> str:
        return RECORD.book(flight_id)


def make_crew(base_url: str) -> Crew:
    llm = LLM(model="openai/gpt-4o-mini", base_url=base_url, api_key="not-needed")
    agent = Agent(role="Travel agent", goal="Search and book flights with the tools.",
                  backstory="You know no flights yourself; you always use the tools.",
                  tools=[SearchFlights(), ListAirports(), Book()], llm=llm, allow_delegation=False, max_iter=6)
    task = Task(description="{request}", expected_output="A short answer.", agent=agent)
    return Crew(agents=[agent], tasks=[task])


def run_turn(crew: Crew, prompt: str) -> dict[str, Any]:
    output = crew.kickoff(inputs={"request": prompt})
    return turn_truth(prompt, RECORD.take(), output.raw)


def main() -> None:
    with serve("travel") as base_url:
        for name, prompts in TRAVEL_RUNS.items():
            crew = make_crew(base_url)
            # Two turns are two kickoffs of the same crew (a Crew keeps no conversation between
            # kickoffs without an embedder for its memory; the script needs none).
            turns = [run_turn(crew, prompt) for prompt in prompts]
            PROVIDER.force_flush()
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth["producer"] = PRODUCER
            if len(turns) > 1:
                truth["conversation_note"] = "one Crew kicked off twice; each kickoff is its own trace (JSON lines)"
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2, ensure_ascii=False) + "\n")
            print(name, json.dumps(truth, ensure_ascii=False)[:400], flush=True)


if __name__ == "__main__":
    main()
