"""Query sets, agents run over them (simulations), and the experiments that grade them."""

from agenteval_otel.experiments.compare import Comparison, MetricDelta, VerdictChange, compare
from agenteval_otel.experiments.console import comparison_table, experiment_table
from agenteval_otel.experiments.experiment import arun_experiment, grader_entry, run_experiment
from agenteval_otel.experiments.results import (
    ExperimentRecord,
    ExperimentResult,
    ExperimentSummary,
    MetricStats,
)
from agenteval_otel.experiments.simulation import SimulationRecord

__all__ = [
    "Comparison",
    "ExperimentRecord",
    "ExperimentResult",
    "ExperimentSummary",
    "MetricDelta",
    "MetricStats",
    "SimulationRecord",
    "VerdictChange",
    "arun_experiment",
    "compare",
    "comparison_table",
    "experiment_table",
    "grader_entry",
    "run_experiment",
]
