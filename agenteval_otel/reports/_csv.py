"""The report as CSV for spreadsheets: one row per case and criterion, written as the results are
read (one case at a time, never the whole table in memory).

A turn's criterion results are one row each (``invocation`` is the turn's number, from 1); a
criterion scored only over the whole case (none of its turns has it) is one row with no turn
number; a case with no criterion result (it could not be run) is one row with no criterion and
its error as the reason. ``passed`` is ``true``, ``false`` or ``error`` (the criterion could not
score). ``latency_s`` and ``tokens`` are the case's (agent time in seconds,
input and output tokens).

>>> import csv, io
>>> from agenteval_otel.results import CriterionResult, EvalCaseResult, EvalReport
>>> verdict = CriterionResult(criterion="final_response_match", score=1.0, passed=True, threshold=0.8)
>>> report = EvalReport.from_results("s", [EvalCaseResult(eval_id="a", passed=True, criterion_results=[verdict])])
>>> rows = list(csv.DictReader(io.StringIO("".join(csv_lines(report)))))
>>> rows[0]["eval_id"], rows[0]["criterion"], rows[0]["score"], rows[0]["passed"]
('a', 'final_response_match', '1.0', 'true')
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator
from pathlib import Path

from agenteval_otel.reports._scale import case_latency, case_tokens
from agenteval_otel.results import CriterionResult, EvalCaseResult, EvalReport

__all__ = ["CSV_COLUMNS", "csv_lines", "write_csv"]

CSV_COLUMNS = ("eval_id", "invocation", "criterion", "score", "threshold", "passed", "reason",
               "trace_id", "span_id", "latency_s", "tokens")
"""The columns of the CSV report, in order."""


def write_csv(report: EvalReport, path: str | os.PathLike[str]) -> Path:
    """Write ``report`` to ``path`` as CSV (UTF-8, a header row), creating parent folders; the path."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    with file.open("w", encoding="utf-8", newline="") as out:
        out.writelines(csv_lines(report))
    return file


def csv_lines(report: EvalReport) -> Iterator[str]:
    """The CSV text of ``report``, one line (a record) at a time."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def line(row: tuple[object, ...]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(row)
        return buffer.getvalue()

    yield line(CSV_COLUMNS)
    for case in report.results:
        for row in _rows(case):
            yield line(row)


def _rows(case: EvalCaseResult) -> Iterator[tuple[object, ...]]:
    latency, tokens = case_latency(case), case_tokens(case)
    by_turn = set()
    for number, turn in enumerate(case.invocation_results, 1):
        for result in turn.criterion_results:
            by_turn.add(result.criterion)
            yield _row(case.eval_id, number, result, turn.trace_id or case.trace_id,
                       turn.span_id or case.span_id, latency, tokens)
    whole = [r for r in case.criterion_results if r.criterion not in by_turn]
    for result in whole:
        yield _row(case.eval_id, None, result, case.trace_id, case.span_id, latency, tokens)
    if not by_turn and not whole:
        yield (case.eval_id, "", "", "", "", "false", case.error or "", case.trace_id or "", case.span_id or "",
               _number(latency), _number(tokens))


def _row(eval_id: str, invocation: int | None, result: CriterionResult, trace_id: str | None,
         span_id: str | None, latency: float | None, tokens: float | None) -> tuple[object, ...]:
    passed = "error" if result.error else "true" if result.passed else "false"
    return (eval_id, "" if invocation is None else invocation, result.criterion, repr(result.score),
            repr(result.threshold), passed, result.explanation, trace_id or "", span_id or "",
            _number(latency), _number(tokens))


def _number(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else repr(value)
