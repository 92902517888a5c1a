"""Policies: reference-free criteria that hold or not for any invocation, with or without an eval
case (production traces, online evaluation).

Each scores 1.0 when its policy holds and 0.0 when it does not, with a reason naming what broke
it (and evidence rows for the steps that did), takes its parameters from
``CriterionConfig.params`` (validated when the config loads, so a bad one is an error naming the
criterion and the parameter) and has a default threshold of 1.0. Steps are numbered as
``agenteval trajectory`` shows them, from 1.

| criterion | params | holds when |
|---|---|---|
| ``max_tool_calls`` | ``limit`` | at most ``limit`` tool calls |
| ``forbidden_tools`` | ``tools`` | none of ``tools`` is called |
| ``required_tools`` | ``tools`` | each of ``tools`` is called |
| ``required_tool_order`` | ``tools`` | ``tools`` are called in this order (others may come between) |
| ``latency_budget`` | ``max_seconds``, ``per_tool_seconds`` | the run, and each tool call, within budget (``"*"``: any other tool) |
| ``no_tool_errors`` | | no tool call failed |
| ``max_tokens`` | ``limit``, ``input_limit``, ``output_limit`` | the model calls' tokens within the limits |
| ``final_response_present`` | | the agent gave a non-empty final response |

>>> import asyncio
>>> from agenteval_otel.criteria._config import CriterionConfig
>>> from agenteval_otel.criteria._context import CriterionContext
>>> from agenteval_otel.criteria._outcome import run_criterion
>>> from agenteval_otel.trajectory import Trajectory, TrajectoryStep
>>> run = Trajectory(steps=[TrajectoryStep.tool("search"), TrajectoryStep.tool("delete_db")])
>>> ctx = CriterionContext(actual=run, expected=None,
...                        config=CriterionConfig(threshold=1.0, params={"tools": ["delete_db"]}))
>>> asyncio.run(run_criterion("forbidden_tools", ctx)).reason
'forbidden tool delete_db called at step 2'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Optional, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._registry import Score, criterion
from agenteval_otel.results import EvidenceRow
from agenteval_otel.trajectory.messages import ToolCall, describe_call
from agenteval_otel.trajectory.steps import StepType, TrajectoryStep

__all__ = [
    "LatencyBudgetSettings",
    "NoSettings",
    "TokenLimitSettings",
    "ToolCallLimitSettings",
    "ToolListSettings",
    "final_response_present",
    "forbidden_tools",
    "latency_budget",
    "max_tokens",
    "max_tool_calls",
    "no_tool_errors",
    "required_tool_order",
    "required_tools",
]

_MAX_ERROR_TEXT = 160
_MAX_LISTED = 5
F = TypeVar("F", bound=Callable[..., Any])
ANY_TOOL = "*"
"""The key of ``per_tool_seconds`` that budgets every tool not named."""


class NoSettings(BaseModel):
    """A policy that takes no params (any given is an error)."""

    model_config = ConfigDict(extra="forbid")


class ToolCallLimitSettings(BaseModel):
    """``max_tool_calls`` params: the ``limit`` of tool calls per invocation."""

    model_config = ConfigDict(extra="forbid")

    limit: int = Field(ge=0)


class ToolListSettings(BaseModel):
    """``forbidden_tools``, ``required_tools``, ``required_tool_order`` params: the ``tools``
    (names as the trace has them)."""

    model_config = ConfigDict(extra="forbid")

    tools: list[str] = Field(min_length=1)


class LatencyBudgetSettings(BaseModel):
    """``latency_budget`` params: ``max_seconds`` for the whole run and ``per_tool_seconds`` for
    each call of a tool (``"*"``: every tool not named); at least one of them."""

    model_config = ConfigDict(extra="forbid")

    max_seconds: Optional[float] = Field(default=None, gt=0)
    per_tool_seconds: dict[str, Annotated[float, Field(gt=0)]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _some_budget(self) -> LatencyBudgetSettings:
        if self.max_seconds is None and not self.per_tool_seconds:
            raise ValueError("give max_seconds, per_tool_seconds or both")
        return self

    def tool_budget(self, name: str) -> float | None:
        """The budget of one call of tool ``name``, if it has one."""
        return self.per_tool_seconds.get(name, self.per_tool_seconds.get(ANY_TOOL))


class TokenLimitSettings(BaseModel):
    """``max_tokens`` params: ``limit`` on input + output tokens, ``input_limit`` and
    ``output_limit`` on each; at least one of them."""

    model_config = ConfigDict(extra="forbid")

    limit: Optional[int] = Field(default=None, ge=0)
    input_limit: Optional[int] = Field(default=None, ge=0)
    output_limit: Optional[int] = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _some_limit(self) -> TokenLimitSettings:
        if self.limit is None and self.input_limit is None and self.output_limit is None:
            raise ValueError("give limit, input_limit, output_limit or several of them")
        return self


def _policy(name: str, settings: type[BaseModel]) -> Callable[[F], F]:
    """Register a policy: threshold 1.0, its params validated by ``settings``, no reference needed."""
    return criterion(name, default_threshold=1.0, settings=settings, reference_free=True)


def _tool_steps(ctx: CriterionContext) -> list[tuple[int, TrajectoryStep]]:
    """The tool calls, each with its step number (from 1)."""
    return [(number, step) for number, step in enumerate(ctx.actual.steps, start=1)
            if step.step_type is StepType.TOOL]


def _call(step: TrajectoryStep) -> str:
    return describe_call(ToolCall.model_construct(name=step.name, args=step.args, call_id=step.call_id))


def _held(holds: bool, reason: str, evidence: Sequence[EvidenceRow] = (),
          details: dict[str, Any] | None = None) -> Score:
    """1.0 when the policy holds, else 0.0."""
    return Score(1.0 if holds else 0.0, reason, details or {}, evidence)


def _listed(parts: Sequence[str]) -> str:
    """``parts`` joined, the first few only (``and N more``)."""
    shown = "; ".join(parts[:_MAX_LISTED])
    return shown if len(parts) <= _MAX_LISTED else f"{shown}; and {len(parts) - _MAX_LISTED} more"


def _short_error(error: str) -> str:
    """The gist of a step's error: before any traceback, its first line, cut to a readable length."""
    head = error.split("Traceback (most recent call last)", 1)[0].strip() or error.strip()
    line = head.splitlines()[0] if head else ""
    return line if len(line) <= _MAX_ERROR_TEXT else line[: _MAX_ERROR_TEXT - 1] + "…"


def _seconds(value: float) -> str:
    return f"{value:.3g} s"


@_policy("max_tool_calls", ToolCallLimitSettings)
def max_tool_calls(ctx: CriterionContext) -> Score:
    """At most ``limit`` tool calls; the calls past the limit are the evidence."""
    limit = ctx.settings_as(ToolCallLimitSettings).limit
    calls = _tool_steps(ctx)
    count = len(calls)
    if count <= limit:
        return _held(True, f"{count} tool call(s) ≤ limit {limit}", details={"count": count})
    over = [EvidenceRow(status="unexpected", actual=_call(step), note=f"step {number}: call {index} > limit {limit}")
            for index, (number, step) in enumerate(calls, start=1) if index > limit]
    return _held(False, f"{count} tool calls > limit {limit}", over, {"count": count})


@_policy("forbidden_tools", ToolListSettings)
def forbidden_tools(ctx: CriterionContext) -> Score:
    """None of ``tools`` is called; each forbidden call is named with its step."""
    tools = ctx.settings_as(ToolListSettings).tools
    forbidden = set(tools)
    found = [(number, step) for number, step in _tool_steps(ctx) if step.name in forbidden]
    if not found:
        return _held(True, f"no forbidden tool called ({', '.join(tools)})")
    reason = _listed([f"forbidden tool {step.name} called at step {number}" for number, step in found])
    evidence = [EvidenceRow(status="unexpected", actual=_call(step), note=f"step {number}: forbidden")
                for number, step in found]
    return _held(False, reason, evidence, {"called": [step.name for _, step in found]})


@_policy("required_tools", ToolListSettings)
def required_tools(ctx: CriterionContext) -> Score:
    """Each of ``tools`` is called at least once."""
    first: dict[str, tuple[int, TrajectoryStep]] = {}
    for number, step in _tool_steps(ctx):
        first.setdefault(step.name, (number, step))
    required = list(dict.fromkeys(ctx.settings_as(ToolListSettings).tools))
    missing = [name for name in required if name not in first]
    evidence = [
        EvidenceRow(status="match", expected=name, actual=_call(first[name][1]), note=f"step {first[name][0]}")
        if name in first else EvidenceRow(status="missing", expected=name)
        for name in required
    ]
    if not missing:
        return _held(True, f"every required tool called ({', '.join(required)})", evidence)
    noun = "tool" if len(missing) == 1 else "tools"
    return _held(False, f"required {noun} not called: {', '.join(missing)}", evidence, {"missing": missing})


@_policy("required_tool_order", ToolListSettings)
def required_tool_order(ctx: CriterionContext) -> Score:
    """``tools`` are called in this order, other calls allowed between them (each name as
    often as it is listed)."""
    wanted = ctx.settings_as(ToolListSettings).tools
    calls = _tool_steps(ctx)
    order = " → ".join(wanted)
    evidence: list[EvidenceRow] = []
    position = 0
    for index, name in enumerate(wanted):
        found = next((i for i in range(position, len(calls)) if calls[i][1].name == name), None)
        if found is None:
            evidence += [EvidenceRow(status="missing", expected=later) for later in wanted[index:]]
            why = _break(name, wanted, index, calls, position)
            return _held(False, f"required order {order} broken: {why}", evidence, {"broken_at": name})
        number, step = calls[found]
        evidence.append(EvidenceRow(status="match", expected=name, actual=_call(step), note=f"step {number}"))
        position = found + 1
    return _held(True, f"tools called in the required order {order}", evidence)


def _break(name: str, wanted: Sequence[str], index: int, calls: Sequence[tuple[int, TrajectoryStep]],
           position: int) -> str:
    """Why ``name`` (the ``index``-th wanted tool) was not found at or after call ``position``."""
    if index == 0:
        return f"{name} not called"
    previous = f"{wanted[index - 1]} (step {calls[position - 1][0]})"
    earlier = next((number for number, step in calls[:position] if step.name == name), None)
    if earlier is None:
        return f"{name} not called after {previous}"
    return f"{name} called at step {earlier}, not after {previous}"


@_policy("latency_budget", LatencyBudgetSettings)
def latency_budget(ctx: CriterionContext) -> Score | None:
    """The whole run within ``max_seconds`` and each tool call within its ``per_tool_seconds``
    budget. ``ValueError`` when the run's duration is to be checked and was not recorded. A tool
    call with no duration of its own (one read from a model's messages, not from a tool span)
    is not measurable: the per-tool budget does not apply to it, and the reason says so; when
    nothing is left to check, the criterion does not apply (``None``)."""
    budget = ctx.settings_as(LatencyBudgetSettings)
    broken: list[str] = []
    evidence: list[EvidenceRow] = []
    details: dict[str, Any] = {}
    checked = []
    if budget.max_seconds is not None:
        took = ctx.actual.duration_s
        if took is None:
            raise ValueError("latency_budget: the invocation's duration was not recorded (its spans carry no times)")
        details["duration_s"] = took
        checked.append(f"run took {_seconds(took)} ≤ {budget.max_seconds:g} s")
        if took > budget.max_seconds:
            broken.append(f"run took {_seconds(took)} > budget {budget.max_seconds:g} s")
            evidence.append(EvidenceRow(status="mismatch", expected=f"run ≤ {budget.max_seconds:g} s",
                                        actual=f"run {_seconds(took)}"))
    budgeted = [(number, step, limit) for number, step in _tool_steps(ctx)
                if (limit := budget.tool_budget(step.name)) is not None]
    tools = [(number, step, step.duration_ms / 1000, limit) for number, step, limit in budgeted
             if step.duration_ms is not None]
    untimed = [f"{step.name} at step {number}" for number, step, _ in budgeted if step.duration_ms is None]
    if untimed and not tools and budget.max_seconds is None:
        return None  # no tool call has a duration of its own: nothing to check
    for number, step, took, limit in tools:
        if took > limit:
            broken.append(f"{step.name} took {_seconds(took)} at step {number} > budget {limit:g} s")
            evidence.append(EvidenceRow(status="mismatch", expected=f"{step.name} ≤ {limit:g} s",
                                        actual=f"{step.name} {_seconds(took)}", note=f"step {number}"))
    if tools:
        checked.append(f"{len(tools)} tool call(s) within budget")
    if untimed:
        details["untimed_tool_calls"] = untimed
        checked.append(f"per-tool budget not applicable to {_listed(untimed)}: no duration recorded "
                       "(a tool call read from a model's messages has none)")
    if broken:
        return _held(False, _listed(broken), evidence, details)
    return _held(True, "; ".join(checked) or "no tool call with a budget", details=details)


@_policy("no_tool_errors", NoSettings)
def no_tool_errors(ctx: CriterionContext) -> Score:
    """No tool call ended with an error; each failed call is named with its step and error."""
    calls = _tool_steps(ctx)
    failed = [(number, step) for number, step in calls if step.error is not None]
    if not failed:
        return _held(True, f"{len(calls)} tool call(s), none failed")
    reason = _listed([f"{step.name} failed at step {number}: {_short_error(step.error or '')}"
                      for number, step in failed])
    evidence = [EvidenceRow(status="unexpected", actual=_call(step),
                            note=f"step {number}: {_short_error(step.error or '')}")
                for number, step in failed]
    return _held(False, reason, evidence, {"failed": len(failed)})


@_policy("max_tokens", TokenLimitSettings)
def max_tokens(ctx: CriterionContext) -> Score:
    """The model calls' tokens (as the trace records them) within ``limit`` (input + output),
    ``input_limit`` and ``output_limit``."""
    limits = ctx.settings_as(TokenLimitSettings)
    usage = ctx.actual.usage
    measured = (("tokens", usage.total_tokens, limits.limit),
                ("input tokens", usage.input_tokens, limits.input_limit),
                ("output tokens", usage.output_tokens, limits.output_limit))
    broken = [f"{used:,} {what} > limit {limit:,}" for what, used, limit in measured
              if limit is not None and used > limit]
    details = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    if broken:
        return _held(False, "; ".join(broken), details=details)
    within = ", ".join(f"{used:,} {what} ≤ {limit:,}" for what, used, limit in measured if limit is not None)
    return _held(True, within, details=details)


@_policy("final_response_present", NoSettings)
def final_response_present(ctx: CriterionContext) -> Score:
    """The agent gave a final response that is not empty (nor white space only)."""
    response = ctx.actual.final_response
    if response is None:
        return _held(False, "no final response")
    if not response.strip():
        return _held(False, "the final response is empty")
    return _held(True, f"final response of {len(response):,} character(s)")
