"""Criteria: how an agent's trajectory is scored, turn by turn.

A criterion takes one :class:`CriterionContext` and returns a float, a bool, a :class:`Score`
or ``None``; :func:`criterion` registers yours by name (the built-ins load with the registry).

>>> from agenteval_otel.criteria import Score, criterion
>>> @criterion("is_polite", default_threshold=1.0)
... def is_polite(ctx):
...     return Score(1.0 if "please" in (ctx.actual.final_response or "").lower() else 0.0, "looked for 'please'")
"""

from agenteval_otel.criteria._arguments import ArgMatch, ArgRule, args_diff, args_match
from agenteval_otel.criteria._config import (
    CriterionConfig,
    EvalConfig,
    MatchType,
    Rubric,
    UserSimulatorConfig,
    require_reference_free,
)
from agenteval_otel.criteria._context import CriterionContext
from agenteval_otel.criteria._outcome import run_criterion, start_criterion
from agenteval_otel.criteria._registry import (
    CriterionFn,
    Outcome,
    RegisteredCriterion,
    Score,
    canonical_criterion_name,
    criterion,
    criterion_names,
    get_criterion,
    load_criteria_module,
    registered_criteria,
)

__all__ = [
    # writing a criterion
    "CriterionContext",
    "CriterionFn",
    "Outcome",
    "Score",
    "criterion",
    # configuring a run's criteria
    "ArgMatch",
    "ArgRule",
    "CriterionConfig",
    "EvalConfig",
    "MatchType",
    "Rubric",
    "UserSimulatorConfig",
    "require_reference_free",
    # the registry
    "RegisteredCriterion",
    "canonical_criterion_name",
    "criterion_names",
    "get_criterion",
    "load_criteria_module",
    "registered_criteria",
    # running one
    "run_criterion",
    "start_criterion",
    # shared with the checks and reports
    "args_diff",
    "args_match",
]
