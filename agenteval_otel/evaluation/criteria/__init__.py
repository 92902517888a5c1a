"""Criteria: how an agent's trajectory is scored, turn by turn.

A criterion takes one :class:`CriterionContext` and returns a float, a bool, a :class:`Score`
or ``None``; :func:`criterion` registers yours by name (the built-ins load with the registry).

>>> from agenteval_otel.evaluation.criteria import Score, criterion
>>> @criterion("is_polite", default_threshold=1.0)
... def is_polite(ctx):
...     return Score(1.0 if "please" in (ctx.actual.final_response or "").lower() else 0.0, "looked for 'please'")
"""

from agenteval_otel.evaluation.criteria.context import CriterionContext
from agenteval_otel.evaluation.criteria.outcome import run_criterion
from agenteval_otel.evaluation.criteria.registry import (
    RegisteredCriterion,
    Score,
    canonical_criterion_name,
    criterion,
    criterion_names,
    get_criterion,
    registered_criteria,
)

__all__ = [
    "CriterionContext",
    "RegisteredCriterion",
    "Score",
    "canonical_criterion_name",
    "criterion",
    "criterion_names",
    "get_criterion",
    "registered_criteria",
    "run_criterion",
]
