"""``PhoenixAnnotations`` against a real Phoenix (``phoenix serve`` from ``.venvs/phoenix``, API
keys required): a run of the weather agent goes to it over OTLP, its verdicts come back as span
annotations on the judged root spans, one per (span, criterion, run id) however often they are
exported; a Phoenix that is down or refuses the key costs counted failures, never the run, and
the key never shows."""

from __future__ import annotations

import json
import logging
import time
import urllib.error
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
from agenteval_otel.results import CriterionResult, EvalCaseResult, EvalReport, PhoenixAnnotations
from agenteval_otel.traces import read_spans
from agenteval_otel.tracing import OtlpJsonFileExporter
from tests.backends import PhoenixServer, phoenix_server
from tests.otlp_receiver import closed_port
from tests.shared_data import REPO_ROOT

EVALSET = str(REPO_ROOT / "examples" / "weather_agent.evalset.json")
AGENT = f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent"
PROJECT = "weather"


@dataclass(frozen=True)
class Run:
    """The weather agent's run over its eval set, held by Phoenix and written to ``file``."""

    phoenix: PhoenixServer
    file: Path
    report: EvalReport

    @property
    def roots(self) -> dict[str, list[str]]:
        """The criteria scored on each judged root span."""
        return {inv.span_id or "": [v.criterion for v in inv.criterion_results]
                for result in self.report.results for inv in result.invocation_results}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    folder = tmp_path_factory.mktemp("phoenix")
    with phoenix_server(folder) as phoenix:
        file = folder / "weather.jsonl"
        provider = TracerProvider(resource=Resource.create(
            {"service.name": "weather-agent", "openinference.project.name": PROJECT}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
            endpoint=phoenix.otlp_traces_url, headers={"authorization": f"Bearer {phoenix.api_key}"}, timeout=10)))
        provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(file)))
        runner = LiveRunner(load_agent(AGENT), tracer_provider=provider, export_results=False)
        report = run_sync(runner.aevaluate(EvalSet.load(EVALSET)), "aevaluate")
        provider.shutdown()
        run = Run(phoenix, file, report)
        spans = sum(1 for _ in read_spans(file))
        _wait_for(lambda: _stored(phoenix) >= spans, "Phoenix to store the run's spans")
        yield run


def _get(phoenix: PhoenixServer, path: str) -> Any:
    request = urllib.request.Request(phoenix.url + path, headers={"Authorization": f"Bearer {phoenix.api_key}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def _stored(phoenix: PhoenixServer) -> int:
    """How many spans Phoenix holds in the project (none before its first batch made it)."""
    try:
        return len(_get(phoenix, f"/v1/projects/{PROJECT}/spans?limit=1000")["data"])
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return 0
        raise


def _wait_for(condition: Any, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout:g} s for {what}"
        time.sleep(0.2)


def _annotations(run: Run) -> list[dict[str, Any]]:
    """Every annotation on the run's judged root spans, as Phoenix's REST API gives them."""
    spans = "&".join(f"span_ids={span_id}" for span_id in run.roots)
    return list(_get(run.phoenix, f"/v1/projects/{PROJECT}/span_annotations?{spans}&limit=1000")["data"])


def _export(run: Run, results: list[EvalCaseResult], **options: Any) -> PhoenixAnnotations:
    sink = PhoenixAnnotations(run.phoenix.url, api_key=run.phoenix.api_key, **options)
    for result in results:
        sink.submit(result)
    assert sink.shutdown(timeout=10)
    return sink


def _flipped(result: EvalCaseResult) -> EvalCaseResult:
    """``result`` with every verdict turned round (score 1 - score, the other label)."""
    def flip(verdict: CriterionResult) -> CriterionResult:
        return verdict.model_copy(update={"score": 1.0 - verdict.score, "passed": not verdict.passed,
                                          "reason": "flipped"})
    return result.model_copy(update={"invocation_results": [
        inv.model_copy(update={"criterion_results": [flip(v) for v in inv.criterion_results]})
        for inv in result.invocation_results]})


def test_each_judged_root_gets_one_annotation_per_criterion_and_run(run: Run) -> None:
    expected = sum(map(len, run.roots.values()))
    sink = _export(run, run.report.results, run_id="nightly")
    assert (sink.exported, sink.failed, sink.dropped) == (expected, 0, 0)
    _wait_for(lambda: len(_annotations(run)) == expected, "the annotations")
    verdicts = {(inv.span_id, v.criterion): v for result in run.report.results
                for inv in result.invocation_results for v in inv.criterion_results}
    for note in _annotations(run):
        verdict = verdicts[note["span_id"], note["name"]]
        assert note["annotator_kind"] == "CODE" and note["identifier"] == "nightly"
        assert note["result"]["score"] == verdict.score
        assert note["result"]["label"] == ("pass" if verdict.passed else "fail")
        assert note["metadata"]["agenteval.evaluation.run_id"] == "nightly"
        assert note["metadata"]["agenteval.evaluation.threshold"] == verdict.threshold

    # exported again, changed: the same annotations, updated, not added to
    _export(run, [_flipped(result) for result in run.report.results], run_id="nightly")
    _wait_for(lambda: {n["result"]["explanation"] for n in _annotations(run)} == {"flipped"}, "the update")
    assert len(_annotations(run)) == expected
    # another run's verdicts sit beside them
    _export(run, run.report.results, run_id="weekly")
    _wait_for(lambda: len(_annotations(run)) == 2 * expected, "the other run's annotations")


def test_the_cli_sends_verdicts_to_phoenix_and_to_a_file_at_once(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PHOENIX_API_KEY", run.phoenix.api_key)
    verdicts = tmp_path / "verdicts.jsonl"
    assert main(["eval", EVALSET, "--traces", str(run.file), "--quiet", "--run-file", str(tmp_path / "run.jsonl"),
                 "--export-results", f"phoenix+{run.phoenix.url}", "--export-results", str(verdicts),
                 "--as", "both"]) == 0
    run_id = EvalSet.load(EVALSET).eval_set_id
    _wait_for(lambda: any(n["identifier"] == run_id for n in _annotations(run)), "the CLI's annotations")
    ours = [n for n in _annotations(run) if n["identifier"] == run_id]
    assert {(n["span_id"], n["name"]) for n in ours} == {
        (span_id, criterion) for span_id, criteria in run.roots.items() for criterion in criteria}
    assert {span.name for span in read_spans(verdicts)} == {
        f"evaluation {criterion}" for criteria in run.roots.values() for criterion in criteria}


@pytest.mark.promise(1, 19, 23)
def test_a_refused_key_or_a_down_phoenix_is_counted_and_the_key_never_shows(
    run: Run, caplog: pytest.LogCaptureFixture
) -> None:
    expected = sum(map(len, run.roots.values()))
    wrong = "phx-" + run.phoenix.api_key[::-1]
    for url, key, said in ((run.phoenix.url, wrong, "HTTP 401: Phoenix refused the credentials"),
                           (f"http://127.0.0.1:{closed_port()}", wrong, "cannot reach Phoenix")):
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="agenteval_otel"):
            sink = PhoenixAnnotations(url, api_key=key, run_id="refused")
            for result in run.report.results:
                sink.submit(result)
            started = time.monotonic()
            assert sink.shutdown(timeout=5) is False
        assert time.monotonic() - started < 5
        assert (sink.exported, sink.failed, sink.dropped) == (0, expected, 0)
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1 and said in warnings[0], warnings
        assert f"{url}/v1/span_annotations" in warnings[0]
        logged = caplog.text + repr(sink)
        assert key not in logged and key[-12:] not in logged and run.phoenix.api_key[:12] not in logged
    assert not any(n["identifier"] == "refused" for n in _annotations(run))
