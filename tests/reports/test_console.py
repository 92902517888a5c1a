"""The console report: stats, a row per case, the diff of each case that did not pass."""

from __future__ import annotations

from rich.console import Console

from agenteval_otel import EvalReport
from agenteval_otel.reports.console import print_report


def _render(report: EvalReport) -> str:
    console = Console(record=True, width=160, color_system=None)
    print_report(report, console)
    return console.export_text()


def test_console_report_shows_stats_rows_and_diffs(report: EvalReport) -> None:
    text = _render(report)
    assert "trajectory_match" in text and "pass rate" in text
    for case in ("run1_sequential_two_tools", "run2_parallel_calls", "ghost"):
        assert case in text
    assert "run2_parallel_calls — failed" in text
    assert "run3_streaming_sequential — passed" not in text  # passed cases get no diff panel
    assert "mismatch" in text
    assert "argument 'city': expected '<script>window.__pwned = 1</script>', got 'London'" in text
    assert "missing" in text and "book_flight()" in text
    assert text.rstrip().splitlines()[-1].startswith("1/5 passed, 2 failed, 2 errored")


def test_failure_lines_are_plain_and_whole(report: EvalReport) -> None:
    text = _render(report)
    assert ("  run2_parallel_calls: trajectory_match scored 0.50 < threshold 0.80: 1/2 expected "
            "call(s) matched") in text
    assert "  ghost: error: unmatched: no trace found" in text
