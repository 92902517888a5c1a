"""Experiments: a simulation run graded by a grader directory (against a scripted Chat Completions
server on 127.0.0.1, through the real openai client) or by eval criteria; statistics checked
against hand-computed values; the JSONL file written and read back."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel.criteria import EvalConfig
from agenteval_otel.errors import ConfigError, ExperimentLoadError, GraderError
from agenteval_otel.experiments import (
    ExperimentRecord,
    ExperimentResult,
    SimulationRecord,
    arun_experiment,
    grader_entry,
    run_experiment,
)
from agenteval_otel.experiments.graders import Grader, load_grader_dir
from agenteval_otel.judge import JudgeClient, JudgeSettings
from agenteval_otel.trajectory import TrajectoryStep
from tests.judge.judge_server import Reply, Request, serve

EXAMPLE_GRADER = Path(__file__).resolve().parents[2] / "examples" / "graders" / "helpfulness"


def _judge(url: str) -> JudgeClient:
    return JudgeClient(JudgeSettings(base_url=url, api_key="local", timeout_s=1.0, max_retries=0))


def _run() -> list[SimulationRecord]:
    return [
        SimulationRecord(query_index=0, query="Are dogs allowed?", response="Yes, dogs are welcome.",
                         ground_truth="Dogs are allowed."),
        SimulationRecord(query_index=1, query="Is there parking?", response="Maybe."),
        SimulationRecord(query_index=2, query="Wi-Fi password?", response="It is on the fridge."),
        SimulationRecord(query_index=3, query="Pool hours?", error="agent crashed", error_type="RuntimeError"),
        SimulationRecord(query_index=4, query="Early check-in?", response="Yes, from 10 am."),
    ]


# the grader's scores per query (helpfulness): query 2's reply is garbage
HELPFULNESS = {"Are dogs allowed?": 1.0, "Is there parking?": 0.25, "Early check-in?": 0.5}


def _script(request: Request) -> Reply:
    prompt = request.prompt
    for query, score in HELPFULNESS.items():
        if f"USER: {query}" in prompt:
            return Reply(json.dumps({"helpfulness": score, "groundedness": 1.0, "professionalism": 0.75}))
    return Reply("I cannot grade this, sorry.")


def test_a_grader_directory_grades_each_record_and_a_failing_grade_is_an_errored_record() -> None:
    with serve(_script) as server:
        result = run_experiment(_run(), grader=EXAMPLE_GRADER, judge=_judge(server.url), concurrency=2,
                                trust_code=True)
    assert server.count == 4  # the run whose agent failed is not graded
    assert [r.status for r in result.records] == ["passed", "failed", "errored", "errored", "passed"]
    first, second, garbage, crashed, last = result.records
    assert first.scores == {"helpfulness": 1.0, "groundedness": 1.0, "professionalism": 0.75}
    assert second.metric_passed == {"helpfulness": False, "groundedness": True, "professionalism": True}
    assert garbage.error is not None and "no JSON object" in garbage.error and garbage.scores == {}
    assert garbage.reply == "I cannot grade this, sorry."
    assert crashed.error == "the agent's run failed, not graded: RuntimeError: agent crashed"
    assert last.scores["helpfulness"] == 0.5  # 0.5 reaches the default threshold
    # the template read the conversation, the ground truth, and the grader's model config
    prompts = {r.prompt for r in server.requests}
    assert any("USER: Are dogs allowed?\nASSISTANT: Yes, dogs are welcome." in p and "Dogs are allowed." in p
               for p in prompts)
    assert {r.body["model"] for r in server.requests} == {"gpt-4o-mini"}
    stats = result.summary.metrics["helpfulness"]  # hand-computed over 1.0, 0.25, 0.5
    assert (stats.count, stats.passed, stats.min, stats.max, stats.median) == (3, 2, 0.25, 1.0, 0.5)
    assert stats.mean == pytest.approx(0.5833333333)
    assert stats.std_dev == pytest.approx(math.sqrt(((1 - 7 / 12) ** 2 + (0.25 - 7 / 12) ** 2
                                                     + (0.5 - 7 / 12) ** 2) / 2))
    assert stats.pass_rate == pytest.approx(2 / 3)
    summary = result.summary
    assert (summary.total, summary.passed, summary.failed, summary.errored) == (5, 2, 1, 2)
    assert summary.graded_by == f"grader {EXAMPLE_GRADER}"


async def test_per_metric_thresholds_and_an_unreachable_judge_error_every_record_without_a_crash() -> None:
    with serve(_script) as server:
        result = await arun_experiment(_run()[:2], grader=load_grader_dir(EXAMPLE_GRADER, judge=_judge(server.url),
                                                                          trust_code=True),
                                       thresholds={"professionalism": 0.8})
    assert [r.metric_passed["professionalism"] for r in result.records] == [False, False]
    with serve(lambda r: Reply(status=503)) as server:
        result = await arun_experiment(_run()[:2], grader=EXAMPLE_GRADER, judge=_judge(server.url), trust_code=True)
    assert [r.error_type for r in result.records] == ["JudgeUnavailableError"] * 2


def test_the_template_entry_holds_the_record() -> None:
    record = SimulationRecord(query_index=7, query="Weather?", response="Sunny.", ground_truth={"response": "Sun"},
                              metadata={"tag": "w"},
                              tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}}])
    entry = grader_entry(record)
    assert entry["content"] == "USER: Weather?\nASSISTANT: Sunny."
    assert (entry["query"], entry["response"], entry["ground_truth"], entry["metadata"], entry["query_index"]) == (
        "Weather?", "Sunny.", {"response": "Sun"}, {"tag": "w"}, 7)
    assert entry["tool_calls"] == [{"name": "get_weather", "args": {"city": "Paris"}}]


def _tool(name: str, **args: Any) -> dict[str, Any]:
    return {"step_type": "tool", "name": name, "args": args}


def test_eval_criteria_score_trajectories_and_reference_based_ones_need_a_ground_truth() -> None:
    config = EvalConfig.model_validate({"criteria": {
        "final_response_present": 1.0,
        "max_tool_calls": {"threshold": 1.0, "params": {"limit": 1}},
        "response_match": 0.7,
    }})
    records = [
        SimulationRecord(query_index=0, query="Weather in Paris?", response="It is sunny in Paris",
                         ground_truth="It is sunny in Paris", trajectory=[_tool("get_weather", city="Paris")]),
        SimulationRecord(query_index=1, query="Weather in Rome?", response="",
                         trajectory=[_tool("get_weather", city="Rome"), _tool("get_weather", city="Roma")]),
        SimulationRecord(query_index=2, query="Weather in Oslo?", response="Rain all week long",
                         ground_truth={"response": "It is sunny in Oslo"}),
    ]
    result = run_experiment(records, config=config)
    paris, rome, oslo = result.records
    assert paris.scores == {"final_response_present": 1.0, "max_tool_calls": 1.0, "response_match": 1.0}
    assert paris.passed
    assert rome.scores == {"final_response_present": 0.0, "max_tool_calls": 0.0}  # no ground truth
    assert not rome.passed and rome.error is None and "2 tool calls > limit 1" == rome.reasons["max_tool_calls"]
    assert oslo.scores["response_match"] < 0.7 and oslo.metric_passed["response_match"] is False
    assert result.summary.metrics["response_match"].count == 2
    assert result.graded_by == "criteria final_response_present, max_tool_calls, response_match"


def test_a_ground_truth_naming_tool_calls_is_the_expected_trajectory() -> None:
    config = EvalConfig.model_validate({"criteria": {"trajectory_match": 1.0}})
    truth = {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]}
    records = [SimulationRecord(query_index=0, query="q", response="r", ground_truth=truth,
                                trajectory=[_tool("get_weather", city="Paris")]),
               SimulationRecord(query_index=1, query="q", response="r", ground_truth=truth, trajectory=[]),
               SimulationRecord(query_index=2, query="q", response="r", ground_truth={"tool_calls": "get_weather"})]
    result = run_experiment(records, config=config)
    assert [r.scores.get("trajectory_match") for r in result.records] == [1.0, 0.0, None]
    assert result.records[2].status == "errored" and "ground_truth.tool_calls" in str(result.records[2].error)


def test_grading_needs_exactly_one_of_a_grader_and_criteria() -> None:
    with pytest.raises(ConfigError, match="either a grader or eval criteria"):
        run_experiment(_run())
    with pytest.raises(GraderError, match="not a directory"):
        run_experiment(_run(), grader="/nonexistent/grader")


def test_load_grader_dir_names_what_is_missing(tmp_path: Path) -> None:
    grader = tmp_path / "g"
    grader.mkdir()
    with pytest.raises(GraderError, match=r"expected one template file .*found none"):
        load_grader_dir(grader)
    (grader / "template.j2").write_text("{{ entry.content }}")
    with pytest.raises(GraderError, match="model_config.json is missing"):
        load_grader_dir(grader)
    (grader / "model_config.json").write_text('{"model": "m", "top_k": 1}')
    with pytest.raises(GraderError, match="top_k: unknown key"):
        load_grader_dir(grader)
    (grader / "model_config.json").write_text('{"model": "m"}')
    (grader / "template.txt").write_text("x")
    with pytest.raises(GraderError, match="found template.j2, template.txt"):
        load_grader_dir(grader)


def test_a_grader_directory_without_a_parser_reads_the_first_json_object(tmp_path: Path) -> None:
    grader = tmp_path / "g"
    shutil.copytree(EXAMPLE_GRADER, grader)
    (grader / "parser.py").unlink()
    with serve(lambda r: Reply('Sure: {"accuracy": 0.75}')) as server:
        result = run_experiment(_run()[:1], grader=grader, judge=_judge(server.url))
    assert result.records[0].scores == {"accuracy": 0.75}


def test_the_jsonl_file_round_trips_with_a_summary_line(tmp_path: Path) -> None:
    result = ExperimentResult(records=[
        ExperimentRecord(query_index=0, query="a", scores={"m": 1.0}, metric_passed={"m": True}, passed=True),
        ExperimentRecord(query_index=1, query="b", scores={"m": 0.0}, metric_passed={"m": False}),
        ExperimentRecord(query_index=2, query="c", error="grader: down", error_type="JudgeUnavailableError"),
    ], source="run.jsonl", graded_by="grader g")
    path = result.write_jsonl(tmp_path / "exp.jsonl")
    lines = path.read_text().splitlines()
    assert len(lines) == 4
    summary = json.loads(lines[-1])["summary"]
    assert (summary["total"], summary["passed"], summary["failed"], summary["errored"]) == (3, 1, 1, 1)
    assert summary["metrics"]["m"]["pass_rate"] == 0.5
    loaded = ExperimentResult.load_jsonl(path)
    assert loaded == result


@pytest.mark.parametrize(("text", "expected"), [
    ('{"query_index": 0, "query": "a"}\n{"query_index": 1,\n', r"line 2, column \d+: invalid JSON"),
    ('{"query_index": 0, "query": "a"}\n\n{"query_index": "x", "query": "b"}\n', r"line 3: query_index: Input should be a valid integer"),
    ('{"query_index": 0, "query": "a", "colour": 1}\n', r"line 1: colour: unknown field"),
    ('{"query_index": 0, "query": "a", "scores": {"m": NaN}}\n', r"line 1: scores\.m: expected a finite"),
    ('{"summary": {}}\n', "no record in it"),
])
def test_a_bad_experiment_file_names_the_line(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "exp.jsonl"
    path.write_text(text)
    with pytest.raises(ExperimentLoadError, match=expected):
        ExperimentResult.load_jsonl(path)


class Interrupted(BaseException):
    """Stops an experiment as a kill would."""


@pytest.mark.promise(14)
def test_an_interrupted_experiment_keeps_what_it_graded_and_resumes_grading_nothing_twice(tmp_path: Path) -> None:
    run = [SimulationRecord(query_index=i, query=f"q{i}", response=f"r{i}") for i in range(5)]
    graded: list[str] = []

    def parser(reply: str) -> dict[str, float]:
        query = json.loads(reply)["query"]
        if query == "q3" and not graded.count("q3"):
            graded.append(query)
            raise Interrupted
        graded.append(query)
        return {"m": 1.0}

    def script(request: Request) -> Reply:
        return Reply(json.dumps({"query": request.prompt.removeprefix("grade ")}))

    out = tmp_path / "exp.jsonl"
    with serve(script) as server:
        grader = Grader("grade {{ entry.query }}", {"model": "m"}, parser, judge=_judge(server.url))
        with pytest.raises(Interrupted):
            run_experiment(run, grader=grader, concurrency=1, out=out)
        kept = ExperimentResult.load_jsonl(out)  # no summary line yet: the records graded so far
        assert [r.query for r in kept.records] == ["q0", "q1", "q2"]
        with out.open("a") as handle:  # a line cut short by a kill
            handle.write('{"query_index": 3, "query": "q3", "sco')
        result = run_experiment(run, grader=grader, concurrency=1, out=out, resume=True)
    assert [r.query for r in result.records] == ["q0", "q1", "q2", "q3", "q4"]
    assert [r.prompt for r in server.requests] == [f"grade q{i}" for i in (0, 1, 2, 3, 3, 4)]
    assert graded == ["q0", "q1", "q2", "q3", "q3", "q4"]  # q3 graded again only because its line was lost
    written = out.read_text().splitlines()
    assert len(written) == 6 and json.loads(written[-1])["summary"]["total"] == 5
    assert [r.query for r in ExperimentResult.load_jsonl(out).records] == ["q0", "q1", "q2", "q3", "q4"]
    run_experiment(run, grader=grader, concurrency=1, out=out, resume=True)  # all done: nothing graded
    assert len(graded) == 6
    with pytest.raises(ExperimentLoadError, match=r"exp.jsonl: line 1: query 0 \('q0'\) is not in the run graded"):
        run_experiment([SimulationRecord(query_index=0, query="other", response="x")], grader=grader, out=out,
                       resume=True)


@pytest.mark.parametrize(("truth", "described"), [
    ("get_weather", "a string \\(the expected response\\)"),
    (["get_weather"], '\\["get_weather"\\] \\(read as the expected response\\)'),
    ({"response": "It is sunny."}, "an object without 'tool_calls'"),
])
def test_a_trajectory_criterion_with_a_ground_truth_naming_no_tool_calls_is_refused_before_grading(
        truth: Any, described: str) -> None:
    step = TrajectoryStep(step_type="tool", name="get_weather", args={"city": "Paris"})
    run = [SimulationRecord(query_index=i, query=f"Weather {i}?", response="It is sunny.", ground_truth=truth,
                            trajectory=[step]) for i in range(3)]
    config = EvalConfig(criteria={"trajectory": 0.8, "response_match": 0.5})
    with pytest.raises(ConfigError, match=(
            f"^run.jsonl: query 0 \\('Weather 0\\?'\\) and 2 other\\(s\\): trajectory_match compares the expected "
            f"tool calls, but the ground truth is {described}; give it as "
            '\\{"response": ..., "tool_calls": \\[\\{"name": ..., "args": \\{...\\}\\}\\]\\}, or leave '
            "trajectory_match out of the config$")):
        run_experiment(run, config=config, source="run.jsonl")
    expected = {"response": "It is sunny.", "tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]}
    scored = run_experiment([r.model_copy(update={"ground_truth": expected}) for r in run], config=config)
    assert [r.scores["trajectory_match"] for r in scored.records] == [1.0, 1.0, 1.0]
    no_call = run_experiment([run[0].model_copy(update={"ground_truth": {"tool_calls": []}})], config=config)
    assert no_call.records[0].scores["trajectory_match"] == 0.0  # said outright: no call expected
