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

PRODUCER = (f"openinference-instrumentation-llama-index=={version('openinference-instrumentation-llama-index')}"
            f" + llama-index-core=={version('llama-index-core')}"
            f" + llama-index-llms-openai-like=={version('llama-index-llms-openai-like')}")


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


def turn_truth(prompt: str, asked: list[tuple[str, dict[str, Any], str]], answer: Any) -> dict[str, Any]:
    with _calls_lock:
        executed, CALLS[:] = list(CALLS), []
    # order the executed calls (parallel ones run concurrently) as the model asked for them, with their ids
    detail: list[dict[str, Any]] = []
    for name, args, call_id in asked:
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
            write_trace(HERE / f"{name}.otlp.json", collector.take())
            truth: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            truth = {**truth, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(truth, indent=2) + "\n")
            print(name, json.dumps(truth)[:300])
    provider.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
