"""Generate real DSPy traces (OpenInference instrumentation) with ground truth.

A ``dspy.ReAct`` agent over ``dspy.LM("openai/gpt-4o-mini", api_base=...)`` talks to the scripted
OpenAI-compatible server (``../scripted_openai.py``) on 127.0.0.1, which answers DSPy's ChatAdapter
text fields (ReAct picks one tool per step by text, not through the API's tool calls);
``DSPyInstrumentor`` traces it as a user would set it up, into an OpenTelemetry SDK
``TracerProvider`` whose ``SimpleSpanProcessor`` hands the spans to an exporter that encodes them
with the SDK's own OTLP encoder and writes OTLP/JSON.

The ground truth is recorded by this program: every call the tool functions really receive (their
arguments, result or raised error) and the answer the program returns. Nothing is read back from
the trace. DSPy has no tool call ids. The multi-turn run passes the first turn back as a
``dspy.History`` input (DSPy's conversation history) under one OpenInference session id.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

# no `from __future__ import annotations`: DSPy reads the signature class annotations at run time
import base64
import json
import os
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

# keep litellm/DSPy from fetching the model price map over the network: use the bundled copy
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from scripted_openai import WEATHER, serve  # noqa: E402

PRODUCER = (f"openinference-instrumentation-dspy=={version('openinference-instrumentation-dspy')}"
            f" + dspy=={version('dspy')} + litellm=={version('litellm')}")


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


def get_weather(city: str) -> dict:
    """Get the current weather for a city, e.g. "Paris"."""
    return recorded("get_weather", {"city": city}, lambda: _weather(city))


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit."""
    return recorded("celsius_to_fahrenheit", {"celsius": celsius}, lambda: round(celsius * 9 / 5 + 32, 1))


def turn_truth(prompt: str, answer: Any) -> dict[str, Any]:
    with _calls_lock:
        detail, CALLS[:] = list(CALLS), []  # ReAct calls one tool per step: the order is the real one
    return {"user_prompt": prompt,
            "expected_tool_trajectory": [{"tool_name": c["tool_name"], "args": c["args"]} for c in detail],
            "tool_calls_detail": detail,
            "final_response": answer}


def main() -> None:
    import dspy
    from openinference.instrumentation import using_session
    from openinference.instrumentation.dspy import DSPyInstrumentor

    collector = OtlpJsonCollector()
    provider = TracerProvider(resource=Resource.create({"service.name": "corpus-dspy-weather"}))
    provider.add_span_processor(SimpleSpanProcessor(collector))
    DSPyInstrumentor().instrument(tracer_provider=provider)
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)

    class WeatherQuestion(dspy.Signature):
        """Answer questions about the weather, using the tools."""

        question: str = dspy.InputField()
        history: dspy.History = dspy.InputField()
        answer: str = dspy.OutputField()

    runs = [("run1_sequential", ["What's the weather in Paris in Fahrenheit?"]),
            ("run2_parallel", ["What's the weather in London and Tokyo?"]),
            ("run3_multi_turn", ["Hi, I'm planning a trip.", "What's the weather in Berlin?"]),
            ("run4_failing_tool", ["What's the weather in Atlantis?"])]
    with serve() as base_url:
        lm = dspy.LM("openai/gpt-4o-mini", api_base=base_url, api_key="not-needed", cache=False)
        dspy.configure(lm=lm)
        for name, prompts in runs:
            agent = dspy.ReAct(WeatherQuestion, tools=[dspy.Tool(get_weather), dspy.Tool(celsius_to_fahrenheit)],
                               max_iters=5)
            collector.take()
            turns = []
            history = dspy.History(messages=[])
            with using_session(f"corpus-{name}"):
                for prompt in prompts:
                    prediction = agent(question=prompt, history=history)
                    turns.append(turn_truth(prompt, prediction.answer))
                    history = dspy.History(messages=[*history.messages,
                                                     {"question": prompt, "answer": prediction.answer}])
            write_trace(HERE / f"{name}.otlp.json", collector.take())
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth = {**truth, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:400])
    provider.shutdown()


if __name__ == "__main__":
    main()
