"""The console report: stats, a row per case, the diff of each case that did not pass."""

from __future__ import annotations

import pytest
from rich.console import Console

from agenteval_otel import EvalReport
from agenteval_otel.reports._console import print_report, summary_line
from tests.reports.conftest import LONG_IDS


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


def _table_rows(text: str, title: str) -> list[list[str]]:
    """The cells of each line of the table titled ``title``, in order."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == title)
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith(("┏", "┃", "┡", "│", "└")):
            break
        if line.startswith("│"):
            rows.append([cell.strip() for cell in line.split("│")[1:-1]])
    return rows


def test_repeated_runs_show_pass_at_k(live_report: EvalReport) -> None:
    rows = _table_rows(_render(live_report), "repeated runs")
    assert rows == [
        ["weather_in_paris_then_fahrenheit_conversion", "2", "2", "100%", "100%", "100%"],
        ["tokyo_weather_expected_but_never_checked", "2", "0", "0%", "0%", "0%"],
        ["an_agent_exception_with_a_secret_inside", "2", "0", "0%", "0%", "0%"],
    ]


def test_tables_stay_readable_at_80_columns(live_report: EvalReport) -> None:
    console = Console(record=True, width=80, color_system=None)
    print_report(live_report, console)
    text = console.export_text()
    tables = [line for line in text.splitlines() if line[:1] in "┏┃┡│└"]
    assert tables and all(len(line) <= 80 for line in tables)
    results = _table_rows(text, "weather — results")
    cut = [line for line in tables if "…" in line]  # only the why column previews (lines follow)
    assert cut and all(cell.endswith("…") for cell in (line.split("│")[-2].strip() for line in cut))
    assert not [cell for title in ("criteria", "repeated runs") for row in _table_rows(text, title)
                for cell in row if "…" in cell]
    cases = "".join(row[0] for row in results)
    statuses = [row[1] for row in results if row[1]]
    assert all(case_id in cases for case_id in LONG_IDS)
    assert statuses == ["passed", "failed", "errored"]
    scores = "\n".join(row[2] for row in results)
    assert "trajectory_match 1.00 ✓" in scores and "tool_name_match  0.50 ✗" in scores


def test_a_wide_console_has_a_column_per_criterion(live_report: EvalReport) -> None:
    header = next(line for line in _render(live_report).splitlines() if line.startswith("┃ case"))
    assert [cell.strip() for cell in header.split("┃")[1:-1]][:5] == [
        "case", "status", "trajectory_match", "response_match", "tool_name_match"]


@pytest.mark.promise(18)
def test_the_summary_says_how_many_older_runs_were_set_aside(live_report: EvalReport) -> None:
    results = [live_report.results[0].model_copy(update={"set_aside_runs": 2})]
    offline = EvalReport.from_results("weather", results)
    assert offline.summary.set_aside_runs == 2
    assert "2 older run(s) set aside: the latest run of each case was scored" in summary_line(offline)
    assert "set aside" not in summary_line(live_report)


def test_the_eval_set_table_stays_readable_at_80_columns() -> None:
    from agenteval_otel import EvalSet
    from agenteval_otel.reports._console import eval_set_table
    from tests.conftest import REPO_ROOT

    console = Console(record=True, width=80, color_system=None)
    console.print(eval_set_table(EvalSet.load(REPO_ROOT / "examples" / "weather_agent.evalset.json")))
    lines = console.export_text().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert not [line for line in lines if "…" in line]
    tools = "".join(line.split("│")[4].strip() for line in lines if line.startswith("│"))
    assert "celsius_to_fahrenheit" in tools
