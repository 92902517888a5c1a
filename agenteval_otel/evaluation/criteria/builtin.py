"""The built-in criteria; importing this module registers them (the registry does, on first use)."""

from agenteval_otel.evaluation.criteria import (  # noqa: F401 - registers the built-ins
    adk,
    factual_accuracy,
    hallucination,
    llm_judge,
    node_order,
    policies,
    responses,
    rubric_based,
    safety,
    tool_name_match,
    trajectory_match,
)
