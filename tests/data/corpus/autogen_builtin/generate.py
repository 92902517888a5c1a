"""Generate real AutoGen AgentChat traces (built-in OpenTelemetry tracing) with recorded ground truth.

An ``autogen_agentchat`` AssistantAgent with an ``autogen_ext`` OpenAIChatCompletionClient talks to the
scripted OpenAI-compatible server (``../scripted_openai.py``) on 127.0.0.1. Tracing is AutoGen's own:
autogen-core emits GenAI-semconv spans (``invoke_agent``, ``create_agent``, ``execute_tool``) on the
global tracer provider; nothing else is instrumented. Spans are exported with the real OTel SDK
(SimpleSpanProcessor) and encoded by the SDK's OTLP encoder into OTLP/JSON.

Ground truth (tool calls with the arguments the Python functions received, their results or errors,
and the final answer the framework returned) is recorded by this program, never read from the trace.

Run (from this folder): ``python generate.py`` in a venv made from ``requirements.txt``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from importlib.metadata import version  # noqa: E402

from autogen_agentchat.agents import AssistantAgent  # noqa: E402
from autogen_agentchat.messages import ToolCallExecutionEvent, ToolCallRequestEvent  # noqa: E402
from autogen_ext.models.openai import OpenAIChatCompletionClient  # noqa: E402
from scripted_openai import WEATHER, serve  # noqa: E402

PRODUCER = (f"autogen-core=={version('autogen-core')} built-in OpenTelemetry tracing + "
            f"autogen-agentchat=={version('autogen-agentchat')} + autogen-ext=={version('autogen-ext')}")


# --- OTLP/JSON export --------------------------------------------------------------------------

def _hex_ids(node: Any) -> Any:
    """OTLP/JSON wants trace and span ids as lower-case hex, MessageToDict gives base64."""
    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
                    else _hex_ids(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


class OtlpJsonCollector(SpanExporter):
    """Keeps the finished SDK spans; :meth:`write` encodes them as ExportTraceServiceRequest JSON."""

    def __init__(self) -> None:
        self.spans: list[ReadableSpan] = []

    def export(self, spans: Any) -> SpanExportResult:
        self.spans.extend(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def write(self, path: Path) -> None:
        """One request per trace: a single JSON document, or JSON lines when the run has several traces."""
        by_trace: dict[int, list[ReadableSpan]] = {}
        for span in self.spans:
            by_trace.setdefault(span.context.trace_id, []).append(span)
        requests = [_hex_ids(MessageToDict(encode_spans(spans), use_integers_for_enums=True))
                    for spans in by_trace.values()]
        if len(requests) == 1:
            path.write_text(json.dumps(requests[0], indent=2) + "\n")
        else:
            path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests))
        self.spans = []


COLLECTOR = OtlpJsonCollector()
PROVIDER = TracerProvider(resource=Resource.create({"service.name": "autogen-weather-corpus"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(COLLECTOR))
trace.set_tracer_provider(PROVIDER)


# --- the tools, and the ground truth they record ---------------------------------------------

CALLS: list[dict[str, Any]] = []


def get_weather(city: str) -> dict:
    """Get the current weather (temperature in Celsius) for a city."""
    if city not in WEATHER:
        error = ValueError(f"unknown city: {city}")
        CALLS.append({"tool_name": "get_weather", "args": {"city": city}, "error": f"ValueError: {error}"})
        raise error
    result = {"city": city, "temp_c": WEATHER[city]}
    CALLS.append({"tool_name": "get_weather", "args": {"city": city}, "result": result})
    return result


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit."""
    result = round(celsius * 9 / 5 + 32, 1)
    CALLS.append({"tool_name": "celsius_to_fahrenheit", "args": {"celsius": celsius}, "result": result})
    return result


def make_agent(base_url: str) -> AssistantAgent:
    client = OpenAIChatCompletionClient(
        model="gpt-4o-mini", base_url=base_url, api_key="not-needed",
        model_info={"vision": False, "function_calling": True, "json_output": False,
                    "family": "unknown", "structured_output": False},
    )
    return AssistantAgent(
        "weather_agent", model_client=client, tools=[get_weather, celsius_to_fahrenheit],
        system_message="You are a weather assistant. Use the tools to answer.",
        description="Answers weather questions with tools.", max_tool_iterations=5,
    )


async def run_turn(agent: AssistantAgent, prompt: str) -> dict[str, Any]:
    CALLS.clear()
    result = await agent.run(task=prompt)
    # The call ids come from the framework's own events (not the trace), matched by name+args in order.
    requested = [c for m in result.messages if isinstance(m, ToolCallRequestEvent) for c in m.content]
    executed = [r for m in result.messages if isinstance(m, ToolCallExecutionEvent) for r in m.content]
    details = []
    for call in CALLS:
        for req in requested:
            if req.name == call["tool_name"] and json.loads(req.arguments) == call["args"]:
                requested.remove(req)
                details.append({"tool_name": call["tool_name"], "args": call["args"], "tool_call_id": req.id,
                                **{k: call[k] for k in ("result", "error") if k in call}})
                break
        else:
            details.append(dict(call))
    assert len(executed) == len(CALLS), (executed, CALLS)
    return {"user_prompt": prompt,
            "expected_tool_trajectory": [{"tool_name": c["tool_name"], "args": c["args"]} for c in CALLS],
            "tool_calls_detail": details,
            "final_response": result.messages[-1].to_text()}


RUNS = [
    ("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
    ("run2_parallel", ["What's the weather in London and Tokyo?"]),
    ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
    ("run4_failing_tool", ["What's the weather in Atlantis?"]),
]


async def main() -> None:
    with serve() as base_url:
        for name, prompts in RUNS:
            agent = make_agent(base_url)  # one agent per run; its model context carries the conversation
            turns = [await run_turn(agent, prompt) for prompt in prompts]
            PROVIDER.force_flush()
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth["producer"] = PRODUCER
            if len(turns) > 1:
                truth["conversation_note"] = ("one AssistantAgent, two agent.run() calls; AutoGen has no "
                                              "session/thread id, each run() is its own trace (JSON lines)")
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:300])


if __name__ == "__main__":
    asyncio.run(main())
