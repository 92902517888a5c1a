"""Offline evaluation of real third-party traces against eval sets built from their ground truth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from agenteval_otel import CriterionConfig, EvalCase, EvalConfig, EvalSet, ToolCall
from agenteval_otel.cli import main
from agenteval_otel.evaluation import SessionInput
from agenteval_otel.evaluation.offline import evaluate_traces, iter_matches
from agenteval_otel.reports.console import criteria_table
from agenteval_otel.trajectory.trajectory import Trajectory
from tests.ground_truth import ground_truth_eval_set

PRODUCERS = ["google_adk_semconv_content", "langgraph_openinference", "openinference",
             "otel_v2_latest", "pydantic_ai"]
# OpenInference records a single string argument without its key in these two LangGraph runs,
# so no trace-level reader can give the argument a name.
KEYLESS_ARGUMENTS = {"run5_fanout_two_parallel_nodes", "run6_fanout_single_target"}


def _traces(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.otlp.json"))


@pytest.mark.parametrize("producer", PRODUCERS)
def test_every_ground_truth_case_passes(shared_data: Path, producer: str) -> None:
    folder = shared_data / "traces" / "generated" / producer
    eval_set = ground_truth_eval_set(folder)
    report = evaluate_traces(eval_set, _traces(folder))
    report.assert_passed()
    assert report.summary.total_cases == len(list(folder.glob("*.ground_truth.json")))


@pytest.mark.parametrize("producer", PRODUCERS)
def test_arguments_and_responses_match_exactly(shared_data: Path, producer: str) -> None:
    folder = shared_data / "traces" / "generated" / producer
    eval_set = ground_truth_eval_set(folder)
    eval_set.eval_cases = [c for c in eval_set.eval_cases if c.eval_id not in KEYLESS_ARGUMENTS]
    config = EvalConfig(criteria={
        "trajectory_match": CriterionConfig.trajectory(1.0, check_args=True),
        "response_match": CriterionConfig.response(1.0),
    })
    evaluate_traces(eval_set, _traces(folder), config).assert_passed()


def test_adk_eval_set_against_adk_traces(shared_data: Path) -> None:
    """Google ADK's own eval set (invocation-events form) scored against the runs it came from."""
    folder = shared_data / "traces" / "generated" / "google_adk_semconv_content"
    eval_set = EvalSet.load(folder / "adk_weather_generated.evalset.json")
    config = EvalConfig.load(shared_data / "evalsets" / "adk-python__hello_world_agent__test_config.json")
    report = evaluate_traces(eval_set, _traces(folder), config)
    report.assert_passed()
    multi = next(r for r in report.results if r.eval_id == "run3_multi_turn")
    assert len(multi.invocation_results) == 2
    assert [c.name for c in multi.invocation_results[1].actual_tool_calls] == [
        "get_weather", "celsius_to_fahrenheit"]


def test_case_expecting_an_uncalled_tool_fails(shared_data: Path) -> None:
    folder = shared_data / "traces" / "generated" / "openinference"
    eval_set = ground_truth_eval_set(folder)
    eval_set.eval_cases[0].conversation[0].expected_tool_trajectory.append(ToolCall(name="book_flight"))
    report = evaluate_traces(eval_set, _traces(folder))
    first = report.results[0]
    assert first.status == "failed"
    trajectory = next(r for r in first.criterion_results if r.criterion == "trajectory_match")
    assert "missing: book_flight()" in trajectory.reason
    assert [r.status for r in report.results[1:]] == ["passed"] * (len(report.results) - 1)


def test_unmatched_case_is_reported(shared_data: Path) -> None:
    folder = shared_data / "traces" / "generated" / "openinference"
    eval_set = ground_truth_eval_set(folder)
    eval_set.eval_cases.append(EvalCase.single_turn("A question nobody asked", eval_id="ghost"))
    report = evaluate_traces(eval_set, _traces(folder))
    ghost = next(r for r in report.results if r.eval_id == "ghost")
    assert ghost.status == "errored" and ghost.error is not None and ghost.error.startswith("unmatched")
    assert report.summary.error_cases == 1


def test_matching_order_eval_id_then_thread_then_first_message() -> None:
    tagged = Trajectory(eval_id="by-id", user_input="same question", trace_ids=["a"], start_ns=1)
    threaded = Trajectory(conversation_id="thread-7", user_input="same question", trace_ids=["b"], start_ns=2)
    plain = Trajectory(user_input="Same   QUESTION", trace_ids=["c"], start_ns=3)
    cases = [
        EvalCase.single_turn("same question", eval_id="by-first-message"),
        EvalCase.single_turn("other", eval_id="by-thread", session_input=SessionInput(thread_id="thread-7")),
        EvalCase.single_turn("x", eval_id="by-id"),
    ]
    matched = {case.eval_id: turns for case, turns in iter_matches(cases, [tagged, threaded, plain])}
    assert {k: [t.trace_ids[0] for t in v] for k, v in matched.items()} == {
        "by-id": ["a"], "by-thread": ["b"], "by-first-message": ["c"]}


def test_multi_turn_case_is_matched_to_a_whole_conversation() -> None:
    turn2 = Trajectory(conversation_id="c1", user_input="And in Fahrenheit?", final_response="53.6°F",
                       trace_ids=["t2"], start_ns=20)
    turn1 = Trajectory(conversation_id="c1", user_input="Weather in London?", final_response="12°C",
                       trace_ids=["t1"], start_ns=10)
    case = EvalCase.multi_turn([("Weather in London?", "12°C"), ("And in Fahrenheit?", "53.6°F")],
                               eval_id="london")
    report = evaluate_traces(EvalSet(eval_set_id="s", eval_cases=[case]), [turn2, turn1])
    report.assert_passed()
    assert report.results[0].trace_ids == ["t1", "t2"]


def test_fewer_turns_than_expected_errors_the_case() -> None:
    only = Trajectory(user_input="Weather in London?", final_response="12°C", trace_ids=["t1"])
    case = EvalCase.multi_turn([("Weather in London?", "12°C"), ("And in Fahrenheit?", "53.6°F")])
    report = evaluate_traces(EvalSet(eval_set_id="s", eval_cases=[case]), [only])
    assert report.results[0].status == "errored"
    assert "1 of 2 turn(s) missing" in (report.results[0].error or "")


# --- the command line --------------------------------------------------------------------------

def test_cli_eval_passes_and_fails(shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # the run file goes to ./.agenteval
    folder = shared_data / "traces" / "generated" / "pydantic_ai"
    eval_set = ground_truth_eval_set(folder)
    good = eval_set.save(tmp_path / "good.evalset.json")
    traces = [str(p) for p in _traces(folder)]
    report_path = tmp_path / "report.json"
    assert main(["eval", str(good), "--traces", *traces, "--report", str(report_path)]) == 0
    assert (tmp_path / ".agenteval" / "pydantic_ai.eval.jsonl").exists()
    saved = json.loads(report_path.read_text())
    assert saved["summary"]["passed_cases"] == len(eval_set.eval_cases)
    assert saved["results"][0]["actual_trajectory"] and saved["results"][0]["trace_ids"]

    eval_set.eval_cases[0].conversation[0].expected_tool_trajectory.append(ToolCall(name="never_called"))
    bad = eval_set.save(tmp_path / "bad.evalset.json")
    assert main(["eval", str(bad), "--traces", *traces]) == 1
    assert "never_called" in capsys.readouterr().out


def test_cli_eval_bad_input_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    from tests.conftest import REPO_ROOT

    evalset = str(REPO_ROOT / "examples" / "weather_agent.evalset.json")
    assert main(["eval", evalset]) == 2
    assert "--traces" in capsys.readouterr().err
    bad_config = tmp_path / "config.json"
    bad_config.write_text('{"criteria": {"no_such_criterion": 1}}')
    assert main(["eval", evalset, "--traces", "x.json", "--config", str(bad_config)]) == 2
    assert "unknown criterion 'no_such_criterion'" in capsys.readouterr().err


def test_gc_thresholds_are_restored_after_a_run(shared_data: Path) -> None:
    import gc

    before = gc.get_threshold()
    folder = shared_data / "traces" / "generated" / "openinference"
    evaluate_traces(ground_truth_eval_set(folder), _traces(folder))
    assert gc.get_threshold() == before


def test_adk_eval_set_without_config_uses_adks_default_criteria(
        shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = shared_data / "traces" / "generated" / "google_adk_semconv_content"
    evalset = folder / "adk_weather_generated.evalset.json"
    report_path = tmp_path / "report.json"
    assert main(["eval", str(evalset), "--traces", *map(str, _traces(folder)), "--report", str(report_path),
                 "--quiet"]) == 0
    saved = json.loads(report_path.read_text())
    assert {k: v["threshold"] for k, v in saved["config_used"]["criteria"].items()} == {
        "tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}
    assert {r["semantics"] for case in saved["results"] for r in case["criterion_results"]} == {"adk"}
    assert {s["semantics"] for s in saved["summary"]["criterion_stats"].values()} == {"adk"}

    report = evaluate_traces(EvalSet.load(evalset), _traces(folder))  # the library call, no config
    assert {r.criterion for case in report.results for r in case.criterion_results} == {
        "tool_trajectory_avg_score", "response_match_score"}
    console = Console(record=True, width=160, color_system=None)
    console.print(criteria_table(report))
    rows = [line for line in console.export_text().splitlines() if "_score" in line]
    assert len(rows) == 2 and all("│ adk " in row for row in rows)  # which rules scored each
