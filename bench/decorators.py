"""Per-call cost of our decorators against a bare call, raw OpenTelemetry and peer SDKs.

    python bench/decorators.py [--rounds 21] [--calls 1000] [--no-peers]

Every variant runs the same work (a tool returning a small dict; or an agent calling a node
calling that tool) through a real SDK ``TracerProvider`` with a ``BatchSpanProcessor`` over an
exporter that discards: ours and raw OpenTelemetry share one provider, OpenInference's
``OITracer`` wraps a tracer of that same provider, traceloop-sdk and langfuse build their own
provider of the same kind over the same discarding exporter. Variants of a case run interleaved in
a shuffled order, ``--calls`` calls per batch, ``--rounds`` rounds after a warm-up round. A batch
is timed in CPU time of the process (its export thread included), so other load on the machine
does not count. The table shows the median µs per call and the ratio to raw
``tracer.start_as_current_span`` (one span, or three nested for agent → node → tool). "content
on" captures arguments and results (traceloop ``TRACELOOP_TRACE_CONTENT``, OpenInference
``hide_inputs``/``hide_outputs``, langfuse ``capture_input``/``capture_output``); "off" does not.
Peers that are not installed (the ``bench`` extra) are reported as skipped. traceloop's ``@task``,
``@tool`` and ``@agent`` share one implementation; the table uses the kind that matches each step.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from agenteval_otel.tracing import agent, configure, node, tool
from agenteval_otel.tracing.content import ContentPolicy, set_active_policy

TARGETS = {
    ("tool", True): 1.5,
    ("tool", False): 1.15,
    ("agent → node → tool", True): 1.6,
    ("agent → node → tool", False): 1.6,
}
QUERY = "weather in Tokyo"


class DiscardingExporter(SpanExporter):
    """Accepts every batch and keeps nothing."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def batch_provider() -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(DiscardingExporter()))
    return provider


# --- the work: the same functions, decorated by each SDK -----------------------------------------
Decorate = Callable[[str, str], Callable[[Callable[..., Any]], Callable[..., Any]]]
"""``decorate(kind, name)`` -> a decorator; kind is "agent", "node" or "tool"."""


def weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    return {"city": city, "temperature": 21, "unit": unit}


def build_tool(decorate: Decorate) -> Callable[..., Any]:
    @decorate("tool", "get_weather")
    def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
        return {"city": city, "temperature": 21, "unit": unit}

    return get_weather


def build_async_tool(decorate: Decorate) -> Callable[..., Any]:
    @decorate("tool", "get_weather")
    async def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
        return {"city": city, "temperature": 21, "unit": unit}

    return get_weather


def build_nested(decorate: Decorate) -> Callable[..., Any]:
    get_weather = build_tool(decorate)

    @decorate("node", "plan")
    def plan(query: str) -> dict[str, Any]:
        return get_weather(query.rsplit(" ", 1)[-1])

    @decorate("agent", "weather")
    def run(query: str) -> str:
        plan(query)
        return "It is 21 degrees in Tokyo."

    return run


def plain(kind: str, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return lambda fn: fn


def ours(kind: str, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    if kind == "agent":
        return agent(name=name)
    if kind == "node":
        return node(name=name)
    return tool(name=name)


def raw_otel(provider: TracerProvider) -> dict[str, Callable[..., Any]]:
    tracer = provider.get_tracer("raw")

    def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
        with tracer.start_as_current_span("execute_tool get_weather"):
            return weather(city, unit)

    async def aget_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
        with tracer.start_as_current_span("execute_tool get_weather"):
            return weather(city, unit)

    def run(query: str) -> str:
        with tracer.start_as_current_span("invoke_agent weather"):
            with tracer.start_as_current_span("invoke_node plan"):
                with tracer.start_as_current_span("execute_tool get_weather"):
                    weather(query.rsplit(" ", 1)[-1])
            return "It is 21 degrees in Tokyo."

    return {"tool": get_weather, "tool (async)": aget_weather, "agent → node → tool": run}


# --- peers ---------------------------------------------------------------------------------------
@dataclass
class Peer:
    """A peer SDK: its decorators with content on and off, and what to do before each batch."""

    label: str
    version: str
    decorate: Callable[[bool], Decorate]
    prepare: Callable[[bool], None] = lambda capture: None


def traceloop_peer() -> Peer:
    os.environ.setdefault("TRACELOOP_TELEMETRY", "false")
    from traceloop.sdk import Traceloop
    from traceloop.sdk.decorators import agent as tl_agent
    from traceloop.sdk.decorators import task as tl_task
    from traceloop.sdk.decorators import tool as tl_tool

    Traceloop.init(app_name="bench", exporter=DiscardingExporter(), telemetry_enabled=False, instruments=set())
    kinds = {"agent": tl_agent, "node": tl_task, "tool": tl_tool}

    def prepare(capture: bool) -> None:
        os.environ["TRACELOOP_TRACE_CONTENT"] = "true" if capture else "false"

    return Peer(
        "traceloop-sdk",
        metadata.version("traceloop-sdk"),
        lambda capture: lambda kind, name: kinds[kind](name=name),
        prepare,
    )


def openinference_peer(provider: TracerProvider) -> Peer:
    from openinference.instrumentation import OITracer, TraceConfig

    tracers = {
        capture: OITracer(
            provider.get_tracer("openinference"), config=TraceConfig(hide_inputs=not capture, hide_outputs=not capture)
        )
        for capture in (True, False)
    }

    def decorate(capture: bool) -> Decorate:
        tracer = tracers[capture]
        kinds = {"agent": tracer.agent, "node": tracer.chain, "tool": tracer.tool}
        return lambda kind, name: kinds[kind](name=name)  # type: ignore[no-any-return, operator]

    return Peer("openinference", metadata.version("openinference-instrumentation"), decorate)


def langfuse_peer() -> Peer:
    from langfuse import Langfuse, observe

    Langfuse(
        public_key="pk-lf-bench",
        secret_key="sk-lf-bench",
        base_url="http://127.0.0.1:9",
        tracer_provider=TracerProvider(),
        span_exporter=DiscardingExporter(),
    )
    types = {"agent": "agent", "node": "chain", "tool": "tool"}

    def decorate(capture: bool) -> Decorate:
        def with_options(kind: str, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
            return observe(name=name, as_type=types[kind], capture_input=capture, capture_output=capture)  # type: ignore[arg-type, return-value]

        return with_options

    return Peer("langfuse", metadata.version("langfuse"), decorate)


def load_peers(provider: TracerProvider) -> tuple[list[Peer], list[str]]:
    peers: list[Peer] = []
    skipped: list[str] = []
    for label, load in (
        ("traceloop-sdk", traceloop_peer),
        ("openinference", lambda: openinference_peer(provider)),
        ("langfuse", langfuse_peer),
    ):
        try:
            peers.append(load())
        except ImportError as error:
            skipped.append(f"{label} (not installed: {error.name})")
    return peers, skipped


# --- measuring -----------------------------------------------------------------------------------
@dataclass
class Variant:
    label: str
    call: Callable[..., Any]
    prepare: Callable[[], None] = lambda: None
    samples: list[float] = field(default_factory=list)


@dataclass
class Case:
    shape: str
    capture: bool
    argument: str
    variants: list[Variant]
    asynchronous: bool = False


async def _await_batch(call: Callable[..., Any], argument: str, calls: int) -> None:
    for _ in range(calls):
        await call(argument)


def measure(case: Case, rounds: int, calls: int, loop: asyncio.AbstractEventLoop) -> None:
    variants = list(case.variants)
    for round_number in range(rounds + 1):  # round 0 warms up
        random.shuffle(variants)
        for variant in variants:
            variant.prepare()
            call, argument = variant.call, case.argument
            started = time.process_time_ns()
            if case.asynchronous:
                loop.run_until_complete(_await_batch(call, argument, calls))
            else:
                for _ in range(calls):
                    call(argument)
            elapsed = time.process_time_ns() - started
            if round_number:
                variant.samples.append(elapsed / calls / 1000)


def build_cases(provider: TracerProvider, peers: list[Peer]) -> list[Case]:
    raw = raw_otel(provider)
    builders = {"tool": build_tool, "tool (async)": build_async_tool, "agent → node → tool": build_nested}
    policies = {True: ContentPolicy(capture=True), False: ContentPolicy(capture=False)}
    cases = []
    for shape, build in builders.items():
        for capture in (True, False):
            argument = QUERY if shape == "agent → node → tool" else "Tokyo"
            variants = [
                Variant("bare call", build(plain)),
                Variant("raw OTel", raw[shape]),
                Variant("agenteval-otel", build(ours), functools.partial(set_active_policy, policies[capture])),
            ]
            for peer in peers:
                variants.append(
                    Variant(peer.label, build(peer.decorate(capture)), functools.partial(peer.prepare, capture))
                )
            cases.append(Case(shape, capture, argument, variants, asynchronous=shape.endswith("(async)")))
    return cases


def report(cases: list[Case], skipped: list[str], peers: list[Peer], rounds: int, calls: int) -> None:
    versions = ", ".join(f"{p.label} {p.version}" for p in peers) or "none"
    print(
        f"Python {platform.python_version()}, opentelemetry-sdk {metadata.version('opentelemetry-sdk')}, "
        f"{os.cpu_count()} CPUs; {rounds} interleaved rounds x {calls} calls; peers: {versions}"
    )
    if skipped:
        print("skipped: " + "; ".join(skipped))
    print()
    print("| shape | content | SDK | µs/call (median) | × raw OTel |")
    print("|---|---|---|---:|---:|")
    verdicts = []
    for case in cases:
        medians = {v.label: statistics.median(v.samples) for v in case.variants}
        raw = medians["raw OTel"]
        for label, median in medians.items():
            print(f"| {case.shape} | {'on' if case.capture else 'off'} | {label} | {median:.2f} | {median / raw:.2f} |")
        target = TARGETS.get((case.shape.replace(" (async)", ""), case.capture))
        if target is not None:
            ratio = medians["agenteval-otel"] / raw
            mark = "ok" if ratio <= target else "OVER"
            verdicts.append(
                f"{case.shape}, content {'on' if case.capture else 'off'}: {ratio:.2f}× (target ≤ {target}×) {mark}"
            )
    print()
    print("agenteval-otel against its targets:")
    for verdict in verdicts:
        print(f"  {verdict}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="measured rounds per case (default 21)")
    parser.add_argument("--calls", type=int, default=1000, help="calls per batch (default 1000)")
    parser.add_argument("--no-peers", action="store_true", help="measure only bare, raw OTel and ours")
    args = parser.parse_args(argv)

    # A benchmark loop ends spans far faster than an application does: a queue big enough that no
    # batch processor (ours or a peer's) drops spans, so no variant is timed on its drop path.
    os.environ.setdefault("OTEL_BSP_MAX_QUEUE_SIZE", "1000000")
    provider = batch_provider()
    handle = configure(tracer_provider=provider, set_global=False)
    peers, skipped = ([], ["all peers (--no-peers)"]) if args.no_peers else load_peers(provider)
    cases = build_cases(provider, peers)
    loop = asyncio.new_event_loop()
    try:
        for case in cases:
            measure(case, args.rounds, args.calls, loop)
    finally:
        loop.close()
        handle.shutdown(timeout=10)
    report(cases, skipped, peers, args.rounds, args.calls)
    return 0


if __name__ == "__main__":
    sys.exit(main())
