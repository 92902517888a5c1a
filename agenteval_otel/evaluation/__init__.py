"""The ways to run an evaluation, all on one ``Scorer``:

- **live** (``agenteval run``): ``evaluate`` / ``aevaluate`` / ``LiveRunner`` run an agent over an
  eval set, trace every turn and score it;
- **offline** (``agenteval eval``): ``evaluate_traces`` / ``aevaluate_traces`` score runs recorded
  earlier, with or without an eval set, read from a ``TraceSource`` (``TraceFileSource``,
  ``SpanSource``, ``TrajectorySource``, ``JaegerSource``, or your own);
- **batch** (``agenteval eval --engine ray``): ``evaluate_traces_on_ray``, the same offline run
  read, assembled and scored in parallel tasks on a Ray cluster (the ``ray`` extra);
- **online** (``agenteval serve``): ``OnlineEvaluator``, a span processor scoring live traces in
  the background, and ``EvaluationWorker``, the OTLP receiver that runs it behind the Collector.

Names load on first use, so importing this package costs nothing until a run starts.

>>> from agenteval_otel.evalsets import EvalSetBuilder
>>> from agenteval_otel.evaluation import evaluate
>>> evaluate(EvalSetBuilder.quick(("Hi", "Hello!")), agent=lambda query: "Hello!").passed
True
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

__all__ = [
    # live runs
    "LiveRunner",
    "aevaluate",
    "evaluate",
    # offline runs
    "CaseRuns",
    "RunChoice",
    "aevaluate_traces",
    "evaluate_traces",
    "iter_matches",
    # batch runs on a Ray cluster
    "evaluate_traces_on_ray",
    # where an offline run's traces come from
    "JaegerSource",
    "SpanSource",
    "TraceFileSource",
    "TraceSource",
    "TraceSourceLike",
    "TrajectorySource",
    "trace_source",
    # online runs
    "DEFAULT_GRPC_PORT",
    "DEFAULT_HTTP_PORT",
    "EvaluationWorker",
    "OnlineCounters",
    "OnlineEvaluator",
    "Spool",
    "SpoolCounters",
    "default_memory_budget",
    "trace_sampled",
    # scoring
    "Scorer",
    "aggregate_runs",
    "efficiency",
    "error_result",
    "invocation_key",
    "score_case",
    # conversations: where the user's turns come from
    "Conversation",
    "Message",
    "ScriptedTurns",
    "SimulatedUser",
    "UserReply",
    "UserTurns",
    "converse",
    "turns_for",
    # calling the agent under evaluation and capturing its turns
    "Agent",
    "AgentCaller",
    "AgentTurn",
    "AgentWithArun",
    "AgentWithRun",
    "OpenRoot",
    "TurnCapture",
    "abandoned_agent_threads",
    "agent_thread_cpu",
    "capture_for",
    "entry_point",
    "evaluation_tags",
    "is_async_callable",
    "load_agent",
    "reply_text",
    # the run's judge, and running coroutines from sync code
    "default_judge",
    "judge_client",
    "run_sync",
]

_MODULES = {
    "_live": ("LiveRunner", "aevaluate", "evaluate"),
    "_offline": ("CaseRuns", "RunChoice", "aevaluate_traces", "evaluate_traces", "iter_matches"),
    "_ray": ("evaluate_traces_on_ray",),
    "_worker": ("DEFAULT_GRPC_PORT", "DEFAULT_HTTP_PORT", "EvaluationWorker"),
    "_online": ("OnlineCounters", "OnlineEvaluator", "default_memory_budget", "trace_sampled"),
    "_spool": ("Spool", "SpoolCounters"),
    "_scoring": ("Scorer", "aggregate_runs", "efficiency", "error_result", "invocation_key", "score_case"),
    "_turns": ("Conversation", "Message", "ScriptedTurns", "SimulatedUser", "UserReply", "UserTurns", "converse",
               "turns_for"),
    "_agents": ("Agent", "AgentCaller", "AgentTurn", "AgentWithArun", "AgentWithRun", "abandoned_agent_threads",
                "agent_thread_cpu", "entry_point", "is_async_callable", "load_agent", "reply_text"),
    "_capture": ("OpenRoot", "TurnCapture", "capture_for", "evaluation_tags"),
    "_judging": ("default_judge", "judge_client"),
    "_sync": ("run_sync",),
}
_HOME = {name: f"{__name__}.{module}" for module, names in _MODULES.items() for name in names}

# Names this package exported before eval sets, criteria and results became packages of their own:
# they still import from here, unchanged.
_MOVED = {
    "agenteval_otel.evalsets": ("ConversationScenario", "EvalCase", "EvalSet", "EvalSetBuilder", "Invocation",
                                "MessageContent", "SessionInput", "ToolCall"),
    "agenteval_otel.criteria": ("ArgMatch", "ArgRule", "CriterionConfig", "CriterionContext", "EvalConfig",
                                "MatchType", "Rubric", "Score", "UserSimulatorConfig", "criterion"),
    "agenteval_otel.traces.sources": ("JaegerSource", "SpanSource", "TraceFileSource", "TraceSource",
                                      "TraceSourceLike", "TrajectorySource", "trace_source"),
    "agenteval_otel.results": ("CallbackSink", "CriterionResult", "CriterionStats", "EvalCaseResult", "EvalReport",
                               "EvalSummary", "EvaluationSink", "EvidenceRow", "InvocationResult", "SinkGroup",
                               "TraceExport"),
}
_HOME.update({name: package for package, names in _MOVED.items() for name in names})

# Names of packages that sit above this one (the checks, the experiments' graders) and one renamed
# class: deprecated, resolved by name at run time with a warning.
_DEPRECATED = {
    "AccuracyEvaluationResult": ("agenteval_otel.checks", "AccuracyEvaluationResult"),
    "AccuracyEvaluator": ("agenteval_otel.checks", "AccuracyCheck"),
    "EvaluationScore": ("agenteval_otel.checks", "EvaluationScore"),
    "ExpectedToolCall": ("agenteval_otel.checks", "ExpectedToolCall"),
    "PerformanceEvaluationResult": ("agenteval_otel.checks", "PerformanceEvaluationResult"),
    "PerformanceEvaluator": ("agenteval_otel.checks", "PerformanceCheck"),
    "PerformanceRunResult": ("agenteval_otel.checks", "PerformanceRunResult"),
    "ReliabilityEvaluationResult": ("agenteval_otel.checks", "ReliabilityEvaluationResult"),
    "ReliabilityEvaluator": ("agenteval_otel.checks", "ReliabilityCheck"),
    "ToolCallCheck": ("agenteval_otel.checks", "ToolCallCheck"),
    "GradeResult": ("agenteval_otel.experiments.graders", "GradeResult"),
    "Grader": ("agenteval_otel.experiments.graders", "Grader"),
    "GraderModelConfig": ("agenteval_otel.experiments.graders", "GraderModelConfig"),
    "Evaluator": (__name__, "LiveRunner"),
}

if TYPE_CHECKING:
    from agenteval_otel.evaluation._agents import (
        Agent,
        AgentCaller,
        AgentTurn,
        AgentWithArun,
        AgentWithRun,
        abandoned_agent_threads,
        agent_thread_cpu,
        entry_point,
        is_async_callable,
        load_agent,
        reply_text,
    )
    from agenteval_otel.evaluation._capture import OpenRoot, TurnCapture, capture_for, evaluation_tags
    from agenteval_otel.evaluation._judging import default_judge, judge_client
    from agenteval_otel.evaluation._live import LiveRunner, aevaluate, evaluate
    from agenteval_otel.evaluation._offline import (
        CaseRuns,
        RunChoice,
        aevaluate_traces,
        evaluate_traces,
        iter_matches,
    )
    from agenteval_otel.evaluation._online import (
        OnlineCounters,
        OnlineEvaluator,
        default_memory_budget,
        trace_sampled,
    )
    from agenteval_otel.evaluation._ray import evaluate_traces_on_ray
    from agenteval_otel.evaluation._scoring import (
        Scorer,
        aggregate_runs,
        efficiency,
        error_result,
        invocation_key,
        score_case,
    )
    from agenteval_otel.evaluation._spool import Spool, SpoolCounters
    from agenteval_otel.evaluation._sync import run_sync
    from agenteval_otel.evaluation._turns import (
        Conversation,
        Message,
        ScriptedTurns,
        SimulatedUser,
        UserReply,
        UserTurns,
        converse,
        turns_for,
    )
    from agenteval_otel.evaluation._worker import DEFAULT_GRPC_PORT, DEFAULT_HTTP_PORT, EvaluationWorker
    from agenteval_otel.traces.sources import (
        JaegerSource,
        SpanSource,
        TraceFileSource,
        TraceSource,
        TraceSourceLike,
        TrajectorySource,
        trace_source,
    )


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home), name)
    elif name in _DEPRECATED:
        module, new_name = _DEPRECATED[name]
        warnings.warn(f"agenteval_otel.evaluation.{name} is deprecated; use {module}.{new_name}",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(module), new_name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME, *_DEPRECATED})
