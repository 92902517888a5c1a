"""JUnit XML: one testcase per case, a failure per failed criterion, errors for errored ones."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from agenteval_otel import EvalReport
from agenteval_otel.reports._junit import junit_xml, write_junit
from tests.reports.conftest import LONG_IDS, SECRET, held_slim


def test_junit_structure(report: EvalReport, tmp_path: Path) -> None:
    path = write_junit(report, tmp_path / "out" / "junit.xml")
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        "weather runs", "5", "2", "2")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases)[:4] == ["run1_sequential_two_tools", "run2_parallel_calls",
                               "run3_streaming_sequential", "ghost"]
    assert cases["run3_streaming_sequential"].find("failure") is None
    assert cases["run3_streaming_sequential"].find("error") is None

    failures = cases["run2_parallel_calls"].findall("failure")
    assert [f.get("type") for f in failures] == ["trajectory_match"]
    assert failures[0].get("message") == "trajectory_match scored 0.50 < threshold 0.80"
    assert "argument mismatch" in (failures[0].text or "")
    assert "<script>window.__pwned = 1</script>" in (failures[0].text or "")  # escaped, read back
    missing = cases["run1_sequential_two_tools"].find("failure")
    assert missing is not None and "missing: book_flight()" in (missing.text or "")

    ghost = cases["ghost"].find("error")
    assert ghost is not None and ghost.get("type") == "case"
    assert (ghost.get("message") or "").startswith("unmatched")
    hostile = next(c for name, c in cases.items() if name and name.startswith("<i>"))
    assert [e.get("type") for e in hostile.findall("error")] == ["llm_judge"]
    assert [f.get("type") for f in hostile.findall("failure")] == ["trajectory_match"]

    props = {p.get("name"): p.get("value") for p in cases["run3_streaming_sequential"].iter("property")}
    assert props["eval_id"] == "run3_streaming_sequential"
    assert props["score.trajectory_match"].startswith("1.0000")
    assert props["metric.tool_calls"] == "2"
    assert "trace ids:" in (cases["run3_streaming_sequential"].findtext("system-out") or "")


def test_control_characters_do_not_break_the_xml(report: EvalReport, tmp_path: Path) -> None:
    broken = report.model_copy(deep=True)
    broken.results[0].error = "bad \x00 byte \x1b[31m"
    ET.parse(write_junit(broken, tmp_path / "j.xml"))  # parses: the characters were replaced


def test_an_agent_exception_keeps_its_type_frame_and_traceback(live_report: EvalReport, tmp_path: Path) -> None:
    root = ET.parse(write_junit(live_report, tmp_path / "j.xml")).getroot()
    crashed = next(c for c in root.iter("testcase") if c.get("name") == LONG_IDS[2])
    (error,) = crashed.findall("error")
    assert error.get("type") == "ConnectionError"
    assert "raised at tests/reports/conftest.py:" in (error.get("message") or "")
    body = error.text or ""
    assert "Traceback (most recent call last)" in body and ", in _crash" in body
    assert SECRET not in ET.tostring(root, encoding="unicode") and "[REDACTED]" in body


def test_written_case_by_case_the_same_document(report: EvalReport, tmp_path: Path) -> None:
    slim, codec = held_slim(report)
    path = write_junit(slim, tmp_path / "junit.xml")
    assert codec.decoded == len(report.results)  # each case result read once
    assert path.read_text(encoding="utf-8") == junit_xml(report)
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite is not None and len(suite.findall("testcase")) == len(report.results)
    empty = report.model_copy(update={"results": []})
    assert write_junit(empty, tmp_path / "empty.xml").read_text(encoding="utf-8") == junit_xml(empty)
    assert "<testsuite " in junit_xml(empty) and "<testcase" not in junit_xml(empty)
