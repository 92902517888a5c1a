"""Report files as evaluation sinks: each writes the whole report when the run finishes.

>>> from agenteval_otel.evaluation.results import EvalCaseResult, EvalReport
>>> sink = ReportFile("/tmp/agenteval-doctest-report.xml", "junit")
>>> sink.finish(EvalReport.from_results("demo", [EvalCaseResult(eval_id="a", passed=True)]))
>>> sink.written.name
'agenteval-doctest-report.xml'
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from agenteval_otel.evaluation.results import EvalCaseResult, EvalReport
from agenteval_otel.reports.html import write_html
from agenteval_otel.reports.junit import write_junit

__all__ = ["ReportFile", "ReportFormat"]

ReportFormat = Literal["json", "junit", "html"]

_WRITERS: dict[str, Callable[[EvalReport, Path], Path]] = {
    "json": lambda report, path: report.save(path),
    "junit": write_junit,
    "html": write_html,
}


class ReportFile:
    """Writes the run's report to ``path`` as ``format`` (JSON, JUnit XML or HTML) at the end of
    the run; ``written`` is the path once it has been written."""

    def __init__(self, path: str | os.PathLike[str], format: ReportFormat) -> None:
        if format not in _WRITERS:
            raise ValueError(f"format must be one of {', '.join(_WRITERS)}, got {format!r}")
        self.path = Path(path)
        self.format = format
        self.written: Path | None = None

    def submit(self, result: EvalCaseResult) -> None:
        """Case results are written with the whole report, in :meth:`finish`."""

    def finish(self, report: EvalReport) -> None:
        """Write the report."""
        self.written = _WRITERS[self.format](report, self.path)

    def force_flush(self, timeout: float | None = None) -> bool:
        """Nothing is buffered."""
        return True

    def shutdown(self, timeout: float | None = None) -> bool:
        """Nothing to release."""
        return True
