"""The built-in criteria; importing this module registers them (the registry does, on first use)."""

from agenteval_otel.criteria import (  # noqa: F401 - registers the built-ins
    _adk,
    _factual_accuracy,
    _hallucination,
    _llm_judge,
    _node_order,
    _policies,
    _responses,
    _rubric_based,
    _safety,
    _tool_name_match,
    _trajectory_match,
)
