"""The app thread's cost per span with an ``OnlineEvaluator`` attached, against a plain
``BatchSpanProcessor``, while a judge that takes 200 ms scores every invocation.

    python bench/online.py [--rounds 21] [--runs 300] [--serve-seconds 5]

Two figures, each measured in CPU time of the app's thread (``thread_time``: the evaluator's own
threads, which buffer, assemble and score meanwhile, are not the app's cost), in interleaved
rounds of shuffled order, each round starting with a garbage collection and every queue empty;
the ratio is the median over rounds of the ratio within a round:

- ``on_end``: the same finished agent → node → tool spans (content on) handed to
  ``BatchSpanProcessor.on_end`` and to ``OnlineEvaluator.on_end``;
- the app: ``--runs`` agent → node → tool runs traced by our decorators through a real SDK
  ``TracerProvider`` with a ``BatchSpanProcessor``, with and without an ``OnlineEvaluator`` beside
  it (the same discarding exporter on both).

The evaluator scores every invocation with two criteria: one reference-free check and a judge
that answers after 200 ms (an ``async`` criterion that sleeps, as an HTTP judge call waits);
each batch is followed by the evaluator scoring all of it, so the next batch starts with its
queue empty and the judge really ran for every invocation (its counters are printed). Each
figure is printed next to its target; the exit status is 1 when one is missed.

Then ``agenteval serve`` (an ``EvaluationWorker`` on 127.0.0.1) under a bounded load generator in
a process of its own: four client threads post pre-encoded OTLP/HTTP protobuf batches (100 agent → node → tool traces
each) over keep-alive connections for ``--serve-seconds``, backing off 10 ms when told to retry:

- throughput, with the reference-free policies of ``examples/production_policies.json``: spans
  received per second, traces evaluated per second (until the last one is scored);
- overload, with the 200 ms judge at 8 at once and a queue of 256: the peak growth of the
  process's resident memory while the senders push far more than it can score, and how the
  excess was refused (429/503 answers) or dropped and counted — bounded, never queued without end.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agenteval_otel.criteria import CriterionContext, EvalConfig, criterion
from agenteval_otel.evaluation import EvaluationWorker, OnlineEvaluator
from agenteval_otel.results import CallbackSink
from agenteval_otel.tracing import routed_to
from agenteval_otel.tracing.content import ContentPolicy, set_active_policy

sys.path.insert(0, str(Path(__file__).parent))
from _targets import Targets  # noqa: E402
from decorators import (  # noqa: E402  (the shared work, exporter and ratio helpers)
    QUERY,
    DiscardingExporter,
    _verdict,
    build_nested,
    finished_traces,
    ours,
    paired_ratio,
)

TARGET = 1.1
"""App-thread cost per span with the ``OnlineEvaluator`` attached, × a plain ``BatchSpanProcessor``, at most."""
JUDGE_S = 0.2
ON_END_TRACES = 1000
"""agent → node → tool traces whose finished spans each processor's ``on_end`` takes per batch."""
SPANS_PER_RUN = 3
targets = Targets("online")


@criterion("bench_judge_200ms", default_threshold=0.5)
async def bench_judge(ctx: CriterionContext) -> float:
    """A judge that answers after 200 ms."""
    await asyncio.sleep(JUDGE_S)
    return 1.0


@criterion("bench_answered", default_threshold=1.0)
def bench_answered(ctx: CriterionContext) -> bool:
    """A reference-free check."""
    return bool(ctx.actual.final_response)


def online_evaluator(scored: list[int]) -> OnlineEvaluator:
    """An evaluator whose judge takes 200 ms, scoring up to 128 invocations at once."""
    config = EvalConfig(criteria={"bench_answered": {}, "bench_judge_200ms": {}})
    return OnlineEvaluator(config, sinks=[CallbackSink(lambda result: scored.append(1))],
                           concurrency=128, max_queue=4 * ON_END_TRACES)


def settle(evaluator: OnlineEvaluator, others: list[Callable[[], object]]) -> None:
    """Every queue empty and every invocation scored before a batch (untimed)."""
    for flush in others:
        flush()
    if not evaluator.force_flush(120_000):
        raise SystemExit("the evaluator did not finish scoring a batch within 120 s")


def measure_on_end(spans: list[ReadableSpan], rounds: int, evaluator: OnlineEvaluator) -> dict[str, list[float]]:
    """µs of app-thread CPU time per ``on_end`` call, per processor and round, interleaved."""
    batch = BatchSpanProcessor(DiscardingExporter(), max_queue_size=4 * len(spans))
    processors: dict[str, SpanProcessor] = {"BatchSpanProcessor": batch, "OnlineEvaluator": evaluator}
    samples: dict[str, list[float]] = {label: [] for label in processors}
    order = list(processors.items())
    try:
        for round_number in range(rounds + 1):  # round 0 warms up
            random.shuffle(order)
            gc.collect()
            for label, processor in order:
                settle(evaluator, [batch.force_flush])
                on_end = processor.on_end
                started = time.thread_time_ns()
                for span in spans:
                    on_end(span)
                elapsed = time.thread_time_ns() - started
                if round_number:
                    samples[label].append(elapsed / len(spans) / 1000)
        settle(evaluator, [batch.force_flush])
    finally:
        batch.shutdown()
    return samples


def measure_app(rounds: int, runs: int, evaluator: OnlineEvaluator) -> dict[str, list[float]]:
    """µs of app-thread CPU time per span of ``runs`` traced agent runs, per round, without and with
    the evaluator beside the ``BatchSpanProcessor``, interleaved."""
    exporter = DiscardingExporter()
    plain, attached = TracerProvider(), TracerProvider()
    for provider in (plain, attached):
        provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=4 * runs * SPANS_PER_RUN))
    attached.add_span_processor(evaluator)
    providers = {"BatchSpanProcessor": plain, "BatchSpanProcessor + OnlineEvaluator": attached}
    samples: dict[str, list[float]] = {label: [] for label in providers}
    set_active_policy(ContentPolicy(capture=True))
    run = build_nested(ours)
    order = list(providers.items())
    try:
        for round_number in range(rounds + 1):
            random.shuffle(order)
            gc.collect()
            for label, provider in order:
                settle(evaluator, [plain.force_flush, attached.force_flush])
                with routed_to(provider):
                    started = time.thread_time_ns()
                    for _ in range(runs):
                        run(QUERY)
                    elapsed = time.thread_time_ns() - started
                if round_number:
                    samples[label].append(elapsed / (runs * SPANS_PER_RUN) / 1000)
        settle(evaluator, [plain.force_flush, attached.force_flush])
    finally:
        plain.shutdown()
        attached.shutdown()
    return samples


def report(figures: dict[str, dict[str, list[float]]], evaluator: OnlineEvaluator, rounds: int) -> bool:
    """Print the table; whether every target was met."""
    print(f"Python {platform.python_version()}, opentelemetry-sdk {metadata.version('opentelemetry-sdk')}; "
          f"{rounds} interleaved rounds; judge {JUDGE_S * 1000:.0f} ms per invocation")
    print()
    print("| measured | median | × BatchSpanProcessor | target |")
    print("|---|---:|---:|---|")
    met = True
    for what, samples in figures.items():
        baseline = samples["BatchSpanProcessor"]
        for label, values in samples.items():
            ratio = paired_ratio(values, baseline)
            verdict = ""
            if label != "BatchSpanProcessor":
                verdict = _verdict(ratio, TARGET)
                met = targets.figure(f"{what}, {label}: × BatchSpanProcessor", ratio, unit="×", digits=3,
                                     at_most=TARGET).met and met
            print(f"| {what}, {label} | {statistics.median(values):.2f} µs/span | {ratio:.3f} | {verdict} |")
    counters = evaluator.counters
    print()
    print(f"evaluator: {counters}")
    if not (counters.accounted and counters.dropped == 0 and counters.errored == 0):
        print("the evaluator dropped or errored invocations: the judge did not score every one")
        met = False
    print(f"every target {'met' if met else 'NOT met'} (ratios measured side by side in this run)")
    return met


SERVE_TRACES_PER_BATCH = 100
SERVE_SENDERS = 4
OVERLOAD_RSS_LIMIT_MB = 512
"""Peak resident-memory growth of ``agenteval serve`` under overload, at most (bounded queues)."""


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _encoded_batch() -> bytes:
    """One OTLP/HTTP protobuf body: ``SERVE_TRACES_PER_BATCH`` finished agent → node → tool traces."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return encode_spans(finished_traces(SERVE_TRACES_PER_BATCH)).SerializeToString()


def _send_for(port: int, body: bytes, seconds: float) -> tuple[int, int]:
    """Post ``body`` from ``SERVE_SENDERS`` threads for ``seconds``; (batches taken, refusals)."""
    import http.client
    import threading

    taken = [0] * SERVE_SENDERS
    refused = [0] * SERVE_SENDERS
    stop_at = time.monotonic() + seconds

    def send(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Content-Type": "application/x-protobuf"}
        while time.monotonic() < stop_at:
            connection.request("POST", "/v1/traces", body, headers)
            response = connection.getresponse()
            response.read()
            if response.status == 200:
                taken[index] += 1
            else:
                refused[index] += 1
                time.sleep(0.01)
        connection.close()

    threads = [threading.Thread(target=send, args=(n,)) for n in range(SERVE_SENDERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(taken), sum(refused)


def _load(port: int, body: bytes, seconds: float) -> tuple[int, int]:
    """The load generator in a process of its own (it does not take the worker's interpreter)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_send_for, port, body, seconds).result()


def measure_serve(seconds: float) -> bool:
    """``agenteval serve``'s throughput with policies, and its memory under overload; whether
    memory stayed within its bound."""
    body = _encoded_batch()
    policies = EvalConfig.load(Path(__file__).parent.parent / "examples" / "production_policies.json")
    scored: list[int] = []
    worker = EvaluationWorker(policies, sinks=[CallbackSink(lambda result: scored.append(1))], http_port=0,
                              evaluator_options={"max_queue": 4096}).start()
    started = time.perf_counter()
    batches, refused = _load(worker.receiver.http_port or 0, body, seconds)
    sent_for = time.perf_counter() - started
    worker.evaluator.force_flush(120_000)
    scored_for = time.perf_counter() - started
    counters = worker.evaluator.counters
    worker.stop(timeout=10)
    spans = batches * SERVE_TRACES_PER_BATCH * SPANS_PER_RUN
    print()
    print(f"agenteval serve, {SERVE_SENDERS} senders × OTLP/HTTP protobuf batches of {SERVE_TRACES_PER_BATCH} "
          f"traces ({SPANS_PER_RUN} spans each), {seconds:g} s, policies of examples/production_policies.json:")
    print(f"- received {spans / sent_for:,.0f} spans/s ({batches} batches taken, {refused} refused)")
    print(f"- evaluated {counters.evaluated / scored_for:,.0f} traces/s ({counters})")

    judged = EvalConfig(criteria={"bench_answered": {}, "bench_judge_200ms": {}})
    worker = EvaluationWorker(judged, sinks=[CallbackSink(lambda result: None)], http_port=0,
                              evaluator_options={"max_queue": 256, "concurrency": 8}).start()
    baseline = peak = _rss_mb()
    import threading

    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.05):
            peak = max(peak, _rss_mb())

    sampler = threading.Thread(target=sample)
    sampler.start()
    batches, refused = _load(worker.receiver.http_port or 0, body, seconds)
    done.set()
    sampler.join()
    counters = worker.evaluator.counters
    received = worker.receiver.counters
    worker.stop(timeout=5)
    growth = peak - baseline
    met = targets.figure("serve, overload: peak RSS growth", growth, unit=" MB", digits=0,
                         at_most=OVERLOAD_RSS_LIMIT_MB).met
    print(f"overload (judge {JUDGE_S * 1000:.0f} ms, 8 at once, queue 256): {batches} batches taken, "
          f"{refused} refused with 429/503; evaluator: {counters}; receiver: {received.as_dict()}")
    print(f"- peak resident memory growth {growth:,.0f} MB (target ≤ {OVERLOAD_RSS_LIMIT_MB} MB: "
          f"{'met' if met else 'NOT met'})")
    return met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="measured rounds (default 21)")
    parser.add_argument("--runs", type=int, default=300, help="agent runs per batch of the app (default 300)")
    parser.add_argument("--serve-seconds", type=float, default=5.0,
                        help="seconds of load on agenteval serve per part (default 5; 0 skips it)")
    args = parser.parse_args(argv)
    scored: list[int] = []
    evaluator = online_evaluator(scored)
    try:
        spans = finished_traces(ON_END_TRACES)
        figures = {
            "on_end": measure_on_end(spans, args.rounds, evaluator),
            f"app, {args.runs} agent → node → tool runs": measure_app(args.rounds, args.runs, evaluator),
        }
    finally:
        evaluator.shutdown(10_000)
    met = report(figures, evaluator, args.rounds)
    if args.serve_seconds > 0:
        met = measure_serve(args.serve_seconds) and met
    return max(targets.finish(), 0 if met else 1)


if __name__ == "__main__":
    sys.exit(main())
