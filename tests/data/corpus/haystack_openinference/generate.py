"""Generate real traces of a Haystack ``Agent`` instrumented by OpenInference, with ground truth.

The travel-booking agent of the corpus kit: a ``haystack-ai`` ``Agent`` with an
``OpenAIChatGenerator(api_base_url=...)`` pointed at the scripted OpenAI-compatible server
(``../scripted_openai.py``, scenario ``travel``) on 127.0.0.1 and the three travel tools as
``haystack.tools.Tool`` objects. Tracing is ``openinference-instrumentation-haystack``'s
``HaystackInstrumentor().instrument(tracer_provider=...)``, as its documentation sets it up; its
spans go through the real OTel SDK (SimpleSpanProcessor) and the SDK's OTLP encoder into
OTLP/JSON. Haystack's own tracer is left off.

Ground truth (tool calls with the arguments the Python functions received, their results or errors,
the call ids and order of the ``ToolCall``s in the agent's returned messages, and the text of the
agent's last message) is recorded by this program, never read from the trace. The two-turn run
passes the first run's messages back into the second (Haystack has no session id).

Run (from this folder): ``python generate.py`` in a venv made from ``requirements.txt``.
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"

from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import TRAVEL_TOOLS, OtlpJsonCollector, ToolLog, in_asked_order, turn_truth  # noqa: E402
from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools import Tool  # noqa: E402
from haystack.utils import Secret  # noqa: E402
from openinference.instrumentation.haystack import HaystackInstrumentor  # noqa: E402
from scripted_openai import TRAVEL_RUNS, serve  # noqa: E402

COLLECTOR = OtlpJsonCollector()
PROVIDER = TracerProvider(resource=Resource.create({"service.name": "corpus-haystack-openinference-travel"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(COLLECTOR))
HaystackInstrumentor().instrument(tracer_provider=PROVIDER)  # wraps the component classes imported so far


PRODUCER = (f"openinference-instrumentation-haystack=={version('openinference-instrumentation-haystack')} "
            f"+ haystack-ai=={version('haystack-ai')}")
RECORD = ToolLog()
FUNCTIONS = {"search_flights": RECORD.search_flights, "list_airports": RECORD.list_airports, "book": RECORD.book}
TOOLS = [Tool(name=spec["function"]["name"], description=spec["function"]["description"],
              parameters=spec["function"]["parameters"], function=FUNCTIONS[spec["function"]["name"]])
         for spec in TRAVEL_TOOLS]


def make_agent(base_url: str) -> Agent:
    generator = OpenAIChatGenerator(model="gpt-4o-mini", api_base_url=base_url,
                                    api_key=Secret.from_token("not-needed"))
    agent = Agent(chat_generator=generator, tools=TOOLS,
                  system_prompt="You are a travel agent. Use the tools to search and book flights.",
                  max_agent_steps=8)
    agent.warm_up()
    return agent


def run_turn(agent: Agent, history: list[ChatMessage], prompt: str) -> tuple[dict[str, Any], list[ChatMessage]]:
    """One user turn: its ground truth, and the conversation so far (without the system prompt)."""
    result = agent.run(messages=[*history, ChatMessage.from_user(prompt)])
    messages: list[ChatMessage] = result["messages"]
    new = messages[len(history) + 1:] if messages[:len(history)] == history else messages
    asked = [(tc.tool_name, tc.arguments, tc.id) for m in new for tc in (m.tool_calls or [])]
    turn = turn_truth(prompt, in_asked_order(RECORD.take(), asked), result["last_message"].text)
    return turn, [m for m in messages if m.role.value != "system"]


def main() -> None:
    with serve("travel") as base_url:
        agent = make_agent(base_url)
        for name, prompts in TRAVEL_RUNS.items():
            history: list[ChatMessage] = []
            turns = []
            for prompt in prompts:
                turn, history = run_turn(agent, history, prompt)
                turns.append(turn)
            PROVIDER.force_flush()
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth["producer"] = PRODUCER
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2, ensure_ascii=False) + "\n")
            print(name, json.dumps(truth, ensure_ascii=False)[:300], flush=True)
    PROVIDER.shutdown()


if __name__ == "__main__":
    main()
