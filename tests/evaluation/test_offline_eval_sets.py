"""Offline matching keeps eval sets apart: runs recorded for one eval set are never scored as
another's cases, even when the two share case ids and a trace file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agenteval_otel import EvalCase, EvalConfig, EvalSet, evaluate
from agenteval_otel.cli import main
from agenteval_otel.evaluation import load_agent
from agenteval_otel.evaluation._offline import iter_matches
from agenteval_otel.tracing import OtlpJsonFileExporter
from agenteval_otel.trajectory.trajectory import Trajectory
from tests.conftest import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"


def test_a_run_tagged_with_another_eval_set_matches_none_of_its_cases() -> None:
    case = EvalCase.single_turn("Weather in Paris?", "Sunny.", eval_id="paris_weather")
    runs = [Trajectory(eval_id="paris_weather", eval_set_id="other-set", user_input="Weather in Paris?",
                       trace_ids=["other"], start_ns=30),
            Trajectory(eval_id="paris_weather", eval_set_id="this-set", trace_ids=["tagged"], start_ns=10),
            Trajectory(eval_id="paris_weather", trace_ids=["untagged"], start_ns=20)]
    (match,) = iter_matches([case], runs, eval_set_id="this-set")
    assert [[t.trace_ids[0] for t in run] for run in match.runs] == [["untagged"]] and match.set_aside == 1
    (only_other,) = iter_matches([case], runs[:1])  # no eval set id to compare: matched by case id
    assert only_other.runs[0][0].trace_ids == ["other"]
    assert list(iter_matches([case], runs[:1], eval_set_id="this-set")) == []


def test_two_example_eval_sets_in_one_trace_file_are_scored_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # the run files go to ./.agenteval
    monkeypatch.setenv("COLUMNS", "200")
    traces = tmp_path / "agenteval-traces.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(traces)))
    weather = EvalSet.load(EXAMPLES / "weather_agent.evalset.json")
    weather_config = EvalConfig.load(EXAMPLES / "weather_agent.config.json")
    evaluate(weather, load_agent(f"{EXAMPLES / 'weather_agent.py'}:weather_agent"), weather_config,
             tracer_provider=provider).assert_passed()
    provider.shutdown()

    report = tmp_path / "openai.json"
    assert main(["eval", str(EXAMPLES / "openai_agent.evalset.json"), "--traces", str(traces),
                 "--config", str(EXAMPLES / "openai_agent.config.json"), "--report", str(report)]) == 1
    saved = json.loads(report.read_text())
    paris = next(r for r in saved["results"] if r["eval_id"] == "paris_weather")  # a case id both sets have
    assert not paris["passed"] and paris["error"].startswith("unmatched")
    assert saved["summary"]["other_eval_set_runs"] == len(weather.eval_cases)
    assert "4 run(s) of another eval set set aside" in capsys.readouterr().out

    assert main(["eval", str(EXAMPLES / "weather_agent.evalset.json"), "--traces", str(traces),
                 "--config", str(EXAMPLES / "weather_agent.config.json"), "--quiet"]) == 0
