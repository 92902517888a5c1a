"""Evaluation: eval sets, configs, builders and results."""

from agenteval_otel.evaluation.accuracy import AccuracyEvaluationResult, EvaluationScore
from agenteval_otel.evaluation.arguments import ArgMatch, ArgRule
from agenteval_otel.evaluation.builder import EvalSetBuilder
from agenteval_otel.evaluation.config import (
    CriterionConfig,
    EvalConfig,
    MatchType,
    Rubric,
    UserSimulatorConfig,
)
from agenteval_otel.evaluation.criteria import Score, criterion
from agenteval_otel.evaluation.models import (
    ConversationScenario,
    EvalCase,
    EvalSet,
    Invocation,
    MessageContent,
    SessionInput,
    ToolCall,
)
from agenteval_otel.evaluation.offline import aevaluate_traces, evaluate_traces
from agenteval_otel.evaluation.performance import (
    PerformanceEvaluationResult,
    PerformanceRunResult,
)
from agenteval_otel.evaluation.reliability import (
    ReliabilityEvaluationResult,
    ToolCallCheck,
)
from agenteval_otel.evaluation.results import (
    CriterionResult,
    CriterionStats,
    EvalCaseResult,
    EvalReport,
    EvalSummary,
    InvocationResult,
)
from agenteval_otel.evaluation.runner import Evaluator, aevaluate, evaluate

__all__ = [
    "AccuracyEvaluationResult",
    "Evaluator",
    "Score",
    "aevaluate",
    "aevaluate_traces",
    "criterion",
    "evaluate",
    "evaluate_traces",
    "ArgMatch",
    "ArgRule",
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
    "ToolCall",
    "ToolCallCheck",
    "UserSimulatorConfig",
]
