"""agenteval-otel: trace AI agents with OpenTelemetry, evaluate their trajectories, and write
the verdicts back into the trace.

The names below load lazily: ``from agenteval_otel import tool`` loads capture only, never the
evaluation engine. Everything else lives in the subpackages (``agenteval_otel.tracing``,
``.trajectory``, ``.traces``, ``.evaluation``, ``.reports``), each with its own ``__all__``.

>>> from agenteval_otel import EvalSetBuilder, evaluate
>>> report = evaluate(EvalSetBuilder.quick(("Hello", "Hi!")), agent=lambda query: "Hi!")
>>> report.summary.passed_cases
1
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

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
    "EvalSet": "agenteval_otel.evaluation",
    "EvalCase": "agenteval_otel.evaluation",
    "EvalSetBuilder": "agenteval_otel.evaluation",
    "ToolCall": "agenteval_otel.evaluation",
    "EvalConfig": "agenteval_otel.evaluation",
    "CriterionConfig": "agenteval_otel.evaluation",
    # evaluating
    "evaluate": "agenteval_otel.evaluation",
    "evaluate_traces": "agenteval_otel.evaluation",
    "EvalReport": "agenteval_otel.evaluation",
    # your own criteria
    "criterion": "agenteval_otel.evaluation",
    "CriterionContext": "agenteval_otel.evaluation",
    "Score": "agenteval_otel.evaluation",
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
    from agenteval_otel.errors import AgentEvalError
    from agenteval_otel.evaluation import (
        CriterionConfig,
        CriterionContext,
        EvalCase,
        EvalConfig,
        EvalReport,
        EvalSet,
        EvalSetBuilder,
        Score,
        ToolCall,
        criterion,
        evaluate,
        evaluate_traces,
    )
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
            "(agenteval_otel.tracing, .trajectory, .traces, .evaluation, .reports)"
        )
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
