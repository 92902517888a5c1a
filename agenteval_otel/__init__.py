"""agenteval-otel: trace AI agents with OpenTelemetry, evaluate their trajectories, and write
the verdicts back into the trace."""

import logging

from agenteval_otel.errors import AgentEvalError, ConfigError, EvalSetLoadError, TraceReadError
from agenteval_otel.evaluation import (
    AccuracyEvaluationResult,
    ArgMatch,
    ArgRule,
    ConversationScenario,
    CriterionConfig,
    CriterionResult,
    CriterionStats,
    EvalCase,
    EvalCaseResult,
    EvalConfig,
    EvalReport,
    EvalSet,
    EvalSetBuilder,
    EvalSummary,
    EvaluationScore,
    Invocation,
    InvocationResult,
    MatchType,
    MessageContent,
    PerformanceEvaluationResult,
    PerformanceRunResult,
    ReliabilityEvaluationResult,
    Rubric,
    SessionInput,
    ToolCall,
    ToolCallCheck,
    UserSimulatorConfig,
)
from agenteval_otel.trajectory import StepType, TrajectoryStep

logging.getLogger(__name__).addHandler(logging.NullHandler())

__version__ = "0.1.0"

__all__ = [
    "AccuracyEvaluationResult",
    "AgentEvalError",
    "ArgMatch",
    "ArgRule",
    "ConfigError",
    "ConversationScenario",
    "CriterionConfig",
    "CriterionResult",
    "CriterionStats",
    "EvalCase",
    "EvalCaseResult",
    "EvalConfig",
    "EvalReport",
    "EvalSet",
    "EvalSetBuilder",
    "EvalSetLoadError",
    "EvalSummary",
    "EvaluationScore",
    "Invocation",
    "InvocationResult",
    "MatchType",
    "MessageContent",
    "PerformanceEvaluationResult",
    "PerformanceRunResult",
    "ReliabilityEvaluationResult",
    "Rubric",
    "SessionInput",
    "StepType",
    "ToolCall",
    "ToolCallCheck",
    "TrajectoryStep",
    "TraceReadError",
    "UserSimulatorConfig",
    "__version__",
]
