"""Query sets, agents run over them (simulations), and the experiments that grade them."""

from agenteval_otel.experiments._agents import (
    AgentRunner,
    AgentSpec,
    AsyncAgentRunner,
    check_requirements,
    load_runner,
)
from agenteval_otel.experiments._compare import Comparison, MetricDelta, VerdictChange, compare
from agenteval_otel.experiments._console import comparison_table, experiment_table
from agenteval_otel.experiments._experiment import arun_experiment, grader_entry, run_experiment
from agenteval_otel.experiments._queries import Query, QuerySet, aexpand, expand
from agenteval_otel.experiments._results import (
    ExperimentRecord,
    ExperimentResult,
    ExperimentSummary,
    MetricStats,
)
from agenteval_otel.experiments._simulation import SimulationRecord, asimulate, simulate

__all__ = [
    "AgentRunner",
    "AgentSpec",
    "AsyncAgentRunner",
    "Comparison",
    "ExperimentRecord",
    "ExperimentResult",
    "ExperimentSummary",
    "MetricDelta",
    "MetricStats",
    "Query",
    "QuerySet",
    "SimulationRecord",
    "VerdictChange",
    "aexpand",
    "arun_experiment",
    "asimulate",
    "check_requirements",
    "compare",
    "comparison_table",
    "expand",
    "experiment_table",
    "grader_entry",
    "load_runner",
    "run_experiment",
    "simulate",
]
