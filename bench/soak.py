"""Soak: ``agenteval serve`` driven for a minute with a bounded overload from loopback.

Two clients post OTLP/HTTP protobuf to one worker started with ``--max-memory``:

- a hostile one sends 10 MB batches of rootless spans with 50 KB attributes as fast as it is let
  in (it honours ``Retry-After``);
- a normal one sends small agent traces (a root and a tool call) and records every trace the
  worker acknowledged with 200.

Part-way through, the worker is killed with SIGKILL and restarted on the same spool; the normal
client keeps sending. At the end the worker is stopped with SIGTERM and the verdicts it exported
are read back. Printed: accepted and refused traces per second for each client, the worker's
peak RSS against its configured bound and its growth, and the acknowledged traces that got no
verdict (target: 0) or more than one.

    python bench/soak.py                 # 60 s, --max-memory 768MiB
    python bench/soak.py --seconds 20    # shorter
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

from _targets import Targets
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agenteval_otel import semconv as attr  # noqa: E402
from agenteval_otel.traces.files import read_spans  # noqa: E402

MIB = 1 << 20


def _kv(key: str, value: str) -> KeyValue:
    return KeyValue(key=key, value=AnyValue(string_value=value))


def _body(spans: list[Span]) -> bytes:
    request = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])])
    return request.SerializeToString()


def _hostile_body(batch: int) -> bytes:
    """10 MB: 200 rootless spans (their parent never comes) with a 50 KB attribute each."""
    blob = "x" * 50_000
    return _body([Span(trace_id=(batch * 1000 + n + 1).to_bytes(16, "big"), span_id=(n + 1).to_bytes(8, "big"),
                       parent_span_id=b"\xee" * 8, name="child", start_time_unix_nano=1, end_time_unix_nano=2,
                       attributes=[_kv("blob", blob)]) for n in range(200)])


def _normal_body(number: int) -> tuple[str, bytes]:
    trace_id = (1 << 100) + number
    root = Span(trace_id=trace_id.to_bytes(16, "big"), span_id=(number + 1).to_bytes(8, "big"),
                name="invoke_agent support", start_time_unix_nano=1_000, end_time_unix_nano=9_000,
                attributes=[_kv("gen_ai.operation.name", "invoke_agent"), _kv("gen_ai.agent.name", "support"),
                            _kv("agenteval.step.type", "agent"), _kv("agenteval.step.output", f"done #{number}")])
    tool = Span(trace_id=root.trace_id, span_id=((number + 1) << 20).to_bytes(8, "big"), parent_span_id=root.span_id,
                name="execute_tool lookup", start_time_unix_nano=2_000, end_time_unix_nano=3_000,
                attributes=[_kv("gen_ai.operation.name", "execute_tool"), _kv("gen_ai.tool.name", "lookup"),
                            _kv("agenteval.step.type", "tool")])
    return format(trace_id, "032x"), _body([tool, root])


class Worker:
    """``agenteval serve`` in a process of its own; its port is read from the banner."""

    def __init__(self, folder: Path, max_memory: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agenteval_otel.cli", "serve", "--port", "0", "--config", "policies.json",
             "--export-results", "verdicts.jsonl", "--max-memory", max_memory, "--settle", "0.5",
             "--trace-ttl", "10"],
            cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout is not None
        banner = self.process.stdout.readline()
        if "http://127.0.0.1:" not in banner:
            raise SystemExit(f"agenteval serve did not start: {banner!r}")
        self.url = f"http://127.0.0.1:{int(banner.split('http://127.0.0.1:')[1].split(';')[0])}/v1/traces"

    def rss(self) -> int:
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0


def _post(url: str, body: bytes) -> tuple[int, float]:
    """The status and the Retry-After (seconds) of one POST."""
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/x-protobuf"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, 0.0
    except urllib.error.HTTPError as error:
        return error.code, float(error.headers.get("Retry-After") or 1)
    except OSError:
        return 0, 0.2  # the worker is down (killed, restarting)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--max-memory", default="768MiB")
    args = parser.parse_args()
    bound = int(float(args.max_memory.removesuffix("MiB")) * MIB) if args.max_memory.endswith("MiB") else None
    folder = Path(tempfile.mkdtemp(prefix="agenteval-soak-"))
    (folder / "policies.json").write_text(json.dumps({"criteria": {"final_response_present": 1.0}}))
    worker = Worker(folder, args.max_memory)
    baseline = worker.rss()
    stop = threading.Event()
    counts: Counter[str] = Counter()
    acknowledged: list[str] = []
    peak = [baseline]

    def hostile() -> None:
        batch = 0
        while not stop.is_set():
            status, retry = _post(worker.url, _hostile_body(batch))
            batch += 1
            counts["hostile accepted" if status == 200 else "hostile refused"] += 200
            if status != 200:
                stop.wait(retry)

    def normal() -> None:
        number = 0
        while not stop.is_set():
            trace_id, body = _normal_body(number)
            number += 1
            status, retry = _post(worker.url, body)
            if status == 200:
                acknowledged.append(trace_id)
                counts["normal accepted"] += 1
            else:
                counts["normal refused"] += 1
                stop.wait(min(retry, 0.5))
            stop.wait(0.01)

    threads = [threading.Thread(target=hostile, daemon=True), threading.Thread(target=normal, daemon=True)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    killed = False
    while time.monotonic() - started < args.seconds:
        time.sleep(0.25)
        peak[0] = max(peak[0], worker.rss())
        if not killed and time.monotonic() - started > args.seconds * 0.75:
            worker.process.send_signal(signal.SIGKILL)
            worker.process.wait()
            worker = Worker(folder, args.max_memory)
            killed = True
    stop.set()
    for thread in threads:
        thread.join(35)
    worker.process.send_signal(signal.SIGTERM)
    out = worker.process.communicate(timeout=120)[0]
    elapsed = time.monotonic() - started
    target = folder / "verdicts.jsonl"
    judged = Counter(s.trace_id for s in read_spans(target) if s.attributes.get(attr.EVALUATION_MARKER)) \
        if target.exists() and target.stat().st_size else Counter()
    lost = [t for t in acknowledged if t not in judged]
    twice = [t for t in acknowledged if judged[t] > 1]
    print(f"soak: {elapsed:.0f} s, agenteval serve --max-memory {args.max_memory}, killed (SIGKILL) and restarted "
          f"on its spool at {args.seconds * 0.75:.0f} s")
    for client in ("hostile", "normal"):
        print(f"  {client:8} traces/s accepted {counts[client + ' accepted'] / elapsed:8.1f}   "
              f"refused {counts[client + ' refused'] / elapsed:8.1f}")
    verdict = "under" if bound is None or peak[0] <= bound else "OVER"
    print(f"  RSS: start {baseline / MIB:.0f} MiB, peak {peak[0] / MIB:.0f} MiB ({verdict} the bound), "
          f"growth {(peak[0] - baseline) / MIB:.0f} MiB")
    print(f"  acknowledged normal traces: {len(acknowledged)}; lost {len(lost)} (target 0); "
          f"scored more than once {len(twice)}")
    print("  " + out.strip().splitlines()[-1] if out.strip() else "")
    if lost or twice:
        print(f"  (kept for a look: {folder}; lost {lost[:5]}, twice {twice[:5]})")
    targets = Targets("soak")
    targets.figure("acknowledged traces lost", len(lost), digits=0, at_most=0)
    if bound is not None:
        targets.figure("peak RSS", peak[0] / MIB, unit=" MiB", digits=0, at_most=bound / MIB)
    raise SystemExit(targets.finish())


if __name__ == "__main__":
    main()
