"""JUnit XML: one testcase per case, a failure per failed criterion, errors for errored ones."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from agenteval_otel.reports.junit import write_junit
from tests.reports.sample_report import sample_report


def test_junit_structure(tmp_path: Path) -> None:
    report = sample_report()
    path = write_junit(report, tmp_path / "out" / "junit.xml")
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        "weather runs", "4", "1", "2")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["run1_sequential_two_tools", "run2_parallel_calls",
                           "run3_streaming_sequential", "unmatched"]
    assert cases["run1_sequential_two_tools"].find("failure") is None
    assert cases["run1_sequential_two_tools"].find("error") is None

    failures = cases["run2_parallel_calls"].findall("failure")
    assert [f.get("type") for f in failures] == ["trajectory_match"]
    assert failures[0].get("message") == "trajectory_match scored 0.33 < threshold 1.00"
    assert "missing: book_flight" in (failures[0].text or "")
    assert "Lyon <b>&</b>" in (failures[0].text or "")  # escaped by the writer, read back as text

    errors = cases["run3_streaming_sequential"].findall("error")
    assert [e.get("type") for e in errors] == ["llm_judge"]
    unmatched = cases["unmatched"].find("error")
    assert unmatched is not None and unmatched.get("type") == "case"
    assert (unmatched.get("message") or "").startswith("unmatched")

    props = {p.get("name"): p.get("value") for p in cases["run1_sequential_two_tools"].iter("property")}
    assert props["eval_id"] == "run1_sequential_two_tools"
    assert props["score.trajectory_match"].startswith("1.0000")
    assert props["metric.tool_calls"] == "2"
    assert "trace ids:" in (cases["run1_sequential_two_tools"].findtext("system-out") or "")


def test_control_characters_do_not_break_the_xml(tmp_path: Path) -> None:
    report = sample_report()
    report.results[0].error = "bad \x00 byte \x1b[31m"
    ET.parse(write_junit(report, tmp_path / "j.xml"))  # parses: characters were replaced
