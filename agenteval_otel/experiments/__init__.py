"""Query sets, agents run over them (simulations), and the experiments that grade them."""

from agenteval_otel.experiments.agents import (
    AgentRunner,
    AgentSpec,
    AsyncAgentRunner,
    check_requirements,
    load_runner,
)
from agenteval_otel.experiments.compare import Comparison, MetricDelta, VerdictChange, compare
from agenteval_otel.experiments.console import comparison_table, experiment_table
from agenteval_otel.experiments.experiment import arun_experiment, grader_entry, run_experiment
from agenteval_otel.experiments.queries import Query, QuerySet, aexpand, expand
from agenteval_otel.experiments.results import (
    ExperimentRecord,
    ExperimentResult,
    ExperimentSummary,
    MetricStats,
)
from agenteval_otel.experiments.simulation import SimulationRecord, asimulate, simulate

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
