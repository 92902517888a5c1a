"""Trace files of any supported kind: the reader is picked from the file's content. Log files
(OTLP/JSON logs, whose records carry GenAI content) are told apart by content too, and their
records are joined to the spans they belong to.

>>> for record in read_spans("spans.jsonl"):  # doctest: +SKIP
...     print(record.name)
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces._jsonfile import is_json, read_json_trace_file
from agenteval_otel.traces.jaeger_json import JAEGER_JSON
from agenteval_otel.traces.otlp_json import OTLP_JSON
from agenteval_otel.traces.otlp_logs import read_otlp_logs
from agenteval_otel.traces.otlp_proto import read_otlp_proto
from agenteval_otel.traces.trace_file import SkippedLine, TraceFile
from agenteval_otel.trajectory.assemble import Grouping, iter_trajectories, join_conversations
from agenteval_otel.trajectory.conventions import Reader
from agenteval_otel.trajectory.logs import LogRecord, attach_logs
from agenteval_otel.trajectory.spans import SpanRecord
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["TrajectoryFiles", "is_logs_file", "read_logs", "read_spans", "read_trajectories", "spans_with_logs"]

_LOGS_MARKERS = (b'"resourceLogs"', b'"resource_logs"')
_SNIFF_BYTES = 4096

EXPECTED = "a trace file: OTLP/JSON (one request, or one per line), OTLP protobuf, or Jaeger JSON"
_TEXT_CONTROLS = frozenset(b"\t\n\r")
_HEAD_BYTES = 256


def _is_text(head: bytes) -> bool:
    """JSON text holds no raw control characters; protobuf almost always does."""
    return all(byte >= 0x20 or byte in _TEXT_CONTROLS for byte in head)


def read_spans(path: str | os.PathLike[str]) -> TraceFile:
    """The spans of a trace file, whatever its kind: OTLP/JSON (a single request or the
    Collector's one-request-per-line JSONL), OTLP protobuf (single or length-prefixed), or
    Jaeger JSON. Iterate the result to stream the spans; ``skipped`` then lists the corrupt
    lines left out.

    Raises ``TraceReadError`` naming the file when it is missing, empty or not a trace file.
    """
    file = Path(path)
    try:
        with file.open("rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError as exc:
        raise TraceReadError(f"{file}: cannot read ({exc.strerror or exc}); expected {EXPECTED}") from exc
    if not head.strip():
        raise TraceReadError(f"{file}: the file is empty; expected {EXPECTED}")
    if _is_text(head):
        if not is_json(head):
            raise TraceReadError(f"{file}: a text file that is not JSON; expected {EXPECTED}")
        return read_json_trace_file(file, (OTLP_JSON, JAEGER_JSON), expected=EXPECTED)
    return read_otlp_proto(file)


def is_logs_file(path: str | os.PathLike[str]) -> bool:
    """Whether the file is OTLP/JSON logs (``resourceLogs`` near its start) rather than traces."""
    try:
        with Path(path).open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return False
    return any(marker in head for marker in _LOGS_MARKERS) and b'"resourceSpans"' not in head


def read_logs(paths: Iterable[str | os.PathLike[str]]) -> list[LogRecord]:
    """Every log record of OTLP/JSON log files (``TraceReadError`` naming a bad file)."""
    return [record for path in paths for record in read_otlp_logs(path)]


def spans_with_logs(
    paths: Iterable[str | os.PathLike[str]], logs: Iterable[str | os.PathLike[str]] = ()
) -> tuple[list[TraceFile], Iterable[SpanRecord]]:
    """The trace files among ``paths`` and their spans streamed, with the log records of the log
    files (``logs``, and any file of ``paths`` that holds logs) joined to their spans."""
    paths = list(paths)
    log_paths = [*logs, *(p for p in paths if is_logs_file(p))]
    files = [read_spans(p) for p in paths if p not in log_paths]
    spans: Iterable[SpanRecord] = itertools.chain.from_iterable(files)
    if log_paths:
        spans = attach_logs(spans, read_logs(log_paths))
    return files, spans


@dataclass(frozen=True, slots=True)
class TrajectoryFiles:
    """Trajectories read from trace files, and the files (with the lines they skipped)."""

    trajectories: list[Trajectory]
    files: list[TraceFile]

    @property
    def skipped(self) -> dict[Path, tuple[SkippedLine, ...]]:
        """The skipped lines of each file that had any."""
        return {f.path: f.skipped for f in self.files if f.skipped}


def read_trajectories(
    paths: Iterable[str | os.PathLike[str]],
    *,
    group: Grouping = "invocation",
    logs: Iterable[str | os.PathLike[str]] = (),
    readers: Sequence[Reader] | None = None,
) -> TrajectoryFiles:
    """The trajectories in trace files, by start time, streamed trace by trace; log files among
    ``paths`` or in ``logs`` are joined to their spans; with ``group="conversation"``
    invocations are joined across all the files. ``readers``: the convention readers."""
    per_file: Grouping = "invocation" if group == "conversation" else group
    files, spans = spans_with_logs(paths, logs)
    found = list(iter_trajectories(spans, group=per_file, readers=readers))
    if group == "conversation":
        found = join_conversations(found)
    return TrajectoryFiles(sorted(found, key=lambda t: t.start_ns or 0), files)
