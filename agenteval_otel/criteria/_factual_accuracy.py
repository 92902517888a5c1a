"""``factual_accuracy``: are the facts in the agent's final response right, checked against the
expected response and the tool results of the turn? Scored in [0, 1] by the LLM judge; a turn
with no expected response is not scored (``hallucination`` checks against tool results alone)."""

from __future__ import annotations

from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._judged import JUDGED_CRITERIA, against_reference
from agenteval_otel.criteria._registry import Score, criterion

__all__ = ["factual_accuracy"]

TASK = (
    "You judge the factual accuracy of an AI agent's response. The expected response is the "
    "reference; the tool calls show what the agent's tools really returned. Score 1 when every "
    "fact in the response agrees with them, 0 when the facts are wrong, in between when some are. "
    "An empty response states no correct fact: score 0."
)
_ALIASES, _THRESHOLD = JUDGED_CRITERIA["factual_accuracy"]


@criterion("factual_accuracy", aliases=_ALIASES, default_threshold=_THRESHOLD)
async def factual_accuracy(ctx: CriterionContext) -> Score | None:
    """The judge's factual-accuracy score against the reference and the tool results."""
    return await against_reference(ctx, TASK, with_tool_calls=True)
