"""Accuracy evaluation: an LLM judge scores an answer against a reference from 1 to 10, once per
iteration, and the mean decides.

>>> from agenteval_otel.judge import JudgeSettings
>>> AccuracyCheck(JudgeClient(JudgeSettings()), num_iterations=3).evaluate(
...     "What is the capital of France?", "Paris", generated_output="Paris.")
Traceback (most recent call last):
...
agenteval_otel.errors.JudgeNotConfiguredError: accuracy evaluation, iteration 1 of 3: the LLM judge did not run: ...
"""

from __future__ import annotations

import statistics
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field

from agenteval_otel.errors import ConfigError, JudgeError, JudgeNotConfiguredError
from agenteval_otel.evaluation import Agent, AgentCaller, AgentTurn, default_judge, reply_text, run_sync
from agenteval_otel.judge import DATA_RULE, JudgeClient, data_block

__all__ = ["AccuracyEvaluationResult", "AccuracyCheck", "EvaluationScore"]

TASK = (
    "You judge how accurately an AI agent answered a user's query, against the expected output. "
    "Give a score from 1 to 10: 10 when the answer is correct and complete and means what the "
    "expected output says (wording may differ), 1 when it is wrong, unrelated or empty, and in "
    "between for partly correct answers. Set is_met to true only when the answer meets the core "
    "requirements and spirit of the expected output. In reasoning, explain step by step why you "
    "gave the score, referring to the query, the expected output and the guidelines. In critique, "
    "say how the answer could be improved (or that no improvement is needed)."
)


class EvaluationScore(BaseModel):
    """One judgment of a response by the LLM judge."""

    model_config = ConfigDict(from_attributes=True, extra="forbid")

    score: float = Field(ge=1, le=10)
    """Quality and accuracy of the response against the expected output, from 1 to 10."""
    reasoning: str
    """The judge's step-by-step reasoning for the score."""
    is_met: bool
    """Whether the response meets the core requirements of the expected output."""
    critique: str
    """Actionable feedback on how the response could have been better."""


class AccuracyEvaluationResult(BaseModel):
    """The judgments of every iteration, their average, and whether it reaches ``threshold``."""

    model_config = ConfigDict(from_attributes=True, extra="forbid")

    evaluation_scores: list[EvaluationScore]
    average_score: float
    user_query: str
    expected_output: str
    generated_output: str
    threshold: float = Field(default=7.0, ge=1, le=10)
    """The lowest average score (1–10) that passes."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """Whether the average score reaches the threshold."""
        return self.average_score >= self.threshold

    @property
    def summary(self) -> str:
        """One line: the verdict, the average, the threshold and the iteration count."""
        verdict = "passed" if self.passed else "failed"
        return (
            f"accuracy {verdict}: average score {self.average_score:.2f} "
            f"(threshold {self.threshold:.2f}) over {len(self.evaluation_scores)} iteration(s) "
            f"for query {self.user_query!r}"
        )

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` with the summary and the judge's critiques if not passed."""
        __tracebackhide__ = True  # pytest shows the caller's line, not this one
        if not self.passed:
            critiques = [f"  - {s.score:g}/10: {s.critique}" for s in self.evaluation_scores]
            raise AssertionError("\n".join([self.summary, *critiques]))


class AccuracyCheck:
    """Scores an agent's answers (or a given answer) against an expected output with the LLM judge.

    ``judge``: the client to ask (``None``: the one the environment configures). Each of the
    ``num_iterations`` iterations runs the agent (when one is given) and asks the judge for an
    :class:`EvaluationScore`; the result passes when the mean score reaches ``threshold`` (1–10).
    ``guidelines`` are extra instructions for the judge (what matters, what to ignore).

    A judge that is not configured, fails or gives an answer that cannot be read (a score outside
    1–10 included) raises its :class:`~agenteval_otel.errors.JudgeError`, naming the iteration;
    an agent that raises propagates its own exception.
    """

    def __init__(self, judge: JudgeClient | None = None, *, num_iterations: int = 1, threshold: float = 7.0,
                 guidelines: str = "") -> None:
        if num_iterations < 1:
            raise ConfigError(f"num_iterations must be at least 1, got {num_iterations!r}")
        if not 1 <= threshold <= 10:
            raise ConfigError(f"threshold is an average score from 1 to 10, got {threshold!r}")
        self.judge = judge if judge is not None else default_judge()
        self.num_iterations = num_iterations
        self.threshold = threshold
        self.guidelines = guidelines

    def messages(self, query: str, expected_output: str, answer: str) -> list[dict[str, Any]]:
        """The chat messages one judgment asks: the task, the guidelines and the data rule as the
        system message; the query, the expected output and the answer as delimited data."""
        system = TASK
        if self.guidelines.strip():
            system += f"\n\nGuidelines from the evaluator:\n{self.guidelines.strip()}"
        data = "\n\n".join((data_block("user_input", query), data_block("expected_response", expected_output),
                             data_block("agent_response", answer)))
        return [{"role": "system", "content": f"{system}\n\n{DATA_RULE}"}, {"role": "user", "content": data}]

    async def aevaluate(self, query: str, expected_output: str, *, agent: Agent | None = None,
                        generated_output: str | None = None) -> AccuracyEvaluationResult:
        """Judge ``num_iterations`` answers: the agent's (a sync or async callable taking the
        query, or an object with ``run``/``arun``), run once per iteration, or ``generated_output``."""
        if (agent is None) == (generated_output is None):
            raise ConfigError("give either an agent to run or a generated_output to judge, not both or neither")
        caller = AgentCaller(agent) if agent is not None else None
        scores: list[EvaluationScore] = []
        answer = generated_output or ""
        for iteration in range(self.num_iterations):
            if caller is not None:
                turn = AgentTurn(user_input=query, thread_id=f"accuracy-{uuid.uuid4().hex}", turn_index=iteration)
                answer = reply_text(await caller(turn)) or ""
            try:
                if self.judge is None:
                    raise JudgeNotConfiguredError(
                        "the LLM judge did not run: no LLM judge is configured (set AGENTEVAL_JUDGE_BASE_URL to "
                        "an OpenAI-compatible endpoint, or OPENAI_API_KEY for OpenAI)")
                score = await self.judge.ajudge(self.messages(query, expected_output, answer), EvaluationScore,
                                                sample=iteration)
            except JudgeError as exc:
                raise type(exc)(f"accuracy evaluation, iteration {iteration + 1} of {self.num_iterations}: "
                                f"{exc}") from exc
            scores.append(score)
        return AccuracyEvaluationResult(
            evaluation_scores=scores, average_score=statistics.fmean(s.score for s in scores), user_query=query,
            expected_output=expected_output, generated_output=answer, threshold=self.threshold)

    def evaluate(self, query: str, expected_output: str, *, agent: Agent | None = None,
                 generated_output: str | None = None) -> AccuracyEvaluationResult:
        """:meth:`aevaluate` from synchronous code (``await aevaluate`` inside an event loop)."""
        return run_sync(self.aevaluate(query, expected_output, agent=agent, generated_output=generated_output),
                        "AccuracyCheck.aevaluate")
