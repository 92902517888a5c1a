"""``rubric_based``: the LLM judge scores each ``Rubric`` of the config on its ``scoring_guide``
scale (``"5=Very helpful, 1=Not helpful"`` is 1..5; a guide naming no scale is 0..1); each score
is normalised to [0, 1] and the rubrics combined by ``weight``. Reference-free. The details hold
each rubric's raw and normalised score, scale, weight and reason."""

from __future__ import annotations

import re
import statistics
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._judged import (
    JUDGED_CRITERIA,
    judge_messages,
    judge_of,
    on_scale,
    sampled,
    spread,
)
from agenteval_otel.criteria._registry import Score, criterion
from agenteval_otel.errors import ConfigError, JudgeOutputError

if TYPE_CHECKING:
    from agenteval_otel.criteria._config import Rubric

__all__ = ["rubric_based", "scale_of"]

_ALIASES, _THRESHOLD = JUDGED_CRITERIA["rubric_based"]
_SCALE_POINT = re.compile(r"(-?\d+(?:\.\d+)?)\s*(?:=|:|-|–)")


class RubricScore(BaseModel):
    name: str
    score: float
    reason: str = ""


class RubricVerdict(BaseModel):
    rubrics: list[RubricScore]


def scale_of(rubric: Rubric) -> tuple[float, float]:
    """The (lowest, highest) score of the rubric's scoring guide; (0, 1) when it names fewer than
    two points.

    >>> from agenteval_otel.criteria._config import Rubric
    >>> scale_of(Rubric(name="h", description="d", scoring_guide="5=Very helpful, 1=Not helpful"))
    (1.0, 5.0)
    """
    points = {float(p) for p in _SCALE_POINT.findall(rubric.scoring_guide)}
    return (min(points), max(points)) if len(points) >= 2 else (0.0, 1.0)


def _task(rubrics: list[Rubric]) -> str:
    lines = [f"- {r.name}: {r.description} Scale {scale_of(r)[0]:g} to {scale_of(r)[1]:g}: {r.scoring_guide}"
             for r in rubrics]
    return ("You grade an AI agent's response against each rubric below, on the rubric's own scale. "
            "Give one entry per rubric, named exactly as listed, with its score and a one-sentence "
            "reason.\nRubrics:\n" + "\n".join(lines))


def _per_rubric(rubrics: list[Rubric], verdict: RubricVerdict) -> list[tuple[float, float, bool, str]]:
    """Per rubric, in config order: (raw score, normalised score, clamped, reason)."""
    given = {r.name.strip().casefold(): r for r in verdict.rubrics}
    out = []
    for rubric in rubrics:
        answer = given.get(rubric.name.strip().casefold())
        if answer is None:
            raise JudgeOutputError(f"the LLM judge gave no usable verdict: its answer gives no score for "
                                   f"rubric {rubric.name!r}")
        low, high = scale_of(rubric)
        normalised, clamped = on_scale(answer.score, low, high, f"rubric {rubric.name!r} score")
        out.append((answer.score, normalised, clamped, answer.reason))
    return out


@criterion("rubric_based", aliases=_ALIASES, default_threshold=_THRESHOLD, reference_free=True)
async def rubric_based(ctx: CriterionContext) -> Score:
    """The weighted mean of the rubrics' normalised scores."""
    judge = judge_of(ctx)
    rubrics = list(ctx.config.rubrics)
    if not rubrics:
        raise ConfigError("rubric_based needs at least one rubric in its config ('rubrics')")
    user_input = ctx.actual.user_input or (ctx.expected.user_content.get_text() if ctx.expected else "")
    messages = judge_messages(_task(rubrics), ("user_input", user_input),
                              ("agent_response", ctx.actual.final_response or ""))
    verdicts: list[RubricVerdict] = await sampled(ctx, messages, RubricVerdict)
    samples = [_per_rubric(rubrics, v) for v in verdicts]
    total_weight = sum(r.weight for r in rubrics)
    combined = [sum(r.weight * s[1] for r, s in zip(rubrics, sample)) / total_weight for sample in samples]
    details: list[dict[str, Any]] = []
    for index, rubric in enumerate(rubrics):
        raw = [sample[index][0] for sample in samples]
        details.append({
            "name": rubric.name, "weight": rubric.weight, "scale": list(scale_of(rubric)),
            "score": statistics.fmean(raw), "normalised": statistics.fmean(s[index][1] for s in samples),
            "clamped": any(s[index][2] for s in samples), "reason": samples[0][index][3],
        })
    reason = "; ".join(f"{d['name']} {d['score']:g}/{d['scale'][1]:g}: {d['reason']}" for d in details)
    return Score(statistics.fmean(combined), reason, {
        "judge_model": judge.settings.model_for(ctx.config.judge_model),
        "rubrics": details, "spread": spread(combined)})
