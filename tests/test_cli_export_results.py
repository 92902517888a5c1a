"""``agenteval eval|run --export-results TARGET``: verdicts written into the judged traces, after
the fact, linked to the original trace and root span ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval_otel import semconv as attr
from agenteval_otel.cli import main
from agenteval_otel.traces.files import read_logs, read_spans, read_trajectories
from agenteval_otel.tracing import logs_file_for
from tests.conftest import REPO_ROOT
from tests.otlp_receiver import http_receiver

EXAMPLE_SET = REPO_ROOT / "examples" / "weather_agent.evalset.json"
EXAMPLE_AGENT = f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent"


def _adk(shared_data: Path) -> tuple[Path, list[Path], Path]:
    folder = shared_data / "traces" / "generated" / "google_adk_semconv_content"
    return (folder / "adk_weather_generated.evalset.json", sorted(folder.glob("*.otlp.json")),
            shared_data / "evalsets" / "adk-python__hello_world_agent__test_config.json")


def _eval(evalset: Path, traces: list[Path], config: Path, tmp_path: Path, target: str) -> int:
    return main(["eval", str(evalset), "--traces", *map(str, traces), "--config", str(config), "--quiet",
                 "--run-file", str(tmp_path / "run.jsonl"), "--export-results", target])


def _invocation_roots(traces: list[Path]) -> set[tuple[str | None, str | None]]:
    return {(t.trace_id, t.span_id) for t in read_trajectories(traces).trajectories}


@pytest.mark.needs_shared_data
def test_eval_exports_a_third_party_traces_verdicts_to_a_file(shared_data: Path, tmp_path: Path) -> None:
    evalset, traces, config = _adk(shared_data)
    target = tmp_path / "verdicts.jsonl"
    assert _eval(evalset, traces, config, tmp_path, str(target)) == 0
    spans = list(read_spans(target))
    roots = _invocation_roots(traces)
    assert spans and {(s.trace_id, s.parent_id) for s in spans} == roots
    assert {s.attributes[attr.GEN_AI_EVALUATION_NAME] for s in spans} == {
        "tool_trajectory_avg_score", "response_match_score"}
    assert {s.attributes[attr.EVAL_ID] for s in spans} == {
        "run1_sequential_two_tools", "run2_parallel_calls", "run3_multi_turn"}
    records = read_logs([logs_file_for(target)])
    assert len(records) == len(spans)
    assert {(r.trace_id, r.span_id) for r in records} == roots
    assert all(r.name == attr.GEN_AI_EVALUATION_RESULT_EVENT for r in records)


@pytest.mark.needs_shared_data
def test_eval_exports_to_an_otlp_http_receiver(shared_data: Path, tmp_path: Path) -> None:
    evalset, traces, config = _adk(shared_data)
    with http_receiver() as receiver:
        assert _eval(evalset, traces, config, tmp_path, receiver.endpoint) == 0
    roots = _invocation_roots(traces)
    assert receiver.spans and {(s.trace_id, s.parent_id) for s in receiver.spans} == roots
    assert {(r.trace_id, r.span_id) for r in receiver.logs} == roots
    assert len(receiver.logs) == len(receiver.spans)
    assert {r.attributes[attr.GEN_AI_EVALUATION_SCORE_LABEL] for r in receiver.logs} == {"pass"}


def test_a_target_that_cannot_be_written_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing" / "verdicts.jsonl"
    code = main(["eval", str(EXAMPLE_SET), "--traces", str(tmp_path / "x.jsonl"), "--export-results", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and f"--export-results {target}: cannot write there" in err and "Traceback" not in err


def test_run_exports_its_verdicts_under_each_turns_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTEVAL_TRACES_FILE", str(tmp_path / "traces.jsonl"))
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    target = tmp_path / "verdicts.jsonl"
    assert main(["run", str(EXAMPLE_SET), "--agent", EXAMPLE_AGENT, "--quiet", "--export-results", str(target)]) == 0
    roots = {(t.trace_id, t.span_id) for t in read_trajectories([tmp_path / "traces.jsonl"]).trajectories}
    exported = list(read_spans(target))
    assert exported and {(s.trace_id, s.parent_id) for s in exported} == roots
    assert {(r.trace_id, r.span_id) for r in read_logs([logs_file_for(target)])} == roots
