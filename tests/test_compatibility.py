"""Every name the 0.1 layout made public still imports: from the root, from each package, and
from the documented deep modules that moved when ``evaluation/`` was split (those warn)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

from tests.conftest import REPO_ROOT

# (``agenteval_otel.traces.write_otlp_json_lines``, a second OTLP/JSON encoder nothing used, was
# removed: ``agenteval_otel.tracing.OtlpJsonFileExporter`` is the one encoder.)
PACKAGES: dict[str, tuple[str, ...]] = {
    "agenteval_otel": (
        "AgentEvalError", "ContentPolicy", "CriterionConfig", "CriterionContext", "EvalCase", "EvalConfig",
        "EvalReport", "EvalSet", "EvalSetBuilder", "Score", "ToolCall", "__version__", "agent",
        "conditional", "configure", "conversation", "criterion", "evaluate", "evaluate_traces", "message",
        "node", "tool", "trace_step",
    ),
    "agenteval_otel.evaluation": (
        "AccuracyEvaluationResult", "AccuracyEvaluator", "ArgMatch", "ArgRule", "CallbackSink",
        "ConversationScenario", "CriterionConfig", "CriterionContext", "CriterionResult", "CriterionStats",
        "EvalCase", "EvalCaseResult", "EvalConfig", "EvalReport", "EvalSet", "EvalSetBuilder",
        "EvalSummary", "EvaluationScore", "EvaluationSink", "Evaluator", "EvidenceRow", "ExpectedToolCall",
        "GradeResult", "Grader", "GraderModelConfig", "Invocation", "InvocationResult", "MatchType",
        "MessageContent", "OnlineCounters", "OnlineEvaluator", "PerformanceEvaluationResult",
        "PerformanceEvaluator", "PerformanceRunResult", "ReliabilityEvaluationResult",
        "ReliabilityEvaluator", "Rubric", "Score", "ScriptedTurns", "SessionInput", "SimulatedUser",
        "SinkGroup", "ToolCall", "ToolCallCheck", "TraceExport", "UserSimulatorConfig", "UserTurns",
        "aevaluate", "aevaluate_traces", "criterion", "evaluate", "evaluate_traces",
    ),
    "agenteval_otel.tracing": (
        "ContentPolicy", "ContextThreadPoolExecutor", "ModelMessage", "OtlpJsonFileExporter",
        "OtlpJsonLogFileExporter", "StepKind", "StepRun", "TracedStep", "TracingHandle", "active_policy",
        "agent", "conditional", "configure", "conversation", "current_conversation_id", "current_provider",
        "current_tracer", "is_otlp_url", "logs_file_for", "message", "node", "providers_for",
        "read_message", "release_provider", "route_to_provider", "routed_to", "set_active_policy",
        "start_step", "tool", "tool_call_id", "trace_step",
    ),
    "agenteval_otel.trajectory": (
        "BufferedTrace", "SpanEvent", "SpanLink", "SpanRecord", "SpanStatus", "StepType", "TokenUsage",
        "TraceBuffer", "Trajectory", "TrajectoryCallback", "TrajectoryProcessor", "TrajectoryStep",
        "build_trajectories", "iter_trajectories", "join_conversations", "trajectories_from_trace",
        "tree_order",
    ),
    "agenteval_otel.traces": (
        "HttpRequest", "HttpResponse", "JaegerClient", "MockTransport", "SkippedLine", "TraceFile",
        "TrajectoryFiles", "Transport", "UrllibTransport", "read_jaeger_json", "read_otlp_json",
        "read_otlp_proto", "read_spans", "read_trajectories",
    ),
    "agenteval_otel.judge": (
        "ContentCleaner", "DATA_RULE", "DEFAULT_JUDGE_MODEL", "JudgeCache", "JudgeClient", "JudgeSettings",
        "JudgeUsage", "as_text", "data_block", "parse_reply",
    ),
    "agenteval_otel.experiments": (
        "AgentRunner", "AgentSpec", "AsyncAgentRunner", "Comparison", "ExperimentRecord",
        "ExperimentResult", "ExperimentSummary", "MetricDelta", "MetricStats", "Query", "QuerySet",
        "SimulationRecord", "VerdictChange", "aexpand", "arun_experiment", "asimulate",
        "check_requirements", "compare", "comparison_table", "expand", "experiment_table", "grader_entry",
        "load_runner", "run_experiment", "simulate",
    ),
}

MOVED_MODULES: dict[str, tuple[str, ...]] = {
    "agenteval_otel.evaluation.agents": (
        "AgentCaller", "AgentTurn", "abandoned_agent_threads", "agent_thread_cpu", "entry_point",
        "is_async_callable", "load_agent", "reply_text",
    ),
    "agenteval_otel.evaluation.export": (
        "TraceExport", "evaluation_attributes", "verdict_attributes",
    ),
    "agenteval_otel.evaluation.judging": (
        "default_judge", "judge_client",
    ),
    "agenteval_otel.evaluation.turns": (
        "Conversation", "ScriptedTurns", "SimulatedUser", "UserReply", "UserTurns", "converse",
        "turns_for",
    ),
    "agenteval_otel.evaluation.worker": (
        "DEFAULT_GRPC_PORT", "DEFAULT_HTTP_PORT", "EvaluationWorker",
    ),
    "agenteval_otel.evaluation.runner": (
        "Evaluator", "aevaluate", "evaluate",
    ),
    "agenteval_otel.evaluation.offline": (
        "CaseRuns", "RunChoice", "TraceSource", "aevaluate_traces", "evaluate_traces", "iter_matches",
    ),
    "agenteval_otel.evaluation.online": (
        "OnlineCounters", "OnlineEvaluator", "trace_sampled",
    ),
    "agenteval_otel.evaluation.scoring": (
        "Scorer", "aggregate_runs", "efficiency", "error_result", "invocation_key", "score_case",
    ),
    "agenteval_otel.evaluation.models": (
        "ConversationScenario", "EvalCase", "EvalSet", "Invocation", "MessageContent", "SessionInput",
        "ToolCall",
    ),
    "agenteval_otel.evaluation.builder": (
        "EvalSetBuilder",
    ),
    "agenteval_otel.evaluation.config": (
        "CriterionConfig", "EvalConfig", "MatchType", "Rubric", "UserSimulatorConfig",
    ),
    "agenteval_otel.evaluation.criteria": (
        "CriterionContext", "RegisteredCriterion", "Score", "canonical_criterion_name", "criterion",
        "criterion_names", "get_criterion", "registered_criteria", "run_criterion",
    ),
    "agenteval_otel.evaluation.results": (
        "CaseResults", "CriterionResult", "CriterionStats", "EvalCaseResult", "EvalReport", "EvalSummary",
        "EvidenceRow", "InvocationResult", "JudgeUsage", "ResultCodec", "Semantics", "SummaryTally",
    ),
    "agenteval_otel.evaluation.sinks": (
        "CallbackSink", "EvaluationSink", "SinkGroup",
    ),
    "agenteval_otel.evaluation.run_file": (
        "RunFile", "default_run_file",
    ),
    "agenteval_otel.evaluation.accuracy": (
        "AccuracyEvaluationResult", "AccuracyEvaluator", "EvaluationScore",
    ),
    "agenteval_otel.evaluation.performance": (
        "PerformanceEvaluationResult", "PerformanceEvaluator", "PerformanceRunResult", "describe",
        "parse_threshold",
    ),
    "agenteval_otel.evaluation.reliability": (
        "ExpectedToolCall", "ReliabilityEvaluationResult", "ReliabilityEvaluator", "ToolCallCheck",
    ),
    "agenteval_otel.evaluation.graders": (
        "GradeResult", "Grader", "GraderModelConfig", "InputTemplate", "ResponseParser", "load_grader_dir",
        "load_parser", "metric_scores", "parse_json_response",
    ),
    "agenteval_otel.evaluation.files": (
        "MAX_JSON_DEPTH", "check_depth", "json_path", "read_json", "validate_file_data",
        "validation_message", "write_json",
    ),
    "agenteval_otel.reports.console": (
        "case_diff", "criteria_table", "eval_set_table", "print_report", "results_table", "runs_table",
        "summary_line",
    ),
    "agenteval_otel.reports.html": (
        "render_html", "write_html",
    ),
    "agenteval_otel.reports.junit": (
        "junit_xml", "write_junit",
    ),
    "agenteval_otel.reports.writers": (
        "ReportFile", "ReportFormat",
    ),
    "agenteval_otel.trajectory.render": (
        "iter_trajectories_json", "trajectories_json", "trajectories_table",
    ),
}


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_public_name_of_a_package_still_imports(package: str) -> None:
    module = importlib.import_module(package)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        missing = [name for name in PACKAGES[package] if getattr(module, name, None) is None]
    assert missing == []


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_a_moved_module_still_imports_with_a_deprecation_warning(old: str) -> None:
    code = (
        "import importlib, warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    module = importlib.import_module({old!r})\n"
        f"    missing = [n for n in {MOVED_MODULES[old]!r} if getattr(module, n, None) is None]\n"
        "print(missing, any(issubclass(w.category, DeprecationWarning) for w in caught))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] True"


@pytest.mark.parametrize(("old", "new"), [
    ("agenteval_otel.evaluation.AccuracyEvaluator", "agenteval_otel.checks.AccuracyCheck"),
    ("agenteval_otel.evaluation.PerformanceEvaluator", "agenteval_otel.checks.PerformanceCheck"),
    ("agenteval_otel.evaluation.ReliabilityEvaluator", "agenteval_otel.checks.ReliabilityCheck"),
    ("agenteval_otel.checks.AccuracyEvaluator", "agenteval_otel.checks.AccuracyCheck"),
    ("agenteval_otel.evaluation.Evaluator", "agenteval_otel.evaluation.LiveRunner"),
    ("agenteval_otel.evaluation.Grader", "agenteval_otel.experiments.graders.Grader"),
])
def test_an_old_name_is_a_deprecated_alias_of_the_new_one(old: str, new: str) -> None:
    old_module, _, old_name = old.rpartition(".")
    new_module, _, new_name = new.rpartition(".")
    with pytest.warns(DeprecationWarning, match=old_name):
        value = getattr(importlib.import_module(old_module), old_name)
    assert value is getattr(importlib.import_module(new_module), new_name)


def test_a_name_that_never_existed_is_still_an_attribute_error() -> None:
    with pytest.raises(ImportError):
        importlib.import_module("agenteval_otel.evaluation.no_such_module")
    with pytest.raises(AttributeError):
        importlib.import_module("agenteval_otel.evaluation").NoSuchName  # noqa: B018
