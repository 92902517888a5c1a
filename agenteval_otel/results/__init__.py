"""The results stage: what an evaluation produces and where it goes.

Results nest as the work does: ``CriterionResult`` (one criterion on one turn, with its
``EvidenceRow`` evidence) ⊂ ``InvocationResult`` ⊂ ``EvalCaseResult`` ⊂ ``EvalReport`` (with its
``EvalSummary`` and ``CriterionStats``). Sinks (``EvaluationSink``: ``submit``, ``force_flush``,
``shutdown``) take case results as they come: the run file, the report writers, and
``TraceExport``, which writes verdicts beside the traces they judge (``gen_ai.evaluation.result``
records on the judged span; evaluation spans, when asked for, in traces of their own linked to
it), with stable ids (``evaluation_id``); ``PhoenixAnnotations`` and ``MlflowAssessments`` write
them as those backends' own span annotations and assessments, and ``export_sink(target)`` picks
one of the three by the target's scheme. ``HistoryStore`` keeps every run's summary, scores and
failures in a local SQLite file, and ``compare_runs`` compares a run with an earlier
one with the paired statistics (``metric_delta``) ``experiments.compare`` uses too.

>>> from agenteval_otel.results import EvidenceRow
>>> EvidenceRow(status="missing", expected="get_weather()").actual is None
True
"""

from agenteval_otel.results._delivery import DeliveryCounters, DeliveryProcessor
from agenteval_otel.results._export import (
    EXPORT_MODES,
    ExportMode,
    TraceExport,
    VerdictId,
    evaluation_attributes,
    evaluation_id,
    verdict_attributes,
)
from agenteval_otel.results._failures import AgentFailure, describe_error
from agenteval_otel.results._history import (
    DEFAULT_HISTORY,
    DEFAULT_KEEP,
    HISTORY_KEEP_ENV,
    BaselineSink,
    CaseScores,
    CriterionSummary,
    FailureRecord,
    HistoryStore,
    Percentiles,
    RunInfo,
    SummarySink,
    case_scores,
    compare_runs,
    history_keep,
)
from agenteval_otel.results._mlflow import MlflowAssessments
from agenteval_otel.results._paired import (
    EXACT_STATES,
    BaselineComparison,
    CaseChange,
    CriterionDelta,
    MetricDelta,
    bootstrap_interval,
    metric_delta,
    percentile,
    sign_flip_p_value,
    smallest_p_value,
)
from agenteval_otel.results._phoenix import PhoenixAnnotations
from agenteval_otel.results._results import (
    CaseResults,
    CriterionResult,
    CriterionStats,
    EvalCaseResult,
    EvalReport,
    EvalSummary,
    EvidenceRow,
    HeldResult,
    InvocationResult,
    JudgeUsage,
    ReadCoverage,
    ResultCodec,
    Semantics,
    SummaryTally,
    slim,
)
from agenteval_otel.results._run_file import RunFile, default_run_file
from agenteval_otel.results._sinks import CallbackSink, EvaluationSink, SinkGroup
from agenteval_otel.results._targets import export_sink

__all__ = [
    # results
    "CriterionResult",
    "CriterionStats",
    "EvalCaseResult",
    "EvalReport",
    "EvalSummary",
    "ReadCoverage",
    "EvidenceRow",
    "InvocationResult",
    "JudgeUsage",
    "Semantics",
    # failures as data
    "AgentFailure",
    "describe_error",
    # sinks
    "CallbackSink",
    "EvaluationSink",
    "RunFile",
    "SinkGroup",
    "TraceExport",
    "default_run_file",
    # verdicts as backends' own annotations
    "MlflowAssessments",
    "PhoenixAnnotations",
    "export_sink",
    # how verdicts are exported, and their identity
    "EXPORT_MODES",
    "ExportMode",
    "VerdictId",
    "evaluation_id",
    # what became of exported verdicts
    "DeliveryCounters",
    "DeliveryProcessor",
    # verdicts as span attributes
    "evaluation_attributes",
    "verdict_attributes",
    # holding a long run's results slim
    "CaseResults",
    "HeldResult",
    "ResultCodec",
    "SummaryTally",
    "slim",
    # the run history
    "DEFAULT_HISTORY",
    "DEFAULT_KEEP",
    "HISTORY_KEEP_ENV",
    "BaselineSink",
    "CaseScores",
    "CriterionSummary",
    "FailureRecord",
    "HistoryStore",
    "Percentiles",
    "RunInfo",
    "SummarySink",
    "case_scores",
    "compare_runs",
    "history_keep",
    # paired statistics of two runs
    "BaselineComparison",
    "CaseChange",
    "CriterionDelta",
    "EXACT_STATES",
    "MetricDelta",
    "bootstrap_interval",
    "metric_delta",
    "percentile",
    "sign_flip_p_value",
    "smallest_p_value",
]
