"""Accuracy evaluation results: an LLM judge's 1–10 scores of an answer against a reference."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, computed_field

__all__ = ["AccuracyEvaluationResult", "EvaluationScore"]


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
