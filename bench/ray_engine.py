"""Policy-only throughput of ``evaluate_traces_on_ray`` with two workers against ``evaluate_traces``
in one local process, on the same trace files.

    python bench/ray_engine.py [--traces 20000] [--files 4] [--rounds 3]

The input: the example weather agent (``examples/weather_agent.py``) run twice under our tracing
(a single-tool turn and a two-tool turn, each span one OTLP JSON line), copied ``--traces``
times with fresh trace, span and conversation ids and start times 1 ms apart, and cut by line
count into ``--files`` OTLP JSON-lines files (so the traces at each cut straddle two files).
Scored with the policies of ``examples/production_policies.json`` (CPU-bound: parsing, assembly,
scoring). Rounds are interleaved (local, then Ray, each after a garbage collection) on a local
Ray cluster of two CPUs started once; the figure is the median of the per-round ratios
local time ÷ Ray time, printed next to its target (1.6×). The exit status is 1 when it is missed.

Each round also measures the machine's ceiling for any engine on it: two Ray tasks that each run
the local evaluation on half of the files (no shuffle, no run files, only a count sent back, so
correct only because these traces do not straddle the halves' files). Whatever the engine does
beyond that (assembling traces cut across files, keeping conversations together, run files to
resume from, results sent back) costs on top of this ceiling.
"""

from __future__ import annotations

import argparse
import gc
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _targets import Targets

REPO = Path(__file__).resolve().parent.parent
TARGET = 1.6


def _template(folder: Path) -> list[str]:
    """Two traced turns of the example weather agent, one OTLP JSON line per span."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from agenteval_otel.tracing import ContentPolicy, OtlpJsonFileExporter, routed_to, set_active_policy

    sys.path.insert(0, str(REPO / "examples"))
    from weather_agent import weather_agent

    path = folder / "template.jsonl"
    set_active_policy(ContentPolicy(capture=True))
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
    with routed_to(provider):
        weather_agent("What is the weather in Paris?", thread_id="thread-a", history=[])
        weather_agent("How warm is Tokyo in Fahrenheit?", thread_id="thread-b", history=[])
    provider.shutdown()
    return path.read_text(encoding="utf-8").splitlines()


_TRACE_ID = re.compile(r'"traceId":"([0-9a-f]{32})"')
_SPAN_ID = re.compile(r'"(?:spanId|parentSpanId)":"([0-9a-f]{16})"')
_TIME = re.compile(r'UnixNano":"(\d+)"')


def write_traces(folder: Path, traces: int, files: int) -> list[Path]:
    """``traces`` copies of the template's traces in ``files`` OTLP JSON-lines files."""
    lines = _template(folder)
    by_trace: dict[str, list[str]] = {}
    for line in lines:
        found = _TRACE_ID.search(line)
        assert found is not None
        by_trace.setdefault(found.group(1), []).append(line)
    spans = sorted({span for line in lines for span in _SPAN_ID.findall(line)})
    templates = list(by_trace.items())
    out: list[str] = []
    for n in range(1, traces + 1):
        trace_id, trace_lines = templates[n % len(templates)]
        for line in trace_lines:
            line = line.replace(trace_id, f"{n:032x}")
            line = _SPAN_ID.sub(lambda m, n=n: m.group(0).replace(
                m.group(1), f"{n:08x}{spans.index(m.group(1)):08x}"), line)
            line = line.replace('"thread-a"', f'"conversation-{n}"').replace('"thread-b"', f'"conversation-{n}"')
            out.append(_TIME.sub(lambda m, n=n: f'UnixNano":"{int(m.group(1)) + n * 1_000_000}"', line))
    per_file = -(-len(out) // files)
    paths = []
    for i in range(files):
        path = folder / f"weather-{i}.jsonl"
        path.write_text("".join(line + "\n" for line in out[i * per_file:(i + 1) * per_file]), encoding="utf-8")
        paths.append(path)
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=4)
    args = parser.parse_args()

    import logging

    import ray

    from agenteval_otel import EvalConfig, evaluate_traces
    from agenteval_otel.evaluation import evaluate_traces_on_ray

    config = EvalConfig.load(REPO / "examples" / "production_policies.json")
    with tempfile.TemporaryDirectory() as folder:
        paths = write_traces(Path(folder), args.traces, args.files)
        size = sum(p.stat().st_size for p in paths) / 2**20
        print(f"{args.traces} traces in {args.files} files ({size:.0f} MB), policies of production_policies.json")
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)

        @ray.remote
        def halves(files: list[Path]) -> int:
            return len(evaluate_traces(None, files, config).results)

        try:
            ratios, ceilings = [], []
            for number in range(1, args.rounds + 1):
                gc.collect()
                started = time.perf_counter()
                local = evaluate_traces(None, paths, config)
                local_s = time.perf_counter() - started
                gc.collect()
                started = time.perf_counter()
                on_ray = evaluate_traces_on_ray(None, paths, config, partitions=args.partitions,
                                                run_dir=Path(folder) / "job")
                ray_s = time.perf_counter() - started
                assert len(on_ray.results) == len(local.results) == args.traces
                gc.collect()
                started = time.perf_counter()
                counted = sum(ray.get([halves.remote(paths[i::2]) for i in range(2)]))
                ceiling_s = time.perf_counter() - started
                assert counted == args.traces
                ratios.append(local_s / ray_s)
                ceilings.append(local_s / ceiling_s)
                print(f"round {number}: local {local_s:.2f} s ({args.traces / local_s:.0f} traces/s), "
                      f"Ray with 2 workers {ray_s:.2f} s ({args.traces / ray_s:.0f} traces/s), "
                      f"ratio {ratios[-1]:.2f}x; ceiling (two tasks on halves) {ceilings[-1]:.2f}x")
        finally:
            ray.shutdown()
    targets = Targets("ray_engine")
    ratio = targets.figure("throughput, Ray with 2 workers / one local process", statistics.median(ratios),
                           unit="×", at_least=TARGET)
    ceiling = targets.figure("the machine's ceiling, two tasks each scoring half the files",
                             statistics.median(ceilings), unit="×")
    print(f"throughput on Ray with 2 workers / one local process: median {ratio} (min {min(ratios):.2f}x, "
          f"max {max(ratios):.2f}x); the machine's ceiling, two tasks each scoring half the files: median {ceiling}")
    return targets.finish()


if __name__ == "__main__":
    sys.exit(main())
