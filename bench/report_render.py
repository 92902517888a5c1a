"""The HTML report at archive scale: its size and how long headless Chromium takes to load it.

    python bench/report_render.py [--cases 20000] [--rounds 5]

Builds the report of ``--cases`` weather invocations (one failed case in fifty, two criteria,
latency and tokens per case) with ``write_html`` at its default limits, then loads the file in
headless Chromium (Playwright, ``/usr/bin/chromium``) ``--rounds`` times and prints the median
load time (navigation to the ``load`` event, wall clock) beside the targets: under 5 MB, within
1 s. Exits 1 when a target is missed, 2 when Chromium or Playwright is missing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _targets import Targets

from agenteval_otel.reports import write_html
from agenteval_otel.results import CriterionResult, EvalCaseResult, EvalReport, InvocationResult

TARGET_BYTES = 5_000_000
TARGET_LOAD_S = 1.0
CHROMIUM = Path("/usr/bin/chromium")


def _case(i: int) -> EvalCaseResult:
    failed = i % 50 == 7
    trajectory = CriterionResult(criterion="trajectory_match", score=0.5 if failed else 1.0, passed=not failed,
                                 threshold=0.8, reason="expected get_weather(city='Paris'), got get_weather()"
                                 if failed else "")
    response = CriterionResult(criterion="response_match", score=0.55 + (i % 40) / 100, passed=True, threshold=0.5)
    turn = InvocationResult(invocation_id=f"turn-{i}", user_input=f"Weather in city {i}?",
                            actual_response="Sunny, 21°C.", expected_response="Sunny, 21°C.",
                            criterion_results=[trajectory, response], trace_id=f"{i:032x}", span_id=f"{i:016x}")
    return EvalCaseResult(eval_id=f"weather-{i:05d}", passed=not failed, criterion_results=[trajectory, response],
                          invocation_results=[turn], trace_id=turn.trace_id, span_id=turn.span_id,
                          metrics={"duration_s": 0.4 + (i % 97) / 50, "input_tokens": 300.0 + i % 211,
                                   "output_tokens": 40.0 + i % 37})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("needs playwright: pip install -e '.[browser]'", file=sys.stderr)
        return 2
    if not CHROMIUM.exists():
        print(f"needs {CHROMIUM}", file=sys.stderr)
        return 2
    report = EvalReport.from_results("weather", [_case(i) for i in range(args.cases)])
    with tempfile.TemporaryDirectory() as folder:
        path = write_html(report, Path(folder) / "report.html")
        size = path.stat().st_size
        loads = []
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
            for _ in range(args.rounds):
                page = browser.new_page()
                started = time.perf_counter()
                page.goto(path.as_uri(), wait_until="load")
                loads.append(time.perf_counter() - started)
                page.close()
            browser.close()
    targets = Targets("report_render")
    megabytes = targets.figure("HTML report size", size / 1e6, unit=" MB", at_most=TARGET_BYTES / 1e6)
    load = targets.figure("Chromium load", statistics.median(loads), unit=" s", digits=3, at_most=TARGET_LOAD_S)
    print(f"HTML report of {args.cases:,} invocations: {megabytes}; Chromium load, median of {args.rounds}: "
          f"{load}, min {min(loads):.3f} s, max {max(loads):.3f} s")
    return targets.finish()


if __name__ == "__main__":
    sys.exit(main())
