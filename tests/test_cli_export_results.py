"""``agenteval eval|run --export-results TARGET [--as events|spans|both] [--run-id NAME]``: verdicts
written beside the judged traces after the fact, as log records on the judged root spans and, when
asked for, evaluation spans in traces of their own linked to them; the judged traces themselves
never change (checked against a real Phoenix too), and exporting twice writes the same ids."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agenteval_otel import semconv as attr
from agenteval_otel.cli import main
from agenteval_otel.cli._args import EXPORT_AS
from agenteval_otel.errors import TraceReadError
from agenteval_otel.evalsets import EvalSet
from agenteval_otel.evaluation import LiveRunner, load_agent, run_sync
from agenteval_otel.results import EXPORT_MODES, evaluation_id
from agenteval_otel.traces import PhoenixClient
from agenteval_otel.traces.files import read_logs, read_spans, read_trajectories
from agenteval_otel.tracing import OtlpJsonFileExporter, logs_file_for
from agenteval_otel.trajectory.spans import SpanRecord
from tests.backends import phoenix_server
from tests.conftest import REPO_ROOT
from tests.otlp_receiver import http_receiver

EXAMPLE_SET = REPO_ROOT / "examples" / "weather_agent.evalset.json"
EXAMPLE_AGENT = f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent"


def _adk(shared_data: Path) -> tuple[Path, list[Path], Path]:
    folder = shared_data / "traces" / "generated" / "google_adk_semconv_content"
    return (folder / "adk_weather_generated.evalset.json", sorted(folder.glob("*.otlp.json")),
            shared_data / "evalsets" / "adk-python__hello_world_agent__test_config.json")


def _eval(evalset: Path, traces: list[Path], config: Path, tmp_path: Path, target: str, *more: str) -> int:
    return main(["eval", str(evalset), "--traces", *map(str, traces), "--config", str(config), "--quiet",
                 "--run-file", str(tmp_path / "run.jsonl"), "--export-results", target, *more])


def _invocation_roots(traces: list[Path]) -> set[tuple[str | None, str | None]]:
    return {(t.trace_id, t.span_id) for t in read_trajectories(traces).trajectories}


@pytest.mark.needs_shared_data
def test_eval_exports_a_third_party_traces_verdicts_to_a_file_as_records(shared_data: Path, tmp_path: Path) -> None:
    evalset, traces, config = _adk(shared_data)
    target = tmp_path / "verdicts.jsonl"
    assert _eval(evalset, traces, config, tmp_path, str(target)) == 0
    assert target.stat().st_size == 0  # by default: no span
    records = read_logs([logs_file_for(target)])
    roots = _invocation_roots(traces)
    assert records and {(r.trace_id, r.span_id) for r in records} == roots
    assert {r.attributes[attr.GEN_AI_EVALUATION_NAME] for r in records} == {
        "tool_trajectory_avg_score", "response_match_score"}
    assert {r.attributes[attr.EVAL_ID] for r in records} == {
        "run1_sequential_two_tools", "run2_parallel_calls", "run3_multi_turn"}
    assert all(r.name == attr.GEN_AI_EVALUATION_RESULT_EVENT for r in records)
    run_id = EvalSet.load(evalset).eval_set_id  # the run id the CLI computes: the eval set's id
    assert {r.attributes[attr.EVAL_RUN_ID] for r in records} == {run_id}
    assert {r.attributes[attr.EVAL_EVALUATION_ID] for r in records} == {
        evaluation_id(r.trace_id or "", r.span_id or "", r.attributes[attr.EVAL_CRITERION], run_id).id for r in records}


@pytest.mark.needs_shared_data
def test_eval_as_spans_twice_writes_linked_spans_in_their_own_traces_with_the_same_ids(
        shared_data: Path, tmp_path: Path) -> None:
    evalset, traces, config = _adk(shared_data)
    written = []
    for attempt in ("first", "second"):
        target = tmp_path / f"{attempt}.jsonl"
        assert _eval(evalset, traces, config, tmp_path, str(target), "--as", "spans", "--run-id", "nightly") == 0
        written.append((list(read_spans(target)), read_logs([logs_file_for(target)])))
    (spans, records), (again, records_again) = written
    roots = _invocation_roots(traces)
    assert spans and all(s.parent_id is None for s in spans)
    assert not {s.trace_id for s in spans} & {trace_id for trace_id, _ in roots}
    assert {(link.trace_id, link.span_id) for s in spans for link in s.links} == roots
    assert all(len(s.links) == 1 for s in spans)
    assert {s.attributes[attr.EVAL_RUN_ID] for s in spans} == {"nightly"}
    assert len(records) == len(spans) and {(r.trace_id, r.span_id) for r in records} == roots

    def ids(found: list[SpanRecord]) -> list[tuple[str, str, object]]:
        return sorted((s.trace_id, s.span_id, s.attributes[attr.EVAL_EVALUATION_ID]) for s in found)

    assert ids(spans) == ids(again) and len({s.span_id for s in spans}) == len(spans)
    assert sorted(r.attributes[attr.EVAL_EVALUATION_ID] for r in records) == sorted(
        r.attributes[attr.EVAL_EVALUATION_ID] for r in records_again)


@pytest.mark.needs_shared_data
def test_eval_exports_to_an_otlp_http_receiver(shared_data: Path, tmp_path: Path) -> None:
    evalset, traces, config = _adk(shared_data)
    with http_receiver() as receiver:
        assert _eval(evalset, traces, config, tmp_path, receiver.endpoint, "--as", "both") == 0
    roots = _invocation_roots(traces)
    assert receiver.spans and {(link.trace_id, link.span_id) for s in receiver.spans for link in s.links} == roots
    assert {(r.trace_id, r.span_id) for r in receiver.logs} == roots
    assert len(receiver.logs) == len(receiver.spans)
    assert {r.attributes[attr.GEN_AI_EVALUATION_SCORE_LABEL] for r in receiver.logs} == {"pass"}


def test_as_without_a_target_and_a_blank_run_id_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert EXPORT_AS == EXPORT_MODES
    code = main(["eval", str(EXAMPLE_SET), "--traces", str(tmp_path / "x.jsonl"), "--as", "spans"])
    err = capsys.readouterr().err
    assert code == 2 and "--as spans goes with --export-results TARGET" in err and "Traceback" not in err
    assert main(["eval", str(EXAMPLE_SET), "--traces", str(tmp_path / "x.jsonl"), "--run-id", " "]) == 2
    assert "--run-id  : expected a name that is not blank" in capsys.readouterr().err
    assert main(["serve", "--as", "children"]) == 2
    assert "invalid choice: 'children'" in capsys.readouterr().err


def test_a_target_that_cannot_be_written_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing" / "verdicts.jsonl"
    code = main(["eval", str(EXAMPLE_SET), "--traces", str(tmp_path / "x.jsonl"), "--export-results", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and f"--export-results {target}: cannot write there" in err and "Traceback" not in err


def test_run_exports_its_verdicts_on_each_turns_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTEVAL_TRACES_FILE", str(tmp_path / "traces.jsonl"))
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    target = tmp_path / "verdicts.jsonl"
    assert main(["run", str(EXAMPLE_SET), "--agent", EXAMPLE_AGENT, "--quiet", "--export-results", str(target),
                 "--run-id", "ci-42"]) == 0
    roots = {(t.trace_id, t.span_id) for t in read_trajectories([tmp_path / "traces.jsonl"]).trajectories}
    assert target.stat().st_size == 0
    records = read_logs([logs_file_for(target)])
    assert {(r.trace_id, r.span_id) for r in records} == roots
    assert {r.attributes[attr.EVAL_RUN_ID] for r in records} == {"ci-42"}
    assert {r.attributes[attr.EVAL_EVALUATION_ID] for r in records} == {
        evaluation_id(r.trace_id or "", r.span_id or "", r.attributes[attr.EVAL_CRITERION], "ci-42").id for r in records}
    # and the turns' traces hold no evaluation span
    assert not [s for s in read_spans(tmp_path / "traces.jsonl") if s.attributes.get(attr.EVALUATION_MARKER)]


def _phoenix_traces(client: PhoenixClient, spans: int, timeout: float = 30.0) -> dict[str, list[SpanRecord]]:
    """The spans of every trace Phoenix holds (project ``default``), once it holds ``spans`` spans
    (it stores what it receives in batches)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            ids = [trace_id for page in client.trace_ids("default") for trace_id in page]
        except TraceReadError:  # no project yet
            ids = []
        found: dict[str, list[SpanRecord]] = {trace_id: [] for trace_id in ids}
        for span in client.spans("default", ids):
            found[span.trace_id].append(span)
        held = sum(map(len, found.values()))
        if held >= spans:
            return found
        assert time.monotonic() < deadline, f"Phoenix holds {held} spans, not {spans}, after {timeout:g} s"
        time.sleep(0.2)


def _extent(spans: list[SpanRecord]) -> tuple[int, int, int]:
    """What a backend shows of a trace's time: its start, its end, and its number of spans."""
    return min(s.start_ns for s in spans), max(s.end_ns for s in spans), len(spans)


def test_exported_verdicts_leave_the_judged_traces_in_phoenix_as_they_were(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After-the-fact export to a real Phoenix's OTLP endpoint: the default adds nothing to the
    project; ``--as spans`` adds one trace per verdict, each one span linked to the judged root;
    a second export adds nothing (the same span ids); and every judged trace keeps its start, end
    and spans, read back through Phoenix's REST API."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "5")
    (tmp_path / "phoenix").mkdir()
    with phoenix_server(tmp_path / "phoenix", auth=False) as phoenix:
        traces = tmp_path / "weather.jsonl"
        provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=phoenix.otlp_traces_url, timeout=10)))
        provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(traces)))
        runner = LiveRunner(load_agent(EXAMPLE_AGENT), tracer_provider=provider, export_results=False)
        assert run_sync(runner.aevaluate(EvalSet.load(EXAMPLE_SET)), "aevaluate").passed
        provider.shutdown()
        roots = {(t.trace_id, t.span_id) for t in read_trajectories([traces]).trajectories}
        client = PhoenixClient(phoenix.url, api_key="")
        judged_spans = len(list(read_spans(traces)))
        judged = _phoenix_traces(client, judged_spans)
        assert set(judged) == {trace_id for trace_id, _ in roots}
        before = {trace_id: _extent(spans) for trace_id, spans in judged.items()}

        def export(*more: str) -> None:
            assert main(["eval", str(EXAMPLE_SET), "--traces", str(traces), "--quiet", "--run-file",
                         str(tmp_path / "run.jsonl"), "--export-results", phoenix.url, *more]) == 0

        export()  # records only: Phoenix has no span to show
        export("--as", "spans", "--run-id", "nightly")
        verdicts = len(read_trajectories([traces]).trajectories) * 2  # two default criteria per turn
        held = _phoenix_traces(client, judged_spans + verdicts)
        export("--as", "spans", "--run-id", "nightly")  # again: the same ids
        time.sleep(1.0)  # what a second batch would add has had time to be stored
        again = _phoenix_traces(client, judged_spans + verdicts)

    assert {trace_id: _extent(again[trace_id]) for trace_id in before} == before
    evaluations = {trace_id: spans for trace_id, spans in again.items() if trace_id not in before}
    assert len(evaluations) == verdicts and evaluations.keys() == held.keys() - before.keys()
    for trace_id, [span] in evaluations.items():  # one span per verdict id, however often exported
        assert span.parent_id is None and span.attributes[attr.EVAL_RUN_ID] == "nightly"
        [root] = [root for root in roots if evaluation_id(
            root[0] or "", root[1] or "", span.attributes[attr.EVAL_CRITERION], "nightly").trace_id == int(trace_id, 16)]
        assert span.attributes[attr.EVAL_EVALUATION_ID] == evaluation_id(
            root[0] or "", root[1] or "", span.attributes[attr.EVAL_CRITERION], "nightly").id
        # Phoenix's REST API gives no links back: the link is checked in the file and receiver tests
