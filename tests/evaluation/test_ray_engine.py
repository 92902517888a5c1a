"""Batch evaluation on a local Ray cluster gives the local run's report: with an eval set (single-
and multi-turn cases, several runs of a case, conversations split across files), with policies
over files that split traces, and after a worker died mid-job and the job was resumed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel import EvalCase, EvalConfig, EvalSet, EvalSetBuilder, evaluate_traces
from agenteval_otel.cli import main
from agenteval_otel.criteria import load_criteria_module
from agenteval_otel.evaluation import evaluate_traces_on_ray, invocation_key
from agenteval_otel.results import CallbackSink, EvalCaseResult, EvalReport
from agenteval_otel.traces import read_trajectories
from tests.conftest import REPO_ROOT
from tests.ground_truth import ground_truth_eval_set
from tests.weather_runs import write_weather_runs

ray = pytest.importorskip("ray", reason="the Ray engine needs the 'ray' extra: pip install 'agenteval-otel[ray]'")

POLICIES = EvalConfig.load(REPO_ROOT / "examples" / "production_policies.json")


@pytest.fixture(scope="module", autouse=True)
def local_cluster() -> Iterator[None]:
    """One local Ray cluster of two CPUs for the module."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def _files(folder: Path) -> list[Path]:
    """Each weather run once (``all_runs.otlp.json`` repeats three of them, trace ids and all)."""
    return sorted(p for p in folder.glob("*.otlp.json") if p.name != "all_runs.otlp.json")


def _without_durations(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_durations(v) for k, v in value.items() if k != "duration_seconds"}
    if isinstance(value, list):
        return [_without_durations(v) for v in value]
    return value


def _in_report_order(report: EvalReport, eval_set: EvalSet | None, files: list[Path]) -> list[EvalCaseResult]:
    """A report's results in the report order: the eval set's cases in its order, then the
    invocations scored without a case by their root's start time (ties by invocation key)."""
    starts = {invocation_key(t): t.start_ns or 0 for t in read_trajectories(files).trajectories}
    cases = [case.eval_id for case in eval_set.eval_cases] if eval_set is not None else []

    def place(result: EvalCaseResult) -> tuple[int, int, str]:
        if result.eval_id in cases:
            return 0, cases.index(result.eval_id), ""
        return 1, starts[result.eval_id], result.eval_id
    return sorted(report.results, key=place)


def _assert_same(on_ray: EvalReport, local: EvalReport, eval_set: EvalSet | None, files: list[Path]) -> None:
    expected = [_without_durations(r.model_dump(mode="json")) for r in _in_report_order(local, eval_set, files)]
    assert [_without_durations(r.model_dump(mode="json")) for r in on_ray.results] == expected
    assert on_ray.summary == local.summary
    assert (on_ray.eval_set_id, on_ray.eval_set_name, on_ray.config_used) == (
        local.eval_set_id, local.eval_set_name, local.config_used)


def _two_runs_of_a_case(path: Path) -> EvalSet:
    """Two runs of one case appended to ``path`` by ``evaluate`` (eval id on their spans), the
    later one answering badly; the eval set expects the first answer."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from agenteval_otel.evaluation import evaluate
    from agenteval_otel.tracing import OtlpJsonFileExporter

    eval_set = (EvalSetBuilder("weather", eval_set_id="weather")
                .add_case(query="Weather in Paris?", expected="Sunny in Paris.", case_id="paris").build())
    for reply in ("Sunny in Paris.", "I cannot help with that."):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
        evaluate(eval_set, lambda query, reply=reply: reply, tracer_provider=provider)
        provider.shutdown()
    return eval_set


def test_an_eval_set_gives_the_local_report(weather_runs: Path, tmp_path: Path) -> None:
    again = write_weather_runs(tmp_path / "again")  # a later run of every case, the conversation's id the same
    paris = _two_runs_of_a_case(tmp_path / "paris.jsonl")
    cases = ground_truth_eval_set(weather_runs).eval_cases
    never_run = EvalCase.single_turn("Is it snowing in Oslo?", "No.", eval_id="never_run")
    eval_set = EvalSet(eval_set_id="weather", name="weather", eval_cases=[*cases, *paris.eval_cases, never_run])
    files = [*_files(weather_runs), *_files(again), tmp_path / "paris.jsonl"]
    submitted: list[EvalCaseResult] = []
    on_ray = evaluate_traces_on_ray(eval_set, files, partitions=3, run_dir=tmp_path / "job", shard_bytes=4096,
                                    sinks=[CallbackSink(submitted.append)])
    local = evaluate_traces(eval_set, files)
    _assert_same(on_ray, local, eval_set, files)
    assert sorted(r.eval_id for r in submitted) == sorted(r.eval_id for r in on_ray.results)  # each once
    by_id = {r.eval_id: r for r in on_ray.results}
    assert by_id["paris"].set_aside_runs == 1 and by_id["paris"].actual_response == "I cannot help with that."
    assert by_id["run4_multi_turn"].set_aside_runs == 1 and by_id["run4_multi_turn"].metrics["matched_turns"] == 2
    assert by_id["never_run"].status == "errored"
    assert on_ray.summary.set_aside_runs == 7


def _split_lines(source: Path, first: Path, second: Path, cut: int) -> None:
    """Append the first ``cut`` lines (spans) of ``source`` to ``first``, the rest to ``second``."""
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    with first.open("a", encoding="utf-8") as head, second.open("a", encoding="utf-8") as tail:
        head.writelines(lines[:cut])
        tail.writelines(lines[cut:])


def test_policies_over_files_that_split_traces(weather_runs: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    for path in _files(weather_runs):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        _split_lines(path, first, second, lines // 2)  # the spans of each run cut in two: its trace straddles the files
    files = [first, second]
    on_ray = evaluate_traces_on_ray(None, files, POLICIES, partitions=2, run_dir=tmp_path / "job",
                                    shard_bytes=2048, source_id="weather")
    local = evaluate_traces(None, files, POLICIES, source_id="weather")
    assert len(local.results) == 7  # six runs, one of them two turns: every trace assembled whole
    _assert_same(on_ray, local, None, files)
    scored = [json.loads(line)["eval_id"] for part in (tmp_path / "job").glob("part-*.jsonl")
              for line in part.read_text(encoding="utf-8").splitlines()[1:]]
    assert len(list((tmp_path / "job").glob("part-*.jsonl"))) > 2  # the files were cut into several byte ranges
    assert sorted(scored) == sorted(r.eval_id for r in local.results)  # each invocation scored in one partition


def _partition_of_each_invocation(files: list[Path], partitions: int) -> dict[str, int]:
    """Where the engine scores each invocation of whole trace files (no trace cut across them)."""
    from agenteval_otel.evaluation._ray import SHARD_BYTES, _plans_of_files

    groups = _plans_of_files(files, partitions, SHARD_BYTES)
    return {invocation_key(t): number for number, group in enumerate(groups) for shard in group
            for t in read_trajectories([shard.path]).trajectories}


CRASHING_CRITERION = '''
import os
import time
from pathlib import Path

from agenteval_otel.criteria import criterion

ARMED = Path({armed!r})
SCORED = Path({scored!r})
PART_FILE = Path({part_file!r})


@criterion("dies_once", reference_free=True)
def dies_once(ctx):
    """Kills its worker process (a real crash) on the invocation {target!r} while ARMED exists,
    once its partition's run file holds a result (invocations are scored concurrently)."""
    key = f"{{ctx.actual.trace_id}}:{{ctx.actual.span_id}}"
    if key == {target!r} and ARMED.exists():
        deadline = time.monotonic() + 10
        while '"eval_id"' not in (PART_FILE.read_text() if PART_FILE.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.01)
        ARMED.unlink()
        os._exit(1)
    with SCORED.open("a") as log:
        log.write(key + "\\n")
    return 1.0
'''


@pytest.mark.promise(14)
def test_a_job_whose_worker_died_resumes_where_it_stopped(weather_runs: Path, tmp_path: Path) -> None:
    files = _files(weather_runs)
    partitions = 2
    part_of = _partition_of_each_invocation(files, partitions)
    starts = {invocation_key(t): t.start_ns or 0 for t in read_trajectories(files).trajectories}
    crashing_part = max(range(partitions), key=lambda p: list(part_of.values()).count(p))
    target = max((key for key in part_of if part_of[key] == crashing_part), key=starts.__getitem__)  # scored last
    armed, scored = tmp_path / "armed", tmp_path / "scored.txt"
    armed.touch()
    module = tmp_path / "dies_once.py"
    job = tmp_path / "job"
    module.write_text(CRASHING_CRITERION.format(armed=str(armed), scored=str(scored), target=target,
                                                part_file=str(job / f"part-{crashing_part}.jsonl")))
    load_criteria_module(str(module))
    config = EvalConfig(criteria={**POLICIES.criteria, "dies_once": {}})
    options: dict[str, Any] = {"partitions": partitions, "run_dir": job, "criteria_modules": [str(module)]}

    with pytest.raises(RuntimeError, match=r"1 of 2 partition\(s\) failed .*resume=True"):
        evaluate_traces_on_ray(None, files, config, max_retries=0, **options)
    assert not armed.exists()
    assert not (job / f"part-{crashing_part}.done.json").exists()
    assert (job / f"part-{1 - crashing_part}.done.json").exists()
    before = scored.read_text(encoding="utf-8").split()
    kept = (job / f"part-{crashing_part}.jsonl").read_text(encoding="utf-8")
    assert any(key in kept for key in before if part_of[key] == crashing_part)  # it stopped midway

    submitted: list[EvalCaseResult] = []
    resumed = evaluate_traces_on_ray(None, files, config, resume=True, sinks=[CallbackSink(submitted.append)],
                                     **options)
    after = scored.read_text(encoding="utf-8").split()
    rerun = after[len(before):]
    assert rerun and {part_of[key] for key in rerun} == {crashing_part}  # only the unfinished partition ran
    assert set(after) == set(part_of)  # none lost (those in flight at the crash ran again)
    kept_results = [json.loads(line).get("eval_id") for part in range(partitions)
                    for line in (job / f"part-{part}.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(key for key in kept_results if key in part_of) == sorted(part_of)  # one result each, none twice
    assert {r.eval_id for r in submitted} <= set(rerun)
    local = evaluate_traces(None, files, config)
    _assert_same(resumed, local, None, files)
    manifest = json.loads((job / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["partitions"] == partitions


def test_the_command_line_runs_and_resumes_the_job(weather_runs: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(p) for p in _files(weather_runs)]
    config = str(REPO_ROOT / "examples" / "production_policies.json")
    command = ["eval", "--traces", *files, "--config", config, "--engine", "ray", "--partitions", "2",
               "--run-file", str(tmp_path / "weather.jsonl"), "--quiet"]
    assert main([*command, "--report", str(tmp_path / "first.json")]) == 1  # the failing tool fails its run
    first = json.loads((tmp_path / "first.json").read_text(encoding="utf-8"))
    assert first["summary"]["total_cases"] == 7 and first["summary"]["failed_cases"] == 1
    assert json.loads((tmp_path / "weather.ray" / "manifest.json").read_text(encoding="utf-8"))["partitions"] == 2
    assert main([*command, "--report", str(tmp_path / "again.json"), "--resume"]) == 1  # every partition finished
    again = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))
    assert [r["eval_id"] for r in again["results"]] == [r["eval_id"] for r in first["results"]]
    assert main(["eval", "--traces", *files, "--config", config, "--partitions", "2"]) == 2
    assert capsys.readouterr().err.strip().endswith("--partitions goes with --engine ray")


def _span(trace_id: str, span_id: str, parent: str, step: str, name: str) -> dict[str, Any]:
    return {"traceId": trace_id, "spanId": span_id, "parentSpanId": parent, "name": name,
            "startTimeUnixNano": "1000", "endTimeUnixNano": "2000",
            "attributes": [{"key": "agenteval.step.type", "value": {"stringValue": step}},
                           {"key": "gen_ai.tool.name" if step == "tool" else "gen_ai.agent.name",
                            "value": {"stringValue": name}}]}


def _line(*spans: dict[str, Any]) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}) + "\n"


def test_a_trace_cut_across_partitions_is_read_whole_by_one_of_them(tmp_path: Path) -> None:
    """Partition plans: a line holding spans of two traces, one of them cut across files (its id in
    base64 in one file, hex in the other), is read for both; the cut trace is read whole once."""
    import base64

    from agenteval_otel.evaluation._ray import _plans, _plans_of_files, _scan_task

    cut, whole = "0af7651916cd43dd8448eb211c80319c", "4bf92f3577b34da6a3ce929d0e0e4736"
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text(_line(_span(cut, "00f067aa0ba902b7", "", "agent", "planner"),
                           _span(whole, "00f067aa0ba902b8", "", "agent", "solo")), encoding="utf-8")
    cut_b64 = base64.b64encode(bytes.fromhex(cut)).decode()
    second.write_text(_line(_span(cut_b64, "00f067aa0ba902b9", "00f067aa0ba902b7", "tool", "search")),
                      encoding="utf-8")
    groups = _plans_of_files([first, second], 2, 1 << 20)
    plans = _plans(groups, [_scan_task(shard) for group in groups for shard in group])
    read = [plan.trajectories([], None) for plan in plans]
    assert [len(found) for found, _ in read] == [2, 0]  # the first file's partition takes the cut trace
    assert [coverage.spans for _, coverage in read] == [3, 0]  # and reads its three spans, counted once
    by_trace = {t.trace_id: t for t in read[0][0]}
    assert [call.name for call in by_trace[cut].tool_calls()] == ["search"]  # its tool span came from the other file
    assert by_trace[whole].tool_calls() == []
