"""Report files as evaluation sinks: each writes the whole report when the run finishes, whole
or not at all (into a temporary file beside it, then moved onto its path), so a report that
could not be written leaves no cut-off file and says why (``error``).

Above ``limits.full_cases`` cases the JSON and HTML reports keep the aggregates and the first
failures in full, and count the rest (``ReportLimits``); the CSV and JUnit reports list every case.

A report may hold its results slim (a long offline run does): the JSON report still writes each
case's actual trajectory, set aside in a temporary file as each result is submitted.

>>> from agenteval_otel.results._results import EvalCaseResult, EvalReport
>>> sink = ReportFile("/tmp/agenteval-doctest-report.xml", "junit")
>>> sink.finish(EvalReport.from_results("demo", [EvalCaseResult(eval_id="a", passed=True)]))
>>> sink.written.name
'agenteval-doctest-report.xml'
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Literal

from agenteval_otel.reports._csv import write_csv
from agenteval_otel.reports._html import write_html
from agenteval_otel.reports._junit import write_junit
from agenteval_otel.reports._scale import ReportLimits, scaled_report
from agenteval_otel.results import EvalCaseResult, EvalReport, describe_error

__all__ = ["ReportFile", "ReportFormat"]

ReportFormat = Literal["json", "junit", "html", "csv"]

_WRITERS: dict[str, Callable[[EvalReport, Path], Path]] = {
    "json": lambda report, path: report.save(path),
    "junit": write_junit,
    "html": write_html,
    "csv": write_csv,
}


class ReportFile:
    """Writes the run's report to ``path`` as ``format`` (JSON, JUnit XML, HTML or CSV) at the
    end of the run; ``written`` is the path once it has been written, ``error`` why it could not
    be. ``limits``: how much of a large run the JSON and HTML reports list; ``tags``: each eval
    case's tags by eval id (the HTML report plots the pass rate per tag)."""

    def __init__(self, path: str | os.PathLike[str], format: ReportFormat, *, limits: ReportLimits | None = None,
                 tags: Mapping[str, Sequence[str]] | None = None) -> None:
        if format not in _WRITERS:
            raise ValueError(f"format must be one of {', '.join(_WRITERS)}, got {format!r}")
        self.path = Path(path)
        self.format = format
        self.limits = limits or ReportLimits()
        self.tags = dict(tags or {})
        self.written: Path | None = None
        self.error: str | None = None
        self._trajectories = _TrajectorySpool() if format == "json" else None

    def submit(self, result: EvalCaseResult) -> None:
        """Case results are written with the whole report, in :meth:`finish` (the JSON report
        sets each result's trajectory aside until then)."""
        if self._trajectories is not None:
            self._trajectories.put(result)

    def finish(self, report: EvalReport) -> None:
        """Write the report, whole or not at all; raises (after setting ``error``) if it could not."""
        trajectories = self._trajectories
        try:
            if trajectories is not None:
                kept = scaled_report(report, self.limits, self.tags)
                self.written = _atomically(self.path, lambda path: kept.save(path, trajectories.data_of))
            elif self.format == "html":
                self.written = _atomically(self.path, lambda path: write_html(report, path, limits=self.limits,
                                                                              tags=self.tags))
            else:
                self.written = _atomically(self.path, lambda path: _WRITERS[self.format](report, path))
        except Exception as exc:
            self.error = describe_error(exc)
            raise
        finally:
            if trajectories is not None:
                trajectories.close()

    def force_flush(self, timeout: float | None = None) -> bool:
        """Nothing is buffered."""
        return True

    def shutdown(self, timeout: float | None = None) -> bool:
        """Nothing to release."""
        return True


def _atomically(path: Path, write: Callable[[Path], object]) -> Path:
    """``write`` a temporary file beside ``path``, then move it onto ``path`` (an atomic rename):
    ``path`` is the whole new file or what it was before, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


class _TrajectorySpool:
    """The actual trajectories of submitted results (and of their runs), in a temporary file,
    by case and run; the last one submitted for a run stands."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._where: dict[tuple[str, str | None, str | None], tuple[int, int]] = {}

    @staticmethod
    def _key(eval_id: str, result: EvalCaseResult) -> tuple[str, str | None, str | None]:
        return eval_id, result.trace_id, result.span_id

    def put(self, result: EvalCaseResult) -> None:
        """Set aside the trajectories ``result`` carries."""
        for run in (result, *result.run_results):
            if run.actual_trajectory:
                if self._file is None:
                    self._file = tempfile.TemporaryFile()
                data = json.dumps([step.model_dump(mode="json") for step in run.actual_trajectory],
                                  ensure_ascii=False).encode()
                offset = self._file.seek(0, os.SEEK_END)
                self._file.write(data)
                self._where[self._key(result.eval_id, run)] = (offset, len(data))

    def _trajectory(self, eval_id: str, run: EvalCaseResult) -> Any:
        where = self._where.get(self._key(eval_id, run))
        if self._file is None or where is None:
            return None
        self._file.seek(where[0])
        return json.loads(self._file.read(where[1]))

    def data_of(self, result: EvalCaseResult) -> Any:
        """``result`` as JSON data, with the trajectories set aside for it where it has none."""
        data = result.model_dump(mode="json")
        for run_data, run in ((data, result), *zip(data["run_results"], result.run_results)):
            if not run.actual_trajectory:
                found = self._trajectory(result.eval_id, run)
                if found is not None:
                    run_data["actual_trajectory"] = found
        return data

    def close(self) -> None:
        """Let the file go."""
        if self._file is not None:
            self._file.close()
            self._file = None
        self._where.clear()
