"""Judge-bound offline evaluation against its ideal wall time.

    python bench/judge_concurrency.py [--latency 0.2] [--rounds 3] [--concurrency 8 32 64]

A local OpenAI-compatible judge, in a process of its own on 127.0.0.1 (HTTP/1.1 keep-alive, a
thread per connection), answers every Chat Completions request with a verdict after
``--latency`` seconds. For each judge concurrency limit C, ``evaluate_traces`` scores an eval set
of N single-turn cases (N = max(200, 16 × C), so the last wave of calls is never a small
fraction of the run) against their recorded runs with the ``llm_judge`` criterion: one judge call
per case, through the real ``openai`` client. The ideal wall time is N × latency ÷ C; the figure
is the median over ``--rounds`` of wall time ÷ ideal, printed with the judge's peak of requests
in flight. Target: ≤ 1.15× at every C; the exit status is 1 when one is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _targets import Targets  # noqa: E402

from agenteval_otel import CriterionConfig, EvalCase, EvalConfig, EvalSet, evaluate_traces  # noqa: E402
from agenteval_otel.judge import JudgeClient, JudgeSettings  # noqa: E402
from agenteval_otel.trajectory import Trajectory, TrajectoryStep  # noqa: E402

TARGET = 1.15
CONFIG = EvalConfig(criteria={"llm_judge": CriterionConfig(threshold=0.5)})

SERVER = r'''
import json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

latency = float(sys.argv[1])
lock = threading.Lock()
state = {"in_flight": 0, "peak": 0, "requests": 0}
verdict = json.dumps({"score": 1.0, "reason": "same meaning"})
answer = json.dumps({"id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "judge",
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": verdict}}],
                     "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # the head and the body go out at once, as a real server sends them

    def log_message(self, *args):
        pass

    def _send(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # the counters, then reset
        with lock:
            body = json.dumps(state).encode()
            state.update(peak=0, requests=0)
        self._send(body)

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with lock:
            state["in_flight"] += 1
            state["requests"] += 1
            state["peak"] = max(state["peak"], state["in_flight"])
        time.sleep(latency)
        with lock:
            state["in_flight"] -= 1
        self._send(answer)


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer.request_queue_size = 512
server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_port, flush=True)
server.serve_forever()
'''


def workload(cases: int) -> tuple[EvalSet, list[Trajectory]]:
    """``cases`` single-turn cases and one recorded run of each."""
    eval_set = EvalSet(eval_set_id="judge-bench", eval_cases=[
        EvalCase.single_turn(f"What is the capital of country {i}?", f"City {i}.", eval_id=f"case-{i}")
        for i in range(cases)])
    runs = [Trajectory(trace_id=f"{i + 1:032x}", span_id=f"{i + 1:016x}", start_ns=i,
                       user_input=f"What is the capital of country {i}?", final_response=f"City {i}.",
                       steps=[TrajectoryStep.message("assistant", f"City {i}.")])
            for i in range(cases)]
    return eval_set, runs


def stats(url: str) -> dict[str, int]:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats", timeout=10) as response:
        found: dict[str, int] = json.loads(response.read())
        return found


def measure(url: str, concurrency: int, latency: float) -> tuple[float, int, int]:
    """Wall time ÷ ideal of one run at judge concurrency ``concurrency``, the judge's peak of
    requests in flight and the calls made."""
    cases = max(200, 16 * concurrency)
    eval_set, runs = workload(cases)
    judge = JudgeClient(JudgeSettings(base_url=url, api_key="bench", model="judge", concurrency=concurrency,
                                      max_retries=0, timeout_s=30))
    stats(url)  # reset the counters
    started = time.perf_counter()
    report = evaluate_traces(eval_set, runs, CONFIG, judge=judge)
    wall = time.perf_counter() - started
    counters = stats(url)
    if report.summary.passed_cases != cases:
        raise SystemExit(f"the run did not pass every case: {report.summary}")
    return wall / (cases * latency / concurrency), counters["peak"], counters["requests"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the judge takes per answer (0.2)")
    parser.add_argument("--rounds", type=int, default=3, help="runs per concurrency limit (3)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32, 64], help="judge limits (8 32 64)")
    args = parser.parse_args(argv)
    for name in ("AGENTEVAL_JUDGE_CACHE", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        os.environ.pop(name, None)
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(args.latency)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
        print(f"Python {platform.python_version()}, judge latency {args.latency * 1000:.0f} ms, "
              f"{args.rounds} round(s), median of wall time / ideal (calls x latency / concurrency)")
        print(f"{'concurrency':>11} {'calls':>6} {'ideal s':>8} {'wall/ideal':>10} {'peak in flight':>14}  target")
        targets = Targets("judge_concurrency")
        for concurrency in args.concurrency:
            ratios, peaks, calls = [], [], 0
            for _ in range(args.rounds):
                ratio, peak, calls = measure(url, concurrency, args.latency)
                ratios.append(ratio)
                peaks.append(peak)
            ratio = targets.figure(f"{concurrency} at once: wall / ideal", statistics.median(ratios), unit="×",
                                   at_most=TARGET)
            targets.figure(f"{concurrency} at once: calls", calls, digits=0)
            targets.figure(f"{concurrency} at once: peak in flight", max(peaks), digits=0)
            ideal = calls * args.latency / concurrency
            print(f"{concurrency:>11} {calls:>6} {ideal:>8.2f} {ratio.cell:>10} {max(peaks):>14}  {ratio.verdict}")
        return targets.finish()
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
