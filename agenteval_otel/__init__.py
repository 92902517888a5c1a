"""agenteval-otel: trace AI agents with OpenTelemetry, evaluate their trajectories, and write
the verdicts back into the trace.

The names below load lazily: ``from agenteval_otel import tool`` loads capture only, never the
evaluation engine. Everything else lives in the subpackages, one concept each and each with its own ``__all__``:
``tracing`` (capture), ``trajectory`` (conversion), ``traces`` (trace I/O), ``judge``, ``evalsets``,
``criteria``, ``results``, ``evaluation`` (the ways to run), ``checks``, ``experiments``, ``reports``.

>>> from agenteval_otel import EvalSetBuilder, evaluate
>>> report = evaluate(EvalSetBuilder.quick(("Hello", "Hi!")), agent=lambda query: "Hi!")
>>> report.summary.passed_cases
1
"""

from __future__ import annotations

import importlib
import logging
import sys
import warnings
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

logging.getLogger(__name__).addHandler(logging.NullHandler())

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # capture
    "agent": "agenteval_otel.tracing",
    "tool": "agenteval_otel.tracing",
    "node": "agenteval_otel.tracing",
    "message": "agenteval_otel.tracing",
    "conditional": "agenteval_otel.tracing",
    "configure": "agenteval_otel.tracing",
    "trace_step": "agenteval_otel.tracing",
    "conversation": "agenteval_otel.tracing",
    "ContentPolicy": "agenteval_otel.tracing",
    # eval sets and configs
    "EvalSet": "agenteval_otel.evalsets",
    "EvalCase": "agenteval_otel.evalsets",
    "EvalSetBuilder": "agenteval_otel.evalsets",
    "ToolCall": "agenteval_otel.evalsets",
    "EvalConfig": "agenteval_otel.criteria",
    "CriterionConfig": "agenteval_otel.criteria",
    # evaluating
    "evaluate": "agenteval_otel.evaluation",
    "evaluate_traces": "agenteval_otel.evaluation",
    "EvalReport": "agenteval_otel.results",
    # your own criteria
    "criterion": "agenteval_otel.criteria",
    "CriterionContext": "agenteval_otel.criteria",
    "Score": "agenteval_otel.criteria",
    # errors
    "AgentEvalError": "agenteval_otel.errors",
}

__all__ = [
    "AgentEvalError",
    "ContentPolicy",
    "CriterionConfig",
    "CriterionContext",
    "EvalCase",
    "EvalConfig",
    "EvalReport",
    "EvalSet",
    "EvalSetBuilder",
    "Score",
    "ToolCall",
    "__version__",
    "agent",
    "conditional",
    "configure",
    "conversation",
    "criterion",
    "evaluate",
    "evaluate_traces",
    "message",
    "node",
    "tool",
    "trace_step",
]

if TYPE_CHECKING:
    from importlib.abc import Loader

    from agenteval_otel.criteria import CriterionConfig, CriterionContext, EvalConfig, Score, criterion
    from agenteval_otel.errors import AgentEvalError
    from agenteval_otel.evalsets import EvalCase, EvalSet, EvalSetBuilder, ToolCall
    from agenteval_otel.evaluation import evaluate, evaluate_traces
    from agenteval_otel.results import EvalReport
    from agenteval_otel.tracing import (
        ContentPolicy,
        agent,
        conditional,
        conversation,
        message,
        node,
        tool,
        trace_step,
    )
    from agenteval_otel.tracing.configure import configure


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(
            f"module 'agenteval_otel' has no attribute {name!r}; most names live in its subpackages "
            "(agenteval_otel.tracing, .trajectory, .traces, .evalsets, .criteria, .evaluation, .results, .checks, "
            ".experiments, .reports)"
        )
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


# Modules that moved when evaluation/ was split into one package per concept. Importing an old path
# still works, with a DeprecationWarning; its names resolve in the new home on first use.
_MOVED_MODULES: dict[str, str] = {
    "agenteval_otel.evaluation.agents": "agenteval_otel.evaluation",
    "agenteval_otel.evaluation.export": "agenteval_otel.results",
    "agenteval_otel.evaluation.judging": "agenteval_otel.evaluation",
    "agenteval_otel.evaluation.turns": "agenteval_otel.evaluation",
    "agenteval_otel.evaluation.worker": "agenteval_otel.evaluation",
    "agenteval_otel.evaluation.runner": "agenteval_otel.evaluation",
    "agenteval_otel.evaluation.offline": "agenteval_otel.evaluation",
    "agenteval_otel.evaluation.online": "agenteval_otel.evaluation",
    "agenteval_otel.evaluation.scoring": "agenteval_otel.evaluation",
    "agenteval_otel.evaluation.models": "agenteval_otel.evalsets",
    "agenteval_otel.evaluation.builder": "agenteval_otel.evalsets",
    "agenteval_otel.evaluation.config": "agenteval_otel.criteria",
    "agenteval_otel.evaluation.criteria": "agenteval_otel.criteria",
    "agenteval_otel.evaluation.results": "agenteval_otel.results",
    "agenteval_otel.evaluation.sinks": "agenteval_otel.results",
    "agenteval_otel.evaluation.run_file": "agenteval_otel.results",
    "agenteval_otel.evaluation.accuracy": "agenteval_otel.checks",
    "agenteval_otel.evaluation.performance": "agenteval_otel.checks",
    "agenteval_otel.evaluation.reliability": "agenteval_otel.checks",
    "agenteval_otel.evaluation.graders": "agenteval_otel.experiments.graders",
    "agenteval_otel.evaluation.files": "agenteval_otel.loading",
    "agenteval_otel.reports.console": "agenteval_otel.reports",
    "agenteval_otel.reports.html": "agenteval_otel.reports",
    "agenteval_otel.reports.junit": "agenteval_otel.reports",
    "agenteval_otel.reports.writers": "agenteval_otel.reports",
    "agenteval_otel.trajectory.render": "agenteval_otel.reports",
}


class _MovedModuleFinder:
    """Finds the old paths of moved modules (after every real module, so nothing is shadowed)."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> ModuleSpec | None:
        # its own loader (create_module, exec_module), without importlib.abc's base class: importing
        # importlib.abc would make ``import agenteval_otel`` slower
        return ModuleSpec(fullname, cast("Loader", self)) if fullname in _MOVED_MODULES else None

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        home = _MOVED_MODULES[module.__name__]
        warnings.warn(f"{module.__name__} is deprecated; import from {home}", DeprecationWarning, stacklevel=2)

        def forward(name: str) -> Any:
            return getattr(importlib.import_module(home), name)

        module.__getattr__ = forward  # type: ignore[method-assign]


if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModuleFinder())
