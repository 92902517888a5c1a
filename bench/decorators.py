"""Per-call cost of our decorators against a bare call, raw OpenTelemetry and peer SDKs.

    python bench/decorators.py [--rounds 201] [--calls 150] [--no-peers]
    AGENTEVAL_CONVENTIONS=gen_ai,openinference python bench/decorators.py   # OpenInference keys too

Every variant runs the same work (a tool returning a small dict; or an agent calling a node
calling that tool) through a real SDK ``TracerProvider`` with a ``BatchSpanProcessor`` over an
exporter that discards: ours and raw OpenTelemetry share one provider, OpenInference's
``OITracer`` wraps a tracer of that same provider, traceloop-sdk and langfuse build their own
provider of the same kind over the same discarding exporter. Variants of a case run interleaved in
a shuffled order, ``--calls`` calls per batch, ``--rounds`` rounds after a warm-up round: many
short rounds, so that load on the machine, which drifts, hits the variants of a round alike. Each
round starts with a garbage collection, each batch with every provider's queue empty; a batch is
timed in CPU time of the process, its variant's exports included (the batch ends by flushing its
provider), so other load on the machine does not count and no batch pays for another's exports.
The table shows the median µs per call and the ratio to raw ``tracer.start_as_current_span`` (one
span, or three nested for agent → node → tool): the median over rounds of the ratio within a
round, where both ran side by side. "content on" captures arguments and results (traceloop
``TRACELOOP_TRACE_CONTENT``, OpenInference ``hide_inputs``/``hide_outputs``, langfuse
``capture_input``/``capture_output``); "off" does not. Peers that are not installed (the ``bench``
extra) are reported as skipped. traceloop's ``@task``, ``@tool`` and ``@agent`` share one
implementation; the table uses the kind that matches each step.

Then the ``TrajectoryProcessor`` against a ``BatchSpanProcessor``: the CPU time of ``on_end`` on the
app thread over the same finished spans (agent → node → tool traces), interleaved; and the app's
wall time while it produces such traces with and without a ``TrajectoryProcessor`` on its provider
(its threads buffer and assemble meanwhile; reported, no target). Every figure is printed next to
its target; the exit status is 1 when one is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
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

from _targets import Targets
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel.tracing import agent, configure, node, routed_to, tool
from agenteval_otel.tracing.content import ContentPolicy, set_active_policy
from agenteval_otel.trajectory import TrajectoryProcessor

TARGETS = {
    ("tool", True): 1.5,
    ("tool", False): 1.15,
    ("tool (async)", True): 1.5,
    ("tool (async)", False): 1.15,
    ("agent → node → tool", True): 1.6,
    ("agent → node → tool", False): 1.6,
}
"""Our decorators' ratio to raw OpenTelemetry, at most."""
ON_END_TARGET = 1.1
"""``TrajectoryProcessor.on_end`` against ``BatchSpanProcessor.on_end`` on the app thread, at most."""
QUERY = "weather in Tokyo"
PROCESSOR_TRACES = 1000
"""agent → node → tool traces whose finished spans each processor's ``on_end`` takes per batch."""
APP_RUNS = 250
"""agent → node → tool runs per batch of the app whose wall time is measured."""
PROCESSOR_ROUNDS = 15
"""Interleaved rounds of the processor measurements."""


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
    flush: Callable[[], object] = lambda: None


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

    own = trace.get_tracer_provider()  # traceloop sets its provider as the global one
    return Peer(
        "traceloop-sdk",
        metadata.version("traceloop-sdk"),
        lambda capture: lambda kind, name: kinds[kind](name=name),
        prepare,
        getattr(own, "force_flush", lambda: None),
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

    own = TracerProvider()
    Langfuse(
        public_key="pk-lf-bench",
        secret_key="sk-lf-bench",
        base_url="http://127.0.0.1:9",
        tracer_provider=own,
        span_exporter=DiscardingExporter(),
    )
    types = {"agent": "agent", "node": "chain", "tool": "tool"}

    def decorate(capture: bool) -> Decorate:
        def with_options(kind: str, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
            return observe(name=name, as_type=types[kind], capture_input=capture, capture_output=capture)  # type: ignore[arg-type, return-value]

        return with_options

    return Peer("langfuse", metadata.version("langfuse"), decorate, flush=own.force_flush)


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


# --- measuring the decorators --------------------------------------------------------------------
@dataclass
class Variant:
    label: str
    call: Callable[..., Any]
    flush: Callable[[], object]
    """Exports what the batch's spans left queued: timed with the batch, so each pays its own exports."""
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


def settle(flushes: Sequence[Callable[[], object]]) -> None:
    """Start a batch with every provider's queue empty: no batch pays for another's exports (untimed)."""
    for flush in flushes:
        flush()


def measure(
    case: Case, rounds: int, calls: int, loop: asyncio.AbstractEventLoop, flushes: Sequence[Callable[[], object]]
) -> None:
    variants = list(case.variants)
    for round_number in range(rounds + 1):  # round 0 warms up
        random.shuffle(variants)
        gc.collect()  # the garbage of the last round is not this round's to collect
        for variant in variants:
            variant.prepare()
            settle(flushes)
            call, argument = variant.call, case.argument
            started = time.process_time_ns()
            if case.asynchronous:
                loop.run_until_complete(_await_batch(call, argument, calls))
            else:
                for _ in range(calls):
                    call(argument)
            variant.flush()
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
                Variant("bare call", build(plain), provider.force_flush),
                Variant("raw OTel", raw[shape], provider.force_flush),
                Variant(
                    "agenteval-otel",
                    build(ours),
                    provider.force_flush,
                    functools.partial(set_active_policy, policies[capture]),
                ),
            ]
            for peer in peers:
                variants.append(
                    Variant(
                        peer.label, build(peer.decorate(capture)), peer.flush, functools.partial(peer.prepare, capture)
                    )
                )
            cases.append(Case(shape, capture, argument, variants, asynchronous=shape.endswith("(async)")))
    return cases


# --- measuring the TrajectoryProcessor ------------------------------------------------------------
def finished_traces(traces: int) -> list[ReadableSpan]:
    """The finished spans of ``traces`` agent → node → tool runs (content on), in the order they ended."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    set_active_policy(ContentPolicy(capture=True))
    run = build_nested(ours)
    with routed_to(provider):
        for _ in range(traces):
            run(QUERY)
    provider.shutdown()
    return list(exporter.get_finished_spans())


def paired_ratio(samples: list[float], baseline: list[float]) -> float:
    """The median over rounds of ``samples[round] / baseline[round]`` (measured side by side)."""
    return statistics.median(value / base for value, base in zip(samples, baseline, strict=True))


def measure_on_end(spans: list[ReadableSpan], rounds: int) -> dict[str, list[float]]:
    """µs of CPU time on the app thread per ``on_end`` call, per processor and round, interleaved."""
    processors: dict[str, SpanProcessor] = {
        "BatchSpanProcessor": BatchSpanProcessor(DiscardingExporter()),
        "TrajectoryProcessor": TrajectoryProcessor(max_queued_traces=len(spans), max_pending_spans=2 * len(spans)),
    }
    samples: dict[str, list[float]] = {label: [] for label in processors}
    order = list(processors.items())
    try:
        for round_number in range(rounds + 1):
            random.shuffle(order)
            gc.collect()
            for label, processor in order:
                settle([processor.force_flush])
                on_end = processor.on_end
                started = time.thread_time_ns()
                for span in spans:
                    on_end(span)
                elapsed = time.thread_time_ns() - started
                if round_number:
                    samples[label].append(elapsed / len(spans) / 1000)
    finally:
        for processor in processors.values():
            processor.shutdown()
    return samples


def measure_app_wall_time(rounds: int, runs: int) -> dict[str, list[float]]:
    """ms of wall time for ``runs`` agent → node → tool runs, without and with a
    ``TrajectoryProcessor`` next to the ``BatchSpanProcessor``, per round, interleaved."""
    without = batch_provider()
    with_processor = batch_provider()
    processor = TrajectoryProcessor(max_queued_traces=2 * runs)
    with_processor.add_span_processor(processor)
    providers = {"without": without, "with TrajectoryProcessor": with_processor}
    samples: dict[str, list[float]] = {label: [] for label in providers}
    set_active_policy(ContentPolicy(capture=True))
    run = build_nested(ours)
    order = list(providers.items())
    try:
        for round_number in range(rounds + 1):
            random.shuffle(order)
            gc.collect()
            for label, provider in order:
                settle([without.force_flush, with_processor.force_flush])
                with routed_to(provider):
                    started = time.perf_counter_ns()
                    for _ in range(runs):
                        run(QUERY)
                    elapsed = time.perf_counter_ns() - started
                if round_number:
                    samples[label].append(elapsed / 1e6)
    finally:
        without.shutdown()
        with_processor.shutdown()
    return samples


# --- the report ------------------------------------------------------------------------------------
def _verdict(ratio: float, target: float) -> str:
    """``ratio`` (to three places, so a near miss shows) against its target."""
    return f"{ratio:.3f} ≤ {target}: {'met' if ratio <= target else 'MISSED'}"


def report(
    cases: list[Case],
    skipped: list[str],
    peers: list[Peer],
    rounds: int,
    calls: int,
    on_end: dict[str, list[float]],
    wall: dict[str, list[float]],
    wall_runs: int,
) -> int:
    """Print the tables; the exit status (1: a target missed)."""
    targets = Targets("decorators")
    targets.note("conventions", os.environ.get("AGENTEVAL_CONVENTIONS", ""))
    for peer in peers:
        targets.note(peer.label, peer.version)
    versions = ", ".join(f"{p.label} {p.version}" for p in peers) or "none"
    print(
        f"Python {platform.python_version()}, opentelemetry-sdk {metadata.version('opentelemetry-sdk')}, "
        f"{os.cpu_count()} CPUs; {rounds} interleaved rounds x {calls} calls; peers: {versions}"
    )
    if skipped:
        print("skipped: " + "; ".join(skipped))
    print()
    print("| shape | content | SDK | µs/call (median) | × raw OTel | target |")
    print("|---|---|---|---:|---:|---|")
    for case in cases:
        raw = next(v for v in case.variants if v.label == "raw OTel").samples
        content = "on" if case.capture else "off"
        for variant in case.variants:
            ours = variant.label == "agenteval-otel"
            name = f"{case.shape}, content {content}, {variant.label}"
            ratio = targets.figure(f"{name}: × raw OTel", paired_ratio(variant.samples, raw), unit="×",
                                   digits=3 if ours else 2,
                                   at_most=TARGETS.get((case.shape, case.capture)) if ours else None)
            median = targets.figure(f"{name}: µs/call", statistics.median(variant.samples), unit=" µs")
            verdict = ratio.verdict if ratio.target else ""
            print(f"| {case.shape} | {content} | {variant.label} | {median.value:.2f} | {ratio.value:.2f} | "
                  f"{verdict} |")
    print()
    print("| span processor | median | × BatchSpanProcessor, × without | target |")
    print("|---|---:|---:|---|")
    for label, samples in on_end.items():
        target = ON_END_TARGET if label == "TrajectoryProcessor" else None
        ratio = targets.figure(f"{label}.on_end: × BatchSpanProcessor", paired_ratio(samples, on_end["BatchSpanProcessor"]),
                               unit="×", digits=3 if target else 2, at_most=target)
        median = statistics.median(samples)
        verdict = ratio.verdict if ratio.target else ""
        print(f"| {label}.on_end, CPU time of the app thread | {median:.2f} µs/span | {ratio.value:.2f} | {verdict} |")
    for label, samples in wall.items():
        ratio = targets.figure(f"app wall time, {label}: × without", paired_ratio(samples, wall["without"]), unit="×")
        median = statistics.median(samples)
        print(f"| app wall time, {wall_runs} agent runs, {label} | {median:.1f} ms | {ratio.value:.2f} | reported |")
    print("ratios measured side by side in this run")
    return targets.finish()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=201, help="measured rounds per case (default 201)")
    parser.add_argument("--calls", type=int, default=150, help="calls per batch (default 150)")
    parser.add_argument("--no-peers", action="store_true", help="measure only bare, raw OTel and ours")
    args = parser.parse_args(argv)

    # A benchmark loop ends spans far faster than an application does: a queue big enough that no
    # batch processor (ours or a peer's) drops spans, so no variant is timed on its drop path.
    os.environ.setdefault("OTEL_BSP_MAX_QUEUE_SIZE", "1000000")
    provider = batch_provider()
    handle = configure(tracer_provider=provider, set_global=False)
    peers, skipped = ([], ["all peers (--no-peers)"]) if args.no_peers else load_peers(provider)
    cases = build_cases(provider, peers)
    flushes = [provider.force_flush, *(peer.flush for peer in peers)]
    loop = asyncio.new_event_loop()
    try:
        for case in cases:
            measure(case, args.rounds, args.calls, loop, flushes)
        spans = finished_traces(PROCESSOR_TRACES)
        on_end = measure_on_end(spans, PROCESSOR_ROUNDS)
        wall = measure_app_wall_time(PROCESSOR_ROUNDS, APP_RUNS)
    finally:
        loop.close()
        handle.shutdown(timeout=10)
    return report(cases, skipped, peers, args.rounds, args.calls, on_end, wall, APP_RUNS)


if __name__ == "__main__":
    sys.exit(main())
