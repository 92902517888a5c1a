"""A grader's response parser: the grader's reply (text) in, metric scores (name → number) out.

The default reads the first JSON object in the reply (the whole reply, a code fence, or an
object in prose: :func:`~agenteval_otel.judge.output.json_candidates`). Your own is a function
``(response: str) -> dict`` named ``package.module:function``, ``package.module.function`` or
``path/to/file.py:function``. Whatever it returns must be a dict of metric name → number.

>>> metric_scores(parse_json_response('Scores: {"groundedness": 1.0, "professionalism": 0.75}'))
{'groundedness': 1.0, 'professionalism': 0.75}
>>> metric_scores({"groundedness": "high"})
Traceback (most recent call last):
...
agenteval_otel.errors.JudgeOutputError: the grader's reply gave no usable scores: metric 'groundedness': expected a number, got 'high'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from agenteval_otel.errors import GraderError, JudgeOutputError
from agenteval_otel.judge.output import json_candidates
from agenteval_otel.loading import load_object

__all__ = ["ResponseParser", "load_parser", "metric_scores", "parse_json_response", "parser_name"]

ResponseParser = Callable[[str], Any]
_PREVIEW = 200


def parse_json_response(response: str) -> dict[str, Any]:
    """The first JSON object in ``response``; ``JudgeOutputError`` when there is none."""
    for candidate in json_candidates(response):
        if isinstance(candidate, dict):
            return candidate
    preview = " ".join(response.split())
    preview = preview if len(preview) <= _PREVIEW else preview[:_PREVIEW] + "…"
    raise JudgeOutputError(f"the grader's reply gave no usable scores: no JSON object in it: {preview!r}")


def metric_scores(value: Any) -> dict[str, float]:
    """``value`` as metric name → score; ``JudgeOutputError`` naming the metric and what was
    expected when it is not a dict of finite numbers."""
    problem = "the grader's reply gave no usable scores"
    if not isinstance(value, dict):
        raise JudgeOutputError(f"{problem}: expected a dict of metric name → number, got {type(value).__name__}")
    if not value:
        raise JudgeOutputError(f"{problem}: no metric in it")
    scores: dict[str, float] = {}
    for name, score in value.items():
        if not isinstance(name, str):
            raise JudgeOutputError(f"{problem}: metric names are strings, got {name!r}")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise JudgeOutputError(f"{problem}: metric {name!r}: expected a number, got {score!r}")
        scores[name] = float(score)
    return scores


def parser_name(parser: ResponseParser) -> str:
    """How ``parser`` is named in errors."""
    module = getattr(parser, "__module__", None) or ""
    name = getattr(parser, "__qualname__", None) or type(parser).__name__
    return f"{module}:{name}" if module else name


def load_parser(spec: str) -> ResponseParser:
    """The function named by ``package.module:function``, ``package.module.function`` or
    ``path/to/file.py:function``; ``GraderError`` when it cannot be found or is not callable."""
    label = f"grader response parser {spec!r}"
    parser = load_object(spec, label, prefix="agenteval_grader_", error=GraderError, dotted=True)
    if not callable(parser):
        raise GraderError(f"{label}: is not a function (got {type(parser).__name__})")
    return parser  # type: ignore[no-any-return]
