"""The results stage: sinks get every result as it is scored; one that raises is isolated."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import pytest

from agenteval_otel import CriterionConfig, EvalConfig, EvalSetBuilder, evaluate_traces
from agenteval_otel.criteria import CriterionContext, criterion
from agenteval_otel.evaluation._live import evaluate
from agenteval_otel.reports._writers import ReportFile
from agenteval_otel.results._results import EvalCaseResult, EvalReport
from agenteval_otel.results._run_file import RunFile
from agenteval_otel.results._sinks import EvaluationSink, SinkGroup
from agenteval_otel.trajectory import Trajectory


class Raising:
    """A sink whose every method raises."""

    def __init__(self) -> None:
        self.calls = 0

    def submit(self, result: EvalCaseResult) -> None:
        self.calls += 1
        raise OSError("disk full")

    def finish(self, report: EvalReport) -> None:
        raise OSError("disk full")

    def force_flush(self, timeout: float | None = None) -> bool:
        raise OSError("disk full")

    def shutdown(self, timeout: float | None = None) -> bool:
        raise OSError("disk full")


class Collecting:
    def __init__(self) -> None:
        self.results: list[str] = []
        self.report: EvalReport | None = None

    def submit(self, result: EvalCaseResult) -> None:
        self.results.append(result.eval_id)

    def finish(self, report: EvalReport) -> None:
        self.report = report

    def force_flush(self, timeout: float | None = None) -> bool:
        return True

    def shutdown(self, timeout: float | None = None) -> bool:
        return True


def _eval_set():
    return EvalSetBuilder.quick(("a", "A"), ("b", "B"), ("c", "C"))


def test_sinks_are_evaluation_sinks(tmp_path: Path) -> None:
    run_file = RunFile(tmp_path / "run.jsonl", "set", EvalConfig.default(include_judge=False))
    for sink in (run_file, ReportFile(tmp_path / "r.json", "json"), Collecting()):
        assert isinstance(sink, EvaluationSink)


@pytest.mark.promise(12)
def test_a_raising_sink_never_aborts_the_run_nor_starves_the_others(tmp_path: Path, caplog) -> None:
    raising, collecting = Raising(), Collecting()
    config = EvalConfig.default(include_judge=False)
    eval_set = _eval_set()
    run_file = RunFile(tmp_path / "run.jsonl", eval_set.eval_set_id, config)
    run_file.open(resume=False)
    report_file = ReportFile(tmp_path / "report.json", "json")
    with caplog.at_level(logging.WARNING, logger="agenteval_otel.results._sinks"):
        report = evaluate(eval_set, lambda q: q.upper(), config, sinks=[raising, run_file, collecting, report_file])
    run_file.shutdown()
    assert report.summary.total_cases == 3 and report.summary.passed_cases == 3
    assert raising.calls == 3  # it kept receiving results after failing
    assert sorted(collecting.results) == sorted(c.eval_id for c in eval_set.eval_cases)
    assert collecting.report is report
    lines = (tmp_path / "run.jsonl").read_text().splitlines()
    assert len(lines) == 4  # header + 3 results
    assert json.loads((tmp_path / "report.json").read_text())["summary"]["total_cases"] == 3
    warnings = [r for r in caplog.records if "disk full" in str(r.exc_info)]
    assert len(warnings) == 3  # once per failing method (submit, finish, force_flush), not per call


def test_offline_runs_feed_sinks_too() -> None:
    collecting = Collecting()
    runs = [Trajectory(user_input=q, final_response=q.upper()) for q in ("a", "b", "c")]
    report = evaluate_traces(_eval_set(), runs, sinks=[Raising(), collecting])
    assert report.summary.passed_cases == 3 and len(collecting.results) == 3


@pytest.mark.promise(7)
def test_group_flush_and_shutdown_report_failure() -> None:
    group = SinkGroup([Collecting(), Raising()])
    assert group.force_flush(timeout=1) is False
    assert group.shutdown(timeout=1) is False
    assert SinkGroup([Collecting()]).shutdown() is True
    assert group.errors == {1: 2}


@pytest.mark.promise(12, 17)
def test_a_hung_criterion_leaves_a_complete_report() -> None:
    @criterion("never_returns_for_test")
    async def never_returns(ctx: CriterionContext) -> float:
        await asyncio.Event().wait()
        return 1.0

    config = EvalConfig(criteria={"response_match": CriterionConfig.response(0.7),
                                  "never_returns_for_test": CriterionConfig()})
    started = time.perf_counter()
    report = evaluate(_eval_set(), lambda q: q.upper(), config, criterion_timeout_s=0.3)
    assert time.perf_counter() - started < 10
    assert report.summary.total_cases == 3 and report.summary.error_cases == 3
    for case in report.results:
        hung = next(r for r in case.criterion_results if r.criterion == "never_returns_for_test")
        scored = next(r for r in case.criterion_results if r.criterion == "response_match")
        assert hung.error_type == "TimeoutError" and scored.passed


@pytest.mark.parametrize("timeout", [None, 0.5])
def test_run_file_is_a_sink_with_idempotent_shutdown(tmp_path: Path, timeout: float | None) -> None:
    run_file = RunFile(tmp_path / "run.jsonl", "set", EvalConfig.default(include_judge=False))
    run_file.open(resume=False)
    run_file.submit(EvalCaseResult(eval_id="x", passed=True))
    assert run_file.force_flush(timeout) is True
    assert run_file.shutdown(timeout) is True and run_file.shutdown(timeout) is True
    assert run_file.force_flush(timeout) is False
