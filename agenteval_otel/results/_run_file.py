"""Run files: case results appended as cases finish (the run file is an evaluation sink), so an
interrupted run keeps them and a resumed run skips them.

One JSON object per line: a header naming the eval set and a fingerprint of the config, then
one ``EvalCaseResult`` per finished case. Each line is serialised whole before it is written,
in one unbuffered write, so a case's line is there complete or not at all; a last line cut
short all the same (a full disk, a power cut; even inside a character) is dropped on resume and
reported.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, ValidationError

from agenteval_otel.errors import ConfigError
from agenteval_otel.results._results import EvalCaseResult

__all__ = ["RunFile", "default_run_file"]

_log = logging.getLogger(__name__)
_FORMAT = 1


def default_run_file(eval_set_id: str, kind: str, folder: str | Path = ".agenteval") -> Path:
    """``.agenteval/<eval set id>.<kind>.jsonl``, the id made safe for a file name."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", eval_set_id).strip("._") or "eval-set"
    return Path(folder) / f"{safe}.{kind}.jsonl"


def config_fingerprint(config: BaseModel) -> str:
    """A short hash of the run's config (an ``EvalConfig``): a run resumes only under the config it started with."""
    text = json.dumps(config.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class RunFile:
    """The run file of one eval set under one config."""

    def __init__(self, path: str | Path, eval_set_id: str, config: BaseModel) -> None:
        self.path = Path(path)
        self.eval_set_id = eval_set_id
        self.fingerprint = config_fingerprint(config)
        self._handle: BinaryIO | None = None
        self._lock = threading.Lock()

    def _header(self) -> dict[str, Any]:
        return {"agenteval_run": _FORMAT, "eval_set_id": self.eval_set_id,
                "config": self.fingerprint}

    def _read_done(self) -> tuple[dict[str, EvalCaseResult], int | None]:
        """The results in the file, and where its last line starts if that line was cut short."""
        done: dict[str, EvalCaseResult] = {}
        torn_at: int | None = None
        with self.path.open("rb") as handle:
            first = handle.readline()
            try:
                header = json.loads(first)
            except ValueError:
                header = None
            if not isinstance(header, dict) or header.get("agenteval_run") != _FORMAT:
                raise ConfigError(f"{self.path}: line 1: not an agenteval run file")
            if header.get("eval_set_id") != self.eval_set_id:
                raise ConfigError(
                    f"{self.path}: this run file belongs to eval set {header.get('eval_set_id')!r},"
                    f" not {self.eval_set_id!r}; run without --resume to start over")
            if header.get("config") != self.fingerprint:
                raise ConfigError(
                    f"{self.path}: the run was started with another config; resume it with the "
                    "same --config, or run without --resume to start over")
            offset = len(first)
            for number, line in enumerate(handle, start=2):
                line_start, offset = offset, offset + len(line)
                if not line.strip():
                    continue
                try:
                    result = EvalCaseResult.model_validate_json(line)
                except ValidationError:
                    if line.endswith(b"\n"):
                        _log.warning("%s: line %d is unreadable; its case runs again", self.path, number)
                    else:
                        torn_at = line_start
                        _log.warning("%s: line %d was cut short (the run stopped while writing it); "
                                     "dropped, its case runs again", self.path, number)
                    continue
                done[result.eval_id] = result
        return done, torn_at

    def open(self, *, resume: bool) -> dict[str, EvalCaseResult]:
        """Start writing; with ``resume``, first read back the results already there (a last
        line cut short is removed)."""
        done: dict[str, EvalCaseResult] = {}
        if resume and self.path.exists():
            done, torn_at = self._read_done()
            if torn_at is not None:
                with self.path.open("r+b") as handle:
                    handle.truncate(torn_at)
            self._handle = self.path.open("ab", buffering=0)
            if not self._ends_a_line():
                _write_all(self._handle, b"\n")  # a whole last line without its newline
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("wb", buffering=0)
            _write_all(self._handle, (json.dumps(self._header()) + "\n").encode())
        return done

    def _ends_a_line(self) -> bool:
        with self.path.open("rb") as handle:
            if handle.seek(0, 2) == 0:
                return True
            handle.seek(-1, 2)
            return handle.read(1) == b"\n"

    def submit(self, result: EvalCaseResult) -> None:
        """Record one finished case, its line whole (written at once, unbuffered); an evaluation
        sink. A result that cannot be serialised raises before anything is written."""
        line = (result.model_dump_json() + "\n").encode()
        with self._lock:
            if self._handle is None:
                raise RuntimeError(f"{self.path}: the run file is not open")
            _write_all(self._handle, line)

    def force_flush(self, timeout: float | None = None) -> bool:
        """Every result is flushed as it is submitted; whether the file is open."""
        return self._handle is not None

    def shutdown(self, timeout: float | None = None) -> bool:
        """Stop writing (idempotent)."""
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            handle.close()
        return True

    def __enter__(self) -> RunFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def _write_all(handle: BinaryIO, data: bytes) -> None:
    """``data`` written through the unbuffered ``handle``, in one system call unless the system
    takes less."""
    view = memoryview(data)
    while view:
        written = handle.write(view)
        if not written:
            raise OSError(f"{handle.name}: nothing could be written")
        view = view[written:]
