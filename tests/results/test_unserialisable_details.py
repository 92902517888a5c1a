"""A criterion whose details are not JSON data is errored, named with the field, and the rest of
the run is scored and written: the report files whole, the run file with every case, exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agenteval_otel.cli import main
from agenteval_otel.results import EvalCaseResult
from tests.conftest import REPO_ROOT

CRITERIA = '''
from agenteval_otel import Score, criterion


class MyThing:
    pass


@criterion("my_metric", reference_free=True)
def my_metric(ctx):
    return Score(1.0, "measured", details={"obj": MyThing()})


@criterion("tags_metric", reference_free=True)
def tags_metric(ctx):
    return Score(1.0, "tagged", details={"tags": {"a", "b"}})


@criterion("nested_metric", reference_free=True)
def nested_metric(ctx):
    return Score(1.0, "nested", details={"rows": [{"ok": 1}, {"when": float("nan")}]})


@criterion("plain_metric", reference_free=True)
def plain_metric(ctx):
    return Score(1.0, "plain", details={"rows": [{"ok": 1}], "note": None})
'''
TRACES = REPO_ROOT / "tests" / "data" / "corpus" / "crewai_openinference"


@pytest.mark.promise(12)
def test_unserialisable_details_error_their_criterion_and_every_file_is_written_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "my_criteria.py").write_text(CRITERIA)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {name: {} for name in (
        "my_metric", "tags_metric", "nested_metric", "plain_metric")}}))
    files = {"report": tmp_path / "out.json", "junit": tmp_path / "junit.xml", "html": tmp_path / "report.html",
             "run-file": tmp_path / "run.jsonl"}
    code = main(["eval", "--traces", str(TRACES / "run1_sequential.otlp.json"), str(TRACES / "run2_parallel.otlp.json"),
                 "--config", str(config), "--criteria-module", str(tmp_path / "my_criteria.py"), "--quiet",
                 *(argument for flag, path in files.items() for argument in (f"--{flag}", str(path)))])
    assert code == 1, capsys.readouterr().err  # errored criteria fail the run

    report = json.loads(files["report"].read_text(encoding="utf-8"))
    assert len(report["results"]) == 2
    for result in report["results"]:
        errors = {r["criterion"]: r["error"] for r in result["criterion_results"]}
        assert errors["my_metric"].endswith("criterion 'my_metric': details['obj'] is not JSON-serialisable (MyThing)")
        assert errors["tags_metric"].endswith("criterion 'tags_metric': details['tags'] is not JSON-serialisable (set)")
        assert errors["nested_metric"].endswith(
            "criterion 'nested_metric': details['rows'][1]['when'] is not JSON-serialisable (float nan)")
        assert errors["plain_metric"] is None  # the rest is scored as usual
    header, *lines = files["run-file"].read_text(encoding="utf-8").splitlines()
    assert json.loads(header)["agenteval_run"] == 1
    assert sorted(EvalCaseResult.model_validate_json(line).eval_id for line in lines) == sorted(
        result["eval_id"] for result in report["results"])
    assert "details[&#x27;obj&#x27;] is not JSON-serialisable (MyThing)" in files["html"].read_text(encoding="utf-8")
    assert '<testsuite name="traces" tests="2" failures="0" errors="2"' in files["junit"].read_text(encoding="utf-8")
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(  # no temporary file left
        ["config.json", "my_criteria.py", *(path.name for path in files.values())])
