"""Offline evaluation of traces (our own weather runs, and real third-party traces) against eval
sets built from their ground truth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from agenteval_otel import CriterionConfig, EvalCase, EvalConfig, EvalSet, ToolCall
from agenteval_otel.cli import main
from agenteval_otel.evalsets import SessionInput
from agenteval_otel.evaluation._offline import evaluate_traces, iter_matches
from agenteval_otel.reports._console import criteria_table
from agenteval_otel.trajectory.trajectory import Trajectory
from tests.ground_truth import ground_truth_eval_set

PRODUCERS = ["google_adk_semconv_content", "langgraph_openinference", "openinference",
             "otel_v2_latest", "pydantic_ai"]


def _traces(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.otlp.json"))


def _own_traces(folder: Path) -> list[Path]:
    """Our weather runs, one file each (``all_runs.otlp.json`` repeats three of them)."""
    return [p for p in _traces(folder) if p.name != "all_runs.otlp.json"]


def test_every_own_ground_truth_case_passes_with_arguments_and_responses(weather_runs: Path) -> None:
    eval_set = ground_truth_eval_set(weather_runs)
    report = evaluate_traces(eval_set, _own_traces(weather_runs))
    report.assert_passed()
    assert report.summary.total_cases == len(list(weather_runs.glob("*.ground_truth.json"))) == 6
    config = EvalConfig(criteria={
        "trajectory_match": CriterionConfig.trajectory(1.0, check_args=True),
        "response_match": CriterionConfig.response(1.0),
    })
    exact = evaluate_traces(eval_set, _own_traces(weather_runs), config)
    exact.assert_passed()
    multi = next(r for r in exact.results if r.eval_id == "run4_multi_turn")
    assert [[c.name for c in turn.actual_tool_calls] for turn in multi.invocation_results] == [
        ["get_weather"], ["celsius_to_fahrenheit"]]


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


def test_case_expecting_an_uncalled_tool_fails(weather_runs: Path) -> None:
    folder = weather_runs
    eval_set = ground_truth_eval_set(folder)
    eval_set.eval_cases[0].conversation[0].expected_tool_trajectory.append(ToolCall(name="book_flight"))
    report = evaluate_traces(eval_set, _own_traces(folder))
    first = report.results[0]
    assert first.status == "failed"
    trajectory = next(r for r in first.criterion_results if r.criterion == "trajectory_match")
    assert "missing: book_flight()" in trajectory.reason
    assert [r.status for r in report.results[1:]] == ["passed"] * (len(report.results) - 1)


def test_unmatched_case_is_reported(weather_runs: Path) -> None:
    folder = weather_runs
    eval_set = ground_truth_eval_set(folder)
    eval_set.eval_cases.append(EvalCase.single_turn("A question nobody asked", eval_id="ghost"))
    report = evaluate_traces(eval_set, _own_traces(folder))
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
    matched = {case.eval_id: runs[0] for case, runs, _ in iter_matches(cases, [tagged, threaded, plain])}
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


# --- several runs of a case in one trace file --------------------------------------------------

def _weather_runs(path: Path, *replies: str) -> EvalSet:
    """Run an agent over one case once per reply, every run appended to the trace file ``path``
    as ``agenteval run`` does; the eval set expects the first reply."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from agenteval_otel import EvalSetBuilder
    from agenteval_otel.evaluation._live import evaluate
    from agenteval_otel.tracing import OtlpJsonFileExporter

    eval_set = (EvalSetBuilder("weather", eval_set_id="weather")
                .add_case(query="Weather in Paris?", expected=replies[0], case_id="paris").build())
    for reply in replies:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
        evaluate(eval_set, lambda query, reply=reply: reply, tracer_provider=provider)
        provider.shutdown()
    return eval_set


@pytest.mark.promise(18)
def test_the_latest_run_is_scored_and_older_ones_are_set_aside(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    traces = tmp_path / "agenteval-traces.jsonl"
    eval_set = _weather_runs(traces, "Sunny in Paris.", "I cannot help with that.")
    report = evaluate_traces(eval_set, traces)
    (result,) = report.results
    assert result.status == "failed"
    assert result.actual_response == "I cannot help with that."
    assert result.set_aside_runs == 1 and report.summary.set_aside_runs == 1
    assert "set 1 older run(s) aside" in caplog.text


@pytest.mark.promise(18)
def test_newest_first_sources_still_score_the_latest_run() -> None:
    old = Trajectory(eval_id="c", user_input="q", final_response="good", trace_ids=["old"], start_ns=10)
    new = Trajectory(eval_id="c", user_input="q", final_response="bad", trace_ids=["new"], start_ns=20)
    case = EvalCase.single_turn("q", "good", eval_id="c")
    (match,) = iter_matches([case], [new, old])
    assert [[t.trace_ids[0] for t in run] for run in match.runs] == [["new"]] and match.set_aside == 1


@pytest.mark.promise(18)
def test_all_runs_are_scored_as_repeated_runs(tmp_path: Path) -> None:
    traces = tmp_path / "agenteval-traces.jsonl"
    eval_set = _weather_runs(traces, "Sunny in Paris.", "I cannot help with that.")
    report = evaluate_traces(eval_set, traces, runs="all")
    (result,) = report.results
    assert [run.actual_response for run in result.run_results] == [
        "Sunny in Paris.", "I cannot help with that."]
    assert (result.metrics["runs"], result.metrics["passed_runs"]) == (2, 1)
    assert (result.metrics["pass@1"], result.metrics["pass@k"], result.metrics["pass^k"]) == (0.5, 1.0, 0.0)
    assert result.status == "failed" and result.set_aside_runs == 0
    with pytest.raises(ValueError, match="'latest' or 'all'"):
        evaluate_traces(eval_set, traces, runs="oldest")  # type: ignore[arg-type]


@pytest.mark.promise(18)
def test_multi_turn_runs_sharing_a_thread_are_split_and_the_latest_kept() -> None:
    case = EvalCase.multi_turn([("Hi", "Hello"), ("Weather?", "Sunny")], eval_id="chat",
                               session_input=SessionInput(thread_id="t"))
    turns = [Trajectory(conversation_id="t", user_input=text, final_response=reply,
                        trace_ids=[f"{run}{i}"], start_ns=start)
             for run, base in (("a", 0), ("b", 100))
             for i, (text, reply, start) in enumerate(
                 (("Hi", "Hello", base + 1), ("Weather?", "Sunny" if run == "a" else "Rain", base + 2)))]
    (match,) = iter_matches([case], turns)
    assert [[t.trace_ids[0] for t in run] for run in match.runs] == [["b0", "b1"]]
    assert match.set_aside == 1
    (every,) = iter_matches([case], turns, keep="all")
    assert [[t.trace_ids[0] for t in run] for run in every.runs] == [["a0", "a1"], ["b0", "b1"]]


@pytest.mark.promise(18)
def test_multi_turn_conversations_keep_the_latest() -> None:
    case = EvalCase.multi_turn([("Hi", "Hello"), ("Weather?", "Sunny")], eval_id="chat")
    turns = [Trajectory(eval_id="chat", conversation_id=f"chat-{run}", user_input=text,
                        trace_ids=[f"{run}{i}"], start_ns=base + i)
             for run, base in (("b", 100), ("a", 0))  # newest first, as Jaeger answers
             for i, text in reversed(list(enumerate(("Hi", "Weather?"))))]
    (match,) = iter_matches([case], turns)
    assert [[t.trace_ids[0] for t in run] for run in match.runs] == [["b0", "b1"]]
    assert match.set_aside == 1


# --- the command line --------------------------------------------------------------------------

def test_cli_eval_passes_and_fails(weather_runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # the run file goes to ./.agenteval
    folder = weather_runs
    eval_set = ground_truth_eval_set(folder)
    good = eval_set.save(tmp_path / "good.evalset.json")
    traces = [str(p) for p in _own_traces(folder)]
    report_path = tmp_path / "report.json"
    assert main(["eval", str(good), "--traces", *traces, "--report", str(report_path)]) == 0
    assert (tmp_path / ".agenteval" / f"{folder.name}.eval.jsonl").exists()
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


def test_gc_thresholds_are_restored_after_a_run(weather_runs: Path) -> None:
    import gc

    before = gc.get_threshold()
    folder = weather_runs
    evaluate_traces(ground_truth_eval_set(folder), _own_traces(folder))
    assert gc.get_threshold() == before


@pytest.mark.promise(18)
def test_cli_eval_scores_the_latest_run_or_all_of_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")
    traces = tmp_path / "agenteval-traces.jsonl"
    evalset = _weather_runs(traces, "Sunny in Paris.", "I cannot help with that.").save(tmp_path / "w.json")
    assert main(["eval", str(evalset), "--traces", str(traces), "--report", "latest.json"]) == 1
    out = capsys.readouterr().out
    assert "0/1 passed, 1 failed" in out and "1 older run(s) set aside" in out
    assert "set 1 older run(s) aside" in caplog.text
    assert json.loads((tmp_path / "latest.json").read_text())["results"][0]["set_aside_runs"] == 1

    assert main(["eval", str(evalset), "--traces", str(traces), "--all-runs",
                 "--run-file", "all.jsonl"]) == 1
    out = capsys.readouterr().out
    assert "repeated runs" in out and "set aside" not in out
    runs = out[out.index("repeated runs"):]
    row = next(line for line in runs.splitlines() if line.startswith("│ paris"))
    assert [cell.strip() for cell in row.split("│")[1:-1]] == ["paris", "2", "1", "50%", "100%", "0%"]


def test_cli_eval_with_a_criteria_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")
    traces = tmp_path / "agenteval-traces.jsonl"
    evalset = _weather_runs(traces, "Sunny in Paris.").save(tmp_path / "w.json")
    (tmp_path / "offline_criteria.py").write_text(
        "from agenteval_otel import criterion\n\n"
        "@criterion('mentions_paris_offline')\n"
        "def mentions_paris(ctx):\n"
        "    return 'Paris' in (ctx.actual.final_response or '')\n")
    (tmp_path / "config.json").write_text('{"criteria": {"mentions_paris_offline": {}}}')
    assert main(["eval", str(evalset), "--traces", str(traces), "--config", "config.json",
                 "--criteria-module", "offline_criteria.py"]) == 0
    assert "mentions_paris_offline" in capsys.readouterr().out


def test_multi_turn_turns_without_a_conversation_id_form_one_run_per_repeat() -> None:
    case = EvalCase.multi_turn([("Hi", "Hello"), ("Weather?", "Sunny")], eval_id="chat")
    turns = [Trajectory(eval_id="chat", user_input=text, trace_ids=[f"{run}{i}"], start_ns=base + i)
             for run, base in (("a", 0), ("b", 100)) for i, text in enumerate(("Hi", "Weather?"))]
    (match,) = iter_matches([case], turns)
    assert [[t.trace_ids[0] for t in run] for run in match.runs] == [["b0", "b1"]] and match.set_aside == 1
    (every,) = iter_matches([case], turns, keep="all")
    assert [[t.trace_ids[0] for t in run] for run in every.runs] == [["a0", "a1"], ["b0", "b1"]]


def test_cases_sharing_a_first_message_share_its_runs_in_turn() -> None:
    cases = [EvalCase.single_turn("Same question", "x", eval_id="first"),
             EvalCase.single_turn("Same question", "y", eval_id="second")]
    runs = [Trajectory(user_input="same question", trace_ids=[f"r{i}"], start_ns=i) for i in range(1, 5)]
    kept = {m.case.eval_id: ([t.trace_ids[0] for run in m.runs for t in run], m.set_aside)
            for m in iter_matches(cases, runs)}
    assert kept == {"first": (["r3"], 1), "second": (["r4"], 1)}


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


# --- memory: results scored as runs complete, held slim ----------------------------------------

def _paris_cases(count: int) -> EvalSet:
    return EvalSet(eval_set_id="s", eval_cases=[
        EvalCase.single_turn(f"Weather in city {i}?", "Sunny", eval_id=f"c{i}") for i in range(count)])


def _stream(trajectories: list[Trajectory], consumed: list[int]):  # type: ignore[no-untyped-def]
    for trajectory in trajectories:
        consumed[0] += 1
        yield trajectory


def test_single_turn_runs_are_scored_as_they_arrive_and_held_slim() -> None:
    from agenteval_otel.results._sinks import CallbackSink
    from agenteval_otel.trajectory.steps import TrajectoryStep

    runs = [Trajectory(steps=[TrajectoryStep.message("assistant", "Sunny")], user_input=f"Weather in city {i}?",
                       final_response="Sunny" if i else "Rain", trace_ids=[f"t{i}"], start_ns=i)
            for i in range(3)]
    consumed = [0]
    seen: list[tuple[str, int]] = []
    sink = CallbackSink(lambda result: seen.append((result.eval_id, consumed[0])))
    report = evaluate_traces(_paris_cases(3), _stream(runs, consumed), sinks=[sink])
    assert seen == [("c0", 1), ("c1", 2), ("c2", 3)]  # each scored before the next run was read
    failed, passed = report.results[0], report.results[1]
    assert failed.status == "failed" and failed.actual_trajectory  # failures keep their evidence
    assert passed.status == "passed" and not passed.actual_trajectory
    assert passed.invocation_results[0].actual_response == "Sunny"
    kept = evaluate_traces(_paris_cases(3), runs, keep_trajectories=True)
    assert all(result.actual_trajectory for result in kept.results)
    assert kept.summary == report.summary


def test_multi_turn_conversations_are_scored_once_idle(monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    import agenteval_otel.evaluation._offline as offline
    from agenteval_otel.results._sinks import CallbackSink

    monkeypatch.setattr(offline, "CONVERSATION_IDLE_RUNS", 1)
    case = EvalCase.multi_turn([("Hi", "Hello"), ("Weather?", "Sunny")], eval_id="chat")
    others = _paris_cases(3).eval_cases
    stream = [Trajectory(conversation_id="k", user_input="Hi", final_response="Hello", start_ns=1),
              Trajectory(conversation_id="k", user_input="Weather?", final_response="Sunny", start_ns=2),
              *(Trajectory(user_input=f"Weather in city {i}?", final_response="Sunny", start_ns=3 + i)
                for i in range(3)),
              Trajectory(conversation_id="k", user_input="Late?", final_response="x", start_ns=9)]
    consumed = [0]
    seen: dict[str, int] = {}
    sink = CallbackSink(lambda result: seen.setdefault(result.eval_id, consumed[0]))
    report = evaluate_traces(EvalSet(eval_set_id="s", eval_cases=[case, *others]),
                             _stream(stream, consumed), sinks=[sink])
    assert seen["chat"] >= 4  # complete two runs after its last turn (scored concurrently from there) ...
    report.assert_passed()
    assert "1 turn(s) came after their conversation was scored" in caplog.text  # ... not at the end


def test_an_older_run_found_after_the_latest_was_scored_is_set_aside(tmp_path: Path) -> None:
    from agenteval_otel.reports._writers import ReportFile
    from agenteval_otel.trajectory.steps import TrajectoryStep

    new = Trajectory(steps=[TrajectoryStep.message("assistant", "bad")], eval_id="c", user_input="q",
                     final_response="bad", trace_ids=["new"], start_ns=20)
    old = Trajectory(eval_id="c", user_input="q", final_response="good", trace_ids=["old"], start_ns=10)
    eval_set = EvalSet(eval_set_id="s", eval_cases=[EvalCase.single_turn("q", "good", eval_id="c")])
    report = evaluate_traces(eval_set, [new, old], sinks=[ReportFile(tmp_path / "r.json", "json")])
    (result,) = report.results
    assert (result.actual_response, result.set_aside_runs, report.summary.set_aside_runs) == ("bad", 1, 1)
    saved = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert saved["set_aside_runs"] == 1 and saved["actual_trajectory"][0]["name"] == "assistant"
