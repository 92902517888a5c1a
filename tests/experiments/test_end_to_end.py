"""A query set end to end, as the README tells it: the example openai agent simulated against a
local OpenAI-compatible server, each run graded by the example grader through the same server,
and two experiments compared (a model that regressed on one city)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agenteval_otel.cli import main
from agenteval_otel.experiments import ExperimentResult, SimulationRecord
from tests.conftest import REPO_ROOT

pytest.importorskip("agenteval_instrumentation_openai")
sys.path.insert(0, str(REPO_ROOT / "examples"))
from openai_server import ModelRequest, Turn, serve, weather_model  # noqa: E402

WEATHER = {"Paris": "sunny, 21 °C", "Tokyo": "rainy, 17 °C"}

QUERIES = [
    {"content": "What is the weather in Paris?", "ground_truth": "The weather in Paris is sunny."},
    {"content": "And the weather in Tokyo?", "ground_truth": "The weather in Tokyo is rainy."},
    {"content": "Hello there", "ground_truth": None},
]


def _model(broken_city: str | None) -> object:
    """The weather model, and the grader: full marks for a reply naming the weather, low otherwise;
    ``broken_city``: the model regressed there and answers without calling its tool."""

    def script(request: ModelRequest) -> Turn:
        history = request.history()
        prompt = str(history[-1].get("content") or "") if history else ""
        if "expert evaluator" in prompt:  # the helpfulness grader's template
            good = "ASSISTANT: The weather in" in prompt or "ASSISTANT: Hello!" in prompt
            score = 1.0 if good else 0.25
            return Turn(json.dumps({"helpfulness": score, "groundedness": score, "professionalism": 1.0}))
        if broken_city and broken_city in prompt:
            return Turn("I cannot tell.")
        return weather_model(request)

    return script


def _agenteval(*args: str, base_url: str, cwd: Path) -> int:
    """The command, as a user runs it: in a process of its own (the example agent instruments the
    openai client when it is loaded, and the command configures tracing for its process)."""
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "OPENAI_API_KEY": "local", "OPENAI_BASE_URL": base_url,
                   "AGENTEVAL_JUDGE_API_KEY": "local", "AGENTEVAL_JUDGE_MODEL": "local-grader",
                   "AGENTEVAL_JUDGE_BASE_URL": base_url}
    environment.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    done = subprocess.run([sys.executable, "-m", "agenteval_otel.cli", *args], env=environment, cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode


def _simulate_and_grade(tmp_path: Path, name: str, broken_city: str | None) -> Path:
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    run, experiment = tmp_path / f"{name}.run.jsonl", tmp_path / f"{name}.exp.jsonl"
    with serve(_model(broken_city)) as server:  # type: ignore[arg-type]
        assert _agenteval("simulate", str(queries), "--agent", "examples/openai_agent.py:weather_agent",
                          "--out", str(run), "--quiet", base_url=server.base_url, cwd=REPO_ROOT) == 0
        code = _agenteval("experiment", "run", str(run), "--grader", "examples/graders/helpfulness",
                          "--trust-grader-code",
                          "--out", str(experiment), base_url=server.base_url, cwd=REPO_ROOT)
    assert code == (0 if broken_city is None else 1)
    return experiment


def test_simulate_then_grade_then_compare(tmp_path: Path) -> None:
    baseline = _simulate_and_grade(tmp_path, "baseline", None)
    candidate = _simulate_and_grade(tmp_path, "candidate", "Tokyo")

    records = sorted(SimulationRecord.load_jsonl(tmp_path / "baseline.run.jsonl"), key=lambda r: r.query_index)
    assert [r.response for r in records] == [f"The weather in Paris is {WEATHER['Paris']}.",
                                             f"The weather in Tokyo is {WEATHER['Tokyo']}.",
                                             "Hello! Ask me about the weather in a city."]
    assert [[c.name for c in r.tool_calls] for r in records] == [["get_weather"], ["get_weather"], []]
    assert all(r.trace_id for r in records)

    graded = ExperimentResult.load_jsonl(candidate)
    assert graded.summary.metrics["helpfulness"].mean == pytest.approx((1.0 + 0.25 + 1.0) / 3)

    report = tmp_path / "compare.json"
    code = main(["experiment", "compare", str(baseline), str(candidate), "--report", str(report)])
    compared = json.loads(report.read_text())
    assert code == 0  # three pairs are too few for a significant regression ...
    assert [(m["metric"], m["delta"], m["significant"]) for m in compared["metrics"]] == [
        ("helpfulness", -0.25, False), ("groundedness", -0.25, False), ("professionalism", 0.0, False)]
    assert compared["newly_failed"] == [  # ... but the verdict that changed is named
        {"query_index": 1, "query": "And the weather in Tokyo?", "status_a": "passed", "status_b": "failed"}]
