"""``TraceFile``: the spans of one trace file, streamed, with an account of what was skipped.

A trace file is read lazily: iterating a ``TraceFile`` reads it from the start, yields its spans
as ``SpanRecord``s, and records every corrupt line (or protobuf frame) it had to skip, so the
caller can report them once the iteration is over.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from agenteval_otel.trajectory.spans import SpanRecord

__all__ = ["OnBadItem", "ReadFunction", "SkippedLine", "TraceFile"]

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

SkipFunction = Callable[[int, str], None]
"""Called by a reader with the 1-based line (or frame) number and the reason it was skipped."""

ReadFunction = Callable[[int], None]
"""Called by a reader with the bytes of the file it has just read (a line, a frame)."""

SpanProducer = Callable[[SkipFunction, ReadFunction], Iterator[SpanRecord]]

OnBadItem = Callable[[ValueError], None]
"""Called by an envelope walk with the error of each span (or log record) it cannot read, which
it then leaves out; without one, the walk raises that error."""


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A line (or, in a framed protobuf file, a frame) that could not be read."""

    line: int
    reason: str


class TraceFile:
    """The spans of one trace file; iterate it (more than once if needed) to read them.

    ``format`` names what was found: ``otlp-json``, ``otlp-jsonl``, ``otlp-proto``,
    ``otlp-proto-framed``, ``jaeger-json`` or ``jaeger-jsonl``. After an iteration,
    ``skipped`` lists the corrupt lines that were left out and ``span_count`` the spans read.
    During one, ``bytes_read`` says how far into the file it is (line by line, or frame by
    frame; a whole document counts once read) and ``on_read``, when set, is called with each
    step's bytes (a progress display's hook).
    """

    def __init__(self, path: Path, format: str, produce: SpanProducer) -> None:
        self.path = path
        self.format = format
        self._produce = produce
        self._skipped: list[SkippedLine] = []
        self.span_count = 0
        self.bytes_read = 0
        self.on_read: ReadFunction | None = None

    def __iter__(self) -> Iterator[SpanRecord]:
        self._skipped = []
        self.span_count = 0
        self.bytes_read = 0
        for record in self._produce(self._skip, self._read):
            self.span_count += 1
            yield record
        try:
            self._read(max(0, self.path.stat().st_size - self.bytes_read))  # the rest: blank lines, a whole document
        except OSError:
            pass
        if self._skipped:
            lines = ", ".join(str(item.line) for item in self._skipped[:10])
            more = "" if len(self._skipped) <= 10 else ", ..."
            logger.warning(
                "%s: skipped %d unreadable line(s) (%s%s); first: %s",
                self.path,
                len(self._skipped),
                lines,
                more,
                self._skipped[0].reason,
            )

    def __repr__(self) -> str:
        return f"TraceFile({str(self.path)!r}, format={self.format!r})"

    def _read(self, size: int) -> None:
        self.bytes_read += size
        if self.on_read is not None:
            self.on_read(size)

    def _skip(self, line: int, reason: str) -> None:
        self._skipped.append(SkippedLine(line, reason))

    @property
    def skipped(self) -> tuple[SkippedLine, ...]:
        """The lines skipped by the last iteration, in file order."""
        return tuple(self._skipped)

    @property
    def skipped_lines(self) -> list[int]:
        """The numbers of the lines skipped by the last iteration."""
        return [item.line for item in self._skipped]
