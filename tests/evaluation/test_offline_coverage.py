"""``agenteval eval`` says how much of the traces the readers understood: spans read by each
convention, by a fallback, unread, and how many trajectories hit each warning, in the console and
in the JSON report (``summary.read_coverage``); runs that read no span leave it out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval_otel import EvalConfig, evaluate_traces
from agenteval_otel.cli import main
from agenteval_otel.results import EvalSummary
from agenteval_otel.trajectory import TrajectoryStep
from agenteval_otel.trajectory.trajectory import Trajectory
from tests.conftest import REPO_ROOT
from tests.shared_data import SHARED_DATA

TRACES = SHARED_DATA / "traces"
JAEGER_GENAI = TRACES / "jaeger" / "jaeger-ui__components__TracePage__TraceTimelineViewer__genaiTestTrace.json"
PYDANTIC_AI = TRACES / "generated" / "pydantic_ai" / "run1_sequential_two_tools.otlp.json"
POLICIES = REPO_ROOT / "examples" / "production_policies.json"


def _without_tool_spans(tmp_path: Path) -> Path:
    data = json.loads(PYDANTIC_AI.read_text(encoding="utf-8"))
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [s for s in scope["spans"] if not s["name"].startswith("execute_tool")]
    path = tmp_path / "no_tool_spans.otlp.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.needs_shared_data
def test_eval_reports_unread_spans_and_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    traces = [str(JAEGER_GENAI), str(_without_tool_spans(tmp_path))]
    main(["eval", "--traces", *traces, "--config", str(POLICIES), "--report", "out.json"])
    out = capsys.readouterr().out
    assert "spans: 21 read (genai 21), 0 by fallback, 40 unread, of 61 in 2 trace(s)" in out
    assert "warning: 1 of 2 trajectories: the model requested tool calls but no tool span was read" in out
    summary = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["summary"]
    assert summary["read_coverage"] == {
        "traces": 2, "spans": 61, "read": {"genai": 21}, "fallback": {}, "unread": 40, "trajectories": 2,
        "warnings": {"tool_calls_not_read": 1},
    }


def test_runs_that_read_no_span_have_no_coverage_and_old_summaries_still_load() -> None:
    config = EvalConfig(criteria={"max_tool_calls": {"params": {"limit": 1}}})
    runs = [Trajectory(trace_id="7e57", span_id="01", steps=[TrajectoryStep.tool("search")])]
    assert evaluate_traces(None, runs, config).summary.read_coverage is None
    old = {"total_cases": 1, "passed_cases": 1, "failed_cases": 0, "pass_rate": 1.0, "avg_score": 1.0}
    assert EvalSummary.model_validate(old).read_coverage is None
