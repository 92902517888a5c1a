"""Reading a judge's answer into the expected shape (a pydantic model).

Tried in order: the whole answer as JSON; JSON inside a code fence; the first JSON object in
prose (at most the first 64 of them; none after one nested past the interpreter's recursion
limit). Each candidate is validated against the shape. When none fits and the shape is a
score with a reason, an explicit ``score: 0.8`` (or ``score of 0.8``, ``score = 0.8``) in prose is
taken, with the prose as the reason; a bare number elsewhere in prose is not. Nothing is ever
evaluated as code. What cannot be read raises ``JudgeOutputError`` quoting the answer's start.

>>> from pydantic import BaseModel
>>> class Verdict(BaseModel):
...     score: float
...     reason: str = ""
>>> parse_reply('Sure!\\n```json\\n{"score": 0.9, "reason": "same meaning"}\\n```', Verdict).score
0.9
>>> parse_reply("Both say it is sunny. Score: 1.0", Verdict).score
1.0
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agenteval_otel.errors import JudgeOutputError

__all__ = ["json_candidates", "parse_reply"]

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:[A-Za-z0-9_-]+)?\s*\n?(.*?)```", re.DOTALL)
_PROSE_SCORE = re.compile(r"\bscore\b\s*(?:is|of|=|:)?\s*(?:is|of|=|:)?\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_PREVIEW = 200
_MAX_OBJECT_STARTS = 64


def json_candidates(text: str) -> Iterator[Any]:
    """The JSON values ``text`` may hold, most likely first: the whole text, each fenced block,
    then each object starting at one of the first ``{`` in the text. JSON nested too deep to
    decode is no candidate.

    >>> list(json_candidates('[' * 100_000))
    []
    """
    decoder = json.JSONDecoder()
    stripped = text.strip()
    try:
        yield json.loads(stripped)
    except (ValueError, RecursionError):
        pass
    for block in _FENCE.findall(text):
        try:
            yield json.loads(block.strip())
        except (ValueError, RecursionError):
            continue
    start = text.find("{")
    for _ in range(_MAX_OBJECT_STARTS):
        if start == -1:
            return
        try:
            value, _end = decoder.raw_decode(text, start)
        except ValueError:
            pass
        except RecursionError:  # the objects inside it start deeper still
            return
        else:
            yield value
        start = text.find("{", start + 1)


def _preview(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= _PREVIEW else one_line[:_PREVIEW] + "…"


def parse_reply(text: str, shape: type[T]) -> T:
    """``text`` read as ``shape``; ``JudgeOutputError`` when no reading fits."""
    problem = "no JSON object in it"
    for candidate in json_candidates(text):
        try:
            return shape.model_validate(candidate)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(answer)"
            problem = f"{where}: {first['msg']}"
    fields = shape.model_fields
    if "score" in fields and all(f.is_required() is False for n, f in fields.items() if n != "score"):
        found = _PROSE_SCORE.findall(text)
        if len(set(found)) == 1:
            data: dict[str, Any] = {"score": float(found[0])}
            if "reason" in fields:
                data["reason"] = " ".join(text.split())
            try:
                return shape.model_validate(data)
            except ValidationError:
                pass
    raise JudgeOutputError(f"the LLM judge gave no usable verdict: its answer could not be read ({problem}): "
                           f"{_preview(text)!r}")
