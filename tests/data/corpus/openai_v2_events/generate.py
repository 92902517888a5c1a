"""Generate traces of a hand-written weather agent whose model calls are traced by
``opentelemetry-instrumentation-openai-v2`` 2.1b0, which records message content as GenAI *log
events* (``gen_ai.user.message``, ``gen_ai.choice`` ...) beside content-free spans.

    python -m venv /tmp/venv-oai2 && /tmp/venv-oai2/bin/pip install -r requirements.txt
    /tmp/venv-oai2/bin/python generate.py

Writes ``runN_*.otlp.json`` (spans), ``runN_*.logs.json`` (log records) and
``runN_*.ground_truth.json`` (what the program really did) beside this file. The model is the
scripted server in ``../scripted_openai.py`` on 127.0.0.1. The program calls its tools itself
(no tool spans) inside one plain span per turn of its own: the tool calls are known only from
the model's requests.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"

import openai  # noqa: E402
from opentelemetry import _events, _logs, trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs  # noqa: E402
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor  # noqa: E402
from opentelemetry.sdk._events import EventLoggerProvider  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import InMemoryLogExporter, SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import otlp_json, weather, write_trace  # noqa: E402
from scripted_openai import serve  # noqa: E402

PRODUCER = "opentelemetry-instrumentation-openai-v2==2.1b0 (log events); openai==" + openai.__version__
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather of a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "celsius_to_fahrenheit", "description": "Convert a temperature.",
     "parameters": {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]}}},
]


FUNCTIONS = {"get_weather": weather, "celsius_to_fahrenheit": lambda celsius: round(celsius * 9 / 5 + 32, 1)}


def run_turn(client: openai.OpenAI, messages: list[dict[str, Any]], prompt: str) -> dict[str, Any]:
    """One user turn of the agent loop, in a span of the program's own; returns its ground truth."""
    with trace.get_tracer("weather-agent").start_as_current_span("weather_agent.turn"):
        return _turn(client, messages, prompt)


def _turn(client: openai.OpenAI, messages: list[dict[str, Any]], prompt: str) -> dict[str, Any]:
    messages.append({"role": "user", "content": prompt})
    detail: list[dict[str, Any]] = []
    while True:
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return {"user_prompt": prompt,
                    "expected_tool_trajectory": [{"tool_name": d["tool_name"], "args": d["args"]} for d in detail],
                    "tool_calls_detail": detail, "final_response": message.content}
        for call in message.tool_calls:
            args = json.loads(call.function.arguments)
            entry: dict[str, Any] = {"tool_name": call.function.name, "args": args, "tool_call_id": call.id}
            try:
                entry["result"] = FUNCTIONS[call.function.name](**args)
                content = json.dumps(entry["result"])
            except Exception as error:  # the tool failed: the model is told
                entry["error"] = f"{type(error).__name__}: {error}"
                content = f"Error: {error}"
            detail.append(entry)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


def main() -> None:
    spans, logs = InMemorySpanExporter(), InMemoryLogExporter()
    resource = Resource.create({"service.name": "weather-agent"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    trace.set_tracer_provider(tracer_provider)
    _logs.set_logger_provider(logger_provider)
    _events.set_event_logger_provider(EventLoggerProvider(logger_provider))
    OpenAIInstrumentor().instrument()
    scenarios = {
        "run1_sequential_two_tools": ["What's the weather in Paris in Fahrenheit?"],
        "run2_parallel_calls": ["What's the weather in London and Tokyo?"],
        "run3_multi_turn": ["Hi, I'm planning a trip.", "What's the weather in Berlin?"],
        "run4_tool_error": ["What's the weather in Atlantis?"],
    }
    with serve() as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="not-needed")
        for name, prompts in scenarios.items():
            spans.clear()
            logs.clear()
            messages: list[dict[str, Any]] = []
            turns = [run_turn(client, messages, prompt) for prompt in prompts]
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth["producer"] = PRODUCER
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            write_trace(HERE / f"{name}.otlp.json", spans.get_finished_spans())
            log_doc = otlp_json(encode_logs(logs.get_finished_logs()))
            (HERE / f"{name}.logs.json").write_text(json.dumps(log_doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
