"""``agenteval experiment run|compare``: exit codes, files written, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval_otel.cli import main
from agenteval_otel.experiments import ExperimentResult, SimulationRecord
from agenteval_otel.results import HistoryStore
from tests.judge.judge_server import Reply, serve

EXAMPLE_GRADER = Path(__file__).resolve().parents[2] / "examples" / "graders" / "helpfulness"


def _write_run(path: Path, responses: list[str]) -> Path:
    records = [SimulationRecord(query_index=i, query=f"question {i}?", response=r, ground_truth="the answer")
               for i, r in enumerate(responses)]
    path.write_text("".join(r.model_dump_json() + "\n" for r in records))
    return path


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "criteria.json"
    config.write_text(json.dumps({"criteria": {"final_response_present": 1.0, "response_match": 0.7}}))
    return config


def test_experiment_run_with_criteria_exits_1_when_a_record_fails(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    run = _write_run(tmp_path / "run.jsonl", ["the answer", "something else"])
    out = tmp_path / "exp.jsonl"
    assert main(["experiment", "run", str(run), "--config", str(_config(tmp_path)), "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "response_match" in printed and "2 record(s): 1 passed, 1 failed, 0 errored" in printed
    result = ExperimentResult.load_jsonl(out)
    assert [r.passed for r in result.records] == [True, False] and result.source == str(run)
    good = _write_run(tmp_path / "good.jsonl", ["the answer"])
    assert main(["experiment", "run", str(good), "--config", str(_config(tmp_path)), "--out", str(out),
                 "--quiet"]) == 0


def test_experiment_run_records_its_summary_in_the_history(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "run.jsonl", ["the answer", "something else"])
    history = tmp_path / "history.db"
    assert main(["experiment", "run", str(run), "--config", str(_config(tmp_path)), "--out",
                 str(tmp_path / "exp.jsonl"), "--history", str(history), "--quiet"]) == 1
    [recorded] = HistoryStore(history).runs()
    assert (recorded.command, recorded.source, recorded.cases, recorded.passed, recorded.failed) == (
        "experiment", str(run), 2, 1, 1)
    assert recorded.criteria_means["final_response_present"] == 1.0 and "response_match" in recorded.criteria_means


def test_experiment_run_with_a_grader_directory_against_a_local_server(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _write_run(tmp_path / "run.jsonl", ["the answer", "the answer too"])
    scores = json.dumps({"helpfulness": 1.0, "groundedness": 0.75, "professionalism": 1.0})
    with serve(lambda r: Reply(scores)) as server:
        monkeypatch.setenv("AGENTEVAL_JUDGE_BASE_URL", server.url)
        monkeypatch.setenv("AGENTEVAL_JUDGE_API_KEY", "local")
        monkeypatch.delenv("AGENTEVAL_JUDGE_CACHE", raising=False)
        code = main(["experiment", "run", str(run), "--grader", str(EXAMPLE_GRADER), "--trust-grader-code", "--out",
                     str(tmp_path / "exp.jsonl"), "--concurrency", "2", "--quiet"])
    assert code == 0 and server.count == 2
    assert ExperimentResult.load_jsonl(tmp_path / "exp.jsonl").summary.metrics["groundedness"].mean == 0.75


def test_experiment_compare_exits_1_on_a_significant_regression_and_writes_the_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = str(_config(tmp_path))
    good = _write_run(tmp_path / "good.jsonl", ["the answer"] * 9)
    bad = _write_run(tmp_path / "bad.jsonl", ["no"] * 8 + ["the answer"])
    for name, run in (("a", good), ("b", bad)):
        main(["experiment", "run", str(run), "--config", config, "--out", str(tmp_path / f"{name}.jsonl"), "--quiet"])
    capsys.readouterr()
    report = tmp_path / "cmp.json"
    page = tmp_path / "cmp.html"
    assert main(["experiment", "compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"),
                 "--report", str(report), "--html", str(page)]) == 1
    printed = capsys.readouterr().out
    assert "regressed" in printed and "passed in A, not in B (8)" in printed
    html = page.read_text(encoding="utf-8")
    assert 'class="plot forest"' in html and "<h2>passed in A, not in B (8)</h2>" in html and "<script" not in html
    data = json.loads(report.read_text())
    assert {m["metric"]: m["p_value"] for m in data["metrics"]}["response_match"] == 2 / 256
    assert len(data["newly_failed"]) == 8
    assert main(["experiment", "compare", str(tmp_path / "b.jsonl"), str(tmp_path / "a.jsonl"), "--quiet"]) == 0


@pytest.mark.parametrize("queries", [5, 4])
def test_experiment_compare_says_when_too_few_queries_can_show_no_significant_regression(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], queries: int) -> None:
    config = str(_config(tmp_path))
    for name, answer in (("a", "the answer"), ("b", "no")):
        run = _write_run(tmp_path / f"{name}.run.jsonl", [answer] * queries)
        main(["experiment", "run", str(run), "--config", config, "--out", str(tmp_path / f"{name}.jsonl"), "--quiet"])
    capsys.readouterr()
    assert main(["experiment", "compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 0
    floor = 2 / 2 ** queries
    assert (f"note: response_match: with {queries} paired queries the smallest possible p-value is {floor:g} > "
            "0.05: no regression can be significant; add queries or repeat runs") in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["experiment", "run", "RUN", "--config", "CONFIG", "--out", "OUT"], "line 2"),
    (["experiment", "run", "RUN", "--grader", "NOWHERE", "--out", "OUT"], "not a directory"),
    (["experiment", "compare", "RUN", "RUN"], "line 1"),
    (["experiment", "compare", "MISSING", "MISSING"], "no such file"),
])
def test_bad_input_exits_2_with_a_message_and_no_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    run = tmp_path / "run.jsonl"
    run.write_text('{"query_index": 0, "query": "a"}\n{"query_index": "one"}\n')
    names = {"RUN": str(run), "CONFIG": str(_config(tmp_path)), "OUT": str(tmp_path / "o.jsonl"),
             "NOWHERE": str(tmp_path / "nowhere"), "MISSING": str(tmp_path / "missing.jsonl")}
    if "compare" in argv:
        run.write_text('{"query_index": 0, "query": "a", "unexpected": 1}\n')
    assert main([names.get(arg, arg) for arg in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agenteval: error: ") and message in err and "Traceback" not in err


def test_run_needs_a_grader_or_criteria(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["experiment", "run", "run.jsonl", "--out", "exp.jsonl"])
    assert code == 2 and "one of the arguments --grader --config is required" in capsys.readouterr().err


def _grader_with_code(folder: Path, base_url: str | None = None) -> Path:
    folder.mkdir()
    (folder / "template.j2").write_text("Rate: {{ entry.content }}")
    (folder / "model_config.json").write_text(json.dumps({"model": "m", **({"base_url": base_url} if base_url else {})}))
    (folder / "parser.py").write_text(
        "import json, pathlib\n"
        "pathlib.Path(__file__).with_name('imported').write_text('yes')\n"
        "def parse_grader_response(response):\n    return json.loads(response)\n")
    return folder


@pytest.mark.promise(16)
def test_a_grader_directorys_parser_runs_only_with_trust_grader_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    run = _write_run(tmp_path / "run.jsonl", ["the answer"])
    judge_key = "sk-judge-0123456789abcdef"
    with serve(lambda r: Reply('{"helpfulness": 1.0}')) as judge_server, \
            serve(lambda r: Reply('{"helpfulness": 1.0}')) as grader_server:
        grader = _grader_with_code(tmp_path / "grader", base_url=grader_server.url)
        monkeypatch.setenv("AGENTEVAL_JUDGE_BASE_URL", judge_server.url)
        monkeypatch.setenv("AGENTEVAL_JUDGE_API_KEY", judge_key)
        monkeypatch.delenv("AGENTEVAL_JUDGE_CACHE", raising=False)
        out = str(tmp_path / "exp.jsonl")
        assert main(["experiment", "run", str(run), "--grader", str(grader), "--out", out, "--quiet"]) == 2
        err = capsys.readouterr().err
        assert f"{grader / 'parser.py'} is Python code and is not run unless trusted: pass --trust-grader-code" in err
        assert "Traceback" not in err and not (grader / "imported").exists()
        assert grader_server.count == judge_server.count == 0
        assert main(["experiment", "run", str(run), "--grader", str(grader), "--trust-grader-code", "--out", out,
                     "--quiet"]) == 0
    assert (grader / "imported").exists()
    assert judge_server.count == 0  # the grader's endpoint was called, without the judge's key
    assert [r.headers.get("authorization") for r in grader_server.requests] == ["Bearer no-key"]


@pytest.mark.promise(14)
def test_experiment_run_interrupted_then_resumed_grades_each_query_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    run = _write_run(tmp_path / "run.jsonl", [f"answer {i}" for i in range(4)])
    grader = tmp_path / "grader"
    grader.mkdir()
    (grader / "template.j2").write_text("{{ entry.query }}")
    (grader / "model_config.json").write_text('{"model": "m"}')
    (grader / "parser.py").write_text(
        "import json\n"
        "def parse_grader_response(response):\n"
        "    if response == 'STOP':\n        raise KeyboardInterrupt\n"
        "    return json.loads(response)\n")
    stop = {"question 2?"}
    out = tmp_path / "exp.jsonl"
    command = ["experiment", "run", str(run), "--grader", str(grader), "--trust-grader-code", "--out", str(out),
               "--concurrency", "1", "--quiet"]
    with serve(lambda r: Reply("STOP" if r.prompt in stop else '{"helpfulness": 1.0}')) as server:
        monkeypatch.setenv("AGENTEVAL_JUDGE_BASE_URL", server.url)
        monkeypatch.delenv("AGENTEVAL_JUDGE_CACHE", raising=False)
        assert main(command) == 130
        assert "interrupted" in capsys.readouterr().err
        assert [json.loads(line)["query"] for line in out.read_text().splitlines()] == ["question 0?", "question 1?"]
        stop.clear()
        assert main([*command, "--resume"]) == 0
    assert [r.prompt for r in server.requests] == ["question 0?", "question 1?", "question 2?", "question 2?",
                                                   "question 3?"]
    result = ExperimentResult.load_jsonl(out)
    assert [r.query for r in result.records] == [f"question {i}?" for i in range(4)]
    assert result.graded_by == f"grader {grader}" and result.summary.passed == 4


def test_experiment_run_refuses_trajectory_match_over_plain_string_ground_truths(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _write_run(tmp_path / "run.jsonl", ["the answer"])  # ground truth "the answer"
    config = tmp_path / "criteria.json"
    config.write_text(json.dumps({"criteria": {"trajectory_match": 0.8}}))
    assert main(["experiment", "run", str(run), "--config", str(config), "--out", str(tmp_path / "e.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"{run}: query 0 ('question 0?'): trajectory_match compares the expected tool calls, but the ground " \
           "truth is a string (the expected response)" in err and "Traceback" not in err
    assert not (tmp_path / "e.jsonl").exists()
