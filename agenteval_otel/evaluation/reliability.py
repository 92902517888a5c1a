"""Reliability evaluation results: were the expected tools called, as often and as ordered?"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ReliabilityEvaluationResult", "ToolCallCheck"]


class ToolCallCheck(BaseModel):
    """The check of one expected tool."""

    model_config = ConfigDict(from_attributes=True, extra="forbid")

    tool_name: str
    was_called: bool
    times_called: int = Field(ge=0)
    passed: bool | None = None
    """Whether this check passed; ``None`` means "passed if called"."""
    reason: str = ""
    """What went wrong (wrong arguments, wrong count, called when forbidden)."""

    @property
    def ok(self) -> bool:
        """Whether this check passed."""
        return self.was_called if self.passed is None else self.passed


class ReliabilityEvaluationResult(BaseModel):
    """The overall verdict of a reliability evaluation and its per-tool checks."""

    model_config = ConfigDict(from_attributes=True, extra="forbid")

    passed: bool
    summary: str
    expected_tool_calls: list[str]
    actual_tool_calls: list[str]
    checks: list[ToolCallCheck]
    missing_tool_calls: list[str]
    unexpected_tool_calls: list[str]

    def assert_passed(self) -> None:
        """Raise ``AssertionError`` whose message is the summary if the evaluation failed."""
        __tracebackhide__ = True  # pytest shows the caller's line, not this one
        if not self.passed:
            raise AssertionError(self.summary)
