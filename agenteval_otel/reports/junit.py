"""JUnit XML: one ``testcase`` per eval case, a ``failure`` per failed criterion, an ``error`` per
errored criterion or case, so any CI system shows evaluation results as tests."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from agenteval_otel.evaluation.results import EvalCaseResult, EvalReport
from agenteval_otel.reports.judge import judge_lines

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
        "name": case.name or case.eval_id,
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


def junit_xml(report: EvalReport) -> str:
    """The report as a JUnit XML document."""
    s = report.summary
    failed = sum(1 for c in report.results if c.status == "failed")
    errored = sum(1 for c in report.results if c.status == "errored")
    root = ET.Element("testsuites", {
        "name": "agenteval", "tests": str(s.total_cases), "failures": str(failed),
        "errors": str(errored), "time": f"{report.duration_seconds:.3f}"})
    suite = _element(root, "testsuite", {
        "name": report.eval_set_name or report.eval_set_id,
        "tests": str(s.total_cases), "failures": str(failed), "errors": str(errored),
        "skipped": "0", "time": f"{report.duration_seconds:.3f}",
        "timestamp": report.created_at.isoformat(timespec="seconds"),
    })
    lines = judge_lines(report)
    if lines:
        properties = _element(suite, "properties", {})
        for name, usage in s.judge_usage.items():
            for key, value in usage.model_dump().items():
                _element(properties, "property", {"name": f"judge.{name}.{key}", "value": f"{value:g}"})
        _element(properties, "property", {"name": "judge.errors", "value": str(s.judge_errors)})
    for case in report.results:
        _testcase(suite, report, case)
    if lines:
        _element(suite, "system-out", {}, "\n".join(lines))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(report: EvalReport, path: str | Path) -> Path:
    """Write the report as JUnit XML to ``path``."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(junit_xml(report), encoding="utf-8")
    return file
