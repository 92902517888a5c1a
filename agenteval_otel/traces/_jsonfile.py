"""Reading JSON trace files: one document, or one document per line, streamed.

A file with a trace document on one of its first lines is read line by line (never whole), each
line converted on its own and a corrupt line (bad JSON, or a field of the wrong type) skipped and
counted; any other JSON file is parsed whole. The first trace document decides which of the
candidate formats the whole file is read as.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from agenteval_otel.errors import TraceReadError
from agenteval_otel.traces.trace_file import ReadFunction, SkipFunction, TraceFile
from agenteval_otel.trajectory.spans import SpanRecord

__all__ = ["MALFORMED", "JsonFormat", "is_json", "malformed_reason", "read_json_trace_file"]

_SNIFF_LINES = 64
MAX_JSON_DEPTH = 1024
"""How deeply a trace document may nest (the JSON parser's limit)."""
_TOO_DEEP = f"the JSON is nested more than {MAX_JSON_DEPTH} levels deep; expected at most {MAX_JSON_DEPTH}"
# What a converter raises on a document of the wrong shape (RecursionError: nested too deeply).
MALFORMED = (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError)
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class JsonFormat:
    """A JSON trace format: its names (whole document, one per line) and its converter, which
    returns ``None`` for a document of another kind and raises ``ValueError`` (naming a JSON
    path) for a malformed one."""

    document_name: str
    lines_name: str
    convert: Callable[[Any], list[SpanRecord] | None]


def is_json(head: bytes) -> bool:
    """Whether a file starting with ``head`` looks like JSON (an object or an array)."""
    return head.removeprefix(_BOM).lstrip()[:1] in (b"{", b"[")


def _recognise(doc: Any, formats: Sequence[JsonFormat]) -> JsonFormat | None:
    for candidate in formats:
        try:
            if candidate.convert(doc) is not None:
                return candidate
        except MALFORMED:  # a malformed document of this format
            return candidate
    return None


def read_json_trace_file(path: Path, formats: Sequence[JsonFormat], *, expected: str) -> TraceFile:
    """A ``TraceFile`` over a JSON or JSON-lines file in one of ``formats``.

    Raises ``TraceReadError`` when the file is empty, is not JSON, or holds no document of
    these formats.
    """
    first_line: int | None = None
    first_is_a_document = False
    with path.open("rb") as handle:
        for number, line in itertools.islice(_non_empty_lines(handle), _SNIFF_LINES):
            if first_line is None:
                first_line = number
                if not is_json(line):
                    raise TraceReadError(f"{path}: not a JSON file; expected {expected}")
            try:
                doc = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # a corrupt line, or one line of a document spread over many
            first_is_a_document = first_is_a_document or number == first_line
            if (recognised := _recognise(doc, formats)) is not None:
                return _lines_file(path, recognised, expected)
    if first_line is None:
        raise TraceReadError(f"{path}: the file is empty; expected {expected}")
    if first_is_a_document:
        raise TraceReadError(f"{path}: line {first_line}: not a trace document; expected {expected}")
    doc = _load_whole(path, expected)
    found = _recognise(doc, formats)
    if found is None:
        raise TraceReadError(f"{path}: not a trace document; expected {expected}")
    try:
        records = found.convert(doc) or []
    except MALFORMED as exc:
        raise TraceReadError(f"{path}: {malformed_reason(exc)}") from exc
    return TraceFile(path, found.document_name, lambda skip, read: iter(records))


def malformed_reason(error: BaseException) -> str:
    """What was wrong with a document whose parsing or conversion raised ``error``."""
    if isinstance(error, RecursionError) or (
            isinstance(error, orjson.JSONDecodeError) and "depth limit" in error.msg):
        return _TOO_DEEP
    if isinstance(error, ValueError):
        return str(error) or type(error).__name__
    return f"malformed document ({type(error).__name__}: {error})"


def _lines_file(path: Path, found: JsonFormat, expected: str) -> TraceFile:
    return TraceFile(path, found.lines_name, lambda skip, read: _iter_lines(path, found, expected, skip, read))


def _non_empty_lines(handle: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    for number, line in enumerate(handle, 1):
        if number == 1:
            line = line.removeprefix(_BOM)
        if line and not line.isspace():
            yield number, line


def _iter_lines(path: Path, found: JsonFormat, expected: str, skip: SkipFunction,
                read: ReadFunction) -> Iterator[SpanRecord]:
    good = 0
    first_problem = ""
    with path.open("rb") as handle:
        for number, line in _non_empty_lines(handle):
            read(len(line))
            try:
                records = found.convert(orjson.loads(line))
                reason = "" if records is not None else "not a trace document"
            except MALFORMED as exc:  # orjson.JSONDecodeError is a ValueError
                records, reason = None, malformed_reason(exc)
            if records is None:
                skip(number, reason)
                first_problem = first_problem or f"line {number}: {reason}"
                continue
            good += 1
            yield from records
    if not good:
        raise TraceReadError(f"{path}: no line holds a trace document ({first_problem}); expected {expected}")


def _load_whole(path: Path, expected: str) -> Any:
    try:
        return orjson.loads(path.read_bytes().removeprefix(_BOM))
    except orjson.JSONDecodeError as exc:
        if "depth limit" in exc.msg:
            raise TraceReadError(f"{path}: {_TOO_DEEP}") from None
        raise TraceReadError(f"{path}: invalid JSON ({exc}); expected {expected}") from exc
