"""The criterion registry: built-in and user criteria, looked up by name or alias.

A criterion is a function ``(expected: Invocation, actual: Trajectory, config: CriterionConfig)``
that returns a score in [0, 1] (``float``), an assertion (``bool``), a :class:`Score` with a
reason, or ``None`` when it does not apply to that turn. It may be ``async``. It is called once
per invocation; the case's score is the mean over the invocations it applied to.

>>> @criterion("mentions_city", default_threshold=1.0)
... def mentions_city(expected, actual, config):
...     return Score(1.0 if "Paris" in (actual.final_response or "") else 0.0, "looked for Paris")
"""

from __future__ import annotations

import inspect
import logging
import statistics
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from agenteval_otel.evaluation.config import (
    CriterionConfig,
    canonical_criterion_name,
    register_criterion_name,
)
from agenteval_otel.evaluation.models import Invocation
from agenteval_otel.evaluation.results import CriterionResult

if TYPE_CHECKING:
    from agenteval_otel.trajectory.trajectory import Trajectory

__all__ = ["Score", "criterion", "get_criterion", "registered_criteria", "score_case", "score_invocation"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Score:
    """A criterion's verdict on one invocation: a value in [0, 1], why, and any details."""

    value: float
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


Outcome = Union[float, bool, Score, None]
CriterionFn = Callable[
    [Invocation, "Trajectory", CriterionConfig], Union[Outcome, Awaitable[Outcome]]
]


@dataclass(frozen=True)
class RegisteredCriterion:
    """A criterion function under its name."""

    name: str
    fn: CriterionFn
    default_threshold: float


_REGISTRY: dict[str, RegisteredCriterion] = {}


def criterion(
    name: str | None = None, *, default_threshold: float = 0.8
) -> Callable[[CriterionFn], CriterionFn]:
    """Register a criterion function under ``name`` (default: the function's name).

    Registering a name again replaces the earlier function, so a user can override a
    built-in criterion.
    """

    def register(fn: CriterionFn) -> CriterionFn:
        key = name or getattr(fn, "__name__", "")
        if not key:
            raise ValueError("a criterion needs a name")
        try:
            key = canonical_criterion_name(key)
        except ValueError:
            register_criterion_name(key, default_threshold)
        _REGISTRY[key] = RegisteredCriterion(key, fn, default_threshold)
        return fn

    return register


def get_criterion(name: str) -> RegisteredCriterion:
    """The criterion registered under ``name`` or an alias of it."""
    key = canonical_criterion_name(name)
    if key not in _REGISTRY:
        raise KeyError(f"criterion {key!r} is known but has no implementation registered")
    return _REGISTRY[key]


def registered_criteria() -> list[str]:
    """The names of every registered criterion."""
    return sorted(_REGISTRY)


def _clamped(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


def _as_result(name: str, outcome: Outcome, config: CriterionConfig) -> CriterionResult | None:
    if outcome is None:
        return None
    if isinstance(outcome, Score):
        score, details = _clamped(outcome.value), dict(outcome.details)
        if outcome.reason:
            details["reason"] = outcome.reason
    elif isinstance(outcome, (bool, int, float)):
        score, details = _clamped(float(outcome)), {}
    else:
        raise TypeError(
            f"criterion {name!r} returned {type(outcome).__name__}; expected a float, a bool, "
            "a Score or None"
        )
    return CriterionResult(
        criterion=name, score=score, passed=score >= config.threshold,
        threshold=config.threshold, details=details,
    )


async def score_invocation(
    name: str, expected: Invocation, actual: Trajectory, config: CriterionConfig
) -> CriterionResult | None:
    """Score one invocation. A criterion that raises yields a result with ``error``."""
    try:
        registered = get_criterion(name)
        outcome = registered.fn(expected, actual, config)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        return _as_result(registered.name, outcome, config)
    except Exception as exc:  # a failing criterion is data, never an exception out of the run
        _log.debug("criterion %s failed", name, exc_info=True)
        result = CriterionResult.failure(name, config.threshold, f"{type(exc).__name__}: {exc}")
        result.details["traceback"] = traceback.format_exc(limit=5)
        return result


def score_case(
    name: str,
    invocation_ids: list[str],
    results: list[CriterionResult | None],
    config: CriterionConfig,
) -> CriterionResult | None:
    """One criterion's case result: the mean over the invocations it applied to.

    An error on any invocation makes the case result an error. ``None`` if it applied to none.
    """
    applied = [(inv_id, r) for inv_id, r in zip(invocation_ids, results) if r is not None]
    if not applied:
        return None
    per_invocation = [
        {"invocation_id": inv_id, "score": r.score, "passed": r.passed,
         **({"reason": r.reason} if r.reason else {}), **({"error": r.error} if r.error else {})}
        for inv_id, r in applied
    ]
    errors = [f"{inv_id}: {r.error}" for inv_id, r in applied if r.error]
    if errors:
        failed = CriterionResult.failure(name, config.threshold, "; ".join(errors))
        failed.details["invocations"] = per_invocation
        return failed
    score = statistics.fmean(r.score for _, r in applied)
    details: dict[str, Any] = {"invocations": per_invocation}
    if len(applied) == 1:
        details.update(applied[0][1].details)
    else:
        reasons = [f"turn {i + 1}: {r.reason}" for i, (_, r) in enumerate(applied)
                   if r.reason and not r.passed]
        if reasons:
            details["reason"] = "; ".join(reasons)
    return CriterionResult(criterion=name, score=score, passed=score >= config.threshold,
                           threshold=config.threshold, details=details)
