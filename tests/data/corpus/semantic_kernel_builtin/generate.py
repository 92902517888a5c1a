"""Generate real Semantic Kernel traces (its built-in OpenTelemetry GenAI diagnostics) with ground truth.

A ``semantic_kernel`` ``ChatCompletionAgent`` with the plugin ``weather`` (the two tools as
``@kernel_function`` methods; ``FunctionChoiceBehavior.Auto()``, SK's default for agents with
plugins) over ``OpenAIChatCompletion`` with an ``AsyncOpenAI`` client talks to the scripted
OpenAI-compatible server (``../scripted_openai.py``) on 127.0.0.1.

Tracing is Semantic Kernel's own, switched on as its docs say, by the environment variables
``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS`` and
``..._ENABLE_OTEL_DIAGNOSTICS_SENSITIVE`` set before ``semantic_kernel`` is imported: spans
``invoke_agent``, ``chat``, ``execute_tool`` on the global tracer provider, and the chat messages
as Python ``logging`` records (``event.name`` = ``gen_ai.*.message`` / ``gen_ai.choice``), which
SK's telemetry sample hands to OpenTelemetry with the SDK's ``LoggingHandler`` on the root logger
(filtered to ``semantic_kernel``). Spans go through ``SimpleSpanProcessor`` and log records through
``SimpleLogRecordProcessor``; both are written as OTLP/JSON with the SDK's own encoders.

The ground truth is recorded by this program: every call the tool functions really receive (their
arguments, result or raised error), the call ids from the agent thread's own chat history
(``FunctionCallContent``), and the answer ``agent.get_response`` returns. Nothing is read back from
the trace. The multi-turn run keeps one ``ChatHistoryAgentThread`` across its turns.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

from __future__ import annotations

import os

os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"

import asyncio  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Annotated, Any  # noqa: E402

from opentelemetry._logs import set_logger_provider  # noqa: E402
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler  # noqa: E402
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.trace import set_tracer_provider  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import OtlpJsonCollector, ToolLog, otlp_json  # noqa: E402
from scripted_openai import serve  # noqa: E402

PRODUCER = (f"semantic-kernel=={version('semantic-kernel')} built-in OpenTelemetry GenAI diagnostics "
            f"(sensitive); openai=={version('openai')}")

# --- telemetry, set up as Semantic Kernel's telemetry sample does, before any SK call ----------

RESOURCE = Resource.create({"service.name": "semantic-kernel-weather-corpus"})
COLLECTOR = OtlpJsonCollector()
TRACER_PROVIDER = TracerProvider(resource=RESOURCE)
TRACER_PROVIDER.add_span_processor(SimpleSpanProcessor(COLLECTOR))
set_tracer_provider(TRACER_PROVIDER)

LOGS = InMemoryLogRecordExporter()
LOGGER_PROVIDER = LoggerProvider(resource=RESOURCE)
LOGGER_PROVIDER.add_log_record_processor(SimpleLogRecordProcessor(LOGS))
set_logger_provider(LOGGER_PROVIDER)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # the SDK's handler, as SK's sample uses it
    HANDLER = LoggingHandler()
HANDLER.addFilter(logging.Filter("semantic_kernel"))
logging.getLogger().addHandler(HANDLER)
logging.getLogger().setLevel(logging.NOTSET)

from openai import AsyncOpenAI  # noqa: E402
from semantic_kernel.agents import ChatCompletionAgent, ChatHistoryAgentThread  # noqa: E402
from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior  # noqa: E402
from semantic_kernel.connectors.ai.open_ai import (  # noqa: E402
    OpenAIChatCompletion,
    OpenAIChatPromptExecutionSettings,
)
from semantic_kernel.contents import FunctionCallContent  # noqa: E402
from semantic_kernel.functions import KernelArguments, kernel_function  # noqa: E402

# --- the tools, and the ground truth they record ---------------------------------------------

RECORD = ToolLog()


class WeatherPlugin:
    """The weather agent's tools."""

    @kernel_function(name="get_weather", description="Get the current weather (temperature in Celsius) for a city.")
    def get_weather(self, city: Annotated[str, "The city, e.g. Paris"]) -> dict:
        return RECORD.get_weather(city)

    @kernel_function(name="celsius_to_fahrenheit", description="Convert a temperature from Celsius to Fahrenheit.")
    def celsius_to_fahrenheit(self, celsius: Annotated[float, "Degrees Celsius"]) -> float:
        return RECORD.celsius_to_fahrenheit(celsius)


def make_agent(base_url: str) -> ChatCompletionAgent:
    service = OpenAIChatCompletion(ai_model_id="gpt-4o-mini",
                                   async_client=AsyncOpenAI(base_url=base_url, api_key="x"))
    settings = OpenAIChatPromptExecutionSettings(function_choice_behavior=FunctionChoiceBehavior.Auto())
    return ChatCompletionAgent(
        service=service, name="weather_agent", description="Answers weather questions with tools.",
        instructions="You are a weather assistant. Use the tools to answer.",
        plugins=[WeatherPlugin()], arguments=KernelArguments(settings=settings))


async def thread_messages(thread: ChatHistoryAgentThread) -> list[Any]:
    return [message async for message in thread.get_messages()]


async def run_turn(agent: ChatCompletionAgent, thread: ChatHistoryAgentThread, prompt: str) -> dict[str, Any]:
    before = len(await thread_messages(thread)) if thread.id else 0
    response = await agent.get_response(messages=prompt, thread=thread)
    new = (await thread_messages(response.thread))[before:]
    # the calls the model asked for, in its order, with their ids (from the thread's own history)
    asked = [(item.function_name, item.to_kernel_arguments(), item.id)
             for message in new for item in message.items if isinstance(item, FunctionCallContent)]
    executed = RECORD.take()
    detail: list[dict[str, Any]] = []
    for name, args, call_id in asked:
        match = next((c for c in executed if c["tool_name"] == name and c["args"] == dict(args)), None)
        if match is not None:
            executed.remove(match)
            detail.append({"tool_name": name, "args": match["args"], "tool_call_id": call_id,
                           **{k: match[k] for k in ("result", "error") if k in match}})
    detail.extend(executed)  # anything not matched (should be nothing)
    return {"user_prompt": prompt,
            "expected_tool_trajectory": [{"tool_name": c["tool_name"], "args": c["args"]} for c in detail],
            "tool_calls_detail": detail,
            "final_response": str(response.message.content)}


async def main() -> None:
    runs = [("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
            ("run2_parallel", ["What's the weather in London and Tokyo?"]),
            ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
            ("run4_failing_tool", ["What's the weather in Atlantis?"])]
    with serve() as base_url:
        for name, prompts in runs:
            agent = make_agent(base_url)
            thread = ChatHistoryAgentThread()  # one conversation: later turns see the earlier ones
            COLLECTOR.take()
            LOGS.clear()
            turns = [await run_turn(agent, thread, prompt) for prompt in prompts]
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            log_doc = otlp_json(encode_logs(LOGS.get_finished_logs()))
            (HERE / f"{name}.logs.json").write_text(json.dumps(log_doc, indent=1) + "\n")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth = {**truth, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:400])
    TRACER_PROVIDER.shutdown()
    LOGGER_PROVIDER.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
