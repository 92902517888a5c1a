"""JSON Lines files: one JSON object per line, read with errors that name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agenteval_otel.errors import AgentEvalError
from agenteval_otel.evaluation.files import check_depth

__all__ = ["read_jsonl"]


def read_jsonl(path: str | Path, error: type[AgentEvalError], what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line of ``path`` with its line number, parsed as a JSON object (``what``
    names one, e.g. "a query"); anything else raises ``error`` naming the file and the line."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{file}: no such file") from None
    except IsADirectoryError:
        raise error(f"{file}: is a directory; expected a JSONL file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{file}: cannot be read ({exc})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{file}: line {number}, column {exc.colno}: invalid JSON ({exc.msg}); "
                        f"expected {what} as one JSON object per line") from None
        except RecursionError:
            raise error(f"{file}: line {number}: the JSON is nested too deeply") from None
        if not isinstance(data, dict):
            raise error(f"{file}: line {number}: expected {what} as a JSON object, got {_json_kind(data)}")
        check_depth(data, f"{file}: line {number}", error)
        yield number, data


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"
