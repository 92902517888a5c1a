"""Per-call cost of an instrumented ``chat.completions.create`` against a local server: the call
uninstrumented, under agenteval-instrumentation-openai, and under contrib's
``opentelemetry-instrumentation-openai-v2``, measured in the same run.

    python bench/instrument_openai.py [--rounds 41] [--calls 40]    # about 10 minutes on 2 cores

Needs ``openai``, both instrumentations and agenteval-otel in one environment (contrib's is not a
dependency of ours: install it into a virtual environment of its own, e.g. ``pip install -e .
-e instrumentation/agenteval-instrumentation-openai opentelemetry-instrumentation-openai-v2``);
without contrib's, its rows are skipped. The scripted model of ``examples/openai_server.py`` answers
on 127.0.0.1 from a thread of this process. Each variant instruments (through one SDK
``TracerProvider`` with a ``BatchSpanProcessor`` over an exporter that discards), makes ``--calls``
calls (one tool call asked for, ~10 messages sent), and uninstruments; the variants of a round
run in a shuffled order, ``--rounds`` rounds after a warm-up. A batch is timed in CPU time of the
calling thread (``time.thread_time``): the client's own work, HTTP included, and the
instrumentation's, not the server's or the exporter's threads. The table shows the median µs per
call over rounds and the median over rounds of each variant's ratio to the bare call of the same
round. "content on": messages and tool calls recorded (ours ``capture_content=True``, contrib's
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only``). The figures are reported with no
target: the client's own work dominates a call.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
from _targets import Targets
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Today's weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
MESSAGES = [{"role": "system", "content": "Answer weather questions with the get_weather tool."}] + [
    message for i in range(4) for message in (
        {"role": "user", "content": f"What was the weather in city {i}?"},
        {"role": "assistant", "content": f"It was mild in city {i}."})
] + [{"role": "user", "content": "What is the weather in Paris?"}]


class Discard(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def _load_server() -> Any:
    spec = importlib.util.spec_from_file_location("openai_server", EXAMPLES / "openai_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["openai_server"] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class Variant:
    name: str
    setup: Callable[[], Callable[[], None]]
    """Instrument; return the function that uninstruments."""


def _ours(provider: TracerProvider, capture: bool) -> Callable[[], Callable[[], None]]:
    from agenteval_instrumentation_openai import OpenAIInstrumentor

    def setup() -> Callable[[], None]:
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider, capture_content=capture)
        return instrumentor.uninstrument

    return setup


def _contrib(provider: TracerProvider, capture: bool) -> Callable[[], Callable[[], None]]:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor as ContribInstrumentor

    def setup() -> Callable[[], None]:
        if capture:
            os.environ[CONTENT_ENV] = "span_only"
        instrumentor = ContribInstrumentor()
        instrumentor.instrument(tracer_provider=provider)

        def undo() -> None:
            instrumentor.uninstrument()
            os.environ.pop(CONTENT_ENV, None)

        return undo

    return setup


def _variants(provider: TracerProvider) -> list[Variant]:
    variants = [Variant("bare openai", lambda: lambda: None),
                Variant("agenteval, content off", _ours(provider, False)),
                Variant("agenteval, content on", _ours(provider, True))]
    if importlib.util.find_spec("opentelemetry.instrumentation.openai_v2") is None:
        print("opentelemetry-instrumentation-openai-v2 is not installed: its rows are skipped")
        return variants
    os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    return variants + [Variant("contrib openai-v2, content off", _contrib(provider, False)),
                       Variant("contrib openai-v2, content on", _contrib(provider, True))]


def _batch(client: openai.OpenAI, variant: Variant, calls: int, processor: BatchSpanProcessor) -> float:
    undo = variant.setup()
    try:
        started = time.thread_time()
        for _ in range(calls):
            client.chat.completions.create(model="bench-model", messages=MESSAGES, tools=TOOLS, temperature=0.0)
        elapsed = time.thread_time() - started
    finally:
        undo()
    processor.force_flush()
    return elapsed / calls


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--calls", type=int, default=40)
    options = parser.parse_args(argv)
    os.environ.pop(CONTENT_ENV, None)
    processor = BatchSpanProcessor(Discard())
    provider = TracerProvider()
    provider.add_span_processor(processor)
    variants = _variants(provider)
    server_module = _load_server()
    per_call: dict[str, list[float]] = {v.name: [] for v in variants}
    ratios: dict[str, list[float]] = {v.name: [] for v in variants}
    with server_module.serve() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="bench", max_retries=0, timeout=10)
        for number in range(options.rounds + 1):
            gc.collect()
            order = variants[:]
            random.shuffle(order)
            timed = {v.name: _batch(client, v, options.calls, processor) for v in order}
            if number == 0:  # warm-up
                continue
            for name, seconds in timed.items():
                per_call[name].append(seconds)
                ratios[name].append(seconds / timed["bare openai"])
    provider.shutdown()
    print(f"chat.completions.create against a local server, {options.rounds} rounds x {options.calls} calls, "
          f"CPU time of the calling thread; Python {sys.version.split()[0]}, openai {openai.__version__}")
    targets = Targets("instrument_openai")
    targets.note("openai", openai.__version__)
    if importlib.util.find_spec("opentelemetry.instrumentation.openai_v2") is not None:
        from importlib import metadata

        targets.note("contrib", metadata.version("opentelemetry-instrumentation-openai-v2"))
    print(f"{'variant':<34} {'µs/call':>9} {'× bare':>8}")
    for variant in variants:
        median = targets.figure(f"{variant.name}: µs/call", statistics.median(per_call[variant.name]) * 1e6,
                                unit=" µs", digits=0)
        ratio = targets.figure(f"{variant.name}: × bare", statistics.median(ratios[variant.name]), unit="×",
                               digits=3)
        print(f"{variant.name:<34} {median.value:>9.0f} {ratio.cell:>8}")
    return targets.finish()


if __name__ == "__main__":
    sys.exit(main())
