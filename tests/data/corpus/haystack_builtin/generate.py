"""Generate real Haystack Agent traces (Haystack's OpenTelemetry tracer, content tracing on) with ground truth.

A ``haystack-ai`` ``Agent`` with an ``OpenAIChatGenerator(api_base_url=...)`` pointed at the scripted
OpenAI-compatible server (``../scripted_openai.py``) on 127.0.0.1, and the two weather tools as
``haystack.tools.Tool`` objects. Tracing is Haystack's own: its tracer spans (``haystack.agent.run``,
``haystack.agent.step``, ``haystack.agent.step.llm``, ``haystack.agent.step.tool``) go through
``OpenTelemetryTracer`` (in Haystack 3.x it ships as the deepset integration ``opentelemetry-haystack``,
``haystack_integrations.tracing.opentelemetry``; in 2.x it was ``haystack.tracing.OpenTelemetryTracer``),
enabled with ``haystack.tracing.enable_tracing`` and content tracing on
(``HAYSTACK_CONTENT_TRACING_ENABLED=true``). Spans are exported with the real OTel SDK
(SimpleSpanProcessor) and encoded by the SDK's OTLP encoder into OTLP/JSON.

Ground truth (tool calls with the arguments the Python functions received, their results or errors,
and the final answer the framework returned) is recorded by this program, never read from the trace.

Run (from this folder): ``python generate.py`` in a venv made from ``requirements.txt``.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ["HAYSTACK_CONTENT_TRACING_ENABLED"] = "true"
os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"

from google.protobuf.json_format import MessageToDict  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from haystack import tracing  # noqa: E402
from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage  # noqa: E402
from haystack.tools import Tool  # noqa: E402
from haystack.utils import Secret  # noqa: E402
from haystack_integrations.tracing.opentelemetry import OpenTelemetryTracer  # noqa: E402
from scripted_openai import WEATHER, serve  # noqa: E402

PRODUCER = (f"opentelemetry-haystack=={version('opentelemetry-haystack')} (Haystack OpenTelemetryTracer, "
            f"content tracing on) + haystack-ai=={version('haystack-ai')}")


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
PROVIDER = TracerProvider(resource=Resource.create({"service.name": "haystack-weather-corpus"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(COLLECTOR))
trace.set_tracer_provider(PROVIDER)
tracing.enable_tracing(OpenTelemetryTracer(trace.get_tracer("haystack")))
tracing.tracer.is_content_tracing_enabled = True


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


TOOLS = [
    Tool(name="get_weather", description="Get the current weather (temperature in Celsius) for a city.",
         parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
         function=get_weather),
    Tool(name="celsius_to_fahrenheit", description="Convert a temperature from Celsius to Fahrenheit.",
         parameters={"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
         function=celsius_to_fahrenheit),
]


def make_agent(base_url: str) -> Agent:
    generator = OpenAIChatGenerator(model="gpt-4o-mini", api_base_url=base_url,
                                    api_key=Secret.from_token("not-needed"))
    agent = Agent(chat_generator=generator, tools=TOOLS,
                  system_prompt="You are a weather assistant. Use the tools to answer.", max_agent_steps=6)
    agent.warm_up()
    return agent


def run_turn(agent: Agent, history: list[ChatMessage], prompt: str) -> tuple[dict[str, Any], list[ChatMessage]]:
    CALLS.clear()
    result = agent.run(messages=[*history, ChatMessage.from_user(prompt)])
    messages: list[ChatMessage] = result["messages"]
    new = messages[len(history) + 1:] if messages[:len(history)] == history else messages
    # The call ids come from the framework's own messages (not the trace), matched by name+args in order.
    requested = [tc for m in new for tc in (m.tool_calls or [])]
    details = []
    for call in CALLS:
        match = next((tc for tc in requested if tc.tool_name == call["tool_name"] and tc.arguments == call["args"]),
                     None)
        if match is not None:
            requested.remove(match)
        details.append({"tool_name": call["tool_name"], "args": call["args"],
                        **({"tool_call_id": match.id} if match is not None and match.id else {}),
                        **{k: call[k] for k in ("result", "error") if k in call}})
    turn = {"user_prompt": prompt,
            "expected_tool_trajectory": [{"tool_name": c["tool_name"], "args": c["args"]} for c in CALLS],
            "tool_calls_detail": details,
            "final_response": result["last_message"].text}
    return turn, [m for m in messages if m.role.value != "system"]


RUNS = [
    ("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
    ("run2_parallel", ["What's the weather in London and Tokyo?"]),
    ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
    ("run4_failing_tool", ["What's the weather in Atlantis?"]),
]


def main() -> None:
    with serve() as base_url:
        for name, prompts in RUNS:
            agent = make_agent(base_url)
            history: list[ChatMessage] = []
            turns = []
            for prompt in prompts:  # the conversation is the message list passed back in
                turn, history = run_turn(agent, history, prompt)
                turns.append(turn)
            PROVIDER.force_flush()
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth["producer"] = PRODUCER
            if len(turns) > 1:
                truth["conversation_note"] = ("one Agent, run twice with the first run's messages passed back in; "
                                              "Haystack has no session/thread id, each run is its own trace "
                                              "(JSON lines)")
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:400], flush=True)


if __name__ == "__main__":
    main()
