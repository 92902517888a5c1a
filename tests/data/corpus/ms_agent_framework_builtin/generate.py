"""Generate real Microsoft Agent Framework traces (its built-in OpenTelemetry GenAI instrumentation)
with ground truth.

An ``agent_framework.Agent`` (the 1.x name of ``ChatAgent``) with the two tools as plain Python
functions, over ``OpenAIChatCompletionClient`` from agent-framework-openai (the Chat Completions
client; in 1.x ``OpenAIChatClient`` speaks the Responses API), talks to the scripted
OpenAI-compatible server (``../scripted_openai.py``) on 127.0.0.1.

Tracing is Agent Framework's own, set up as its docs say for an application that brings its own
OpenTelemetry providers: the SDK ``TracerProvider`` and ``LoggerProvider`` are made global first,
then ``enable_sensitive_telemetry()`` turns on content capture (``ENABLE_INSTRUMENTATION`` and
``ENABLE_SENSITIVE_DATA`` are set too; no ``OTEL_EXPORTER_*`` variable is set and
``configure_otel_providers`` is not called, so nothing is exported anywhere else). The framework
emits spans ``invoke_agent``, ``chat``, ``execute_tool`` and, with sensitive data on, the GenAI
message events (``gen_ai.user.message``, ``gen_ai.choice``, ...) as OpenTelemetry log records.
Spans go through ``SimpleSpanProcessor`` and log records through ``SimpleLogRecordProcessor``;
both are written as OTLP/JSON with the SDK's own encoders.

The ground truth is recorded by this program: every call the tool functions really receive (their
arguments, result or raised error), the call ids from the agent response's own ``function_call``
contents, and the text ``agent.run`` returns. Nothing is read back from the trace. The multi-turn
run keeps one ``AgentSession`` (``agent.create_session()``, the 1.x name of ``get_new_thread()``)
across its turns.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

from __future__ import annotations

import os

for _name in [n for n in os.environ if n.startswith("OTEL_EXPORTER_")]:
    del os.environ[_name]
os.environ["ENABLE_INSTRUMENTATION"] = "true"
os.environ["ENABLE_SENSITIVE_DATA"] = "true"

import asyncio  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Annotated, Any  # noqa: E402

from opentelemetry._logs import set_logger_provider  # noqa: E402
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.trace import set_tracer_provider  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import OtlpJsonCollector, ToolLog, otlp_json  # noqa: E402
from scripted_openai import serve  # noqa: E402

PRODUCER = (f"agent-framework-core=={version('agent-framework-core')} built-in OpenTelemetry GenAI "
            f"instrumentation (sensitive); agent-framework-openai=={version('agent-framework-openai')}; "
            f"openai=={version('openai')}")

# --- telemetry: our own providers, global, before the framework is used -----------------------

RESOURCE = Resource.create({"service.name": "agent-framework-weather-corpus"})
COLLECTOR = OtlpJsonCollector()
TRACER_PROVIDER = TracerProvider(resource=RESOURCE)
TRACER_PROVIDER.add_span_processor(SimpleSpanProcessor(COLLECTOR))
set_tracer_provider(TRACER_PROVIDER)

LOGS = InMemoryLogRecordExporter()
LOGGER_PROVIDER = LoggerProvider(resource=RESOURCE)
LOGGER_PROVIDER.add_log_record_processor(SimpleLogRecordProcessor(LOGS))
set_logger_provider(LOGGER_PROVIDER)

from agent_framework import Agent, AgentSession  # noqa: E402
from agent_framework.observability import enable_sensitive_telemetry  # noqa: E402
from agent_framework.openai import OpenAIChatCompletionClient  # noqa: E402

enable_sensitive_telemetry()

# --- the tools, and the ground truth they record ---------------------------------------------

RECORD = ToolLog()


def get_weather(city: Annotated[str, "The city, e.g. Paris"]) -> dict:
    """Get the current weather (temperature in Celsius) for a city."""
    return RECORD.get_weather(city)


def celsius_to_fahrenheit(celsius: Annotated[float, "Degrees Celsius"]) -> float:
    """Convert a temperature from Celsius to Fahrenheit."""
    return RECORD.celsius_to_fahrenheit(celsius)


def make_agent(base_url: str) -> Agent:
    client = OpenAIChatCompletionClient(model="gpt-4o-mini", base_url=base_url, api_key="x")
    return Agent(client=client, name="weather_agent", description="Answers weather questions with tools.",
                 instructions="You are a weather assistant. Use the tools to answer.",
                 tools=[get_weather, celsius_to_fahrenheit])


async def run_turn(agent: Agent, session: AgentSession, prompt: str) -> dict[str, Any]:
    response = await agent.run(prompt, session=session)
    # the calls the model asked for, in its order, with their ids (from the response's own messages)
    asked = [(content.name, content.parse_arguments() or {}, content.call_id)
             for message in response.messages for content in message.contents
             if content.type == "function_call"]
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
            "final_response": response.text}


async def main() -> None:
    runs = [("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
            ("run2_parallel", ["What's the weather in London and Tokyo?"]),
            ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
            ("run4_failing_tool", ["What's the weather in Atlantis?"])]
    with serve() as base_url:
        for name, prompts in runs:
            agent = make_agent(base_url)
            session = agent.create_session()  # one conversation: later turns see the earlier ones
            COLLECTOR.take()
            LOGS.clear()
            turns = [await run_turn(agent, session, prompt) for prompt in prompts]
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
