"""The run history: what a run records and reads back, pruning, two writers at once, and a
store that is locked or not a history (never written to, never in the way)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from agenteval_otel.errors import HistoryError
from agenteval_otel.judge.usage import JudgeUsage
from agenteval_otel.results import (
    CriterionResult,
    EvalCaseResult,
    EvalReport,
    HistoryStore,
    InvocationResult,
    compare_runs,
)
from agenteval_otel.results import _history as history_module
from tests.conftest import REPO_ROOT


def _result(name: str, score: float, threshold: float = 0.5, **extra: object) -> CriterionResult:
    return CriterionResult(criterion=name, score=score, passed=score >= threshold, threshold=threshold,
                           reason=f"{name} scored {score}", **extra)  # type: ignore[arg-type]


def _report(scores: dict[str, float], eval_set: str = "weather") -> EvalReport:
    cases = []
    for eval_id, score in scores.items():
        judged = _result("helpful", score, judge_usage=JudgeUsage(calls=1, input_tokens=100, output_tokens=10,
                                                                  seconds=score + 1))
        exact = _result("exact", 1.0)
        turn = InvocationResult(invocation_id=f"{eval_id}-t1", criterion_results=[exact, judged],
                                trace_id=f"trace-{eval_id}", span_id=f"span-{eval_id}")
        cases.append(EvalCaseResult(eval_id=eval_id, passed=judged.passed, criterion_results=[exact, judged],
                                    invocation_results=[turn], trace_id=f"trace-{eval_id}", span_id=f"span-{eval_id}",
                                    metrics={"duration_s": 2.0 * score, "input_tokens": 50.0, "output_tokens": 5.0}))
    return EvalReport.from_results(eval_set, cases)


def test_a_run_reads_back_with_its_statistics_scores_and_failures(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "deep" / "history.db")
    info = store.record(_report({"c1": 1.0, "c2": 0.25, "c3": 0.75}), command="run", run_id="r1",
                        labels={"branch": "main"})
    assert (info.id, info.command, info.source, info.labels) == ("r1", "run", "weather", {"branch": "main"})
    assert (info.cases, info.passed, info.failed, info.failures) == (3, 2, 1, 1)
    assert info.criteria_means == {"exact": 1.0, "helpful": pytest.approx(2.0 / 3)}
    assert info.latency is not None and info.latency.p50 == 1.5 and info.tokens is not None and info.tokens.p99 == 55
    exact, helpful = store.criteria("r1")
    assert (helpful.name, helpful.n, helpful.passed, helpful.threshold) == ("helpful", 3, 2, 0.5)
    assert exact.judge_latency is None and helpful.judge_latency is not None
    assert helpful.judge_latency.p50 == 1.75 and helpful.judge_tokens is not None and helpful.judge_tokens.p90 == 110
    cases = store.cases("r1")
    assert [(c.eval_id, c.status, c.scores["helpful"], c.verdicts["helpful"]) for c in cases] == [
        ("c1", "passed", 1.0, "passed"), ("c2", "failed", 0.25, "failed"), ("c3", "passed", 0.75, "passed")]
    [failure] = store.failures("r1")
    assert (failure.eval_id, failure.invocation_id, failure.criterion, failure.score, failure.trace_id,
            failure.span_id) == ("c2", "c2-t1", "helpful", 0.25, "trace-c2", "span-c2")
    assert failure.reason == "helpful scored 0.25"
    assert store.run("r1") == info and store.latest() == info


def test_a_summary_alone_is_a_run_without_cases(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.db")
    store.record(_report({"c1": 1.0}).summary, command="serve", run_id="s1", source="online")
    info = store.run("s1")
    assert (info.command, info.source, info.cases, info.latency) == ("serve", "online", 1, None)
    assert [(c.name, c.threshold) for c in store.criteria("s1")] == [("exact", None), ("helpful", None)]
    assert store.cases("s1") == [] and store.failures("s1") == []


def test_latest_before_and_by_source_and_a_missing_run_names_the_store(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.db")
    for run_id, source in (("a1", "a"), ("b1", "b"), ("a2", "a")):
        store.record(_report({"c1": 1.0}, eval_set=source), command="eval", run_id=run_id)
    latest_a, latest_before = store.latest(source="a"), store.latest(before="a2")
    assert latest_a is not None and latest_a.id == "a2"
    assert latest_before is not None and latest_before.id == "b1"
    assert store.latest(source="c") is None
    with pytest.raises(HistoryError, match=r"history\.db: no run 'zz' in the history"):
        store.run("zz")


def test_pruning_keeps_the_newest_runs_and_their_rows_only(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    store = HistoryStore(path, keep=3)
    for number in range(5):
        store.record(_report({"c1": 1.0, "c2": 0.0}), command="run", run_id=f"r{number}")
    assert [run.id for run in store.runs()] == ["r4", "r3", "r2"]
    assert [run.id for run in store.runs(2)] == ["r4", "r3"]
    assert store.prune(1) == 2
    assert [run.id for run in store.runs()] == ["r4"]
    with sqlite3.connect(path) as db:  # nothing of a pruned run is left behind
        assert {table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                for table in ("criteria", "cases", "scores", "failures")} == {
            "criteria": 2, "cases": 2, "scores": 4, "failures": 1}


def test_keep_comes_from_the_environment_and_a_bad_value_is_named(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTEVAL_HISTORY_KEEP", "7")
    assert HistoryStore(tmp_path / "h.db").keep == 7
    monkeypatch.setenv("AGENTEVAL_HISTORY_KEEP", "many")
    with pytest.raises(HistoryError, match="AGENTEVAL_HISTORY_KEEP='many': expected a positive whole number"):
        HistoryStore(tmp_path / "h.db")


def test_a_baseline_comparison_pairs_cases_and_lists_changed_verdicts(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history.db")
    before = store.record(_report({"c1": 1.0, "c2": 0.25, "c3": 1.0, "gone": 1.0}), command="run", run_id="r1")
    after = _report({"c1": 0.25, "c2": 1.0, "c3": 1.0, "new": 1.0})
    from agenteval_otel.results import case_scores

    comparison = compare_runs(before, store.cases("r1"), case_scores(after))
    helpful = next(delta for delta in comparison.criteria if delta.criterion == "helpful")
    assert (comparison.pairs, helpful.mean.pairs, helpful.mean.delta) == (3, 3, 0.0)
    assert helpful.pass_rate.mean_a == pytest.approx(2 / 3) and helpful.pass_rate.mean_b == pytest.approx(2 / 3)
    assert helpful.mean.test == "sign-flip permutation (exact)"
    assert [(c.eval_id, c.status_a, c.status_b) for c in comparison.newly_failed] == [("c1", "passed", "failed")]
    assert [c.eval_id for c in comparison.newly_passed] == ["c2"]
    assert (comparison.only_in_baseline, comparison.only_in_run) == (1, 1)


@pytest.mark.promise(1)
def test_a_file_that_is_not_a_history_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    path.write_bytes(b"not a database at all\n" * 100)
    before = path.read_bytes()
    with pytest.raises(HistoryError, match=r"history\.db: not a run history, or damaged .*left as it is"):
        HistoryStore(path).record(_report({"c1": 1.0}), command="run")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.db"]  # no -wal, no -shm, nothing else


def test_a_sqlite_file_of_something_else_or_a_newer_schema_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE mine (x)")
    with pytest.raises(HistoryError, match="not a run history"):
        HistoryStore(other).record(_report({"c1": 1.0}), command="run")
    newer = tmp_path / "newer.db"
    HistoryStore(newer).record(_report({"c1": 1.0}), command="run", run_id="r1")
    with sqlite3.connect(newer) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(HistoryError, match="schema version 99 is newer than this agenteval reads"):
        HistoryStore(newer).runs()


@pytest.mark.promise(1)
def test_a_store_locked_by_another_writer_is_an_error_in_bounded_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    path = tmp_path / "history.db"
    HistoryStore(path).record(_report({"c1": 1.0}), command="run", run_id="r1")
    monkeypatch.setattr(history_module, "BUSY_TIMEOUT_S", 0.05)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        with pytest.raises(HistoryError, match="locked by another process"):
            HistoryStore(path).record(_report({"c1": 1.0}), command="run", run_id="r2")
        assert time.monotonic() - started < 5
    finally:
        holder.rollback()
        holder.close()
    assert [run.id for run in HistoryStore(path).runs()] == ["r1"]


WRITER = textwrap.dedent("""
    import sys
    from agenteval_otel.results import EvalCaseResult, EvalReport, HistoryStore
    store = HistoryStore(sys.argv[1])
    for number in range(int(sys.argv[3])):
        report = EvalReport.from_results("set", [EvalCaseResult(eval_id=f"c{i}", passed=True) for i in range(20)])
        store.record(report, command="run", run_id=f"{sys.argv[2]}-{number}")
""")


def test_two_writer_processes_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "history.db"  # created by the writers themselves, both at once
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = {"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"}
    writers = [subprocess.Popen([sys.executable, str(script), str(path), name, "15"], env=env,
                                stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    errors = [writer.communicate(timeout=60)[1] for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0], errors
    runs = HistoryStore(path).runs()
    assert sorted(run.id for run in runs) == sorted(f"{name}-{n}" for name in "ab" for n in range(15))
    assert all(run.cases == 20 for run in runs)
    assert len(HistoryStore(path).cases("a-14")) == 20


def test_a_summary_sink_keeps_a_sessions_rolling_summary(tmp_path: Path) -> None:
    from agenteval_otel.results import SummarySink

    session = SummarySink()
    for case in _report({"c1": 1.0, "c2": 0.0}).results:
        session.submit(case)
    summary = session.summary()
    assert (summary.total_cases, summary.passed_cases, summary.criterion_stats["helpful"].mean) == (2, 1, 0.5)
    HistoryStore(tmp_path / "h.db").record(summary, command="serve", run_id="s", source="serve")
    assert HistoryStore(tmp_path / "h.db").run("s").criteria_means == {"exact": 1.0, "helpful": 0.5}


def test_a_long_run_held_compressed_is_recorded_without_decoding_every_case_at_once(tmp_path: Path) -> None:
    import tracemalloc

    from agenteval_otel.results import CaseResults

    report = _report({f"c{n}": (n % 4) / 4 for n in range(1500)})
    held = CaseResults()
    for result in report.results:
        held.append(result, compact=True)
    report.results = held
    store = HistoryStore(tmp_path / "history.db")

    def peak(work: Callable[[], object]) -> int:
        tracemalloc.start()
        try:
            work()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    every_case_decoded = peak(lambda: list(report.results))
    recorded = peak(lambda: store.record(report, command="eval", run_id="long"))
    assert recorded < every_case_decoded / 2
    assert (store.run("long").cases, len(store.cases("long"))) == (1500, 1500)
