"""``examples/openai_agent.py`` against the local scripted model: run as written, then scored from
its traces alone by the evaluation engine, live (``evaluate``) and offline (``evaluate_traces``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from agenteval_instrumentation_openai import OpenAIInstrumentor

from agenteval_otel import EvalConfig, EvalSet, evaluate, evaluate_traces
from agenteval_otel.tracing import configure

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
EVAL_SET = EXAMPLES / "openai_agent.evalset.json"
CONFIG = EXAMPLES / "openai_agent.config.json"


@pytest.fixture
def example(server: Any, monkeypatch: pytest.MonkeyPatch, policy: None, load_example: Any) -> Iterator[ModuleType]:
    """The example module, freshly imported (it instruments the client), pointed at the local model."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    yield load_example("openai_agent", fresh=True)
    OpenAIInstrumentor().uninstrument()


def _check(report: Any) -> None:
    assert report.passed, [(r.eval_id, [(c.criterion, c.score, c.reason) for c in r.criterion_results])
                           for r in report.results if not r.passed]
    assert len(report.results) == 3


def test_the_example_is_scored_live_from_its_trace(example: ModuleType) -> None:
    report = evaluate(EvalSet.load(EVAL_SET), agent=example.weather_agent, config=EvalConfig.load(CONFIG))
    _check(report)
    criteria = {c.criterion for r in report.results for c in r.criterion_results}
    assert {"tool_trajectory_avg_score", "trajectory_match", "response_match"} <= criteria


def test_the_example_runs_as_written_and_is_scored_offline(example: ModuleType, server: Any, tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    environment = {**os.environ, "AGENTEVAL_TRACES_FILE": str(traces),
                   "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(Path.cwd())) if p)}
    environment.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    done = subprocess.run([sys.executable, str(EXAMPLES / "openai_agent.py"), "What is the weather in Paris?"],
                          env=environment, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The weather in Paris is sunny, 21 °C."
    handle = configure("openai-weather-agent", traces_file=traces, set_global=False)
    try:
        example.weather_agent("Is it raining in Tokyo?")
        example.weather_agent("Weather in Paris and in London, please.")
    finally:
        handle.shutdown(timeout=5)
    _check(evaluate_traces(EvalSet.load(EVAL_SET), [traces], EvalConfig.load(CONFIG)))
