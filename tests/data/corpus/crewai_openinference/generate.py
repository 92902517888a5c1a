"""Generate real CrewAI traces (OpenInference instrumentation) with recorded ground truth.

A CrewAI ``Crew`` (one ``Agent``, one ``Task``) with the two weather tools; its ``LLM`` is
``openai/gpt-4o-mini`` with ``base_url`` at the scripted OpenAI-compatible server
(``../scripted_openai.py``) on 127.0.0.1. CrewAI 1.x talks to OpenAI models through its native
OpenAI provider (the ``openai`` SDK, not litellm), so the instrumentation a user sets up is
``openinference-instrumentation-crewai`` (crew, agent and tool spans) plus
``openinference-instrumentation-openai`` (the LLM calls). CrewAI's own anonymous telemetry is off
with ``CREWAI_DISABLE_TELEMETRY=true`` (not ``OTEL_SDK_DISABLED``, which would disable our SDK too).
Spans are exported with the real OTel SDK (SimpleSpanProcessor) and encoded by the SDK's OTLP encoder
into OTLP/JSON.

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

os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"
os.environ.setdefault("OPENAI_API_KEY", "not-needed")

from google.protobuf.json_format import MessageToDict  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.tools import tool  # noqa: E402
from openinference.instrumentation import using_session  # noqa: E402
from openinference.instrumentation.crewai import CrewAIInstrumentor  # noqa: E402
from openinference.instrumentation.openai import OpenAIInstrumentor  # noqa: E402
from scripted_openai import WEATHER, serve  # noqa: E402

PRODUCER = (f"openinference-instrumentation-crewai=={version('openinference-instrumentation-crewai')} + "
            f"openinference-instrumentation-openai=={version('openinference-instrumentation-openai')} + "
            f"crewai=={version('crewai')}")


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
PROVIDER = TracerProvider(resource=Resource.create({"service.name": "crewai-weather-corpus"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(COLLECTOR))
CrewAIInstrumentor().instrument(tracer_provider=PROVIDER)
OpenAIInstrumentor().instrument(tracer_provider=PROVIDER)


# --- the tools, and the ground truth they record ---------------------------------------------

CALLS: list[dict[str, Any]] = []


@tool("get_weather")
def get_weather(city: str) -> dict:
    """Get the current weather (temperature in Celsius) for a city."""
    if city not in WEATHER:
        error = ValueError(f"unknown city: {city}")
        CALLS.append({"tool_name": "get_weather", "args": {"city": city}, "error": f"ValueError: {error}"})
        raise error
    result = {"city": city, "temp_c": WEATHER[city]}
    CALLS.append({"tool_name": "get_weather", "args": {"city": city}, "result": result})
    return result


@tool("celsius_to_fahrenheit")
def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit."""
    result = round(celsius * 9 / 5 + 32, 1)
    CALLS.append({"tool_name": "celsius_to_fahrenheit", "args": {"celsius": celsius}, "result": result})
    return result


def make_crew(base_url: str) -> Crew:
    llm = LLM(model="openai/gpt-4o-mini", base_url=base_url, api_key="not-needed")
    agent = Agent(role="Weather assistant", goal="Answer weather questions with the tools.",
                  backstory="You know nothing about the weather yourself; you always use the tools.",
                  tools=[get_weather, celsius_to_fahrenheit], llm=llm, allow_delegation=False, max_iter=5)
    task = Task(description="{question}", expected_output="A short answer.", agent=agent)
    return Crew(agents=[agent], tasks=[task])


def run_turn(crew: Crew, prompt: str) -> dict[str, Any]:
    CALLS.clear()
    output = crew.kickoff(inputs={"question": prompt})
    return {"user_prompt": prompt,
            "expected_tool_trajectory": [{"tool_name": c["tool_name"], "args": c["args"]} for c in CALLS],
            "tool_calls_detail": [dict(c) for c in CALLS],
            "final_response": output.raw}


RUNS = [
    ("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
    ("run2_parallel", ["What's the weather in London and Tokyo?"]),
    ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
    ("run4_failing_tool", ["What's the weather in Atlantis?"]),
]
SESSION_ID = "crewai-trip-session-1"


def main() -> None:
    with serve() as base_url:
        for name, prompts in RUNS:
            crew = make_crew(base_url)
            if len(prompts) > 1:
                # A Crew keeps no conversation between kickoffs (short-term memory needs an embedder);
                # the session is OpenInference's session id, set as a user would with using_session.
                with using_session(SESSION_ID):
                    turns = [run_turn(crew, prompt) for prompt in prompts]
            else:
                turns = [run_turn(crew, prompts[0])]
            PROVIDER.force_flush()
            COLLECTOR.write(HERE / f"{name}.otlp.json")
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth["producer"] = PRODUCER
            if len(turns) > 1:
                truth["session_id"] = SESSION_ID
                truth["conversation_note"] = ("one Crew kicked off twice inside openinference using_session(); "
                                              "each kickoff is its own trace (JSON lines)")
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:400], flush=True)


if __name__ == "__main__":
    main()
