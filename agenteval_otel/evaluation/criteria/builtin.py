"""The built-in criteria; importing this module registers them (the registry does, on first use)."""

from agenteval_otel.evaluation.criteria import (  # noqa: F401 - registers the built-ins
    adk,
    judged,
    node_order,
    responses,
    tool_name_match,
    trajectory_match,
)
