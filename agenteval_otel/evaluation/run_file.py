"""Run files: case results appended as cases finish (the run file is an evaluation sink), so an
interrupted run keeps them and a resumed run skips them.

One JSON object per line: a header naming the eval set and a fingerprint of the config, then
one ``EvalCaseResult`` per finished case. A line cut short by a kill is ignored on resume.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from agenteval_otel.errors import ConfigError
from agenteval_otel.evaluation.config import EvalConfig
from agenteval_otel.evaluation.results import EvalCaseResult

__all__ = ["RunFile", "default_run_file"]

_log = logging.getLogger(__name__)
_FORMAT = 1


def default_run_file(eval_set_id: str, kind: str, folder: str | Path = ".agenteval") -> Path:
    """``.agenteval/<eval set id>.<kind>.jsonl``, the id made safe for a file name."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", eval_set_id).strip("._") or "eval-set"
    return Path(folder) / f"{safe}.{kind}.jsonl"


def config_fingerprint(config: EvalConfig) -> str:
    """A short hash of the config: a run resumes only under the config it started with."""
    text = json.dumps(config.model_dump(mode="json"), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class RunFile:
    """The run file of one eval set under one config."""

    def __init__(self, path: str | Path, eval_set_id: str, config: EvalConfig) -> None:
        self.path = Path(path)
        self.eval_set_id = eval_set_id
        self.fingerprint = config_fingerprint(config)
        self._handle: IO[str] | None = None
        self._lock = threading.Lock()

    def _header(self) -> dict[str, Any]:
        return {"agenteval_run": _FORMAT, "eval_set_id": self.eval_set_id,
                "config": self.fingerprint}

    def _read_done(self) -> dict[str, EvalCaseResult]:
        done: dict[str, EvalCaseResult] = {}
        with self.path.open(encoding="utf-8") as handle:
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
            for number, line in enumerate(handle, start=2):
                if not line.strip():
                    continue
                try:
                    result = EvalCaseResult.model_validate_json(line)
                except ValidationError:
                    _log.warning("%s: line %d is incomplete or unreadable; its case runs again",
                                 self.path, number)
                    continue
                done[result.eval_id] = result
        return done

    def open(self, *, resume: bool) -> dict[str, EvalCaseResult]:
        """Start writing; with ``resume``, first read back the results already there."""
        done: dict[str, EvalCaseResult] = {}
        if resume and self.path.exists():
            done = self._read_done()
            self._handle = self.path.open("a", encoding="utf-8")
            if self.path.stat().st_size and not self.path.read_bytes().endswith(b"\n"):
                self._handle.write("\n")  # end a line cut short, so the next one stands alone
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("w", encoding="utf-8")
            self._handle.write(json.dumps(self._header()) + "\n")
        self._handle.flush()
        return done

    def submit(self, result: EvalCaseResult) -> None:
        """Record one finished case (flushed at once); an evaluation sink."""
        line = result.model_dump_json() + "\n"
        with self._lock:
            if self._handle is None:
                raise RuntimeError(f"{self.path}: the run file is not open")
            self._handle.write(line)
            self._handle.flush()

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
