"""The progress file of a long run: JSON Lines written record by record, so that an interrupted
run keeps what it did and a resumed run skips it.

Each record is one line, written with one ``write`` and flushed: a kill leaves every line before
it whole, and at most the last one cut short. Resuming reads the file back leniently: a byte
order mark is ignored; a last line cut short is removed; a line of NUL bytes (what a crash can
leave in a file) or one that is not a record is skipped and counted, with one warning naming
the file and the lines; then the file is rewritten with the readable records only.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Generic, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["ProgressFile", "replace_atomically"]

_log = logging.getLogger(__name__)

RecordT = TypeVar("RecordT", bound=BaseModel)

_BOM = b"\xef\xbb\xbf"
_LISTED = 5


def replace_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (a file beside it, then renamed over it)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _problem(error: ValidationError) -> str:
    first = error.errors()[0]
    if first["type"] == "json_invalid":
        return "not JSON"
    where = ".".join(str(part) for part in first["loc"])
    return f"not a record ({where + ': ' if where else ''}{first['msg']})"


class ProgressFile(Generic[RecordT]):
    """The JSONL file at ``path`` of ``model`` records (see the module docstring); ``ignore``
    says which lines are not records and are kept out silently (e.g. a summary line)."""

    def __init__(self, path: str | Path, model: type[RecordT], *,
                 ignore: Callable[[bytes], bool] | None = None) -> None:
        self.path = Path(path)
        self.model = model
        self.ignore = ignore
        self.skipped = 0
        """Lines skipped as unreadable when the file was read back."""
        self._handle: IO[bytes] | None = None

    def open(self, *, resume: bool, check: Callable[[int, RecordT], None] | None = None) -> list[RecordT]:
        """Start writing; with ``resume`` and a file there, first the records already in it
        (see the module docstring), each passed to ``check`` with its line number (``check``
        raises to refuse the file as it is); else the file starts empty."""
        done: list[RecordT] = []
        if resume and self.path.exists():
            done = self._read_back(check)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(b"")
        self._handle = self.path.open("ab")
        return done

    def _read_back(self, check: Callable[[int, RecordT], None] | None) -> list[RecordT]:
        data = self.path.read_bytes()
        clean = not data.startswith(_BOM)
        lines = data.removeprefix(_BOM).split(b"\n")
        tail = lines.pop()  # after the last newline: empty, or a line cut short
        if tail.strip(b"\x00 \t\r"):
            try:
                self.model.model_validate_json(tail)
                lines.append(tail)  # whole, only its newline missing
            except ValidationError:
                _log.warning("%s: line %d was cut short (the run stopped while writing it); dropped, its "
                             "work is done again", self.path, len(lines) + 1)
            clean = False
        done: list[RecordT] = []
        kept: list[bytes] = []
        problems: list[str] = []
        for number, line in enumerate(lines, start=1):
            text = line.replace(b"\x00", b"")
            if not text.strip():
                if text != line:
                    problems.append(f"line {number}: NUL bytes")
                clean = clean and text == line
                continue
            if self.ignore is not None and self.ignore(text):
                kept.append(text)
                continue
            try:
                record = self.model.model_validate_json(text)
            except ValidationError as exc:
                problems.append(f"line {number}: {_problem(exc)}")
                continue
            if check is not None:
                check(number, record)
            clean = clean and text == line
            done.append(record)
            kept.append(text)
        self.skipped = len(problems)
        if problems:
            listed = "; ".join(problems[:_LISTED]) + ("; ..." if len(problems) > _LISTED else "")
            _log.warning("%s: skipped %d unreadable line(s) (%s); resuming without them", self.path,
                         len(problems), listed)
        if problems or not clean:
            replace_atomically(self.path, b"".join(line + b"\n" for line in kept))
        return done

    def write(self, record: RecordT) -> None:
        """Append ``record`` as one line, flushed."""
        assert self._handle is not None, "write() before open()"
        self._handle.write(record.model_dump_json().encode() + b"\n")
        self._handle.flush()

    def close(self) -> None:
        """Stop writing."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
