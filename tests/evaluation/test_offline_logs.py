"""Scoring stored traces whose content lives in log records: the log files ride along."""

from __future__ import annotations

from pathlib import Path

from agenteval_otel import CriterionConfig, EvalConfig, evaluate_traces
from tests.ground_truth import ground_truth_eval_set

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus" / "openai_v2_events"
CONFIG = EvalConfig(criteria={"trajectory_match": CriterionConfig.trajectory(1.0, check_args=True),
                              "response_match": CriterionConfig.response(1.0)})


def test_log_files_given_beside_the_traces_or_among_them() -> None:
    eval_set = ground_truth_eval_set(CORPUS)
    single_turn = [c for c in eval_set.eval_cases if len(c.conversation) == 1]
    eval_set = eval_set.model_copy(update={"eval_cases": single_turn})
    traces, logs = sorted(CORPUS.glob("*.otlp.json")), sorted(CORPUS.glob("*.logs.json"))
    separate = evaluate_traces(eval_set, traces, CONFIG, logs=logs)
    mixed = evaluate_traces(eval_set, [*traces, *logs], CONFIG)
    without = evaluate_traces(eval_set, traces, CONFIG)
    assert separate.summary.passed_cases == mixed.summary.passed_cases == len(single_turn) == 3
    assert without.summary.passed_cases == 0  # the content is only in the logs
