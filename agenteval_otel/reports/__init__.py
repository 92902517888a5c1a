"""Everything that renders for people: the console report (rich), the eval-set and trajectory
tables, the report files (JSON, JUnit XML, CSV, one self-contained HTML page), the plots (inline
SVG) they and other pages draw, and the local viewer over the run history (``agenteval view``).

>>> from agenteval_otel.evalsets import EvalSetBuilder
>>> from agenteval_otel.evaluation import evaluate
>>> from agenteval_otel.reports import summary_line
>>> summary_line(evaluate(EvalSetBuilder.quick(("Hi", "Hello!")), agent=lambda query: "Hello!"))[:30]
'1/1 passed, 0 failed, 0 errore'
"""

from agenteval_otel.reports._console import (
    case_diff,
    coverage_lines,
    criteria_table,
    eval_set_table,
    print_report,
    results_table,
    runs_table,
    summary_line,
)
from agenteval_otel.reports._csv import CSV_COLUMNS, csv_lines, write_csv
from agenteval_otel.reports._diff import TOOL_CRITERION, tool_call_rows
from agenteval_otel.reports._experiments import (
    comparison_forest_svg,
    comparison_html,
    comparison_table,
    experiment_table,
)
from agenteval_otel.reports._history import baseline_forest_svg, baseline_table, history_table
from agenteval_otel.reports._html import render_html, write_html
from agenteval_otel.reports._judge import judge_lines, usage_text
from agenteval_otel.reports._junit import junit_xml, write_junit
from agenteval_otel.reports._plots import (
    Estimate,
    bar_chart_svg,
    bin_counts,
    distribution_svg,
    forest_plot_svg,
    histogram_svg,
    line_chart_svg,
    percentiles,
)
from agenteval_otel.reports._progress import ProgressSink, RunProgress, WorkRead, progress_sink
from agenteval_otel.reports._scale import ReportLimits, scaled_report
from agenteval_otel.reports._trajectories import iter_trajectories_json, trajectories_json, trajectories_table
from agenteval_otel.reports._viewer import LOOPBACK, TraceLink, Viewer, viewer_server
from agenteval_otel.reports._writers import ReportFile, ReportFormat

__all__ = [
    # the console
    "case_diff",
    "coverage_lines",
    "criteria_table",
    "eval_set_table",
    "print_report",
    "results_table",
    "runs_table",
    "summary_line",
    # long runs
    "ProgressSink",
    "RunProgress",
    "WorkRead",
    "progress_sink",
    # experiments
    "comparison_forest_svg",
    "comparison_html",
    "comparison_table",
    "experiment_table",
    # the run history
    "baseline_forest_svg",
    "baseline_table",
    "history_table",
    # trajectories
    "iter_trajectories_json",
    "trajectories_json",
    "trajectories_table",
    # report files
    "CSV_COLUMNS",
    "ReportFile",
    "ReportFormat",
    "ReportLimits",
    "csv_lines",
    "scaled_report",
    "write_csv",
    "junit_xml",
    "render_html",
    "write_html",
    "write_junit",
    # plots (inline SVG)
    "Estimate",
    "bar_chart_svg",
    "bin_counts",
    "distribution_svg",
    "forest_plot_svg",
    "histogram_svg",
    "line_chart_svg",
    "percentiles",
    # the local viewer
    "LOOPBACK",
    "TraceLink",
    "Viewer",
    "viewer_server",
    # shared by every report
    "TOOL_CRITERION",
    "judge_lines",
    "tool_call_rows",
    "usage_text",
]
