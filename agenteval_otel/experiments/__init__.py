"""Query sets, agents run over them (simulations), and the experiments that grade them."""

from agenteval_otel.experiments.agents import (
    AgentRunner,
    AgentSpec,
    AsyncAgentRunner,
    check_requirements,
    load_runner,
)
from agenteval_otel.experiments.queries import Query, QuerySet, aexpand, expand
from agenteval_otel.experiments.simulation import SimulationRecord, asimulate, simulate

__all__ = [
    "AgentRunner",
    "AgentSpec",
    "AsyncAgentRunner",
    "Query",
    "QuerySet",
    "SimulationRecord",
    "aexpand",
    "asimulate",
    "check_requirements",
    "expand",
    "load_runner",
    "simulate",
]
