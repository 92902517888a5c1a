"""Generate real traces of the Langfuse Python SDK (``@observe`` + ``langfuse.openai``) with ground truth.

A travel-booking agent written in plain Python, traced the way Langfuse's documentation sets it
up: the agent's turn is a function decorated ``@observe(as_type="agent")``, each tool a function
decorated ``@observe(as_type="tool")``, and the model is called through Langfuse's drop-in
``from langfuse.openai import OpenAI`` client (``base_url`` = the scripted OpenAI-compatible
server, ``../scripted_openai.py``, scenario ``travel``, on 127.0.0.1). The program runs the tools
the model asks for and sends their results back. The two-turn run keeps one message list across
its turns and wraps both in ``propagate_attributes(session_id=...)``.

The Langfuse client is made with dummy keys and ``span_exporter=corpus_kit.OtlpJsonCollector()``
(a constructor argument of the SDK: the exporter its own ``LangfuseSpanProcessor`` hands its spans
to, in place of the OTLP/HTTP exporter to a Langfuse host), so the spans are kept exactly as the
SDK exports them and written as OTLP/JSON through the OpenTelemetry SDK's own encoder. No
Langfuse server is involved; ``base_url`` points at a closed port on 127.0.0.1 and nothing is sent
there.

The ground truth is recorded by this program: every call the tool functions really receive
(``corpus_kit.ToolLog``: arguments, result or raised error), the call ids and order of the
model's ``tool_calls``, and the text of the model's last reply. Nothing is read back from the
trace. A failed tool is reported to the model as the tool message ``Error: <message>``.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import TRAVEL_TOOLS, OtlpJsonCollector, ToolLog, in_asked_order, turn_truth  # noqa: E402
from scripted_openai import TRAVEL_RUNS, serve  # noqa: E402

PRODUCER = f"langfuse=={version('langfuse')} (@observe + langfuse.openai) + openai=={version('openai')}"
RECORD = ToolLog()
SYSTEM = "You are a travel agent. Use the tools to search and book flights."
COLLECTOR = OtlpJsonCollector()

from langfuse import Langfuse, observe, propagate_attributes  # noqa: E402
from langfuse.openai import OpenAI  # noqa: E402

LANGFUSE = Langfuse(public_key="pk-lf-corpus", secret_key="sk-lf-corpus", base_url="http://127.0.0.1:9",
                    span_exporter=COLLECTOR)


@observe(as_type="tool")
def search_flights(route: dict[str, Any], dates: list[str]) -> list[dict[str, Any]]:
    """Search the flights of a route on some dates."""
    return RECORD.search_flights(route, dates)


@observe(as_type="tool")
def list_airports() -> list[dict[str, Any]]:
    """List the airports the agency serves."""
    return RECORD.list_airports()


@observe(as_type="tool")
def book(flight_id: str) -> str:
    """Book a flight by its id; returns the confirmation."""
    return RECORD.book(flight_id)


TOOLS = {"search_flights": search_flights, "list_airports": list_airports, "book": book}


class TravelAgent:
    """One conversation: its messages, kept across turns."""

    def __init__(self, client: OpenAI) -> None:
        self.client = client
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        self.asked: list[tuple[str, dict[str, Any], str]] = []

    @observe(as_type="agent", name="travel_agent")
    def answer(self, question: str) -> str:
        """One user turn of the agent loop: its answer."""
        self.messages.append({"role": "user", "content": question})
        for _ in range(9):
            reply = self.client.chat.completions.create(model="gpt-4o-mini", messages=self.messages,
                                                        tools=TRAVEL_TOOLS)
            message = reply.choices[0].message
            calls = message.tool_calls or []
            self.messages.append({"role": "assistant", "content": message.content,
                                  **({"tool_calls": [c.model_dump() for c in calls]} if calls else {})})
            if not calls:
                return message.content or ""
            for call in calls:
                args = json.loads(call.function.arguments or "{}")
                self.asked.append((call.function.name, args, call.id))
                try:
                    result = TOOLS[call.function.name](**args)
                    content = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
                except Exception as error:  # the tool failed: the model is told, and carries on
                    content = f"Error: {error}"
                self.messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        raise RuntimeError(f"no answer to {question!r} after 9 model calls")


def run(client: OpenAI, name: str, prompts: list[str]) -> list[dict[str, Any]]:
    """The turns of one run, each with its ground truth."""
    agent = TravelAgent(client)
    turns = []
    for prompt in prompts:
        answer = agent.answer(prompt)
        turns.append(turn_truth(prompt, in_asked_order(RECORD.take(), agent.asked), answer))
        agent.asked = []
    return turns


def main() -> None:
    with serve("travel") as base_url:
        client = OpenAI(base_url=base_url, api_key="not-needed")
        for name, prompts in TRAVEL_RUNS.items():
            COLLECTOR.take()
            if len(prompts) > 1:
                with propagate_attributes(session_id=f"corpus-{name}", user_id="corpus-user"):
                    turns = run(client, name, prompts)
            else:
                turns = run(client, name, prompts)
            LANGFUSE.flush()
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            doc: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            doc = {**doc, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
            print(name, json.dumps(doc, ensure_ascii=False)[:200])
    LANGFUSE.shutdown()


if __name__ == "__main__":
    main()
