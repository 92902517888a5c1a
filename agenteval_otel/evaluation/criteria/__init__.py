"""Criteria: how an agent's trajectory is scored against an eval case.

Importing this package registers the built-in criteria; ``criterion`` registers your own.
"""

from agenteval_otel.evaluation.criteria import (  # noqa: F401 - registers the built-ins
    judged,
    node_order,
    responses,
    tool_name_match,
    trajectory_match,
)
from agenteval_otel.evaluation.criteria.registry import (
    Score,
    criterion,
    get_criterion,
    registered_criteria,
    score_case,
    score_invocation,
)

__all__ = [
    "Score",
    "criterion",
    "get_criterion",
    "registered_criteria",
    "score_case",
    "score_invocation",
]
