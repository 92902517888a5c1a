"""Checks: one-shot assertions a test suite calls on an agent.

- ``AccuracyCheck``: an LLM judge scores answers against references, 1 to 10, and the mean
  decides.
- ``PerformanceCheck``: latency and memory over repeated runs, against thresholds.
- ``ReliabilityCheck``: were the expected tools called, as often, with the arguments and in the
  order expected, and nothing else?

>>> from agenteval_otel.checks import PerformanceCheck
>>> PerformanceCheck(num_iterations=3, thresholds={"latency.p95": 1.0}).evaluate(sorted, [3, 1, 2]).passed
True
"""

from __future__ import annotations

import warnings
from typing import Any

from agenteval_otel.checks._accuracy import AccuracyCheck, AccuracyEvaluationResult, EvaluationScore
from agenteval_otel.checks._performance import (
    PerformanceCheck,
    PerformanceEvaluationResult,
    PerformanceRunResult,
    describe,
    parse_threshold,
)
from agenteval_otel.checks._reliability import (
    ExpectedToolCall,
    ReliabilityCheck,
    ReliabilityEvaluationResult,
    ToolCallCheck,
)

__all__ = [
    # accuracy
    "AccuracyCheck",
    "AccuracyEvaluationResult",
    "EvaluationScore",
    # performance
    "PerformanceCheck",
    "PerformanceEvaluationResult",
    "PerformanceRunResult",
    "describe",
    "parse_threshold",
    # reliability
    "ExpectedToolCall",
    "ReliabilityCheck",
    "ReliabilityEvaluationResult",
    "ToolCallCheck",
]

_RENAMED = {
    "AccuracyEvaluator": AccuracyCheck,
    "PerformanceEvaluator": PerformanceCheck,
    "ReliabilityEvaluator": ReliabilityCheck,
}


def __getattr__(name: str) -> Any:
    """The checks' old names, kept as deprecated aliases."""
    if name in _RENAMED:
        new = _RENAMED[name]
        warnings.warn(f"{name} is deprecated; use agenteval_otel.checks.{new.__name__}", DeprecationWarning,
                      stacklevel=2)
        return new
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
