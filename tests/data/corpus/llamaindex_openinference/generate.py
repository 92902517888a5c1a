"""Generate real LlamaIndex traces (OpenInference instrumentation) with ground truth.

A llama-index-core ``FunctionAgent`` (an ``AgentWorkflow`` agent) over ``OpenAILike`` talks to the
scripted OpenAI-compatible server (``../scripted_openai.py``) on 127.0.0.1; ``LlamaIndexInstrumentor``
traces it as a user would set it up, into an OpenTelemetry SDK ``TracerProvider`` whose
``SimpleSpanProcessor`` hands the spans to an exporter that encodes them with the SDK's own OTLP
encoder and writes OTLP/JSON.

The ground truth is recorded by this program: every call the tool functions really receive (their
arguments, result or raised error), the call ids from the workflow's own ``AgentOutput`` events,
and the answer the workflow returns. Nothing is read back from the trace. The multi-turn run keeps
one workflow ``Context`` across its turns (LlamaIndex's conversation memory) under one OpenInference
session id.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
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
from corpus_kit import OtlpJsonCollector, ToolLog, in_asked_order  # noqa: E402
from corpus_kit import turn_truth as corpus_turn_truth  # noqa: E402
from scripted_openai import serve  # noqa: E402

PRODUCER = (f"openinference-instrumentation-llama-index=={version('openinference-instrumentation-llama-index')}"
            f" + llama-index-core=={version('llama-index-core')}"
            f" + llama-index-llms-openai-like=={version('llama-index-llms-openai-like')}")


RECORD = ToolLog()


def get_weather(city: str) -> dict:
    """Get the current weather for a city, e.g. "Paris"."""
    return RECORD.get_weather(city)


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit."""
    return RECORD.celsius_to_fahrenheit(celsius)


def turn_truth(prompt: str, asked: list[tuple[str, dict[str, Any], str]], answer: Any) -> dict[str, Any]:
    # the executed calls (parallel ones run concurrently) in the order the model asked for them
    return corpus_turn_truth(prompt, in_asked_order(RECORD.take(), asked), answer)


async def run_turn(agent: Any, ctx: Any, prompt: str) -> dict[str, Any]:
    from llama_index.core.agent.workflow import AgentOutput

    handler = agent.run(user_msg=prompt, ctx=ctx)
    asked: list[tuple[str, dict[str, Any], str]] = []
    async for event in handler.stream_events():
        if isinstance(event, AgentOutput):
            asked.extend((call.tool_name, dict(call.tool_kwargs), call.tool_id) for call in event.tool_calls)
    result = await handler
    return turn_truth(prompt, asked, result.response.content)


async def main() -> None:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool
    from llama_index.core.workflow import Context
    from llama_index.llms.openai_like import OpenAILike
    from openinference.instrumentation import using_session
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    collector = OtlpJsonCollector()
    provider = TracerProvider(resource=Resource.create({"service.name": "corpus-llamaindex-weather"}))
    provider.add_span_processor(SimpleSpanProcessor(collector))
    LlamaIndexInstrumentor().instrument(tracer_provider=provider)

    runs = [("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
            ("run2_parallel", ["What's the weather in London and Tokyo?"]),
            ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
            ("run4_failing_tool", ["What's the weather in Atlantis?"])]
    with serve() as base_url:
        for name, prompts in runs:
            llm = OpenAILike(model="gpt-4o-mini", api_base=base_url, api_key="not-needed",
                             is_chat_model=True, is_function_calling_model=True)
            agent = FunctionAgent(
                name="weather_agent", description="Answers questions about the weather.",
                system_prompt="You are a weather assistant. Use the tools to answer.",
                tools=[FunctionTool.from_defaults(fn=get_weather),
                       FunctionTool.from_defaults(fn=celsius_to_fahrenheit)],
                llm=llm)
            ctx = Context(agent)  # one conversation: later turns see the earlier ones
            collector.take()
            turns = []
            with using_session(f"corpus-{name}"):
                for prompt in prompts:
                    turns.append(await run_turn(agent, ctx, prompt))
            collector.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth = {**truth, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:300])
    provider.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
