"""Running one criterion on one turn: whatever it returns or raises becomes a ``CriterionResult``.

This is the one place where a criterion's output is normalised (float, bool, ``Score``, ``None``)
and where failures become data: an exception (even one whose message cannot be printed), a
non-finite score, an output of the wrong type, or an async criterion past its timeout each give
a result with ``error``, ``error_type`` and (when it raised) ``traceback``; nothing escapes.

>>> import asyncio
>>> from agenteval_otel.criteria._config import CriterionConfig
>>> from agenteval_otel.criteria._context import CriterionContext
>>> from agenteval_otel.trajectory import Trajectory
>>> ctx = CriterionContext(actual=Trajectory(final_response="Hi"), expected=None, config=CriterionConfig())
>>> asyncio.run(run_criterion("exact_match", ctx)) is None  # nothing expected: does not apply
True
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import math
import traceback
from collections.abc import Awaitable
from typing import Any

from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._registry import Outcome, RegisteredCriterion, Score, get_criterion
from agenteval_otel.results import CriterionResult, Semantics, describe_error

__all__ = ["run_criterion", "start_criterion"]

_log = logging.getLogger(__name__)
_TRACEBACK_FRAMES = 8


def _traceback(error: BaseException) -> str | None:
    try:
        return "".join(traceback.format_exception(type(error), error, error.__traceback__, limit=_TRACEBACK_FRAMES))
    except Exception:
        return None


def _as_result(name: str, outcome: Outcome, threshold: float, semantics: Semantics) -> CriterionResult | None:
    if outcome is None:
        return None
    reason, details, evidence = "", {}, []
    if isinstance(outcome, Score):
        value: Any = outcome.value
        reason, details, evidence = outcome.reason, dict(outcome.details), list(outcome.evidence)
    elif isinstance(outcome, (bool, int, float)):
        value = outcome
    else:
        return CriterionResult.failure(
            name, threshold,
            f"criterion {name!r} returned {type(outcome).__name__}; expected a float, a bool, a Score or None",
            error_type="TypeError", semantics=semantics)
    score = float(value)
    if not math.isfinite(score):
        return CriterionResult.failure(
            name, threshold, f"criterion {name!r} returned a score of {score}; expected a number in [0, 1]",
            error_type="ValueError", semantics=semantics)
    score = min(1.0, max(0.0, score))
    return CriterionResult(criterion=name, score=score, passed=score >= threshold, threshold=threshold,
                           reason=reason, details=details, evidence=evidence, semantics=semantics)


async def run_criterion(
    name: str, context: CriterionContext, *, timeout_s: float | None = None
) -> CriterionResult | None:
    """The result of criterion ``name`` on ``context`` (``None`` when it does not apply), with
    the criterion's ``semantics``.

    An async criterion still running after ``timeout_s`` seconds is cancelled and errored.
    """
    started = start_criterion(name, context, timeout_s=timeout_s)
    return await started if inspect.isawaitable(started) else started


def start_criterion(
    name: str, context: CriterionContext, *, timeout_s: float | None = None
) -> CriterionResult | None | Awaitable[CriterionResult | None]:
    """What :func:`run_criterion` gives, at once for a criterion that returns its outcome, or
    to await for one that returns an awaitable (so a caller runs plain criteria without a task)."""
    try:
        registered = get_criterion(name)
    except Exception as exc:
        return _failure(name, context.config.threshold, exc)
    threshold, semantics = context.config.threshold, registered.semantics
    try:
        if registered.settings is not None and context.settings is None:
            context = dataclasses.replace(context, settings=registered.parse_settings(context.config.params))
        outcome = registered.fn(context)
        if inspect.isawaitable(outcome):
            return _awaited(registered, outcome, threshold, timeout_s)
        return _as_result(name, outcome, threshold, semantics)
    except (Exception, SystemExit) as exc:  # a failing criterion is data, never an exit out of the run
        return _failure(name, threshold, exc, semantics)


async def _awaited(
    registered: RegisteredCriterion, outcome: Awaitable[Outcome], threshold: float, timeout_s: float | None
) -> CriterionResult | None:
    name, semantics = registered.name, registered.semantics
    try:
        return _as_result(name, await asyncio.wait_for(outcome, timeout_s), threshold, semantics)
    except asyncio.TimeoutError as exc:
        if timeout_s is None:
            return _failure(name, threshold, exc, semantics)
        return CriterionResult.failure(name, threshold, f"criterion {name!r} did not finish within {timeout_s:g} s",
                                       error_type="TimeoutError", semantics=semantics)
    except (Exception, SystemExit) as exc:  # a failing criterion is data, never an exit out of the run
        return _failure(name, threshold, exc, semantics)


def _failure(name: str, threshold: float, error: BaseException, semantics: Semantics = "agenteval") -> CriterionResult:
    _log.debug("criterion %s failed", name, exc_info=True)
    return CriterionResult.failure(name, threshold, describe_error(error), error_type=type(error).__name__,
                                   traceback=_traceback(error), semantics=semantics)
