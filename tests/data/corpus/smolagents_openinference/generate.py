"""Generate real smolagents traces (OpenInference instrumentation) with ground truth.

A ``ToolCallingAgent`` over ``OpenAIServerModel`` talks to the scripted OpenAI-compatible server
(``../scripted_openai.py``) on 127.0.0.1; ``SmolagentsInstrumentor`` traces it as a user would set
it up, into an OpenTelemetry SDK ``TracerProvider`` whose ``SimpleSpanProcessor`` hands the spans
to an exporter that encodes them with the SDK's own OTLP encoder and writes OTLP/JSON.

The ground truth is recorded by this program: every call the tool functions really receive (their
arguments, result or raised error), the call ids from the agent's own memory, and the answer
``agent.run`` returns. Nothing is read back from the trace.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

from __future__ import annotations

import base64
import json
import sys
import threading
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from scripted_openai import WEATHER, serve  # noqa: E402

PRODUCER = (f"openinference-instrumentation-smolagents=={version('openinference-instrumentation-smolagents')}"
            f" + smolagents=={version('smolagents')}")


# --- OTLP/JSON export through the SDK's own encoder -------------------------------------------

class OtlpJsonCollector(SpanExporter):
    """Keeps the spans handed over by the span processor until :meth:`take`."""

    def __init__(self) -> None:
        self._spans: list[ReadableSpan] = []
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            self._spans.extend(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def take(self) -> list[ReadableSpan]:
        with self._lock:
            spans, self._spans = self._spans, []
        return spans


def _hex_ids(node: Any) -> Any:
    """OTLP/JSON writes trace and span ids as lower-case hex, not protobuf JSON's base64."""
    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
                    else _hex_ids(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def otlp_json_requests(spans: list[ReadableSpan]) -> list[dict[str, Any]]:
    """One ExportTraceServiceRequest (as OTLP/JSON) per trace, in order of first span end."""
    by_trace: dict[int, list[ReadableSpan]] = {}
    for span in spans:
        by_trace.setdefault(span.context.trace_id, []).append(span)
    return [_hex_ids(MessageToDict(encode_spans(group), use_integers_for_enums=True))
            for group in by_trace.values()]


def write_trace(path: Path, spans: list[ReadableSpan]) -> None:
    """One request as a JSON document, or several (one per trace) as JSON lines."""
    requests = otlp_json_requests(spans)
    if len(requests) == 1:
        path.write_text(json.dumps(requests[0], indent=1) + "\n")
    else:
        path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in requests))


# --- tools and the recorded ground truth ------------------------------------------------------

CALLS: list[dict[str, Any]] = []
_calls_lock = threading.Lock()


def recorded(name: str, args: dict[str, Any], body: Callable[[], Any]) -> Any:
    entry: dict[str, Any] = {"tool_name": name, "args": dict(args)}
    try:
        entry["result"] = body()
        return entry["result"]
    except Exception as error:
        entry["error"] = f"{type(error).__name__}: {error}"
        raise
    finally:
        with _calls_lock:
            CALLS.append(entry)


def _weather(city: str) -> dict[str, Any]:
    if city not in WEATHER:
        raise ValueError(f"unknown city: {city}")
    return {"city": city, "temp_c": WEATHER[city]}


from smolagents import OpenAIServerModel, ToolCallingAgent, tool  # noqa: E402
from smolagents.memory import ActionStep  # noqa: E402


@tool
def get_weather(city: str) -> dict:
    """Get the current weather for a city.

    Args:
        city: The name of the city, e.g. "Paris".
    """
    return recorded("get_weather", {"city": city}, lambda: _weather(city))


@tool
def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit.

    Args:
        celsius: The temperature in degrees Celsius.
    """
    return recorded("celsius_to_fahrenheit", {"celsius": celsius}, lambda: round(celsius * 9 / 5 + 32, 1))


def model_calls(agent: ToolCallingAgent, first_step: int) -> list[tuple[str, dict[str, Any], str]]:
    """(name, arguments, id) of the tool calls the model asked for, in its order, from the agent's memory."""
    calls = []
    for step in agent.memory.steps[first_step:]:
        if isinstance(step, ActionStep) and step.model_output_message and step.model_output_message.tool_calls:
            for call in step.model_output_message.tool_calls:
                args = call.function.arguments
                calls.append((call.function.name, json.loads(args) if isinstance(args, str) else args, call.id))
    return calls


def turn_truth(agent: ToolCallingAgent, prompt: str, first_step: int, answer: Any) -> dict[str, Any]:
    with _calls_lock:
        executed, CALLS[:] = list(CALLS), []
    # order the executed calls (parallel ones run on threads) as the model asked for them, with their ids
    detail: list[dict[str, Any]] = []
    for name, args, call_id in model_calls(agent, first_step):
        match = next((c for c in executed if c["tool_name"] == name and c["args"] == args), None)
        if match is not None:
            executed.remove(match)
            detail.append({"tool_name": name, "args": match["args"], "tool_call_id": call_id,
                           **{k: match[k] for k in ("result", "error") if k in match}})
    detail.extend(executed)  # anything not matched (should be nothing)
    return {"user_prompt": prompt,
            "expected_tool_trajectory": [{"tool_name": c["tool_name"], "args": c["args"]} for c in detail],
            "tool_calls_detail": detail,
            "final_response": answer}


def main() -> None:
    from openinference.instrumentation import using_session
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    collector = OtlpJsonCollector()
    provider = TracerProvider(resource=Resource.create({"service.name": "corpus-smolagents-weather"}))
    provider.add_span_processor(SimpleSpanProcessor(collector))
    SmolagentsInstrumentor().instrument(tracer_provider=provider)

    runs = [("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
            ("run2_parallel", ["What's the weather in London and Tokyo?"]),
            ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
            ("run4_failing_tool", ["What's the weather in Atlantis?"])]
    with serve() as base_url:
        for name, prompts in runs:
            model = OpenAIServerModel(model_id="gpt-4o-mini", api_base=base_url, api_key="not-needed")
            agent = ToolCallingAgent(tools=[get_weather, celsius_to_fahrenheit], model=model,
                                     max_steps=5, verbosity_level=0)
            collector.take()
            turns = []
            with using_session(f"corpus-{name}"):
                for index, prompt in enumerate(prompts):
                    first_step = len(agent.memory.steps)
                    answer = agent.run(prompt, reset=index == 0)  # later turns continue the same memory
                    turns.append(turn_truth(agent, prompt, first_step, answer))
            write_trace(HERE / f"{name}.otlp.json", collector.take())
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth = {**truth, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:300])
    provider.shutdown()


if __name__ == "__main__":
    main()
