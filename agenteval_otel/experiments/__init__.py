"""Query sets, agents run over them (simulations), and the experiments that grade them."""

import importlib
import warnings
from typing import Any

from agenteval_otel.experiments._agents import (
    AgentRunner,
    AgentSpec,
    AsyncAgentRunner,
    check_requirements,
    load_runner,
)
from agenteval_otel.experiments._compare import Comparison, MetricDelta, VerdictChange, compare
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
    "expand",
    "grader_entry",
    "load_runner",
    "run_experiment",
    "simulate",
]


def __getattr__(name: str) -> Any:
    """``comparison_table`` and ``experiment_table`` render, so they live in
    ``agenteval_otel.reports`` now; the old names here are deprecated aliases."""
    if name in ("comparison_table", "experiment_table"):
        warnings.warn(f"agenteval_otel.experiments.{name} is deprecated; use agenteval_otel.reports.{name}",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("agenteval_otel.reports"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
