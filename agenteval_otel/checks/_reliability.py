"""Reliability evaluation: were the expected tools called, as often, with the arguments and in
the order expected, and nothing else?

>>> from agenteval_otel.evaluation import ToolCall
>>> evaluator = ReliabilityCheck(["search", ExpectedToolCall(name="delete", times=0)])
>>> evaluator.evaluate([ToolCall(name="search"), ToolCall(name="delete")]).summary
'Reliability check failed: delete: called 1 time(s), expected never'
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agenteval_otel.criteria import ArgMatch, args_diff
from agenteval_otel.evalsets import ToolCall
from agenteval_otel.evaluation import Agent, AgentCaller, AgentTurn, capture_for, run_sync
from agenteval_otel.trajectory import Trajectory

__all__ = ["ExpectedToolCall", "ReliabilityEvaluationResult", "ReliabilityCheck", "ToolCallCheck"]

PASSED = "All reliability checks passed."
NOT_CALLED = "not called"


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


class ExpectedToolCall(BaseModel):
    """A tool call the agent is expected to make (or, with ``times=0``, never to make)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    args: dict[str, Any] | None = None
    """Arguments some call must have (compared under the evaluator's ``arg_match``); ``None``: any."""
    times: int | None = Field(default=None, ge=0)
    """How many calls (with ``args``, when given) there must be; ``0``: never; ``None``: at least one."""

    @property
    def label(self) -> str:
        """The tool's name, with the expected arguments when there are some."""
        if self.args is None:
            return self.name
        return f"{self.name}({json.dumps(self.args, sort_keys=True, ensure_ascii=False, default=str)})"


_EXPECTATIONS: TypeAdapter[list[str | ExpectedToolCall]] = TypeAdapter(list[str | ExpectedToolCall])


class ReliabilityCheck:
    """Checks the tool calls of one run against expectations.

    ``expected_tool_calls``: tool names, :class:`ExpectedToolCall` s or their dicts. Each
    expectation becomes a :class:`ToolCallCheck`: the tool was called (at least once, or exactly
    ``times``; never for ``times=0``), and some call has the expected ``args`` under ``arg_match``
    (``"exact"`` by default, ``"subset"`` to allow more arguments, or an :class:`ArgMatch`). With
    ``order_matters``, the expected calls must happen in the given order (others may come in
    between); with ``exact_match``, a tool that no expectation names is an unexpected call:
    ``ReliabilityCheck([], exact_match=True)`` expects no tool call at all.
    """

    def __init__(self, expected_tool_calls: Sequence[str | ExpectedToolCall | Mapping[str, Any]], *,
                 order_matters: bool = False, exact_match: bool = False,
                 arg_match: ArgMatch | str = "exact") -> None:
        parsed = _EXPECTATIONS.validate_python(list(expected_tool_calls))
        self.expectations = [e if isinstance(e, ExpectedToolCall) else ExpectedToolCall(name=e) for e in parsed]
        self.order_matters = order_matters
        self.exact_match = exact_match
        self.arg_match = ArgMatch.model_validate(arg_match)

    def evaluate(self, run: Trajectory | Sequence[ToolCall]) -> ReliabilityEvaluationResult:
        """Check the tool calls of ``run``: a trajectory, or its tool calls."""
        calls = run.tool_calls() if isinstance(run, Trajectory) else list(run)
        actual = [call.name for call in calls]
        distinct = [e for i, e in enumerate(self.expectations) if e not in self.expectations[:i]]
        checks = [self._check(expected, calls) for expected in distinct]
        wanted = [e for e in self.expectations if e.times != 0]
        expected_names = list(dict.fromkeys(e.name for e in wanted))
        missing = [name for name in expected_names if name not in actual]
        named = {e.name for e in self.expectations}
        unexpected = list(dict.fromkeys(n for n in actual if n not in named)) if self.exact_match else []
        problems = [f"missing tool calls: {', '.join(missing)}"] if missing else []
        problems += [f"{expected.label}: {check.reason}" for expected, check in zip(distinct, checks)
                     if not check.ok and check.reason != NOT_CALLED]  # the not called are the missing
        if self.order_matters and not missing and not self._in_order(wanted, calls):
            problems.append(f"tools called out of order: expected {' → '.join(e.label for e in wanted)}, "
                            f"got {' → '.join(actual)}")
        if unexpected:
            problems.append(f"unexpected tool calls: {', '.join(unexpected)}")
        return ReliabilityEvaluationResult(
            passed=not problems, summary=f"Reliability check failed: {'; '.join(problems)}" if problems else PASSED,
            expected_tool_calls=[e.name for e in wanted], actual_tool_calls=actual, checks=checks,
            missing_tool_calls=missing, unexpected_tool_calls=unexpected)

    async def arun(self, agent: Agent, query: str) -> ReliabilityEvaluationResult:
        """Run ``agent`` on ``query`` as a captured trace, and check the tool calls it made.

        The agent is called as in :func:`~agenteval_otel.evaluation.evaluate` (a sync or async
        callable, or an object with ``run``/``arun``); its tools are the steps traced inside the
        run (``@tool``, instrumented libraries). An agent that raises propagates its exception."""
        turn = AgentTurn(user_input=query, thread_id=f"reliability-{uuid.uuid4().hex}")
        trajectory, _ = await capture_for().run_turn(AgentCaller(agent), turn, eval_set_id="reliability")
        return self.evaluate(trajectory)

    def run(self, agent: Agent, query: str) -> ReliabilityEvaluationResult:
        """:meth:`arun` from synchronous code (``await arun`` inside an event loop)."""
        return run_sync(self.arun(agent, query), "ReliabilityCheck.arun")

    def _matches(self, expected: ExpectedToolCall, call: ToolCall) -> bool:
        return call.name == expected.name and (
            expected.args is None or not args_diff(expected.args, call.args, self.arg_match, expected.name))

    def _check(self, expected: ExpectedToolCall, calls: Sequence[ToolCall]) -> ToolCallCheck:
        of_tool = [call for call in calls if call.name == expected.name]
        matching = [call for call in of_tool if self._matches(expected, call)]
        with_args = " with the expected arguments" if expected.args is not None else ""
        reason = ""
        if expected.times == 0:
            if matching:
                reason = f"called {len(matching)} time(s){with_args}, expected never"
        elif not of_tool:
            reason = NOT_CALLED
        elif expected.args is not None and not matching:
            closest = min((args_diff(expected.args, c.args, self.arg_match, expected.name) for c in of_tool), key=len)
            reason = f"no call with the expected arguments ({'; '.join(closest)})"
        elif expected.times is not None and len(matching) != expected.times:
            reason = f"called {len(matching)} time(s){with_args}, expected {expected.times}"
        return ToolCallCheck(tool_name=expected.name, was_called=bool(of_tool), times_called=len(of_tool),
                             passed=not reason, reason=reason)

    def _in_order(self, wanted: Sequence[ExpectedToolCall], calls: Sequence[ToolCall]) -> bool:
        """Whether ``wanted`` happen as a subsequence of ``calls``."""
        remaining = iter(calls)
        return all(any(self._matches(expected, call) for call in remaining) for expected in wanted)
