"""Trace files of any supported kind: the reader is picked from the file's content.

>>> for record in read_spans("spans.jsonl"):  # doctest: +SKIP
...     print(record.name)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces._jsonfile import is_json, read_json_trace_file
from agenteval_otel.traces.jaeger_json import JAEGER_JSON
from agenteval_otel.traces.otlp_json import OTLP_JSON
from agenteval_otel.traces.otlp_proto import read_otlp_proto
from agenteval_otel.traces.trace_file import SkippedLine, TraceFile
from agenteval_otel.trajectory.assemble import Grouping, iter_trajectories, join_conversations
from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["TrajectoryFiles", "read_spans", "read_trajectories"]

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
    paths: Iterable[str | os.PathLike[str]], *, group: Grouping = "invocation"
) -> TrajectoryFiles:
    """The trajectories in trace files, by start time. Each file is streamed trace by trace;
    with ``group="conversation"`` invocations are joined across all the files."""
    files: list[TraceFile] = []
    found: list[Trajectory] = []
    per_file = "invocation" if group == "conversation" else group
    for path in paths:
        trace_file = read_spans(path)
        files.append(trace_file)
        found.extend(iter_trajectories(trace_file, group=per_file))
    if group == "conversation":
        found = join_conversations(found)
    return TrajectoryFiles(sorted(found, key=lambda t: t.start_ns or 0), files)
