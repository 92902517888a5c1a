"""A query set end to end, as the README tells it: the example openai agent simulated against a
local OpenAI-compatible server, each run graded by the example grader through the same server,
and two experiments compared (a model that regressed on one city)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
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


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    monkeypatch.setenv("AGENTEVAL_JUDGE_API_KEY", "local")
    monkeypatch.setenv("AGENTEVAL_JUDGE_MODEL", "local-grader")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    yield


def _simulate_and_grade(tmp_path: Path, name: str, broken_city: str | None,
                        monkeypatch: pytest.MonkeyPatch) -> Path:
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    run, experiment = tmp_path / f"{name}.run.jsonl", tmp_path / f"{name}.exp.jsonl"
    with serve(_model(broken_city)) as server:  # type: ignore[arg-type]
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("AGENTEVAL_JUDGE_BASE_URL", server.base_url)
        assert main(["simulate", str(queries), "--agent", str(REPO_ROOT / "examples" / "openai_agent.py")
                     + ":weather_agent", "--out", str(run), "--quiet"]) == 0
        code = main(["experiment", "run", str(run), "--grader", str(REPO_ROOT / "examples" / "graders" / "helpfulness"),
                     "--out", str(experiment)])
    assert code == (0 if broken_city is None else 1)
    return experiment


def test_simulate_then_grade_then_compare(tmp_path: Path, environment: None, monkeypatch: pytest.MonkeyPatch) -> None:
    baseline = _simulate_and_grade(tmp_path, "baseline", None, monkeypatch)
    candidate = _simulate_and_grade(tmp_path, "candidate", "Tokyo", monkeypatch)

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
