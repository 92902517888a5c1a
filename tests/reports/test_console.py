"""The console report: stats, a row per case, the diff of each case that did not pass."""

from __future__ import annotations

from rich.console import Console

from agenteval_otel.reports.console import print_report
from tests.reports.sample_report import sample_report


def _render() -> str:
    console = Console(record=True, width=160, color_system=None)
    print_report(sample_report(), console)
    return console.export_text()


def test_console_report_shows_stats_rows_and_diffs() -> None:
    text = _render()
    assert "trajectory_match" in text and "pass rate" in text
    for case in ("run1_sequential_two_tools", "run2_parallel_calls", "unmatched"):
        assert case in text
    assert "passed" in text and "failed" in text and "errored" in text
    # the failed case's diff: a mismatched argument, a missing call
    assert "mismatch" in text and "argument 'city': expected 'Lyon <b>&</b>', got 'London'" in text
    assert 'missing   book_flight({"to": "Rome"})' in text or "book_flight" in text
    assert "run2_parallel_calls — failed" in text
    assert "run1_sequential_two_tools — passed" not in text  # passed cases get no diff panel
    assert text.rstrip().splitlines()[-1].startswith("1/4 passed, 1 failed, 2 errored")


def test_failure_lines_are_plain_and_whole() -> None:
    text = _render()
    assert ("  run2_parallel_calls: trajectory_match scored 0.33 < threshold 1.00: 1/3 expected "
            "call(s) matched") in text
    assert "  unmatched: error: unmatched: no trace found" in text
