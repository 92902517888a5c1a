"""Offline evaluation throughput: score N traces read from OTLP JSON lines.

Generates N and 2N agent traces of 26 spans each (an agent turn of five plan → chat → route →
tools → execute_tool rounds, in our span conventions) as Collector-style OTLP/JSON lines, with an
eval set of one case per trace, then measures in separate processes, so each peak memory is its
own, in three interleaved rounds (medians printed):

1. parse: read every span of the file (the floor any evaluation pays);
2. convert: read and assemble every trajectory (the converter's share of evaluating);
3. load: load the eval set alone (what its models cost per case);
4. evaluate: load the eval set, then stream, assemble, match each trace to its eval case by
   first user message, and score trajectory_match (arguments checked) + response_match.

Each figure is printed beside its target: loading the eval set costs at most 6 KB per case at
peak (100,000 cases well under a gigabyte), peak memory grows at most 2 KB per case beyond the
eval set's own load cost (slopes between N and 2N), and evaluating takes at most 3× the parse
floor (CPU time); the converter's and the scoring's shares of that are printed beside it.

    python bench/evaluate.py                 # 5,000 and 10,000 traces
    python bench/evaluate.py --traces 50000  # 50,000 and 100,000 traces
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from _targets import Targets

SPANS_PER_TRACE = 26
ROUNDS = 5
TRACES_PER_LINE = 50


def _attr(key: str, value: object) -> dict[str, object]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _span(trace_id: str, span_id: int, parent: int | None, name: str, start: int,
          attrs: dict[str, object]) -> dict[str, object]:
    span: dict[str, object] = {
        "traceId": trace_id, "spanId": f"{span_id:016x}", "name": name, "kind": 1,
        "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 900),
        "attributes": [_attr(k, v) for k, v in attrs.items()],
    }
    if parent is not None:
        span["parentSpanId"] = f"{parent:016x}"
    return span


def _trace(i: int) -> list[dict[str, object]]:
    trace_id = f"{i + 1:032x}"
    base = 1_700_000_000_000_000_000 + i * 1_000_000
    city = f"City{i}"
    root = i * 64 + 1
    spans = [_span(trace_id, root, None, "invoke_agent weather", base, {
        "gen_ai.operation.name": "invoke_agent", "agenteval.step.type": "agent",
        "gen_ai.agent.name": "weather", "agenteval.agent.input": f"What is the weather in {city}?",
        "agenteval.agent.output": f"It is sunny in {city}."})]
    sid = root
    for r in range(ROUNDS):
        t = base + 1000 + r * 10_000
        sid += 1
        plan = sid
        spans.append(_span(trace_id, plan, root, "invoke_node plan", t, {
            "gen_ai.operation.name": "invoke_node", "gen_ai.node.name": "plan",
            "agenteval.step.type": "node"}))
        sid += 1
        spans.append(_span(trace_id, sid, plan, "chat", t + 100, {
            "gen_ai.operation.name": "chat", "agenteval.step.type": "message",
            "agenteval.message.role": "assistant", "agenteval.message.content": "calling a tool",
            "gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 8}))
        sid += 1
        spans.append(_span(trace_id, sid, root, "conditional route", t + 2000, {
            "agenteval.step.type": "conditional", "agenteval.conditional.name": "route",
            "agenteval.conditional.value": "true", "agenteval.conditional.branch": "tools"}))
        sid += 1
        tools = sid
        spans.append(_span(trace_id, tools, root, "invoke_node tools", t + 3000, {
            "gen_ai.operation.name": "invoke_node", "gen_ai.node.name": "tools",
            "agenteval.step.type": "node"}))
        sid += 1
        spans.append(_span(trace_id, sid, tools, "execute_tool get_weather", t + 3100, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
            "agenteval.step.type": "tool", "gen_ai.tool.call.id": f"call-{i}-{r}",
            "gen_ai.tool.call.arguments": json.dumps({"city": city, "round": r}),
            "gen_ai.tool.call.result": json.dumps({"sky": "sunny"})}))
    assert len(spans) == SPANS_PER_TRACE
    return spans


def generate(path: Path, traces: int) -> None:
    with path.open("wb") as out:
        for first in range(0, traces, TRACES_PER_LINE):
            spans = [s for i in range(first, min(first + TRACES_PER_LINE, traces)) for s in _trace(i)]
            request = {"resourceSpans": [{
                "resource": {"attributes": [_attr("service.name", "weather-bench")]},
                "scopeSpans": [{"scope": {"name": "agenteval_otel"}, "spans": spans}]}]}
            out.write(orjson.dumps(request) + b"\n")


def eval_set_for(path: Path, traces: int) -> None:
    from agenteval_otel import EvalCase, EvalSet, ToolCall

    cases = [EvalCase.single_turn(
        f"What is the weather in City{i}?", f"It is sunny in City{i}.",
        [ToolCall(name="get_weather", args={"city": f"City{i}", "round": r}) for r in range(ROUNDS)],
        eval_id=f"case-{i}") for i in range(traces)]
    EvalSet(eval_set_id="bench", eval_cases=cases).save(path)


def _peak_mib() -> float:
    """This process's peak resident memory. ``VmHWM`` starts afresh at exec; ``ru_maxrss`` may
    carry the forking parent's peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def phase_parse(trace_file: Path) -> dict[str, float]:
    from agenteval_otel.traces.files import read_spans

    started = time.process_time()
    spans = sum(1 for _ in read_spans(trace_file))
    return {"seconds": time.process_time() - started, "spans": spans, "peak_mib": _peak_mib()}


def phase_convert(trace_file: Path) -> dict[str, float]:
    from agenteval_otel.traces.files import read_spans
    from agenteval_otel.trajectory.assemble import iter_trajectories

    started = time.process_time()
    runs = sum(1 for _ in iter_trajectories(read_spans(trace_file), group="invocation"))
    return {"seconds": time.process_time() - started, "runs": runs, "peak_mib": _peak_mib()}


def phase_load(eval_set_file: Path) -> dict[str, float]:
    from agenteval_otel import EvalSet

    started = time.process_time()
    eval_set = EvalSet.load(eval_set_file)
    return {"seconds": time.process_time() - started, "cases": len(eval_set.eval_cases),
            "peak_mib": _peak_mib(), "rss_mib": _rss_mib()}


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def phase_evaluate(trace_file: Path, eval_set_file: Path) -> dict[str, float]:
    from agenteval_otel import CriterionConfig, EvalConfig, EvalSet
    from agenteval_otel.evaluation import evaluate_traces

    eval_set = EvalSet.load(eval_set_file)
    config = EvalConfig(criteria={"trajectory_match": CriterionConfig.trajectory(1.0, check_args=True),
                                  "response_match": CriterionConfig.response(0.7)})
    started = time.process_time()
    report = evaluate_traces(eval_set, trace_file, config)
    return {"seconds": time.process_time() - started, "cases": report.summary.total_cases,
            "passed": report.summary.passed_cases, "peak_mib": _peak_mib()}


def _child(*args: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


ROUNDS_OF_PHASES = 3
GROWTH_TARGET_KB = 2.0
LOAD_TARGET_KB = 6.0
RATIO_TARGET = 3.0


def _measure(workdir: Path, traces: int) -> dict[str, dict[str, float]]:
    trace_file, eval_set_file = workdir / f"traces-{traces}.jsonl", workdir / f"bench-{traces}.evalset.json"
    started = time.perf_counter()
    generate(trace_file, traces)
    eval_set_for(eval_set_file, traces)
    size_mib = trace_file.stat().st_size / 2**20
    print(f"generated {traces:,} traces ({traces * SPANS_PER_TRACE:,} spans, {size_mib:,.0f} MiB) "
          f"in {time.perf_counter() - started:.1f} s", flush=True)
    rounds: dict[str, list[dict[str, float]]] = {"parse": [], "convert": [], "load": [], "evaluate": []}
    for _ in range(ROUNDS_OF_PHASES):  # interleaved, so a busy moment of the machine hits every phase
        rounds["parse"].append(_child("--phase", "parse", "--trace-file", str(trace_file)))
        rounds["convert"].append(_child("--phase", "convert", "--trace-file", str(trace_file)))
        rounds["load"].append(_child("--phase", "load", "--eval-set", str(eval_set_file)))
        rounds["evaluate"].append(_child("--phase", "evaluate", "--trace-file", str(trace_file),
                                         "--eval-set", str(eval_set_file)))
    parse, convert, load, evaluate = (_median(rounds[name]) for name in ("parse", "convert", "load", "evaluate"))
    assert parse["spans"] == traces * SPANS_PER_TRACE, parse
    assert convert["runs"] == traces, convert
    assert evaluate["passed"] == traces, evaluate
    for file in (trace_file, eval_set_file):
        file.unlink()
    return {"parse": parse, "convert": convert, "load": load, "evaluate": evaluate}


def _median(results: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's median over the rounds."""
    return {key: statistics.median(result[key] for result in results) for key in results[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", type=int, default=5_000, help="N: measured at N and 2N traces")
    parser.add_argument("--dir", type=Path, default=None, help="where to write the files (a temp dir)")
    parser.add_argument("--phase", choices=("parse", "convert", "load", "evaluate"), help=argparse.SUPPRESS)
    parser.add_argument("--trace-file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--eval-set", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "parse":
        print(json.dumps(phase_parse(args.trace_file)))
        return 0
    if args.phase == "convert":
        print(json.dumps(phase_convert(args.trace_file)))
        return 0
    if args.phase == "load":
        print(json.dumps(phase_load(args.eval_set)))
        return 0
    if args.phase == "evaluate":
        print(json.dumps(phase_evaluate(args.trace_file, args.eval_set)))
        return 0

    workdir = args.dir or Path(tempfile.mkdtemp(prefix="agenteval-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    small, large = args.traces, 2 * args.traces
    runs = {n: _measure(workdir, n) for n in (small, large)}
    targets = Targets("evaluate")
    print(f"\n{'traces':>8}  {'phase':<34}{'CPU s':>8}{'traces/s':>10}{'peak MiB':>10}{'× parse':>9}")
    for n, phases in runs.items():
        for name, label in (("parse", "parse only"), ("convert", "convert (read + assemble)"),
                            ("load", "load eval set only"),
                            ("evaluate", "evaluate (trajectory + response)")):
            phase = phases[name]
            seconds = targets.figure(f"{n} traces, {name}: CPU", phase["seconds"], unit=" s", digits=1)
            rate = targets.figure(f"{n} traces, {name}: traces/s", n / phase["seconds"], digits=0)
            peak = targets.figure(f"{n} traces, {name}: peak memory", phase["peak_mib"], unit=" MiB", digits=0)
            times_parse = targets.figure(f"{n} traces, {name}: × parse",
                                         phase["seconds"] / phases["parse"]["seconds"])
            print(f"{n:>8,}  {label:<34}{seconds.value:>8.1f}{rate.value:>10,.0f}{peak.value:>10.0f}"
                  f"{times_parse.value:>9.2f}")
    kib = 1024 / (large - small)
    evaluate_slope = (runs[large]["evaluate"]["peak_mib"] - runs[small]["evaluate"]["peak_mib"]) * kib
    load_slope = (runs[large]["load"]["peak_mib"] - runs[small]["load"]["peak_mib"]) * kib
    held_slope = (runs[large]["load"]["rss_mib"] - runs[small]["load"]["rss_mib"]) * kib
    load = targets.figure("eval set load per case, at peak", load_slope, unit=" KB", digits=1,
                          at_most=LOAD_TARGET_KB)
    growth = targets.figure("peak memory growth per case beyond the eval set", evaluate_slope - load_slope,
                            unit=" KB", at_most=GROWTH_TARGET_KB)
    ratio = targets.figure("evaluate / parse CPU time", max(phases["evaluate"]["seconds"] / phases["parse"]["seconds"]
                                                            for phases in runs.values()), unit="×",
                           at_most=RATIO_TARGET)
    print(f"\neval set load: {load} at peak per case, {held_slope:.1f} KB/case held "
          f"(100,000 cases: ~{load_slope * 100_000 / 1024:,.0f} MiB)")
    print(f"peak memory growth per case beyond the eval set: {growth}")
    print(f"evaluate / parse CPU time: {ratio}")
    for n, phases in runs.items():
        parse_s, convert_s = phases["parse"]["seconds"], phases["convert"]["seconds"]
        scoring_s = phases["evaluate"]["seconds"] - convert_s
        print(f"  of which at {n:,} traces: converter {convert_s / parse_s:.2f}× parse, matching, scoring "
              f"and results {scoring_s / parse_s:.2f}× parse")
    if args.dir is None:
        os.rmdir(workdir)
    return targets.finish()


if __name__ == "__main__":
    sys.exit(main())
