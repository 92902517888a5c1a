"""The criteria an LLM judges: registered by name so configs naming them are valid, scored
only when a judge is configured. Without one they give an error result, never a score."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenteval_otel.evaluation.config import CriterionConfig
from agenteval_otel.evaluation.criteria.registry import criterion
from agenteval_otel.evaluation.models import Invocation

if TYPE_CHECKING:
    from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["JUDGED_CRITERIA", "JudgeNotConfiguredError"]

JUDGED_CRITERIA = ("llm_judge", "rubric_based", "hallucination", "safety", "factual_accuracy")


class JudgeNotConfiguredError(RuntimeError):
    """An LLM-judged criterion was asked for, but no judge is configured."""


def _needs_judge(name: str):  # type: ignore[no-untyped-def]
    def judged(expected: Invocation, actual: Trajectory, config: CriterionConfig) -> float:
        raise JudgeNotConfiguredError(
            f"no LLM judge is configured: {name!r} needs a judge model "
            f"({config.judge_model}) behind an OpenAI-compatible endpoint"
        )

    judged.__name__ = name
    return judged


for _name in JUDGED_CRITERIA:
    criterion(_name)(_needs_judge(_name))
