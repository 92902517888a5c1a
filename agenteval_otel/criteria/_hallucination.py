"""``hallucination``: is every claim in the agent's final response supported by the user's input
and the tool calls and results of the turn? Reference-free. The judge lists the claims and
whether each is supported; the score is the share supported (1.0 for a response with no claim),
averaged over samples; the claims are in the details."""

from __future__ import annotations

import statistics

from pydantic import BaseModel

from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._judged import (
    JUDGED_CRITERIA,
    judge_messages,
    judge_of,
    sampled,
    spread,
    tool_calls_block,
)
from agenteval_otel.criteria._registry import Score, criterion

__all__ = ["hallucination"]

TASK = (
    "You check an AI agent's response for hallucinations. List each factual claim the response "
    "makes and whether it is supported by the user's input or by the tool calls and their results "
    "(the only sources the agent had). Quote the supporting evidence for supported claims. "
    "Greetings, questions and offers of help are not claims."
)
_ALIASES, _THRESHOLD = JUDGED_CRITERIA["hallucination"]


class Claim(BaseModel):
    claim: str
    supported: bool
    evidence: str = ""


class HallucinationVerdict(BaseModel):
    claims: list[Claim]  # required: an answer without it is no verdict (an empty list is "no claim")
    reason: str = ""


def _share_supported(verdict: HallucinationVerdict) -> float:
    if not verdict.claims:
        return 1.0
    return sum(1 for c in verdict.claims if c.supported) / len(verdict.claims)


@criterion("hallucination", aliases=_ALIASES, default_threshold=_THRESHOLD, reference_free=True)
async def hallucination(ctx: CriterionContext) -> Score:
    """The share of the response's claims the tool results (or the input) support."""
    judge = judge_of(ctx)
    user_input = ctx.actual.user_input or (ctx.expected.user_content.get_text() if ctx.expected else "")
    messages = judge_messages(TASK, ("user_input", user_input), ("tool_calls", tool_calls_block(ctx)),
                              ("agent_response", ctx.actual.final_response or ""))
    verdicts: list[HallucinationVerdict] = await sampled(ctx, messages, HallucinationVerdict)
    scores = [_share_supported(v) for v in verdicts]
    first = verdicts[0]
    unsupported = [c.claim for c in first.claims if not c.supported]
    reason = (f"unsupported: {'; '.join(unsupported)}" if unsupported
              else f"{len(first.claims)} claim(s), all supported")
    return Score(statistics.fmean(scores), reason, {
        "judge_model": judge.settings.model_for(ctx.config.judge_model),
        "claims": [c.model_dump() for c in first.claims],
        "samples": [{"score": s, "reason": v.reason} for s, v in zip(scores, verdicts)],
        "spread": spread(scores),
    })
