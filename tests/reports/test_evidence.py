"""Reports show the alignment the criterion scored, never one of their own: under ANY_ORDER,
expected ``[a, b]`` against actual ``[b, a]`` is two matches in the console, HTML and JUnit."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from rich.console import Console

from agenteval_otel import CriterionConfig, EvalCase, EvalConfig, EvalSet, evaluate_traces
from agenteval_otel.reports._console import print_report
from agenteval_otel.reports._html import render_html
from agenteval_otel.reports._junit import junit_xml
from agenteval_otel.trajectory import Trajectory, TrajectoryStep


def _report():
    case = EvalCase.single_turn("Weather and time in Paris?", "It is sunny and noon.",
                                expected_tools=["get_weather", "get_time"], eval_id="swapped")
    run = Trajectory(user_input="Weather and time in Paris?", final_response="Something else entirely.",
                     steps=[TrajectoryStep.tool("get_time", {"city": "Paris"}),
                            TrajectoryStep.tool("get_weather", {"city": "Paris"})])
    config = EvalConfig(criteria={
        "trajectory_match": CriterionConfig.trajectory(1.0, match_type="ANY_ORDER"),
        "response_match": CriterionConfig.response(0.9),  # fails, so every report shows the case
    })
    return evaluate_traces(EvalSet(eval_set_id="evidence", eval_cases=[case]), [run], config)


def test_the_criterion_passes_and_says_why() -> None:
    result = _report().results[0]
    trajectory = next(r for r in result.criterion_results if r.criterion == "trajectory_match")
    assert trajectory.passed and trajectory.score == 1.0
    rows = result.invocation_results[0].result("trajectory_match").evidence
    assert [(row.status, row.expected, row.actual) for row in rows] == [
        ("match", "get_time()", 'get_time({"city": "Paris"})'),
        ("match", "get_weather()", 'get_weather({"city": "Paris"})'),
    ]


def test_console_shows_two_matches() -> None:
    console = Console(record=True, width=160)
    print_report(_report(), console)
    text = console.export_text()
    assert "swapped" in text and "failed" in text  # the case is shown, with its diff panel
    assert len(re.findall(r"^\s*│?\s*match\s", text, flags=re.M)) == 2
    assert "missing" not in text and "unexpected" not in text


def test_html_shows_two_matches() -> None:
    page = render_html(_report())
    assert re.findall(r'data-status="(\w+)"', page) == ["match", "match"]
    assert "class=\"diff-row diff-missing" not in page and "class=\"diff-row diff-unexpected" not in page


def test_junit_has_no_false_difference() -> None:
    root = ET.fromstring(junit_xml(_report()))
    failures = root.findall(".//failure")
    assert [f.get("type") for f in failures] == ["response_match"]
    body = "".join(f.text or "" for f in failures)
    assert "missing" not in body and "unexpected" not in body
