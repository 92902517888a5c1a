"""JUnit XML: one ``testcase`` per eval case, a ``failure`` per failed criterion, an ``error`` per
errored criterion or case, so any CI system shows evaluation results as tests."""

from __future__ import annotations

import io
import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import IO

from agenteval_otel.reports._judge import judge_lines
from agenteval_otel.results import EvalCaseResult, EvalReport

__all__ = ["junit_xml", "write_junit"]

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    """Text XML 1.0 can hold: other control characters become U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def _element(parent: ET.Element, tag: str, attributes: dict[str, str], text: str | None = None) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: _clean(v) for k, v in attributes.items()})
    if text is not None:
        element.text = _clean(text)
    return element


def _testcase(suite: ET.Element, report: EvalReport, case: EvalCaseResult) -> None:
    element = _element(suite, "testcase", {
        "classname": report.eval_set_name or report.eval_set_id,
        "name": case.label,
        "time": f"{case.duration_seconds:.3f}",
    })
    properties = _element(element, "properties", {})
    _element(properties, "property", {"name": "eval_id", "value": case.eval_id})
    for result in case.criterion_results:
        if result.error is None:
            _element(properties, "property", {
                "name": f"score.{result.criterion}",
                "value": f"{result.score:.4f} (threshold {result.threshold:.2f})"})
    for key, value in case.metrics.items():
        _element(properties, "property", {"name": f"metric.{key}", "value": f"{value:g}"})
    if case.error:
        _element(element, "error", {"type": case.error_type or "case", "message": case.error},
                 f"{case.error}\n\n{case.traceback}" if case.traceback else case.error)
    for result in case.criterion_results:
        if result.error:
            _element(element, "error", {"type": result.criterion, "message": result.error},
                     result.traceback or result.error)
        elif not result.passed:
            message = result.shortfall
            body = [message, *([result.reason] if result.reason else [])]
            for inv in case.invocation_results:
                calls = ", ".join(c.name for c in inv.actual_tool_calls) or "none"
                body.append(f"turn {inv.invocation_id}: {inv.user_input!r} -> tools [{calls}], "
                            f"response {inv.actual_response!r}")
            _element(element, "failure", {"type": result.criterion, "message": message},
                     "\n".join(body))
    if case.trace_ids:
        _element(element, "system-out", {}, "trace ids: " + ", ".join(case.trace_ids))


def _suite_attributes(report: EvalReport, failed: int, errored: int) -> tuple[dict[str, str], dict[str, str]]:
    s = report.summary
    return {
        "name": "agenteval", "tests": str(s.total_cases), "failures": str(failed),
        "errors": str(errored), "time": f"{report.duration_seconds:.3f}"}, {
        "name": report.eval_set_name or report.eval_set_id,
        "tests": str(s.total_cases), "failures": str(failed), "errors": str(errored),
        "skipped": "0", "time": f"{report.duration_seconds:.3f}",
        "timestamp": report.created_at.isoformat(timespec="seconds"),
    }


_CASE_LEVEL = 2
"""The depth of a ``testcase``: ``testsuites`` > ``testsuite`` > ``testcase``."""
_BETWEEN_CASES = "\n" + "  " * _CASE_LEVEL


def _write_cases(report: EvalReport, out: IO[str]) -> tuple[int, int, int]:
    """Write every ``testcase``, indented as in the whole document, one result at a time;
    the number of cases, failed and errored."""
    count = failed = errored = 0
    holder = ET.Element("testsuite")
    for case in report.results:
        holder.clear()
        _testcase(holder, report, case)
        element = holder[0]
        ET.indent(element, level=_CASE_LEVEL)
        out.write((_BETWEEN_CASES if count else "") + ET.tostring(element, encoding="unicode"))
        count += 1
        failed += case.status == "failed"
        errored += case.status == "errored"
    return count, failed, errored


def _document(report: EvalReport, failed: int, errored: int, *, with_place: bool) -> ET.Element:
    """The document without its ``testcase``s (a placeholder where they go, ``with_place``):
    the suite's totals, and the judge's work as properties before the cases and lines after."""
    root_attributes, suite_attributes = _suite_attributes(report, failed, errored)
    root = ET.Element("testsuites", root_attributes)
    suite = _element(root, "testsuite", suite_attributes)
    s = report.summary
    lines = judge_lines(report)
    if lines:
        properties = _element(suite, "properties", {})
        for name, usage in s.judge_usage.items():
            for key, value in usage.model_dump().items():
                _element(properties, "property", {"name": f"judge.{name}.{key}", "value": f"{value:g}"})
        _element(properties, "property", {"name": "judge.errors", "value": str(s.judge_errors)})
    if with_place:
        ET.SubElement(suite, _PLACE)
    if lines:
        _element(suite, "system-out", {}, "\n".join(lines))
    return root


def _document_around(report: EvalReport, failed: int, errored: int) -> tuple[str, str]:
    """The document's text before its first ``testcase`` and after its last."""
    root = _document(report, failed, errored, with_place=True)
    ET.indent(root)
    head, tail = ET.tostring(root, encoding="unicode", xml_declaration=True).split(f"<{_PLACE} />")
    return head, tail + "\n"


_PLACE = "cases-go-here"


def write_junit(report: EvalReport, path: str | Path) -> Path:
    """Write the report as JUnit XML to ``path``, case by case: the cases go to a temporary
    file first, as the totals of the ``testsuite`` element before them are known at the end."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile("w+", encoding="utf-8", newline="") as cases:
        count, failed, errored = _write_cases(report, cases)
        with file.open("w", encoding="utf-8", newline="") as out:
            if not count:
                out.write(junit_xml(report))
                return file
            head, tail = _document_around(report, failed, errored)
            out.write(head)
            cases.seek(0)
            shutil.copyfileobj(cases, out)
            out.write(tail)
    return file


def junit_xml(report: EvalReport) -> str:
    """The report as a JUnit XML document."""
    cases = io.StringIO()
    count, failed, errored = _write_cases(report, cases)
    if count:
        head, tail = _document_around(report, failed, errored)
        return head + cases.getvalue() + tail
    root = _document(report, failed, errored, with_place=False)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
