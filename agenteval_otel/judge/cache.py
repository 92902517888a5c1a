"""An on-disk cache of judge answers, so a rerun of the same judgements costs nothing.

The key is the SHA-256 of the request that matters to the answer (model, messages, parameters,
expected shape); the value is the answer's text, stored as JSON (never pickled). An unreadable
entry is a miss, never an error.

>>> import tempfile
>>> cache = JudgeCache(tempfile.mkdtemp())
>>> key = cache.key({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
>>> cache.get(key) is None
True
>>> cache.put(key, {"text": '{"score": 1}'})
>>> cache.get(key)
{'text': '{"score": 1}'}
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["JudgeCache"]

_log = logging.getLogger(__name__)


class JudgeCache:
    """Answers under ``directory``, one JSON file per key (``ab/abcdef....json``)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    @staticmethod
    def key(request: dict[str, Any]) -> str:
        """The SHA-256 of ``request`` as canonical JSON."""
        canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or ``None`` (absent or unreadable)."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            _log.warning("judge cache entry %s is unreadable; asking the judge again", path)
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store ``entry`` (atomically: a reader sees the old file or the new one). A failure to
        write is logged, never raised."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False,
                                             suffix=".tmp") as handle:
                json.dump(entry, handle, ensure_ascii=False)
            os.replace(handle.name, path)
        except OSError as exc:
            _log.warning("could not write the judge cache entry %s: %s", path, exc)
