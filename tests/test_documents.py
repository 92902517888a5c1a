"""Eval sets, configs and query sets as YAML or JSON documents: they round-trip, a bad value in
YAML is named by its file, line and JSON path, files the product writes reference their JSON
Schema, and ``agenteval schema`` writes schemas the shipped examples satisfy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agenteval_otel import EvalConfig, EvalSet, EvalSetBuilder, ToolCall
from agenteval_otel.cli import main
from agenteval_otel.errors import ConfigError, EvalSetLoadError, QuerySetLoadError
from agenteval_otel.experiments import Query, QuerySet
from tests.conftest import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"


def _agenteval(*args: str, cwd: Path, code: str = "") -> subprocess.CompletedProcess[str]:
    """The CLI in a fresh interpreter, after ``code`` (e.g. making an import fail)."""
    run = f"{code}\nimport sys\nfrom agenteval_otel.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    return subprocess.run([sys.executable, "-c", run, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, check=False, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})


def _eval_set() -> EvalSet:
    return (EvalSetBuilder("weather", eval_set_id="weather", description="ünïcode: 18°C")
            .add_case(query="Weather in Paris?", expected="Sunny.",
                      expected_tools=[ToolCall(name="get_weather", args={"city": "Paris", "days": [1, 2]})],
                      tags=["weather"], metadata={"note": "yes", "n": 1.5})
            .add_multi_turn([("Hello", "Hi!"), ("Tokyo?", None)], expected_tools=["get_weather"])
            .build())


def test_eval_sets_configs_and_query_sets_round_trip_through_yaml_and_equal_their_json(tmp_path: Path) -> None:
    eval_set = _eval_set()
    config = EvalConfig.load(EXAMPLES / "weather_agent.config.json")
    queries = QuerySet([Query(content="Weather in Paris?", ground_truth="Sunny.", metadata={"tools": ["x"]}),
                        Query(content="Hello")])
    for name, thing, load in (("set.evalset", eval_set, EvalSet.load), ("config", config, EvalConfig.load)):
        yaml_file, json_file = thing.save(tmp_path / f"{name}.yaml"), thing.save(tmp_path / f"{name}.json")
        assert load(yaml_file) == thing == load(json_file)
        assert yaml.safe_load(yaml_file.read_text()) == json.loads(json_file.read_text())  # the same data
        assert yaml_file.read_text().startswith("# yaml-language-server")  # written as YAML, not JSON
        assert load(tmp_path / f"{name}.yaml") == load(thing.save(tmp_path / f"{name}.yml"))
    for suffix in ("yaml", "yml", "json", "jsonl"):
        assert QuerySet.load(queries.save(tmp_path / f"queries.{suffix}")).queries == queries.queries
    assert yaml.safe_load((tmp_path / "queries.yaml").read_text())["queries"][1] == {"content": "Hello"}


def test_files_written_reference_their_schema_and_loading_ignores_it(tmp_path: Path) -> None:
    written = _eval_set().save(tmp_path / "w.evalset.yaml").read_text(encoding="utf-8").splitlines()
    assert written[:2] == ["# yaml-language-server: $schema=./evalset.schema.json", "$schema: ./evalset.schema.json"]
    assert json.loads(EvalConfig().save(tmp_path / "c.json").read_text())["$schema"] == "./config.schema.json"
    query_set = QuerySet([Query(content="hi")]).save(tmp_path / "q.yaml").read_text()
    assert query_set.startswith("# yaml-language-server: $schema=./queryset.schema.json\n$schema: ./queryset.schema.json")
    assert EvalSet.model_validate({"$schema": "anything", "eval_set_id": "s"}) == EvalSet(eval_set_id="s")
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        EvalSet.model_validate({"schema": "a typo is still an unknown field"})


def test_a_hand_written_yaml_eval_set_takes_the_shorthands_and_its_name_gives_the_id(tmp_path: Path) -> None:
    yaml_set = EvalSet.load(EXAMPLES / "weather_agent.evalset.yaml")
    json_set = EvalSet.load(EXAMPLES / "weather_agent.evalset.json")
    assert [c.eval_id for c in yaml_set.eval_cases] == [c.eval_id for c in json_set.eval_cases]
    assert [t.user_content for c in yaml_set.eval_cases for t in c.conversation] == [
        t.user_content for c in json_set.eval_cases for t in c.conversation]
    (tmp_path / "weather.evalset.yml").write_text("eval_cases:\n  - conversation:\n      - user_content: hi\n")
    assert EvalSet.load(tmp_path / "weather.evalset.yml").eval_set_id == "weather"


BAD_SET = """\
# a comment, so the lines differ from the data's
eval_set_id: bad
eval_cases:
  - eval_id: first
    conversation:
      - user_content: Weather in Paris?
        expected_tool_trajectory:
          - name: get_weather
            args: {city: Paris}
        expected_node_order: plan, tools
  - eval_id: second
    conversation:
      - expected_final_response: there is no user_content
"""


@pytest.mark.promise(13)
def test_a_bad_value_in_a_yaml_eval_set_names_the_file_its_line_and_its_path(tmp_path: Path) -> None:
    file = tmp_path / "bad.evalset.yaml"
    file.write_text(BAD_SET)
    with pytest.raises(EvalSetLoadError) as raised:
        EvalSet.load(file)
    assert str(raised.value) == (
        f"{file}: line 10: eval_cases[0].conversation[0].expected_node_order: Input should be a valid list "
        "(got 'plan, tools'); line 13: eval_cases[1].conversation[0].user_content: Field required")
    file.write_text("eval_cases:\n  - eval_id: a\n    conversation: [\n")
    with pytest.raises(EvalSetLoadError, match=rf"^{file}: line 4, column 1: invalid YAML \("):
        EvalSet.load(file)


@pytest.mark.promise(13)
def test_a_bad_value_in_a_yaml_config_or_query_set_names_its_line(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("criteria:\n  trajectory_match:\n    threshold: 0.8\n    match_typo: EXACT\n")
    with pytest.raises(ConfigError, match=rf"^{config}: line 4: criteria.trajectory_match.match_typo: unknown field$"):
        EvalConfig.load(config)
    queries = tmp_path / "queries.yaml"
    queries.write_text("queries:\n  - content: Weather in Paris?\n  - content: Hi\n    expected: Hello\n    tag: x\n")
    with pytest.raises(QuerySetLoadError, match=rf"^{queries}: line 5: queries\[1\].tag: unknown field; a query holds"):
        QuerySet.load(queries)


@pytest.mark.promise(13)
def test_the_cli_exits_2_naming_the_yaml_line_and_without_pyyaml_names_the_extra(tmp_path: Path) -> None:
    (tmp_path / "bad.evalset.yaml").write_text(BAD_SET)
    done = _agenteval("show", "bad.evalset.yaml", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("agenteval: error: bad.evalset.yaml: line 10: eval_cases[0].conversation[0]")
    without_yaml = _agenteval("show", str(EXAMPLES / "weather_agent.evalset.yaml"), cwd=tmp_path,
                              code="import sys\nsys.modules['yaml'] = None")
    assert without_yaml.returncode == 2 and "Traceback" not in without_yaml.stderr
    assert without_yaml.stderr.strip().endswith(
        "weather_agent.evalset.yaml: reading YAML needs PyYAML (pip install 'agenteval-otel[yaml]')")


def test_the_cli_runs_a_yaml_eval_set(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["run", str(EXAMPLES / "weather_agent.evalset.yaml"), "--agent",
                 f"{EXAMPLES / 'weather_agent.py'}:weather_agent", "--config", str(EXAMPLES / "weather_agent.config.json"),
                 "--report", str(tmp_path / "report.json"), "--quiet"])
    assert code == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "report.json").read_text())["summary"]["passed_cases"] == 4


def _schema(kind: str, tmp_path: Path) -> dict[str, object]:
    assert main(["schema", kind, "--output", str(tmp_path / f"{kind}.schema.json")]) == 0
    written: dict[str, object] = json.loads((tmp_path / f"{kind}.schema.json").read_text())
    return written


def test_agenteval_schema_writes_each_schema_to_stdout_or_a_file(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    for kind, title in (("evalset", "eval set"), ("config", "eval config"), ("queryset", "query set")):
        assert main(["schema", kind]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed == _schema(kind, tmp_path)
        assert (printed["$id"], printed["title"]) == (f"{kind}.schema.json", f"agenteval-otel {title}")
        assert "$schema" in printed["properties"] and printed["additionalProperties"] is False
    assert _schema("evalset", tmp_path) == json.loads((EXAMPLES / "evalset.schema.json").read_text())
    assert main(["schema", "evalsets"]) == 2


def test_the_schemas_validate_the_shipped_examples_and_refuse_a_bad_one(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (validated by loading too)")
    validators = {kind: jsonschema.Draft202012Validator(_schema(kind, tmp_path)) for kind in
                  ("evalset", "config", "queryset")}
    for validator in validators.values():
        validator.check_schema(validator.schema)
    examples = {
        "evalset": [json.loads(f.read_text()) for f in EXAMPLES.glob("*.evalset.json")]
        + [yaml.safe_load((EXAMPLES / "weather_agent.evalset.yaml").read_text())],
        "config": [json.loads(f.read_text()) for f in [*EXAMPLES.glob("*.config.json"),
                                                       EXAMPLES / "production_policies.json"]],
        "queryset": [{"queries": [json.loads(line) for line in (EXAMPLES / "weather_queries.jsonl").open() if line.strip()]},
                     yaml.safe_load(QuerySet.load(EXAMPLES / "weather_queries.jsonl").save(tmp_path / "q.yaml").read_text())],
    }
    assert len(examples["evalset"]) == 4 and len(examples["config"]) == 4
    for kind, documents in examples.items():
        for document in documents:
            assert [e.message for e in validators[kind].iter_errors(document)] == []
    assert not validators["evalset"].is_valid({"eval_cases": [{"conversation": [{"user_content": 3}]}]})
    assert not validators["config"].is_valid({"criteria": {"trajectory_match": {"threshold": "high"}}})
