"""Generate real LangChain traces (Traceloop OpenLLMetry instrumentation) with ground truth.

A langchain 1.x ``create_agent`` agent (a LangGraph graph: model node, tool node) over
``ChatOpenAI`` talks to the scripted OpenAI-compatible server (``../scripted_openai.py``) on
127.0.0.1; its two tools are ``@tool`` functions. ``LangchainInstrumentor`` from
``opentelemetry-instrumentation-langchain`` traces it as a user would set it up (content capture
left at its default, on; prompts and completions as span attributes, its default), into an
OpenTelemetry SDK ``TracerProvider`` whose ``SimpleSpanProcessor`` hands the spans to an exporter
that encodes them with the SDK's own OTLP encoder and writes OTLP/JSON.

A tool's exception is turned into an error ``ToolMessage`` for the model by langchain's own
``ToolErrorMiddleware`` (without it, ``create_agent`` lets a tool's exception end the run).

The ground truth is recorded by this program: every call the tool functions really receive (their
arguments, result or raised error), the call ids and the model's order from the ``AIMessage``
tool calls the agent returns, and the answer (the content of the last message the agent returns).
Nothing is read back from the trace. Every run has its own LangGraph thread (an ``InMemorySaver``
checkpointer, ``configurable.thread_id``); the multi-turn run's two ``invoke`` calls share one, so
the second turn sees the first's messages.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

from __future__ import annotations

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
from corpus_kit import OtlpJsonCollector, ToolLog, in_asked_order  # noqa: E402
from corpus_kit import turn_truth as corpus_turn_truth  # noqa: E402
from scripted_openai import serve  # noqa: E402

PRODUCER = (f"opentelemetry-instrumentation-langchain=={version('opentelemetry-instrumentation-langchain')}"
            f" + langchain=={version('langchain')}"
            f" + langgraph=={version('langgraph')}"
            f" + langchain-openai=={version('langchain-openai')}")

RECORD = ToolLog()


def make_tools() -> list[Any]:
    from langchain.tools import tool

    @tool
    def get_weather(city: str) -> dict:
        """Get the current weather for a city, e.g. "Paris"."""
        return RECORD.get_weather(city)

    @tool
    def celsius_to_fahrenheit(celsius: float) -> float:
        """Convert a temperature from degrees Celsius to degrees Fahrenheit."""
        return RECORD.celsius_to_fahrenheit(celsius)

    return [get_weather, celsius_to_fahrenheit]


def on_tool_error(error: Exception, request: Any) -> str:
    """Tell the model that the tool failed (ToolErrorMiddleware's handler)."""
    return f"Error: {type(error).__name__}: {error}"


def turn_truth(prompt: str, new_messages: list[Any]) -> dict[str, Any]:
    from langchain_core.messages import AIMessage

    asked = [(call["name"], dict(call["args"]), call["id"])
             for message in new_messages if isinstance(message, AIMessage) for call in message.tool_calls]
    # the executed calls (parallel ones run concurrently) in the order the model asked for them
    return corpus_turn_truth(prompt, in_asked_order(RECORD.take(), asked), new_messages[-1].content)


def main() -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import ToolErrorMiddleware
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    collector = OtlpJsonCollector()
    provider = TracerProvider(resource=Resource.create({"service.name": "corpus-langchain-weather"}))
    provider.add_span_processor(SimpleSpanProcessor(collector))
    LangchainInstrumentor().instrument(tracer_provider=provider)

    runs = [("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
            ("run2_parallel", ["What's the weather in London and Tokyo?"]),
            ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
            ("run4_failing_tool", ["What's the weather in Atlantis?"])]
    with serve() as base_url:
        for name, prompts in runs:
            model = ChatOpenAI(model="gpt-4o-mini", base_url=base_url, api_key="x")
            agent = create_agent(model, tools=make_tools(),
                                 system_prompt="You are a weather assistant. Use the tools to answer.",
                                 middleware=[ToolErrorMiddleware(on_tool_error)],
                                 checkpointer=InMemorySaver(), name="weather_agent")
            config = {"configurable": {"thread_id": f"corpus-{name}"}}  # one conversation per run
            collector.take()
            turns, seen = [], 0
            for prompt in prompts:
                result = agent.invoke({"messages": [{"role": "user", "content": prompt}]}, config)
                messages = result["messages"]  # the whole thread so far (the checkpointer's history)
                turns.append(turn_truth(prompt, messages[seen + 1:]))  # after this turn's user message
                seen = len(messages)
            collector.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth = {**truth, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:300])
    provider.shutdown()


if __name__ == "__main__":
    main()
