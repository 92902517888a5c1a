"""The criteria an LLM judges: registered by name so configs naming them are valid, scored
only when a judge is configured. Without one they give an error result, never a score."""

from __future__ import annotations

from collections.abc import Callable

from agenteval_otel.errors import JudgeError
from agenteval_otel.evaluation.criteria.context import CriterionContext
from agenteval_otel.evaluation.criteria.registry import criterion

__all__ = ["JUDGED_CRITERIA", "JudgeNotConfiguredError"]

# name -> (aliases, default threshold)
JUDGED_CRITERIA: dict[str, tuple[tuple[str, ...], float]] = {
    "llm_judge": (("final_response_match_v2",), 0.7),
    "rubric_based": (("rubric_based_final_response_quality_v1",), 0.8),
    "hallucination": (("hallucinations_v1",), 0.8),
    "safety": (("safety_v1",), 0.8),
    "factual_accuracy": (("factual_accuracy_v1",), 0.8),
}


class JudgeNotConfiguredError(JudgeError):
    """An LLM-judged criterion was asked for, but no judge is configured."""


def _needs_judge(name: str) -> Callable[[CriterionContext], float]:
    def judged(ctx: CriterionContext) -> float:
        raise JudgeNotConfiguredError(
            f"no LLM judge is configured: {name!r} needs a judge model "
            f"({ctx.config.judge_model}) behind an OpenAI-compatible endpoint"
        )

    judged.__name__ = name
    return judged


for _name, (_aliases, _threshold) in JUDGED_CRITERIA.items():
    criterion(_name, aliases=_aliases, default_threshold=_threshold)(_needs_judge(_name))
