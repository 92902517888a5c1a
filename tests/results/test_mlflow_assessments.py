"""``MlflowAssessments`` against a real MLflow tracking server (``mlflow server`` from
``.venvs/mlflow``): a run of the weather agent goes to it over OTLP, its verdicts come back as
feedback assessments on the judged root spans of MLflow's traces (``tr-`` + the trace id), one
per (span, criterion, run id) however often they are exported; a verdict on a trace MLflow does
not hold, or a server that is down, costs counted failures, never the run, and the token never
shows."""

from __future__ import annotations

import json
import logging
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agenteval_otel.cli import main
from agenteval_otel.evalsets import EvalSet
from agenteval_otel.evaluation import LiveRunner, load_agent, run_sync
from agenteval_otel.results import CriterionResult, EvalCaseResult, EvalReport, MlflowAssessments
from agenteval_otel.tracing import OtlpJsonFileExporter
from tests.backends import MlflowServer, mlflow_server
from tests.otlp_receiver import closed_port
from tests.shared_data import REPO_ROOT

EVALSET = str(REPO_ROOT / "examples" / "weather_agent.evalset.json")
AGENT = f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent"


@dataclass(frozen=True)
class Run:
    """The weather agent's run over its eval set, held by MLflow and written to ``file``."""

    mlflow: MlflowServer
    file: Path
    report: EvalReport

    @property
    def roots(self) -> dict[tuple[str, str], list[str]]:
        """The criteria scored on each judged root span, by (MLflow trace id, span id)."""
        return {(f"tr-{inv.trace_id}", inv.span_id or ""): [v.criterion for v in inv.criterion_results]
                for result in self.report.results for inv in result.invocation_results}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    folder = tmp_path_factory.mktemp("mlflow")
    with mlflow_server(folder) as mlflow:
        file = folder / "weather.jsonl"
        provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
            endpoint=mlflow.otlp_traces_url, headers=mlflow.otlp_headers, timeout=10)))
        provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(file)))
        runner = LiveRunner(load_agent(AGENT), tracer_provider=provider, export_results=False)
        report = run_sync(runner.aevaluate(EvalSet.load(EVALSET)), "aevaluate")
        provider.shutdown()
        yield Run(mlflow, file, report)


def _assessments(run: Run) -> list[dict[str, Any]]:
    """Every assessment on the run's traces, as MLflow's REST API gives them."""
    request = urllib.request.Request(
        f"{run.mlflow.url}/api/3.0/mlflow/traces/batchGetInfos", method="POST",
        data=json.dumps({"trace_ids": sorted({trace_id for trace_id, _ in run.roots})}).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        infos = json.load(answer)["trace_infos"]
    assert len(infos) == len({trace_id for trace_id, _ in run.roots})
    return [assessment for info in infos for assessment in info.get("assessments", ())]


def _export(run: Run, results: list[EvalCaseResult], **options: Any) -> MlflowAssessments:
    sink = MlflowAssessments(run.mlflow.url, token="", **options)
    for result in results:
        sink.submit(result)
    assert sink.shutdown(timeout=20)
    return sink


def _flipped(result: EvalCaseResult) -> EvalCaseResult:
    """``result`` with every verdict turned round (score 1 - score, the other label)."""
    def flip(verdict: CriterionResult) -> CriterionResult:
        return verdict.model_copy(update={"score": 1.0 - verdict.score, "passed": not verdict.passed,
                                          "reason": "flipped"})
    return result.model_copy(update={"invocation_results": [
        inv.model_copy(update={"criterion_results": [flip(v) for v in inv.criterion_results]})
        for inv in result.invocation_results]})


def test_each_judged_root_gets_one_feedback_per_criterion_and_run(run: Run) -> None:
    expected = sum(map(len, run.roots.values()))
    sink = _export(run, run.report.results, run_id="nightly")
    assert (sink.exported, sink.failed, sink.dropped) == (expected, 0, 0)
    verdicts = {(f"tr-{inv.trace_id}", inv.span_id, v.criterion): v for result in run.report.results
                for inv in result.invocation_results for v in inv.criterion_results}
    found = _assessments(run)
    assert {(a["trace_id"], a["span_id"], a["assessment_name"]) for a in found} == set(verdicts)
    for assessment in found:
        verdict = verdicts[assessment["trace_id"], assessment["span_id"], assessment["assessment_name"]]
        assert assessment["source"] == {"source_type": "CODE", "source_id": "agenteval"}
        assert assessment["feedback"] == {"value": verdict.passed}
        assert assessment["metadata"]["agenteval.evaluation.run_id"] == "nightly"
        assert float(assessment["metadata"]["agenteval.evaluation.score"]) == verdict.score

    # exported again, changed: the same assessments, updated, not added to
    ids = {a["assessment_id"] for a in found}
    _export(run, [_flipped(result) for result in run.report.results], run_id="nightly", value="score")
    again = _assessments(run)
    assert {a["assessment_id"] for a in again} == ids
    assert {a["rationale"] for a in again} == {"flipped"}
    assert all(a["feedback"] == {"value": 1.0 - verdicts[a["trace_id"], a["span_id"], a["assessment_name"]].score}
               for a in again)
    # another run's verdicts sit beside them
    _export(run, run.report.results, run_id="weekly")
    assert len(_assessments(run)) == 2 * expected


def test_the_cli_sends_verdicts_to_mlflow(run: Run, tmp_path: Path) -> None:
    before = len(_assessments(run))
    assert main(["eval", EVALSET, "--traces", str(run.file), "--quiet", "--run-file", str(tmp_path / "run.jsonl"),
                 "--export-results", f"mlflow+{run.mlflow.url}"]) == 0
    run_id = EvalSet.load(EVALSET).eval_set_id
    ours = [a for a in _assessments(run) if a["metadata"]["agenteval.evaluation.run_id"] == run_id]
    assert len(ours) == sum(map(len, run.roots.values())) and len(_assessments(run)) == before + len(ours)


@pytest.mark.promise(1, 19, 23)
def test_an_unknown_trace_or_a_down_server_is_counted_and_the_token_never_shows(
    run: Run, caplog: pytest.LogCaptureFixture
) -> None:
    token = "mlf-" + "0123456789abcdef" * 3
    elsewhere = [result.model_copy(update={"invocation_results": [
        inv.model_copy(update={"trace_id": "f" * 32}) for inv in result.invocation_results]})
        for result in run.report.results]
    expected = sum(map(len, run.roots.values()))
    for url, results, said in ((run.mlflow.url, elsewhere, f"MLflow holds no trace tr-{'f' * 32}"),
                               (f"http://127.0.0.1:{closed_port()}", run.report.results, "cannot reach MLflow")):
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="agenteval_otel"):
            sink = MlflowAssessments(url, token=token, run_id="lost")
            for result in results:
                sink.submit(result)
            started = time.monotonic()
            assert sink.shutdown(timeout=5) is False
        assert time.monotonic() - started < 5
        assert (sink.exported, sink.failed, sink.dropped) == (0, expected, 0)
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1 and said in warnings[0], warnings
        assert token not in caplog.text and token[-12:] not in caplog.text
    assert not any(a["metadata"].get("agenteval.evaluation.run_id") == "lost" for a in _assessments(run))
