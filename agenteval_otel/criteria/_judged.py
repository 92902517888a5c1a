"""What the LLM-judged criteria share: the judge from the context, the prompt's shape (the task
as the system message, the agent's words as delimited data), samples and their spread, and the
check that a score is on its scale.

Without a judge (``ctx.judge`` is ``None``) a judged criterion raises
:class:`~agenteval_otel.errors.JudgeNotConfiguredError`, so its result has ``error`` set, never a
made-up score. A score a little outside its scale (by up to 5% of it) is clamped and the clamping
reported in the details; further out it is an error: the judge did not use the scale it was given.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._registry import Score
from agenteval_otel.errors import JudgeNotConfiguredError, JudgeOutputError
from agenteval_otel.judge import DATA_RULE, JudgeClient, data_block
from agenteval_otel.trajectory.steps import StepType

__all__ = [
    "against_reference",
    "JUDGED_CRITERIA",
    "JudgeNotConfiguredError",
    "ScoreVerdict",
    "judge_messages",
    "judge_of",
    "on_scale",
    "sampled",
    "scored",
    "tool_calls_block",
]

# name -> (aliases, default threshold)
JUDGED_CRITERIA: dict[str, tuple[tuple[str, ...], float]] = {
    "llm_judge": (("final_response_match_v2",), 0.7),
    "rubric_based": (("rubric_based_final_response_quality_v1",), 0.8),
    "hallucination": (("hallucinations_v1",), 0.8),
    "safety": (("safety_v1",), 0.8),
    "factual_accuracy": (("factual_accuracy_v1",), 0.8),
}
SCALE_SLACK = 0.05


class ScoreVerdict(BaseModel):
    """A judge's score with its reason."""

    score: float
    reason: str = ""


def judge_of(ctx: CriterionContext) -> JudgeClient:
    """The judge in the context; ``JudgeNotConfiguredError`` when there is none."""
    if ctx.judge is None:
        raise JudgeNotConfiguredError(
            "the LLM judge did not run: no LLM judge is configured (set AGENTEVAL_JUDGE_BASE_URL to an "
            f"OpenAI-compatible endpoint, or OPENAI_API_KEY for OpenAI; model {ctx.config.judge_model})")
    judge: JudgeClient = ctx.judge
    return judge


def judge_messages(task: str, *blocks: tuple[str, Any]) -> list[dict[str, Any]]:
    """The chat messages of a judgement: ``task`` and the data rule as the system message, each
    ``(tag, value)`` block as delimited data in the user message."""
    return [{"role": "system", "content": f"{task}\n\n{DATA_RULE}"},
            {"role": "user", "content": "\n\n".join(data_block(tag, value) for tag, value in blocks)}]


def tool_calls_block(ctx: CriterionContext) -> list[dict[str, Any]]:
    """The turn's tool calls with their arguments, results and errors, as the judge sees them."""
    return [{"tool": step.name, "arguments": step.args, "result": step.result,
             **({"error": step.error} if step.error else {})}
            for step in ctx.actual.steps if step.step_type is StepType.TOOL]


def on_scale(value: float, low: float, high: float, what: str) -> tuple[float, bool]:
    """``value`` normalised from [low, high] to [0, 1], and whether it had to be clamped;
    ``JudgeOutputError`` when it is further outside the scale than the slack allows."""
    width = high - low
    if not (low - SCALE_SLACK * width <= value <= high + SCALE_SLACK * width):
        raise JudgeOutputError(f"the LLM judge gave no usable verdict: its {what} {value:g} is outside "
                               f"[{low:g}, {high:g}]")
    clamped = min(high, max(low, value))
    return (clamped - low) / width, clamped != value


async def sampled(ctx: CriterionContext, messages: list[dict[str, Any]], shape: type[Any]) -> list[Any]:
    """``config.num_samples`` answers of ``shape`` from the judge, with the criterion's model."""
    return await judge_of(ctx).asample(messages, shape, n=ctx.config.num_samples, model=ctx.config.judge_model)


def spread(scores: Sequence[float]) -> dict[str, float]:
    """Mean, min, max and standard deviation of sample scores."""
    return {"mean": statistics.fmean(scores), "min": min(scores), "max": max(scores),
            "stdev": statistics.pstdev(scores)}


def scored(ctx: CriterionContext, samples: Sequence[tuple[float, str]], *, low: float = 0.0,
           high: float = 1.0, details: dict[str, Any] | None = None) -> Score:
    """The mean of the samples' scores on [low, high] normalised to [0, 1], the first sample's
    reason, and details: the judge model, each sample, the spread and any clamping."""
    normalised, clamped = [], []
    for index, (value, _) in enumerate(samples):
        score, was_clamped = on_scale(value, low, high, "score")
        normalised.append(score)
        if was_clamped:
            clamped.append({"sample": index, "answered": value, "clamped_to": min(high, max(low, value))})
    extra: dict[str, Any] = {
        "judge_model": judge_of(ctx).settings.model_for(ctx.config.judge_model),
        "samples": [{"score": s, "reason": r} for s, r in samples],
        "spread": spread(normalised),
        **(details or {}),
    }
    if clamped:
        extra["clamped"] = clamped
    reason = samples[0][1] if samples else ""
    if clamped:
        reason = f"{reason} (score clamped to [{low:g}, {high:g}])".strip()
    return Score(statistics.fmean(normalised), reason, extra)


async def against_reference(ctx: CriterionContext, task: str, *, with_tool_calls: bool = False) -> Score | None:
    """The judge's score of the final response against the expected one (and the turn's tool
    calls when ``with_tool_calls``); ``None`` for a turn with no expected response."""
    judge_of(ctx)
    if ctx.expected is None or ctx.expected.expected_final_response is None:
        return None
    blocks: list[tuple[str, Any]] = [
        ("user_input", ctx.actual.user_input or ctx.expected.user_content.get_text()),
        ("expected_response", ctx.expected.expected_final_response.get_text()),
    ]
    if with_tool_calls:
        blocks.append(("tool_calls", tool_calls_block(ctx)))
    blocks.append(("agent_response", ctx.actual.final_response or ""))
    verdicts: list[ScoreVerdict] = await sampled(ctx, judge_messages(task, *blocks), ScoreVerdict)
    return scored(ctx, [(v.score, v.reason) for v in verdicts])
