"""``examples/langgraph_agent.py`` as written: scored live by ``evaluate``, and offline from its
traces alone (the app run on its own, then ``agenteval eval --traces``)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from agenteval_instrumentation_langgraph import LangGraphInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agenteval_otel import evaluate, evaluate_traces
from agenteval_otel.cli import main
from agenteval_otel.criteria import EvalConfig
from agenteval_otel.evalsets import EvalSet
from agenteval_otel.traces.files import read_trajectories
from agenteval_otel.tracing import OtlpJsonFileExporter

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
AGENT = EXAMPLES / "langgraph_agent.py"
EVAL_SET = EXAMPLES / "langgraph_agent.evalset.json"
CONFIG = EXAMPLES / "langgraph_agent.config.json"
CRITERIA = {"trajectory_match", "response_match", "node_order"}


@pytest.fixture
def example() -> Iterator[ModuleType]:
    """The example module, imported from its file (it instruments LangGraph; undone afterwards)."""
    spec = importlib.util.spec_from_file_location("langgraph_agent_example", AGENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        instrumentor = LangGraphInstrumentor()
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()


def _scores(report: Any) -> dict[str, dict[str, float | None]]:
    return {case.eval_id: {r.criterion: r.score for r in case.criterion_results} for case in report.results}


def test_the_example_is_scored_live_and_again_offline_from_its_traces(example: ModuleType, tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(traces)))
    eval_set, config = EvalSet.load(EVAL_SET), EvalConfig.load(CONFIG)

    live = evaluate(eval_set, example.weather_agent, config, tracer_provider=provider, concurrency=2)
    provider.shutdown()
    offline = evaluate_traces(eval_set, traces, config)

    assert live.summary.passed_cases == offline.summary.passed_cases == 4
    perfect = {case.eval_id: dict.fromkeys(CRITERIA, 1.0) for case in eval_set.eval_cases}
    assert _scores(live) == _scores(offline) == perfect
    by_input = {t.user_input: t for t in read_trajectories([traces]).trajectories}
    tokyo = by_input["How warm is Tokyo in Fahrenheit?"]
    assert [(call.name, call.args, call.result) for call in tokyo.tool_calls()] == [
        ("get_weather", {"city": "Tokyo"}, {"city": "Tokyo", "celsius": 22, "sky": "clear"}),
        ("celsius_to_fahrenheit", {"celsius": 22}, 71.6)]
    assert tokyo.branches() == [("tools_condition", "tools")] * 2 + [("tools_condition", "__end__")]


def test_the_app_run_on_its_own_is_scored_from_its_traces_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "AGENTEVAL_TRACES_FILE": str(tmp_path / "app.jsonl")}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    app = subprocess.run([sys.executable, str(AGENT)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    assert app.returncode == 0, app.stderr
    assert "[london] And in Fahrenheit? -> It is 53.6°F in London." in app.stdout

    code = main(["eval", str(EVAL_SET), "--traces", str(tmp_path / "app.jsonl"), "--config", str(CONFIG),
                 "--report", str(tmp_path / "report.json"), "--quiet"])

    assert code == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["summary"]["passed_cases"] == 4
    assert {r["eval_id"]: {c["criterion"]: c["score"] for c in r["criterion_results"]} for r in report["results"]} == {
        case: dict.fromkeys(CRITERIA, 1.0) for case in ("paris_weather", "tokyo_fahrenheit", "greeting",
                                                        "london_follow_up")}
