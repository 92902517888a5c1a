"""Evaluation: eval sets, configs, criteria, live and offline runs, results and sinks.

>>> from agenteval_otel.evaluation import EvalSetBuilder, evaluate
>>> evaluate(EvalSetBuilder.quick(("Hi", "Hello!")), agent=lambda query: "Hello!").passed
True
"""

from agenteval_otel.evaluation.accuracy import AccuracyEvaluationResult, AccuracyEvaluator, EvaluationScore
from agenteval_otel.evaluation.arguments import ArgMatch, ArgRule
from agenteval_otel.evaluation.builder import EvalSetBuilder
from agenteval_otel.evaluation.config import (
    CriterionConfig,
    EvalConfig,
    MatchType,
    Rubric,
    UserSimulatorConfig,
)
from agenteval_otel.evaluation.criteria import CriterionContext, Score, criterion
from agenteval_otel.evaluation.export import TraceExport
from agenteval_otel.evaluation.graders import Grader, GradeResult, GraderModelConfig
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
from agenteval_otel.evaluation.online import OnlineCounters, OnlineEvaluator
from agenteval_otel.evaluation.performance import (
    PerformanceEvaluationResult,
    PerformanceEvaluator,
    PerformanceRunResult,
)
from agenteval_otel.evaluation.reliability import (
    ExpectedToolCall,
    ReliabilityEvaluationResult,
    ReliabilityEvaluator,
    ToolCallCheck,
)
from agenteval_otel.evaluation.results import (
    CriterionResult,
    CriterionStats,
    EvalCaseResult,
    EvalReport,
    EvalSummary,
    EvidenceRow,
    InvocationResult,
)
from agenteval_otel.evaluation.runner import Evaluator, aevaluate, evaluate
from agenteval_otel.evaluation.sinks import CallbackSink, EvaluationSink, SinkGroup
from agenteval_otel.evaluation.turns import ScriptedTurns, SimulatedUser, UserTurns

__all__ = [
    "AccuracyEvaluationResult",
    "AccuracyEvaluator",
    "CallbackSink",
    "CriterionContext",
    "EvaluationSink",
    "EvidenceRow",
    "SinkGroup",
    "TraceExport",
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
    "ExpectedToolCall",
    "GradeResult",
    "Grader",
    "GraderModelConfig",
    "Invocation",
    "InvocationResult",
    "OnlineCounters",
    "OnlineEvaluator",
    "MatchType",
    "MessageContent",
    "PerformanceEvaluationResult",
    "PerformanceEvaluator",
    "PerformanceRunResult",
    "ReliabilityEvaluationResult",
    "ReliabilityEvaluator",
    "Rubric",
    "ScriptedTurns",
    "SessionInput",
    "SimulatedUser",
    "ToolCall",
    "ToolCallCheck",
    "UserSimulatorConfig",
    "UserTurns",
]
