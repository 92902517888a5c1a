"""Generate real traces of a LangGraph ``Send`` fan-out (OpenInference instrumentation) with ground truth.

The travel-booking agent of the corpus kit built as LangGraph users build a fan-out: a
``StateGraph`` over a ``messages`` state whose ``agent`` node calls ``ChatOpenAI`` (``base_url``
the scripted OpenAI-compatible server, ``../scripted_openai.py``, scenario ``travel``, on
127.0.0.1) with the three ``@tool`` tools bound; a conditional edge (``fan_out``) sends each tool
call of the reply to the ``run_tool`` node with ``Send("run_tool", {"call": tool_call})``, or ends
the run when the reply asks for none. ``run_tool`` runs its one call with ``tool.invoke(call)``
(LangChain's ``ToolCall`` form, which returns a ``ToolMessage``) and a failing tool becomes a
``ToolMessage(status="error")`` with the error text; the messages are gathered back into the
state by ``add_messages`` and the graph returns to ``agent``. ``LangChainInstrumentor`` traces it
as its documentation sets it up, into an OpenTelemetry SDK ``TracerProvider`` whose
``SimpleSpanProcessor`` hands the spans to ``corpus_kit.OtlpJsonCollector`` (OTLP/JSON through the
SDK's own encoder).

The ground truth is recorded by this program: every call the tool functions really receive
(``corpus_kit.ToolLog``: arguments, result or raised error), the call ids and order of the model's
``tool_calls`` (from the returned state's messages), the text of the last reply, and the graph's
course as the nodes and the edge saw it: each node records its name and LangGraph step (from its
``config``), the edge the branches it returned. Nothing is read back from the trace. The two-turn
run keeps its conversation in an ``InMemorySaver`` checkpointer under one ``thread_id``.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

from __future__ import annotations

import json
import sys
import threading
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Send
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import OtlpJsonCollector, ToolLog, in_asked_order, turn_truth  # noqa: E402
from scripted_openai import TRAVEL_RUNS, serve  # noqa: E402

PRODUCER = (f"openinference-instrumentation-langchain=={version('openinference-instrumentation-langchain')}"
            f" + langgraph=={version('langgraph')} + langchain-openai=={version('langchain-openai')}"
            f" + langchain-core=={version('langchain-core')}")
RECORD = ToolLog()
SYSTEM = "You are a travel agent. Use the tools to search and book flights."


class Course:
    """The graph's course in one turn, as the nodes and the conditional edge record it."""

    def __init__(self) -> None:
        self.steps: dict[int, list[str]] = {}
        self.branches: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def node(self, name: str, config: Any) -> None:
        with self._lock:
            self.steps.setdefault(config["metadata"]["langgraph_step"], []).append(name)

    def take(self) -> dict[str, Any]:
        with self._lock:
            steps = [self.steps[k] for k in sorted(self.steps)]
            course = {"node_order": [n for step in steps for n in step], "node_steps": steps,
                      "branches": self.branches}
            self.steps, self.branches = {}, []
        return course


COURSE = Course()


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class ToolState(TypedDict):
    call: dict[str, Any]


def build_graph(base_url: str, checkpointer: Any = None) -> Any:
    @tool
    def search_flights(route: dict[str, str], dates: list[str]) -> list[dict[str, Any]]:
        """Search the flights of a route ({"from": city, "to": city}) on some dates (YYYY-MM-DD)."""
        return RECORD.search_flights(route, dates)

    @tool
    def list_airports() -> list[dict[str, Any]]:
        """List the airports the agency serves."""
        return RECORD.list_airports()

    @tool
    def book(flight_id: str) -> str:
        """Book a flight by its id; returns the confirmation."""
        return RECORD.book(flight_id)

    tools = {t.name: t for t in (search_flights, list_airports, book)}
    model = ChatOpenAI(model="gpt-4o-mini", base_url=base_url, api_key="not-needed").bind_tools(list(tools.values()))

    def agent(state: State, config: RunnableConfig) -> dict[str, Any]:
        COURSE.node("agent", config)
        return {"messages": [model.invoke([SystemMessage(SYSTEM), *state["messages"]])]}

    def fan_out(state: State) -> Any:
        calls = state["messages"][-1].tool_calls
        COURSE.branches.append({"condition": "fan_out", "taken": ["run_tool"] * len(calls) if calls else END})
        return [Send("run_tool", {"call": call}) for call in calls] if calls else END

    def run_tool(state: ToolState, config: RunnableConfig) -> dict[str, Any]:
        COURSE.node("run_tool", config)
        call = state["call"]
        try:
            message = tools[call["name"]].invoke(call)
        except Exception as error:  # the tool failed: the model is told, and carries on
            message = ToolMessage(f"Error: {error}", tool_call_id=call["id"], name=call["name"], status="error")
        return {"messages": [message]}

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node("run_tool", run_tool)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", fan_out, ["run_tool", END])
    graph.add_edge("run_tool", "agent")
    return graph.compile(checkpointer=checkpointer, name="travel_agent")


def run_turn(graph: Any, prompt: str, config: dict[str, Any], seen: int) -> tuple[dict[str, Any], int]:
    """One user turn; its ground truth and how many messages the state holds after it."""
    state = graph.invoke({"messages": [("user", prompt)]}, config)
    messages = state["messages"][seen:]
    asked = [(c["name"], c["args"], c["id"]) for m in messages if m.type == "ai" for c in m.tool_calls]
    truth = turn_truth(prompt, in_asked_order(RECORD.take(), asked), messages[-1].content)
    return {**truth, **COURSE.take()}, len(state["messages"])


def main() -> None:
    collector = OtlpJsonCollector()
    provider = TracerProvider(resource=Resource.create({"service.name": "corpus-langgraph-send-travel"}))
    provider.add_span_processor(SimpleSpanProcessor(collector))
    LangChainInstrumentor().instrument(tracer_provider=provider)
    with serve("travel") as base_url:
        for name, prompts in TRAVEL_RUNS.items():
            collector.take()
            multi_turn = len(prompts) > 1
            graph = build_graph(base_url, InMemorySaver() if multi_turn else None)
            config: dict[str, Any] = {"configurable": {"thread_id": f"corpus-{name}"}} if multi_turn else {}
            turns, seen = [], 0
            for prompt in prompts:
                truth, seen = run_turn(graph, prompt, config, seen if multi_turn else 0)
                turns.append(truth)
            collector.write(HERE / f"{name}.otlp.json")
            doc: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            doc = {**doc, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
            print(name, json.dumps(doc, ensure_ascii=False)[:300])
    provider.shutdown()


if __name__ == "__main__":
    main()
