"""Converter throughput: OTLP/JSON lines → trajectories, against the floor of parsing them.

    python bench/convert.py [--rounds 7] [--traces 2000]

Two workloads, each an OTLP/JSON-lines file as the Collector's file exporter writes it:

- ``ours``: agent traces of 26 spans (five plan → chat → route → tools → execute_tool rounds) in
  agenteval-otel's own conventions, ~0.5 KB a span (the spans of ``bench/evaluate.py``);
- ``producers``: the recorded runs of third-party producers in ``tests/data/corpus`` (smolagents,
  LlamaIndex, DSPy, CrewAI, AutoGen, Haystack, the OpenTelemetry openai instrumentation) and, when
  ``../shared/data`` sits beside the checkout, pydantic-ai, OpenInference, ADK and LangGraph runs:
  chat spans carrying whole conversations, ~1.5–4 KB a span. Each run is replicated under fresh
  ids until the file holds ``--traces`` traces.

Per workload, in interleaved rounds (CPU time of this process, medians):

- **floor**: ``orjson.loads`` each line and touch every span's ids, name and every attribute's
  key and value: the least any converter written in Python pays;
- **skeleton**: the least any converter written in Python does beyond the floor, with no
  convention read at all: a slotted record per span (ids, name, times, an attribute dict), spans
  grouped by trace, each trace put in tree order by start time, one step object per span, and
  the JSON held in attribute values decoded once (message lists, arguments, results);
- **read**: ``read_spans`` (our OTLP/JSON codec: ids normalised, values decoded, errors checked);
- **convert**: ``read_spans`` → ``iter_trajectories`` (``agenteval trajectory``'s pipeline).

What separates **convert** from **skeleton** is the reading itself: the conventions, messages,
argument envelopes and the trajectory's views. The skeleton shows how much of the ≤ 3× target
is left for that work on each workload.

Retained memory: the spans of 500 traces read and assembled, held with their trajectories
(``tracemalloc``), per span, minus the span's own bytes in the file.

Why orjson and not msgspec: decoding straight into typed msgspec structs (the request, its
spans, and ``KeyValue``s whose ``AnyValue`` is a struct of optional fields) measured a third
faster than orjson's parse-and-walk on the ~0.5 KB spans and no faster on the producers' large
ones, where the time is in the long strings both must copy. Parsing is a fifth of converting; and
an ``AnyValue`` struct must still be checked field by field (a value with two fields set must not
read as the first), so the saving shrinks further. Not worth a second JSON library.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).parent))
from _targets import Targets  # noqa: E402
from evaluate import TRACES_PER_LINE, _trace  # noqa: E402  (the shared span generator)

REPO = Path(__file__).resolve().parent.parent
TARGET_RATIO = 3.0
TARGET_RETAINED_BYTES = 1024


# --- workloads --------------------------------------------------------------------------------


def write_ours(path: Path, traces: int) -> None:
    with path.open("wb") as out:
        for first in range(0, traces, TRACES_PER_LINE):
            spans = [s for i in range(first, min(first + TRACES_PER_LINE, traces)) for s in _trace(i)]
            out.write(orjson.dumps({"resourceSpans": [{
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "bench"}}]},
                "scopeSpans": [{"scope": {"name": "agenteval_otel"}, "spans": spans}]}]}) + b"\n")


def producer_runs() -> list[Path]:
    """The recorded third-party runs: the corpus, and ../shared/data's generated runs if present."""
    runs = sorted((REPO / "tests" / "data" / "corpus").glob("*/*.otlp.json"))
    shared = REPO.parent / "shared" / "data" / "traces" / "generated"
    if shared.is_dir():
        runs += sorted(p for p in shared.glob("*/*.otlp.json") if not p.name.startswith("all_runs"))
    return runs


def _renamed(doc: dict, replica: int) -> dict:
    """``doc`` with every trace and span id made unique to ``replica``."""
    prefix = f"{replica:08x}"

    def rename(value: str, width: int) -> str:
        return prefix + value.lower()[len(prefix):width]

    for group in doc["resourceSpans"]:
        for scoped in group["scopeSpans"]:
            for span in scoped["spans"]:
                span["traceId"] = rename(span["traceId"], 32)
                span["spanId"] = rename(span["spanId"], 16)
                if span.get("parentSpanId"):
                    span["parentSpanId"] = rename(span["parentSpanId"], 16)
    return doc


def _documents(data: bytes) -> list[bytes]:
    """A file's requests: the whole file, or one per line."""
    try:
        orjson.loads(data)
        return [data]
    except orjson.JSONDecodeError:
        return [line for line in data.splitlines() if line.strip()]


def write_producers(path: Path, traces: int) -> int:
    """Replicas of every producer run until ``traces`` runs are written; returns the runs used."""
    runs = [_documents(p.read_bytes()) for p in producer_runs()]
    with path.open("wb") as out:
        for replica in range(traces):
            for line in runs[replica % len(runs)]:  # a run is one request, or one per line
                out.write(orjson.dumps(_renamed(orjson.loads(line), replica)) + b"\n")
    return len(runs)


# --- what is timed ----------------------------------------------------------------------------


def floor(path: Path) -> int:
    touched = 0
    with path.open("rb") as handle:
        for line in handle:
            for group in orjson.loads(line)["resourceSpans"]:
                for scoped in group["scopeSpans"]:
                    for span in scoped["spans"]:
                        touched += len(span["traceId"]) + len(span["spanId"]) + len(span["name"])
                        for attribute in span.get("attributes", ()):
                            touched += len(attribute["key"]) + len(attribute["value"])
    return touched


class _Record:
    __slots__ = ("trace_id", "span_id", "parent_id", "name", "start", "end", "attributes", "children")

    def __init__(self, trace_id: str, span_id: str, parent_id: str | None, name: str, start: int, end: int,
                 attributes: dict[str, object]) -> None:
        self.trace_id, self.span_id, self.parent_id, self.name = trace_id, span_id, parent_id, name
        self.start, self.end, self.attributes = start, end, attributes
        self.children: list[_Record] = []


class _Step:
    __slots__ = ("name", "attributes", "span_id", "duration")

    def __init__(self, name: str, attributes: dict[str, object], span_id: str, duration: int) -> None:
        self.name, self.attributes, self.span_id, self.duration = name, attributes, span_id, duration


def _by_start(record: _Record) -> int:
    return record.start


def skeleton(path: Path) -> int:
    steps = 0
    traces: dict[str, list[_Record]] = {}
    with path.open("rb") as handle:
        for line in handle:
            for group in orjson.loads(line)["resourceSpans"]:
                for scoped in group["scopeSpans"]:
                    for span in scoped["spans"]:
                        attributes: dict[str, object] = {}
                        for attribute in span.get("attributes", ()):
                            value = attribute["value"]
                            text = value.get("stringValue")
                            if text is None:
                                attributes[attribute["key"]] = value
                            elif text[:1] in ("{", "["):
                                try:
                                    attributes[attribute["key"]] = orjson.loads(text)
                                except orjson.JSONDecodeError:
                                    attributes[attribute["key"]] = text
                            else:
                                attributes[attribute["key"]] = text
                        record = _Record(span["traceId"], span["spanId"], span.get("parentSpanId"), span["name"],
                                         int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"]), attributes)
                        traces.setdefault(record.trace_id, []).append(record)
            for spans in traces.values():  # per line: a trace split over lines costs the same in parts
                by_id = {record.span_id: record for record in spans}
                roots = []
                for record in spans:
                    parent = by_id.get(record.parent_id) if record.parent_id else None
                    (roots if parent is None else parent.children).append(record)
                stack = sorted(roots, key=_by_start, reverse=True)
                ordered = []
                while stack:
                    record = stack.pop()
                    ordered.append(_Step(record.name, record.attributes, record.span_id, record.end - record.start))
                    stack.extend(sorted(record.children, key=_by_start, reverse=True))
                steps += len(ordered)
            traces.clear()
    return steps


def read(path: Path) -> int:
    from agenteval_otel.traces import read_spans

    return sum(1 for _ in read_spans(path))


def convert(path: Path) -> int:
    from agenteval_otel.traces import read_spans
    from agenteval_otel.trajectory import iter_trajectories

    return sum(1 for _ in iter_trajectories(read_spans(path)))


def _cpu(fn: Callable[[Path], int], path: Path) -> float:
    gc.collect()
    started = time.process_time()
    fn(path)
    return time.process_time() - started


def timings(path: Path, rounds: int) -> dict[str, float]:
    phases = {"floor": floor, "skeleton": skeleton, "read": read, "convert": convert}
    for fn in phases.values():  # warm-up: imports, caches, the page cache
        fn(path)
    samples: dict[str, list[float]] = {name: [] for name in phases}
    for _ in range(rounds):
        for name, fn in phases.items():
            samples[name].append(_cpu(fn, path))
    return {name: statistics.median(values) for name, values in samples.items()}


def retained_per_span(path: Path, traces: int = 500) -> tuple[float, float]:
    """Bytes held per span by the spans of ``traces`` traces and their trajectories, and the
    span's own bytes in the file."""
    from agenteval_otel.traces import read_spans
    from agenteval_otel.trajectory import build_trajectories

    lines = list(_lines(path))
    sample = b"".join(lines[: max(1, traces // _traces_per_line(lines[0]))])
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as part:
        part.write(sample)
        part.flush()
        gc.collect()
        tracemalloc.start()
        spans = list(read_spans(part.name))
        trajectories = build_trajectories(spans)
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert trajectories
    return held / len(spans), len(sample) / len(spans)


def _lines(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        yield from handle


def _traces_per_line(line: bytes) -> int:
    spans = orjson.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return max(1, sum(1 for s in spans if not s.get("parentSpanId")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--traces", type=int, default=2000)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="agenteval-bench-") as workdir:
        ours, producers = Path(workdir) / "ours.jsonl", Path(workdir) / "producers.jsonl"
        write_ours(ours, args.traces)
        used = write_producers(producers, args.traces)
        for name, path in (("ours", ours), (f"producers ({used} runs)", producers)):
            spans = read(path)
            times = timings(path, args.rounds)
            held, size = retained_per_span(path)
            rows.append((name, spans, path.stat().st_size / spans, times, held - size))
    targets = Targets("convert")
    targets.note("producers", f"{used} runs of {len({p.parent.name for p in producer_runs()})} producers")
    print(f"CPU time, median of {args.rounds} interleaved rounds; {args.traces:,} traces per workload")
    print(f"{'workload':<24}{'spans':>9}{'B/span':>8}{'floor µs':>10}{'skeleton':>10}{'read':>8}{'convert':>9}"
          f"{'target':>16}{'retained':>10}{'target':>18}")
    for name, spans, size, times, extra in rows:
        workload = name.split()[0]
        targets.figure(f"{workload}: spans", spans, digits=0)
        floor_us = targets.figure(f"{workload}: floor", times["floor"] / spans * 1e6, unit=" µs/span")
        ratio_skeleton = targets.figure(f"{workload}: skeleton × floor", times["skeleton"] / times["floor"], unit="×")
        ratio_read = targets.figure(f"{workload}: read × floor", times["read"] / times["floor"], unit="×")
        ratio = targets.figure(f"{workload}: convert × floor", times["convert"] / times["floor"], unit="×",
                               at_most=TARGET_RATIO)
        retained = targets.figure(f"{workload}: held per span beyond its bytes", extra, unit=" B", digits=0,
                                  at_most=TARGET_RETAINED_BYTES)
        print(f"{name:<24}{spans:>9,}{size:>8.0f}{floor_us.value:>10.2f}{ratio_skeleton.cell:>10}"
              f"{ratio_read.cell:>8}{ratio.cell:>9}{ratio.verdict:>16}"
              f"{retained.cell:>10}{retained.verdict:>18}")
    print("skeleton / read / convert: × the floor (orjson parse + touching every span's ids, name, attributes);"
          " retained: bytes held per span beyond its own bytes in the file")
    return targets.finish()


if __name__ == "__main__":
    sys.exit(main())
