"""``llm_judge``: does the agent's final response mean what the expected response says? Scored
in [0, 1] by the LLM judge (mean over ``num_samples``); a turn with no expected response is not
scored; an empty agent response is judged like any other."""

from __future__ import annotations

from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._judged import JUDGED_CRITERIA, against_reference
from agenteval_otel.criteria._registry import Score, criterion

__all__ = ["llm_judge"]

TASK = (
    "You judge whether an AI agent's response means the same as the expected response to the "
    "user's input. Score 1 when it conveys the same facts and answer (wording may differ), 0 when "
    "it contradicts or misses them, and in between for partial matches. An empty response "
    "matches nothing. Give the score as a number from 0 to 1 and a one-sentence reason."
)
_ALIASES, _THRESHOLD = JUDGED_CRITERIA["llm_judge"]


@criterion("llm_judge", aliases=_ALIASES, default_threshold=_THRESHOLD)
async def llm_judge(ctx: CriterionContext) -> Score | None:
    """The judge's semantic match of the actual to the expected final response."""
    return await against_reference(ctx, TASK)
