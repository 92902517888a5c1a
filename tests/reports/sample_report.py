"""A real report with passes, failures and errors, for the report writers' tests."""

from __future__ import annotations

import json
from pathlib import Path

from agenteval_otel import (
    CriterionConfig,
    EvalCase,
    EvalConfig,
    EvalReport,
    EvalSet,
    Invocation,
    MessageContent,
    ToolCall,
    evaluate_traces,
)
from tests.conftest import SHARED_DATA

OPENINFERENCE = SHARED_DATA / "traces" / "generated" / "openinference"


def _case(path: Path) -> EvalCase:
    truth = json.loads(path.read_text())
    return EvalCase(eval_id=path.name.removesuffix(".ground_truth.json"), conversation=[Invocation(
        user_content=MessageContent.user(truth["user_prompt"]),
        expected_tool_trajectory=[ToolCall(name=c["tool_name"], args=c["args"])
                                  for c in truth["expected_tool_trajectory"]],
        expected_final_response=MessageContent.assistant(truth["final_response"]))])


def sample_report() -> EvalReport:
    """Openinference runs scored against their ground truth: run1 passes, run2 fails (a tool it
    never called is expected, and another argument), run3 errors (its criterion has no judge),
    and a case no trace matches errors too."""
    cases = [_case(p) for p in sorted(OPENINFERENCE.glob("*.ground_truth.json"))]
    failing = cases[1].conversation[0]
    failing.expected_tool_trajectory[0].args = {"city": "Lyon <b>&</b>"}
    failing.expected_tool_trajectory.append(ToolCall(name="book_flight", args={"to": "Rome"}))
    cases[2].metadata["needs_judge"] = True
    cases.append(EvalCase.single_turn("Nobody asked this \x01", eval_id="unmatched"))
    config = EvalConfig(criteria={
        "trajectory_match": CriterionConfig.trajectory(1.0, check_args=True),
        "response_match": CriterionConfig.response(0.7),
    })
    report = evaluate_traces(EvalSet(eval_set_id="openinference-weather", name="weather runs",
                                     eval_cases=cases), sorted(OPENINFERENCE.glob("*.otlp.json")),
                             config)
    third = report.results[2]
    third.criterion_results.append(
        third.criterion_results[0].failure("llm_judge", 0.7, "no LLM judge is configured"))
    return EvalReport.from_results(report.eval_set_id, report.results,
                                   eval_set_name=report.eval_set_name,
                                   duration_seconds=report.duration_seconds)
