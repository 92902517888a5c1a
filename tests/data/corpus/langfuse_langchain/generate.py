"""Generate real traces of Langfuse's LangChain ``CallbackHandler`` with ground truth.

A LangChain tool-calling agent (``langchain.agents.create_agent``) with the travel tools made by
``@tool``, over ``ChatOpenAI(base_url=<scripted server>)`` (the scripted OpenAI-compatible
server, ``../scripted_openai.py``, scenario ``travel``, on 127.0.0.1). A tool that raises is
returned to the model as an error ``ToolMessage`` by LangChain's ``ToolErrorMiddleware``
(``Error: <message>``); without it the run would stop at the first failing tool. Tracing is
Langfuse's, as its documentation sets it up: ``from langfuse.langchain import CallbackHandler``,
passed in ``config={"callbacks": [handler]}`` of each ``invoke``; the two-turn run sends the
first turn's messages plus the new question and sets the session with the handler's
``langfuse_session_id`` metadata key.

The Langfuse client is made with dummy keys and ``span_exporter=corpus_kit.OtlpJsonCollector()``
(a constructor argument of the SDK: the exporter its own ``LangfuseSpanProcessor`` hands its spans
to, in place of the OTLP/HTTP exporter to a Langfuse host), so the spans are kept exactly as the
SDK exports them and written as OTLP/JSON through the OpenTelemetry SDK's own encoder. No
Langfuse server is involved; ``base_url`` points at a closed port on 127.0.0.1 and nothing is sent
there.

The ground truth is recorded by this program: every call the tool functions really receive
(``corpus_kit.ToolLog``: arguments, result or raised error), the call ids and order of the tool
calls in the turn's ``AIMessage``s, and the text of the turn's last ``AIMessage``. Nothing is read
back from the trace.

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
from corpus_kit import OtlpJsonCollector, ToolLog, in_asked_order, turn_truth  # noqa: E402
from scripted_openai import TRAVEL_RUNS, serve  # noqa: E402

PRODUCER = (f"langfuse=={version('langfuse')} (langfuse.langchain.CallbackHandler) + langchain=={version('langchain')}"
            f" + langchain-openai=={version('langchain-openai')} + langgraph=={version('langgraph')}")
RECORD = ToolLog()
SYSTEM = "You are a travel agent. Use the tools to search and book flights."
COLLECTOR = OtlpJsonCollector()

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import ToolErrorMiddleware  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langfuse import Langfuse  # noqa: E402
from langfuse.langchain import CallbackHandler  # noqa: E402

LANGFUSE = Langfuse(public_key="pk-lf-corpus", secret_key="sk-lf-corpus", base_url="http://127.0.0.1:9",
                    span_exporter=COLLECTOR)


@tool
def search_flights(route: dict[str, str], dates: list[str]) -> list[dict[str, Any]]:
    """Search the flights of a route on some dates.

    Args:
        route: Where from and where to, by city: {"from": ..., "to": ...}.
        dates: Dates, YYYY-MM-DD.
    """
    return RECORD.search_flights(route, dates)


@tool
def list_airports() -> list[dict[str, Any]]:
    """List the airports the agency serves."""
    return RECORD.list_airports()


@tool
def book(flight_id: str) -> str:
    """Book a flight by its id; returns the confirmation."""
    return RECORD.book(flight_id)


def on_error(error: Exception, request: Any) -> str:
    """A failed tool is reported to the model, which carries on."""
    return f"Error: {error}"


def turn(agent: Any, messages: list[Any], prompt: str, config: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """One user turn: its ground truth and the conversation's messages after it."""
    messages = [*messages, HumanMessage(prompt)]
    result = agent.invoke({"messages": messages}, config=config)
    new = result["messages"][len(messages):]
    asked = [(c["name"], c["args"], c["id"]) for m in new if isinstance(m, AIMessage) for c in m.tool_calls]
    answer = next(m for m in reversed(new) if isinstance(m, AIMessage))
    return turn_truth(prompt, in_asked_order(RECORD.take(), asked), answer.text), result["messages"]


def main() -> None:
    with serve("travel") as base_url:
        model = ChatOpenAI(model="gpt-4o-mini", base_url=base_url, api_key="not-needed")
        agent = create_agent(model, tools=[search_flights, list_airports, book], system_prompt=SYSTEM,
                             middleware=[ToolErrorMiddleware(on_error=on_error)])
        for name, prompts in TRAVEL_RUNS.items():
            COLLECTOR.take()
            handler = CallbackHandler()
            config: dict[str, Any] = {"callbacks": [handler]}
            if len(prompts) > 1:
                config["metadata"] = {"langfuse_session_id": f"corpus-{name}", "langfuse_user_id": "corpus-user"}
            messages: list[Any] = []
            turns = []
            for prompt in prompts:
                truth, messages = turn(agent, messages, prompt, config)
                turns.append(truth)
            LANGFUSE.flush()
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            doc: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            doc = {**doc, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
            print(name, json.dumps(doc, ensure_ascii=False)[:200])
    LANGFUSE.shutdown()


if __name__ == "__main__":
    main()
