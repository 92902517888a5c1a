"""Generate real traces of LiteLLM's OpenTelemetry callback with ground truth.

A travel-booking agent written in plain Python (LiteLLM is a model client, not a framework): a
loop of ``litellm.completion(model="openai/gpt-4o-mini", api_base=<scripted server>, tools=...)``
calls against the scripted OpenAI-compatible server (``../scripted_openai.py``, scenario
``travel``) on 127.0.0.1, the program running the tools the model asks for and sending their
results back. Tracing is LiteLLM's own, as its documentation sets it up:
``litellm.callbacks = ["otel"]``; the callback finds the OpenTelemetry SDK ``TracerProvider``
set globally here (``SimpleSpanProcessor`` -> ``corpus_kit.OtlpJsonCollector``, OTLP/JSON through
the SDK's own encoder) and uses it instead of making its own console one. Nothing else is
instrumented and the program opens no span of its own.

The ground truth is recorded by this program: every call the tool functions really receive
(``corpus_kit.ToolLog``: arguments, result or raised error), the call ids and order of the
model's ``tool_calls``, and the text of the model's last reply. Nothing is read back from the
trace. A failed tool is reported to the model as the tool message ``Error: <message>``. The
two-turn run keeps one message list, so the second turn sends the first one to the model.

Run: ``python generate.py`` (in a virtual environment made from ``requirements.txt``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # the bundled price list, no download

from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from corpus_kit import TRAVEL_TOOLS, OtlpJsonCollector, ToolLog, in_asked_order, turn_truth  # noqa: E402
from scripted_openai import TRAVEL_RUNS, serve  # noqa: E402

PRODUCER = f"litellm=={version('litellm')} (callbacks=[\"otel\"])"
RECORD = ToolLog()
TOOLS = {"search_flights": RECORD.search_flights, "list_airports": RECORD.list_airports, "book": RECORD.book}
SPANS_PER_MODEL_CALL = 2  # litellm_request and its child raw_gen_ai_request
SYSTEM = "You are a travel agent. Use the tools to search and book flights."


def run_turn(litellm: Any, base_url: str, messages: list[dict[str, Any]], prompt: str) -> tuple[dict[str, Any], int]:
    """One user turn of the agent loop; its ground truth and how many model calls it made."""
    messages.append({"role": "user", "content": prompt})
    asked: list[tuple[str, dict[str, Any], str]] = []
    for model_calls in range(1, 10):
        reply = litellm.completion(model="openai/gpt-4o-mini", api_base=base_url, api_key="not-needed",
                                   messages=messages, tools=TRAVEL_TOOLS)
        message = reply.choices[0].message
        calls = message.tool_calls or []
        messages.append({"role": "assistant", "content": message.content,
                         **({"tool_calls": [c.model_dump() for c in calls]} if calls else {})})
        if not calls:
            return turn_truth(prompt, in_asked_order(RECORD.take(), asked), message.content), model_calls
        for call in calls:
            args = json.loads(call.function.arguments or "{}")
            asked.append((call.function.name, args, call.id))
            try:
                result = TOOLS[call.function.name](**args)
                content = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
            except Exception as error:  # the tool failed: the model is told, and carries on
                content = f"Error: {error}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    raise RuntimeError(f"no answer to {prompt!r} after 9 model calls")


def settle(collector: OtlpJsonCollector, expected: int) -> None:
    """Wait until the callback, which logs on a thread of its own after the call returns, has ended
    ``expected`` spans, then a little longer to be sure no more come."""
    for _ in range(200):
        if len(collector) >= expected:
            break
        time.sleep(0.05)
    time.sleep(0.5)
    if len(collector) != expected:
        raise RuntimeError(f"expected {expected} spans, got {len(collector)}")


def main() -> None:
    collector = OtlpJsonCollector()
    provider = TracerProvider(resource=Resource.create({"service.name": "corpus-litellm-travel"}))
    provider.add_span_processor(SimpleSpanProcessor(collector))
    trace.set_tracer_provider(provider)

    import litellm

    litellm.callbacks = ["otel"]
    with serve("travel") as base_url:
        for name, prompts in TRAVEL_RUNS.items():
            collector.take()
            messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
            turns, model_calls = [], 0
            for prompt in prompts:
                truth, calls = run_turn(litellm, base_url, messages, prompt)
                turns.append(truth)
                model_calls += calls
            settle(collector, SPANS_PER_MODEL_CALL * model_calls)
            collector.write(HERE / f"{name}.otlp.json")
            doc: dict[str, Any] = turns[0] if len(turns) == 1 else {"turns": turns}
            doc = {**doc, "producer": PRODUCER}
            (HERE / f"{name}.ground_truth.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
            print(name, json.dumps(doc, ensure_ascii=False)[:300])
    provider.shutdown()


if __name__ == "__main__":
    main()
