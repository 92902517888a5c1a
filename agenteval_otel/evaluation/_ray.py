"""Batch evaluation on Ray (``agenteval eval --engine ray``): an offline run over an archive too
big for one machine, on a Ray cluster, with the report a local run gives.

One job of Ray tasks. Trace files are cut into partitions of about equal size (OTLP JSON-lines
files into byte ranges, other files whole), at least ``partitions`` and none over ``shard_bytes``::

    a scan task per shard finds its trace ids by a byte search (no parsing)
      ▼ the driver gives each trace cut across partitions to one of them, which reads its
      │ spans from the other shards (only the lines naming it are parsed); the others skip it
    a task per partition reads its shards, assembles its traces whole and then
      ├─ without an eval set (every invocation scored alone): scores them in place with the
      │  offline run (the same Scorer, its own judge client and concurrency limit)
      └─ with an eval set: sends its trajectories on by conversation id (else invocation key),
         the runs of cases that may share a run together, to scoring tasks, so that a case's
         latest run is decided over all of them and a conversation's turns meet
    results merged on the driver, as the partitions hold them (slim, compressed), with their
    tallies, into one EvalReport; whole results to the caller's sinks when there are any

Other sources (spans, trajectories, a backend's query) are streamed by the driver, which ships
their trajectories in batches to the same routing. Ray Data's ``groupby(...).map_groups(...)``
did the routing two to five times slower than these tasks here (see ``bench/ray_engine.py``).

Each partition writes its run file, ``part-K.jsonl`` under ``run_dir``, and ``part-K.done.json``
once finished; ``manifest.json`` holds the partition count and a fingerprint of the input, eval
set and config, so a job that failed or was interrupted resumes (``resume=True``): finished
partitions are not run again, a partial one resumes from its run file.

Inside a partition the runs are offered in time order (start time, then trace and span id), so
the choice of a case's latest run, and of the case a run takes when several share a first user
message, is the local run's whenever the source is in time order. ``ray`` is imported only
here, when this engine is used.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import re
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from agenteval_otel.criteria import EvalConfig, load_criteria_module
from agenteval_otel.errors import ConfigError
from agenteval_otel.evalsets import EvalSet
from agenteval_otel.evaluation._offline import (
    MAX_KEPT_TRAJECTORIES,
    RunChoice,
    _config_for,
    _Index,
    _read_coverage,
    _Results,
    _score_traces,
)
from agenteval_otel.evaluation._scoring import DEFAULT_CRITERION_TIMEOUT_S, invocation_key
from agenteval_otel.evaluation._sync import run_sync
from agenteval_otel.results import (
    CallbackSink,
    CaseResults,
    EvalCaseResult,
    EvalReport,
    EvaluationSink,
    HeldResult,
    ResultCodec,
    RunFile,
    SinkGroup,
    SummaryTally,
    slim,
)
from agenteval_otel.traces import TraceFileSource, TrajectorySource, read_spans
from agenteval_otel.traces.files import is_logs_file, read_logs
from agenteval_otel.traces.otlp_json import OTLP_JSON, records_from_request
from agenteval_otel.traces.sources import PathLike, TraceSourceLike, trace_source
from agenteval_otel.trajectory.assemble import trajectories_from_trace
from agenteval_otel.trajectory.conventions import Reader
from agenteval_otel.trajectory.explain import CoverageTally, counting_coverage
from agenteval_otel.trajectory.logs import attach_logs
from agenteval_otel.trajectory.spans import SpanRecord, normalize_trace_id
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["RAY_HINT", "evaluate_traces_on_ray"]

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())

RAY_HINT = "the Ray engine needs the 'ray' extra: pip install 'agenteval-otel[ray]'"
SHARD_BYTES = 64 * 1024 * 1024
"""The most bytes of trace files one partition reads (more partitions are made when needed)."""
DRIVER_BATCH = 2_000
"""Trajectories per batch when the driver streams a source that cannot be read in parallel."""
_MANIFEST_FORMAT = 1
_COVERAGE_FILE = "coverage.json"
"""Where a job whose trajectories were routed keeps the read coverage of its input."""
_BOM = b"\xef\xbb\xbf"


def stable_hash(key: str, buckets: int) -> int:
    """``key``'s bucket of ``buckets``, the same in every process (Python's ``hash`` is not).

    >>> stable_hash("weather-thread-1", 4) == stable_hash("weather-thread-1", 4)
    True
    """
    return zlib.crc32(key.encode()) % buckets


# --- reading: shards of trace files, and the traces cut across them -----------------------------


@dataclass(frozen=True, slots=True)
class _Shard:
    """One unit of reading: the lines of an OTLP JSON-lines file that start in ``[start, end)``,
    or a whole trace file of another format (``end`` is ``None``)."""

    path: str
    start: int = 0
    end: int | None = None


def _plans_of_files(paths: Iterable[PathLike], partitions: int, shard_bytes: int) -> list[list[_Shard]]:
    """The shards of trace files in ``partitions`` groups of about equal size, or more when
    groups would exceed ``shard_bytes``: OTLP JSON-lines files cut into byte ranges, any other
    file whole. Neighbouring ranges share a group (a trace cut across them is read whole there).
    ``TraceReadError`` names a file that is no trace file."""
    found = [(os.fspath(path), os.path.getsize(path), read_spans(path).format) for path in paths]
    total = sum(size for _, size, _ in found)
    count = max(partitions, -(-total // shard_bytes))
    target = max(1, -(-total // count))
    shards: list[tuple[_Shard, int]] = []
    for path, size, file_format in found:
        if file_format == OTLP_JSON.lines_name:
            shards.extend((_Shard(path, start, min(start + target, size)), min(target, size - start))
                          for start in range(0, max(size, 1), target))
        else:
            shards.append((_Shard(path), size))
    groups: list[list[_Shard]] = [[] for _ in range(count)]
    offset = 0
    for shard, size in shards:
        groups[min(count - 1, offset // target)].append(shard)
        offset += size
    return groups


def _range_data(shard: _Shard) -> bytes:
    """The bytes of the lines of ``shard``'s file that start inside its byte range."""
    assert shard.end is not None
    with open(shard.path, "rb") as handle:
        start = shard.start
        if start:
            handle.seek(start - 1)
            if handle.read(1) != b"\n":
                handle.readline()  # the line begun before the range belongs to the range before
            start = handle.tell()
        if start >= shard.end:
            return b""
        data = handle.read(shard.end - start)
        if not data.endswith(b"\n"):
            data += handle.readline()  # the range's last line, to its end
    return data.removeprefix(_BOM) if shard.start == 0 else data


_TRACE_ID = re.compile(rb'"(?:traceId|trace_id)"\s*:\s*"([^"\\]*)"')
"""A span's trace id in an OTLP JSON document, found without parsing it."""


def _trace_ids(raw: Iterable[bytes]) -> dict[bytes, str]:
    """Raw trace ids as found in OTLP JSON, each with its normalised form (unreadable ones left out)."""
    found: dict[bytes, str] = {}
    for value in set(raw):
        try:
            normal = normalize_trace_id(value.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            continue
        if normal is not None:
            found[value] = normal
    return found


def _scan_task(shard: _Shard) -> frozenset[str]:
    """Ray task: the ids of the traces with spans in ``shard`` (its JSON lines only searched, not parsed)."""
    if shard.end is None:
        return frozenset(span.trace_id for span in read_spans(shard.path))
    return frozenset(_trace_ids(_TRACE_ID.findall(_range_data(shard))).values())


def _lines_spans(shard: _Shard, lines: Iterable[bytes], keep: Callable[[str], bool]) -> Iterator[SpanRecord]:
    """The spans in OTLP JSON ``lines`` of ``shard`` whose trace ``keep`` takes; a line that is no
    trace document is skipped and counted in a warning."""
    skipped = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            records = records_from_request(orjson.loads(line))
        except (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError):
            records = None
        if records is None:
            skipped += 1
            continue
        yield from (span for span in records if keep(span.trace_id))
    if skipped:
        _log.warning("%s: %d line(s) between bytes %d and %d are not trace documents; skipped",
                     shard.path, skipped, shard.start, shard.end)


def _shard_spans(shard: _Shard, keep: Callable[[str], bool]) -> Iterator[SpanRecord]:
    """The spans of ``shard`` whose trace ``keep`` takes."""
    if shard.end is None:
        return (span for span in read_spans(shard.path) if keep(span.trace_id))
    return _lines_spans(shard, _range_data(shard).splitlines(), keep)


def _cut_spans(shard: _Shard, wanted: frozenset[str]) -> Iterator[SpanRecord]:
    """The spans of the traces ``wanted`` in ``shard`` (of traces cut across shards): only the
    lines that name one of them are parsed."""
    if shard.end is None:
        return _shard_spans(shard, wanted.__contains__)
    data = _range_data(shard)
    matches = list(_TRACE_ID.finditer(data))
    normal = _trace_ids(match.group(1) for match in matches)
    starts: dict[int, int] = {}
    for match in matches:
        if normal.get(match.group(1)) in wanted:
            begin = data.rfind(b"\n", 0, match.start()) + 1
            if begin not in starts:
                stop = data.find(b"\n", match.end())
                starts[begin] = len(data) if stop < 0 else stop
    return _lines_spans(shard, (data[begin:stop] for begin, stop in sorted(starts.items())), wanted.__contains__)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What one task reads: its shards, less the traces another task reads whole (``given``),
    plus the traces it reads whole that other shards hold spans of (``taken``, by shard)."""

    shards: tuple[_Shard, ...]
    given: frozenset[str] = frozenset()
    taken: tuple[tuple[_Shard, frozenset[str]], ...] = ()

    def trajectories(self, log_paths: Sequence[str],
                     readers: Sequence[Reader] | None) -> tuple[list[Trajectory], CoverageTally]:
        """The trajectories of the traces this plan reads, each trace assembled whole, and how
        much of their spans the readers understood."""
        keep = (lambda trace_id: trace_id not in self.given) if self.given else (lambda trace_id: True)
        spans: Iterable[SpanRecord] = itertools.chain(
            *(_shard_spans(shard, keep) for shard in self.shards),
            *(_cut_spans(shard, wanted) for shard, wanted in self.taken))
        if log_paths:
            spans = attach_logs(spans, read_logs(log_paths))
        traces: dict[str, list[SpanRecord]] = {}
        for span in spans:
            traces.setdefault(span.trace_id, []).append(span)
        with counting_coverage() as coverage:
            return [t for found in traces.values() for t in trajectories_from_trace(found, readers=readers)], coverage


def _plans(groups: Sequence[Sequence[_Shard]], scans: Sequence[frozenset[str]]) -> list[_Plan]:
    """The groups' plans: a trace with spans in several groups is read whole by the first of
    them, which takes its spans from the others' shards (``scans``: each shard's trace ids, in
    the groups' order)."""
    owner: dict[str, int] = {}
    held: list[list[tuple[_Shard, frozenset[str]]]] = []
    shards = iter(scans)
    for number, group in enumerate(groups):
        held.append([(shard, next(shards)) for shard in group])
        for _, ids in held[-1]:
            for trace_id in ids:
                owner.setdefault(trace_id, number)
    given: list[set[str]] = [set() for _ in groups]
    taken: list[dict[_Shard, set[str]]] = [{} for _ in groups]
    for number, shard_ids in enumerate(held):
        for shard, ids in shard_ids:
            for trace_id in ids:
                first = owner[trace_id]
                if first != number:
                    given[number].add(trace_id)
                    taken[first].setdefault(shard, set()).add(trace_id)
    return [_Plan(tuple(group), frozenset(given[n]), tuple((shard, frozenset(ids)) for shard, ids in taken[n].items()))
            for n, group in enumerate(groups)]


def _plan_score_task(job: _Job, part: int, plan: _Plan, log_paths: Sequence[str],
                     readers: Sequence[Reader] | None) -> _PartResult:
    """Ray task: read partition ``part``'s plan and score its trajectories (no eval set: each
    invocation is scored alone, so nothing needs to move between partitions)."""
    return _score_partition(job, part, *plan.trajectories(log_paths, readers))


def _plan_split_task(plan: _Plan, log_paths: Sequence[str], readers: Sequence[Reader] | None,
                     routing: _Routing, index: _Index | None) -> tuple[Any, ...]:
    """Ray task: read a plan; its trajectories by partition, the keys that touch an eval case, and
    the plan's read coverage."""
    trajectories, coverage = plan.trajectories(log_paths, readers)
    return (*_by_partition(trajectories, routing, index), coverage)


# --- assembling: traces whole, keyed by conversation --------------------------------------------


def _key(trajectory: Trajectory) -> str:
    """What keeps turns together in one partition: the conversation id, else the invocation key."""
    return trajectory.conversation_id or invocation_key(trajectory)


def _candidates(index: _Index, turn: Trajectory) -> list[str]:
    """The ids of the cases ``turn`` may start (by eval id, thread id or first user message)."""
    if turn.eval_id is not None:
        return [turn.eval_id] if turn.eval_id in index.by_eval_id else []
    found = []
    if turn.conversation_id is not None and turn.conversation_id in index.by_thread:
        found.append(index.by_thread[turn.conversation_id].eval_id)
    same_start = index.by_first_message.get(" ".join((turn.user_input or "").split()).casefold())
    if same_start is not None:
        found.extend(case.eval_id for case in (same_start if isinstance(same_start, list) else [same_start]))
    return found


@dataclass(frozen=True)
class _Routing:
    """Where trajectories go: ``routes`` (a key touching an eval case → its case group's
    partition), every other key by its stable hash."""

    partitions: int
    routes: Mapping[str, int] = field(default_factory=dict)

    def partition(self, key: str) -> int:
        found = self.routes.get(key)
        return found if found is not None else stable_hash(key, self.partitions)


_Touched = dict[str, list[str]]
"""The keys whose trajectories may start an eval case, with the ids of those cases."""


def _by_partition(trajectories: Iterable[Trajectory], routing: _Routing,
                  index: _Index | None) -> tuple[Any, ...]:
    """``trajectories`` in one list per partition, and (last) the keys that touch an eval case."""
    parts: tuple[list[Trajectory], ...] = tuple([] for _ in range(routing.partitions))
    touched: _Touched = {}
    for trajectory in trajectories:
        key = _key(trajectory)
        if index is not None and (cases := _candidates(index, trajectory)):
            touched.setdefault(key, []).extend(cases)
        parts[routing.partition(key)].append(trajectory)
    return (*parts, touched)


def _split_task(routing: _Routing, index: _Index | None, batch: list[Trajectory]) -> tuple[Any, ...]:
    """Ray task: trajectories the driver streamed from its source, by partition."""
    return _by_partition(batch, routing, index)


def _route_task(routing: _Routing, *shares: list[Trajectory]) -> Any:
    """Ray task: trajectories moved to the partitions ``routing`` gives their keys."""
    return _returns(_by_partition((t for share in shares for t in share), routing, None)[:-1])


def _returns(values: tuple[Any, ...]) -> Any:
    """A task's results as Ray takes them: the values, or the one value when there is one."""
    return values if len(values) > 1 else values[0]


# --- scoring: one partition -------------------------------------------------------------------


@dataclass(frozen=True)
class _Job:
    """What every scoring task needs to score its partition as the local run would."""

    eval_set: EvalSet | None
    config: EvalConfig
    cases_by_partition: Mapping[int, tuple[str, ...]]
    run_dir: str
    run_id: str
    runs: RunChoice
    criterion_timeout_s: float | None
    keep_trajectories: bool | None
    source_id: str
    criteria_modules: tuple[str, ...]
    whole_results: bool = True
    """Whether partitions send back every result whole (the sinks get them so), or only those
    the report keeps whole (the others without their trajectory, far less to move)."""

    def part_file(self, part: int) -> Path:
        return Path(self.run_dir) / f"part-{part}.jsonl"

    def done_file(self, part: int) -> Path:
        return Path(self.run_dir) / f"part-{part}.done.json"

    def sub_eval_set(self, part: int) -> EvalSet | None:
        if self.eval_set is None:
            return None
        ids = set(self.cases_by_partition.get(part, ()))
        return self.eval_set.model_copy(update={"eval_cases": [c for c in self.eval_set.eval_cases
                                                               if c.eval_id in ids]})


def _time_order(trajectory: Trajectory) -> tuple[int, str, str]:
    return trajectory.start_ns or 0, trajectory.trace_id or "", trajectory.span_id or ""


@dataclass(slots=True)
class _PartResult:
    """A partition's results, held as its report holds them (with their tally), the runs it set
    aside as another eval set's, the start time of each invocation scored without a case, and
    the results new in this job, whole, for the sinks (when the job sends them)."""

    held: _Results
    other_eval_set_runs: int
    starts: dict[str, int]
    sent: list[EvalCaseResult]
    coverage: CoverageTally
    """How much of the partition's spans the readers understood (empty when it was routed its
    trajectories: the reading tasks count it then)."""


class _RunFileSink:
    """The partition's run file as a sink: passed results slim (without their trajectory) unless
    the job keeps every trajectory, so that writing it costs little next to scoring."""

    def __init__(self, run_file: RunFile, keep_trajectories: bool | None) -> None:
        self.run_file, self.whole = run_file, keep_trajectories is True

    def submit(self, result: EvalCaseResult) -> None:
        self.run_file.submit(result if self.whole or result.status != "passed" else slim(result))

    def force_flush(self, timeout: float | None = None) -> bool:
        return self.run_file.force_flush(timeout)

    def shutdown(self, timeout: float | None = None) -> bool:
        return self.run_file.shutdown(timeout)


def _score_partition(job: _Job, part: int, trajectories: list[Trajectory],
                     coverage: CoverageTally | None = None) -> _PartResult:
    """Score one partition with the offline run, resuming from its run file; mark it finished."""
    for module in job.criteria_modules:
        load_criteria_module(module)
    trajectories.sort(key=_time_order)
    eval_set = job.sub_eval_set(part)
    run_file = _RunFileSink(RunFile(job.part_file(part), job.run_id, job.config), job.keep_trajectories)
    done = run_file.run_file.open(resume=True)
    sent: dict[str, EvalCaseResult] = {}
    try:
        held, other = run_sync(_score_traces(
            eval_set, TrajectorySource(trajectories), job.config,
            SinkGroup([run_file, CallbackSink(lambda r: sent.__setitem__(r.eval_id, r))]), done=done,
            criterion_timeout_s=job.criterion_timeout_s, runs=job.runs, readers=None, keep_trajectories=job.keep_trajectories,
            concurrency=None, judge=None), "aevaluate_traces")
        for eval_id, count in held.set_aside_later.items():  # older runs found after the case was scored
            if eval_id in sent:
                sent[eval_id] = sent[eval_id].model_copy(update={"set_aside_runs": count})
                run_file.submit(sent[eval_id])
    finally:
        run_file.shutdown()
    held.include(done)
    cases = {case.eval_id for case in eval_set.eval_cases} if eval_set is not None else set()
    starts = {invocation_key(t): t.start_ns or 0 for t in trajectories}
    starts = {eval_id: starts.get(eval_id, 0) for eval_id in held.entries if eval_id not in cases}
    coverage = coverage if coverage is not None else CoverageTally()
    finished = {"results": len(held.entries), "other_eval_set_runs": other, "starts": starts,
                "coverage": coverage.as_dict()}
    marker = job.done_file(part)
    temporary = marker.with_suffix(".tmp")
    temporary.write_text(json.dumps(finished), encoding="utf-8")
    temporary.replace(marker)  # a partition is finished only once its marker is whole
    return _PartResult(held, other, starts, list(sent.values()) if job.whole_results else [], coverage)


def _score_task(job: _Job, part: int, *shares: list[Trajectory]) -> _PartResult:
    """Ray task: score partition ``part`` (its share of each bucket)."""
    return _score_partition(job, part, [t for share in shares for t in share])


def _finished(job: _Job, part: int) -> _PartResult | None:
    """A partition finished by an earlier job: its results read back from its run file."""
    marker = job.done_file(part)
    if not marker.exists():
        return None
    finished = json.loads(marker.read_text(encoding="utf-8"))
    with RunFile(job.part_file(part), job.run_id, job.config) as run_file:
        done = run_file.open(resume=True)
    held = _Results((), job.keep_trajectories)
    for result in done.values():
        held.put(result)
    return _PartResult(held, int(finished["other_eval_set_runs"]),
                       {k: int(v) for k, v in finished["starts"].items()}, [],
                       CoverageTally.from_dict(finished.get("coverage", {})))


# --- the driver -------------------------------------------------------------------------------


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(RAY_HINT) from None
    return ray


def _fingerprint(eval_set: EvalSet | None, config: EvalConfig, runs: RunChoice, source: object,
                 paths: Sequence[str], logs: Sequence[str], shard_bytes: int) -> str:
    """A hash of what a job scores: the eval set, the config, the run choice and the input (each
    file's path, size and modification time, and how files are cut; another source by its
    description)."""
    parts: list[Any] = [eval_set.model_dump(mode="json") if eval_set is not None else None,
                        config.model_dump(mode="json"), runs, shard_bytes]
    files = sorted(set(paths) | set(logs))
    if files:
        parts.append([(path, os.stat(path).st_size, os.stat(path).st_mtime_ns) for path in files])
    else:
        parts.append(repr(source))
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _prepare_run_dir(run_dir: Path, partitions: int | None, default: int, fingerprint: str, resume: bool) -> int:
    """The job's partition count; its manifest written, or checked when resuming (``ConfigError``
    when the run dir holds another job); a new job starts from an empty run dir."""
    manifest = run_dir / "manifest.json"
    if resume and manifest.exists():
        found = json.loads(manifest.read_text(encoding="utf-8"))
        if found.get("fingerprint") != fingerprint:
            raise ConfigError(f"{run_dir}: this run dir holds a job over other input, eval set or config; "
                              "resume with the same ones, or run without resume to start over")
        if partitions is not None and partitions != found["partitions"]:
            raise ConfigError(f"partitions={partitions}: the job in {run_dir} has {found['partitions']} "
                              "partitions; resume with that many (or leave it out)")
        return int(found["partitions"])
    count = partitions if partitions is not None else default
    if count < 1:
        raise ConfigError(f"partitions={count}: expected at least 1")
    run_dir.mkdir(parents=True, exist_ok=True)
    for old in [*run_dir.glob("part-*"), run_dir / _COVERAGE_FILE]:
        old.unlink(missing_ok=True)
    manifest.write_text(json.dumps({"agenteval_ray_job": _MANIFEST_FORMAT, "partitions": count,
                                    "fingerprint": fingerprint}), encoding="utf-8")
    return count


def _case_partitions(eval_set: EvalSet | None, touched: Mapping[str, Sequence[str]],
                     partitions: int) -> tuple[dict[str, int], dict[int, tuple[str, ...]]]:
    """Cases that may share a run (a conversation touching both, or one first user message)
    grouped together; each group in one partition. Returns the partition of each touching key
    and the cases of each partition."""
    if eval_set is None:
        return {}, {}
    parent = {case.eval_id: case.eval_id for case in eval_set.eval_cases}

    def root(case_id: str) -> str:
        while parent[case_id] != case_id:
            parent[case_id] = parent[parent[case_id]]
            case_id = parent[case_id]
        return case_id

    for cases in touched.values():
        first = root(cases[0])
        for other in cases[1:]:
            found = root(other)
            if found != first:
                parent[max(found, first)] = min(found, first)
                first = min(found, first)
    group_part = {case_id: stable_hash(root(case_id), partitions) for case_id in parent}
    by_part: dict[int, list[str]] = {}
    for case in eval_set.eval_cases:
        by_part.setdefault(group_part[case.eval_id], []).append(case.eval_id)
    routes = {key: group_part[cases[0]] for key, cases in touched.items()}
    return routes, {part: tuple(ids) for part, ids in by_part.items()}


def _merge(eval_set: EvalSet | None, parts: Sequence[_PartResult], keep_trajectories: bool | None,
           config: EvalConfig, source_id: str, started: float, coverage: CoverageTally) -> EvalReport:
    """One report from the partitions', nothing decoded: the eval set's cases in its order, then
    the invocations scored without a case by their root's start time (ties by invocation key);
    whole results past the first ``MAX_KEPT_TRAJECTORIES`` failed ones slimmed, as a local run
    holds them."""
    cases = [case.eval_id for case in eval_set.eval_cases] if eval_set is not None else []
    position = {eval_id: i for i, eval_id in enumerate(cases)}
    found: list[tuple[tuple[int, int, str], str, HeldResult, int]] = []
    for number, part in enumerate(parts):
        for eval_id, entry in part.held.entries.items():
            place = position.get(eval_id)
            key = (0, place, "") if place is not None else (1, part.starts.get(eval_id, 0), eval_id)
            found.append((key, eval_id, entry, number))
    found.sort(key=lambda item: item[0])
    results = CaseResults()
    placed: dict[str, int] = {}
    kept = 0
    for _, eval_id, entry, number in found:
        codec: ResultCodec | None = parts[number].held.codec
        if not isinstance(entry, bytes) and keep_trajectories is None:
            if kept < MAX_KEPT_TRAJECTORIES and entry.status != "passed":
                kept += 1
            else:
                entry, codec = results.codec.encode(entry), None
        placed[eval_id] = len(placed)
        results.append_entry(eval_id, entry, codec)
    tally = SummaryTally()
    other_eval_set_runs = 0
    for part in parts:
        other_eval_set_runs += part.other_eval_set_runs
        ids = {place: eval_id for eval_id, place in part.held.positions.items()}

        def global_place(place: int, ids: Mapping[int, str] = ids) -> int:
            return placed.get(ids.get(place, ""), len(placed))

        tally.merge(part.held.tally, global_place)
    summary = tally.summary()
    summary.other_eval_set_runs = other_eval_set_runs
    for part in parts:
        coverage.merge(part.coverage)
    summary.read_coverage = _read_coverage(coverage)
    if summary.set_aside_runs:
        _log.warning("the traces hold several runs of some cases: scored the latest run of each and set %d "
                     "older run(s) aside (score every run with --all-runs, or runs='all')", summary.set_aside_runs)
    return EvalReport.from_results(
        eval_set.eval_set_id if eval_set is not None else source_id, results,
        eval_set_name=(eval_set.name or None) if eval_set is not None else None,
        config_used=config.model_dump(mode="json"), summary=summary,
        duration_seconds=time.perf_counter() - started)


def _driver_batches(trajectories: Iterator[Trajectory], size: int) -> Iterator[list[Trajectory]]:
    batch: list[Trajectory] = []
    for trajectory in trajectories:
        batch.append(trajectory)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def evaluate_traces_on_ray(
    eval_set: EvalSet | None,
    source: TraceSourceLike,
    config: EvalConfig | None = None,
    *,
    address: str | None = None,
    partitions: int | None = None,
    run_dir: str | os.PathLike[str] = ".agenteval/ray",
    sinks: Sequence[EvaluationSink] = (),
    resume: bool = False,
    criterion_timeout_s: float | None = DEFAULT_CRITERION_TIMEOUT_S,
    runs: RunChoice = "latest",
    logs: Sequence[PathLike] = (),
    readers: Sequence[Reader] | None = None,
    keep_trajectories: bool | None = None,
    source_id: str = "traces",
    criteria_modules: Sequence[str] = (),
    max_retries: int = 3,
    shard_bytes: int = SHARD_BYTES,
    whole_results: bool | None = None,
) -> EvalReport:
    """:func:`~agenteval_otel.evaluation.evaluate_traces` on a Ray cluster: the same report
    (but for durations), read, assembled and scored in parallel tasks.

    Args:
        eval_set, source, config, criterion_timeout_s, runs, logs, readers, keep_trajectories,
            source_id: as for ``evaluate_traces``.
        address: the cluster (``ray://head:10001``, ``auto``); default: ``RAY_ADDRESS``, else
            a local cluster started for the job (Ray already initialised is used as it is).
        partitions: how many scoring tasks (default: twice the cluster's CPUs), the unit of
            resuming; over trace files, more when a partition would read more than
            ``shard_bytes``.
        run_dir: the job's run files and manifest; on a cluster, a folder every worker shares.
        sinks: each result is submitted once, as its partition finishes; the report goes to
            those with ``finish(report)``.
        resume: keep the finished partitions of the job in ``run_dir`` (same input, eval set
            and config), resume its partial ones from their run files, run the rest.
        criteria_modules: modules or ``.py`` files every task imports first, whose
            ``@criterion`` functions the config names (installed entry points load by themselves).
        max_retries: how often Ray runs a task again when its worker dies; a task that still
            fails stops the job with a ``RuntimeError`` (resume it with ``resume=True``).
        shard_bytes: the most bytes of trace files one partition reads.
        whole_results: whether the partitions send every result back whole, with its
            trajectory, as the ``sinks`` then get it; default: when there are sinks. Without,
            results come back as the report holds them (see ``keep_trajectories``). The
            partitions' run files hold failed and errored results whole, passed ones without
            their trajectory (every one whole with ``keep_trajectories=True``).

    ``ConfigError`` when the ``ray`` extra is missing or the run dir holds another job.
    """
    started = time.perf_counter()
    ray = _import_ray()
    for module in criteria_modules:
        load_criteria_module(module)
    config = _config_for(eval_set, config)
    traces = trace_source(source, logs)
    trace_paths: list[str] = []
    log_paths: list[str] = []
    if isinstance(traces, TraceFileSource):
        log_paths = [os.fspath(p) for p in traces.logs] + [os.fspath(p) for p in traces.paths if is_logs_file(p)]
        trace_paths = [os.fspath(p) for p in traces.paths if os.fspath(p) not in log_paths]
        for path in trace_paths:
            read_spans(path)  # a missing, empty or unknown file fails here, on the driver, naming it
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING,
                 configure_logging=False)
    try:
        default = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
        fingerprint = _fingerprint(eval_set, config, runs, traces, trace_paths, log_paths, shard_bytes)
        run_path = Path(run_dir)
        count = _prepare_run_dir(run_path, partitions, default, fingerprint, resume)
        groups = _plans_of_files(trace_paths, count, shard_bytes) if trace_paths else []
        run_id = eval_set.eval_set_id if eval_set is not None else source_id
        whole = bool(sinks) or keep_trajectories is True if whole_results is None else whole_results
        job = _Job(eval_set, config, {}, str(run_path.resolve()), run_id, runs, criterion_timeout_s,
                   keep_trajectories, source_id, tuple(criteria_modules), whole)
        return _run_job(ray, job, len(groups) or count, traces, groups, log_paths, readers, sinks, max_retries,
                        started)
    finally:
        if started_ray:
            ray.shutdown()


def _run_job(ray: Any, job: _Job, count: int, traces: Any, groups: Sequence[Sequence[_Shard]],
             log_paths: Sequence[str], readers: Sequence[Reader] | None, sinks: Sequence[EvaluationSink],
             max_retries: int, started: float) -> EvalReport:
    """Read, assemble, route and score the partitions not finished yet; merge every partition."""
    index = _Index(job.eval_set.eval_cases) if job.eval_set is not None else None
    earlier = {part: found for part in range(count) if (found := _finished(job, part)) is not None}
    todo = [part for part in range(count) if part not in earlier]
    scoring = []
    coverage = CoverageTally()  # of the traces read to route (the partitions count what they read)
    routed_coverage = Path(job.run_dir) / _COVERAGE_FILE
    if not todo and routed_coverage.exists():
        coverage = CoverageTally.from_dict(json.loads(routed_coverage.read_text(encoding="utf-8")))
    if todo:
        def task(fn: Any, returns: int) -> Any:
            return ray.remote(fn).options(num_returns=returns, max_retries=max_retries)

        plans: list[_Plan] = []
        if groups:
            scan = task(_scan_task, 1)
            plans = _plans(groups, ray.get([scan.remote(shard) for group in groups for shard in group]))
        if plans and index is None:  # every invocation scored alone: each partition scores what it reads
            score_plan = task(_plan_score_task, 1)
            scoring = [score_plan.remote(job, part, plans[part], list(log_paths), readers) for part in todo]
        else:
            routing = _Routing(count)
            if plans:
                split_plan = task(_plan_split_task, count + 2)
                parts = [split_plan.remote(plan, list(log_paths), readers, routing, index) for plan in plans]
                read_coverage = ray.get([p[count + 1] for p in parts])
            else:
                split = task(_split_task, count + 1)
                with counting_coverage() as driver_coverage:  # the driver assembles this source's traces
                    parts = [split.remote(routing, index, batch)
                             for batch in _driver_batches(traces.trajectories(readers=readers), DRIVER_BATCH)]
                read_coverage = [driver_coverage]
            for found in read_coverage:
                coverage.merge(found)
            (Path(job.run_dir) / _COVERAGE_FILE).write_text(json.dumps(coverage.as_dict()), encoding="utf-8")
            if index is not None:
                touched: _Touched = {}
                for found in ray.get([p[count] for p in parts]):
                    for key, cases in found.items():
                        touched.setdefault(key, []).extend(cases)
                routes, cases_by_partition = _case_partitions(job.eval_set, touched, count)
                job = replace(job, cases_by_partition=cases_by_partition)
                route = task(_route_task, count)
                parts = [_refs(route.remote(_Routing(count, routes), *p[:count]), count) for p in parts]
            score = task(_score_task, 1)
            scoring = [score.remote(job, part, *(p[part] for p in parts)) for part in todo]
    stage = SinkGroup(sinks)
    results = list(earlier.values())
    failures: list[BaseException] = []
    waiting = list(scoring)
    while waiting:  # every task runs to its end, so that a resumed job never races one still writing
        ready, waiting = ray.wait(waiting, num_returns=1)
        try:
            part: _PartResult = ray.get(ready[0])
        except ray.exceptions.RayError as exc:
            failures.append(exc)
            continue
        results.append(part)
        for result in part.sent:
            stage.submit(result)
    if failures:
        stage.force_flush()
        first_line = (str(failures[0]).strip().splitlines() or [type(failures[0]).__name__])[0]
        raise RuntimeError(f"{len(failures)} of {len(scoring)} partition(s) failed ({first_line}); the finished "
                           f"ones are kept in {job.run_dir}: run again with resume=True (--resume) to score "
                           "only the rest") from failures[0]
    report = _merge(job.eval_set, results, job.keep_trajectories, job.config, job.source_id, started, coverage)
    stage.finish(report)
    stage.force_flush()
    return report


def _refs(found: Any, count: int) -> list[Any]:
    """A task's ``count`` result refs as a list (Ray returns one ref, not a list, when it is one)."""
    return [found] if count == 1 else list(found)
