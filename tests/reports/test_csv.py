"""The CSV report: one row per case and criterion, read back with the csv module value for value."""

from __future__ import annotations

import csv
from pathlib import Path

from agenteval_otel import EvalReport
from agenteval_otel.reports import CSV_COLUMNS, ReportFile
from agenteval_otel.results import CriterionResult, EvalCaseResult, InvocationResult
from tests.reports.conftest import SCRIPT


def test_every_case_and_criterion_round_trips(report: EvalReport, tmp_path: Path) -> None:
    tricky = CriterionResult(criterion="tone", score=0.25, passed=False, threshold=0.5,
                             reason=f'said "no",\nthen {SCRIPT}; 1,2')
    turns = [InvocationResult(invocation_id=f"t{n}", criterion_results=[tricky], trace_id="ab" * 16,
                              span_id=f"{n:016x}") for n in (1, 2)]
    conversation = EvalCaseResult(eval_id="conversation", passed=False, invocation_results=turns,
                                  criterion_results=[tricky, CriterionResult(criterion="goal", score=1.0,
                                                                             passed=True, threshold=1.0)],
                                  trace_id="ab" * 16, span_id="0" * 15 + "1",
                                  metrics={"duration_s": 1.5, "input_tokens": 120.0, "output_tokens": 30.0})
    unrun = EvalCaseResult(eval_id="unrun", passed=False, error="no trace matched")
    everything = EvalReport.from_results("weather", [*report.results, conversation, unrun])
    sink = ReportFile(tmp_path / "report.csv", "csv")
    sink.finish(everything)
    with (tmp_path / "report.csv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    assert tuple(rows[0]) == CSV_COLUMNS

    expected = []
    for case in everything.results:
        by_turn = set()
        for number, turn in enumerate(case.invocation_results, 1):
            for r in turn.criterion_results:
                by_turn.add(r.criterion)
                expected.append((case.eval_id, str(number), r.criterion, r.score, r.threshold,
                                 "error" if r.error else str(r.passed).lower(), r.explanation,
                                 turn.trace_id or case.trace_id or "", turn.span_id or case.span_id or ""))
        for r in case.criterion_results:
            if r.criterion not in by_turn:
                expected.append((case.eval_id, "", r.criterion, r.score, r.threshold,
                                 "error" if r.error else str(r.passed).lower(), r.explanation,
                                 case.trace_id or "", case.span_id or ""))
    written = [(row["eval_id"], row["invocation"], row["criterion"], float(row["score"]), float(row["threshold"]),
                row["passed"], row["reason"], row["trace_id"], row["span_id"]) for row in rows if row["criterion"]]
    assert written == expected and len(written) >= 12

    conversation_rows = [row for row in rows if row["eval_id"] == "conversation"]
    assert [(row["invocation"], row["criterion"]) for row in conversation_rows] == [
        ("1", "tone"), ("2", "tone"), ("", "goal")]
    assert conversation_rows[0]["reason"] == f'said "no",\nthen {SCRIPT}; 1,2'
    assert {(row["latency_s"], row["tokens"]) for row in conversation_rows} == {("1.5", "150")}
    assert [row for row in rows if row["eval_id"] == "unrun"] == [dict(
        zip(CSV_COLUMNS, ["unrun", "", "", "", "", "false", "no trace matched", "", "", "", ""]))]
