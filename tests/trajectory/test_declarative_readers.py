"""Declarative readers: a JSON or YAML mapping teaches the product a producer it does not know,
through the library and ``--readers`` on ``agenteval trajectory`` and ``agenteval eval``; a bad
mapping is one line naming the file and where, exit 2."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from agenteval_otel.cli import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, main
from agenteval_otel.errors import ConfigError
from agenteval_otel.traces import read_spans
from agenteval_otel.trajectory import build_trajectories
from agenteval_otel.trajectory.conventions import (
    READERS,
    DeclarativeReader,
    load_readers,
)
from agenteval_otel.trajectory.conventions.fallback import read_span_name
from tests.conftest import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples" / "readers"
ACME_TRACES = EXAMPLES / "acme-traces.otlp.json"
ACME_MAPPING = EXAMPLES / "acme.yaml"
CORPUS = REPO_ROOT / "tests" / "data" / "corpus"


def _trajectory(capsys: pytest.CaptureFixture[str], *readers: str) -> dict:
    options = [arg for path in readers for arg in ("--readers", path)]
    assert main(["trajectory", str(ACME_TRACES), "--format", "json", *options]) == EXIT_OK
    (trajectory,) = json.loads(capsys.readouterr().out)
    return trajectory


def test_a_mapping_teaches_agenteval_trajectory_an_unknown_producer(capsys) -> None:
    unknown = _trajectory(capsys)
    assert (unknown["tool_calls"], unknown["user_input"], unknown["final_response"]) == ([], None, None)

    taught = _trajectory(capsys, str(ACME_MAPPING))
    assert taught["tool_calls"] == [
        {"name": "get_weather", "args": {"city": "Paris"}, "result": {"temp_c": 18, "sky": "sunny"},
         "call_id": None},
        {"name": "get_weather", "args": {"city": "Rome"}, "result": None, "call_id": None},
    ]
    assert [step["error"] for step in taught["steps"]] == [None, "weather service timed out"]
    assert taught["user_input"] == "Weather in Paris and Rome?"  # the last message, not the system prompt
    assert taught["final_response"] == "Paris: 18 C and sunny. Rome: not available."
    assert taught["conversation_id"] == "session-7"


def test_explain_names_the_mapping_that_read_each_span(capsys) -> None:
    assert main(["trajectory", str(ACME_TRACES), "--explain", "--readers", str(ACME_MAPPING)]) == EXIT_OK
    out = capsys.readouterr().out
    assert "acme: agent trip-planner" in out and out.count("acme: tool get_weather") == 2


def test_agenteval_eval_scores_policies_on_the_steps_a_mapping_reads(tmp_path: Path) -> None:
    config = tmp_path / "policies.json"
    config.write_text(json.dumps({"criteria": {"max_tool_calls": {"params": {"limit": 1}}, "no_tool_errors": {},
                                               "final_response_present": {}}}))

    def verdicts(*options: str) -> tuple[int, dict[str, dict]]:
        report = tmp_path / "report.json"
        code = main(["eval", "--traces", str(ACME_TRACES), "--config", str(config), "--report", str(report),
                     "--run-file", str(tmp_path / "run.jsonl"), "--quiet", *options])
        (result,) = json.loads(report.read_text())["results"]
        return code, {c["criterion"]: c for c in result["criterion_results"]}

    code, unknown = verdicts()
    assert code == EXIT_FAILED
    assert unknown["max_tool_calls"]["passed"] and not unknown["final_response_present"]["passed"]

    code, taught = verdicts("--readers", str(ACME_MAPPING))
    assert code == EXIT_FAILED
    assert taught["max_tool_calls"]["reason"] == "2 tool calls > limit 1"
    assert "weather service timed out" in taught["no_tool_errors"]["reason"]
    assert taught["final_response_present"]["passed"]


def test_declarative_readers_go_through_readers_and_read_every_role(make_span) -> None:
    reader = DeclarativeReader({
        "convention": "acme",
        "rules": [
            {"match": {"equals": {"acme.step.kind": ["tool", "function"]}}, "role": "tool",
             "name": ["acme.tool.name", "acme.function.name"], "arguments": "acme.call$.args",
             "result": "acme.call$.returned[0]"},
            {"match": {"has": ["acme.llm.prompt"], "span_name": "llm (?P<name>.+)"}, "role": "chat",
             "input": "acme.llm.prompt", "output": "acme.llm.reply$.choices[-1].text"},
            {"match": {"equals": {"acme.step.kind": "route"}}, "role": "conditional", "result": "acme.route.to"},
            {"match": {"span_name": "acme-node (?P<name>.+)"}, "role": "node"},
        ],
    })
    root = make_span("turn", {"acme.step.kind": "run"})
    node = make_span("acme-node plan", parent=root)
    llm = make_span("llm gpt-5", {"acme.llm.prompt": "Weather in Oslo?",
                                  "acme.llm.reply": '{"choices": [{"text": "draft"}, {"text": "Oslo: 3 C"}]}'},
                    parent=node)
    route = make_span("router", {"acme.step.kind": "route", "acme.route.to": "weather"}, parent=node)
    tool = make_span("call", {"acme.step.kind": "function", "acme.function.name": "get_weather",
                              "acme.call": '{"args": {"city": "Oslo"}, "returned": ["3 C"]}'}, parent=node)
    (trajectory,) = build_trajectories([root, node, llm, route, tool], readers=(reader, *READERS))

    assert [(s.step_type.value, s.name) for s in trajectory.steps] == [
        ("node", "plan"), ("message", "assistant"), ("conditional", "router"), ("tool", "get_weather")]
    assert [(c.name, c.args, c.result) for c in trajectory.tool_calls()] == [("get_weather", {"city": "Oslo"}, "3 C")]
    assert trajectory.steps[2].result == "weather"
    assert (trajectory.user_input, trajectory.final_response) == ("Weather in Oslo?", "Oslo: 3 C")
    assert reader(make_span("call", {"acme.step.kind": "agent"})) is None  # no rule met: other readers go on


def _equal_to_span_name_reader(reader: DeclarativeReader, record) -> bool:
    expected, got = read_span_name(record), reader(record)
    return got == expected if expected is None or got is None else replace(got, convention=expected.convention) == expected


def test_the_span_name_fallback_is_a_declarative_mapping(make_span) -> None:
    (reader,) = load_readers(EXAMPLES / "span-name.yaml")
    names = ["execute_tool lookup", "invoke_agent triage", "invoke_workflow flow", "agent_run [root_agent]",
             "chat gpt-4o", "chat", "generate_content gemini", "call_llm", "invoke_node plan", "search.tool",
             "handoff to Billing", "Triage → Billing.handoff", "execute_tool (merged)", "GET /health"]
    made = [make_span(name, status=status) for name in names for status in ("unset", "error")]
    recorded = [r for path in sorted(CORPUS.glob("*/*.otlp.json")) for r in read_spans(path)]
    assert len(recorded) > 600
    for record in [*made, *recorded]:
        assert _equal_to_span_name_reader(reader, record), record.name
    assert sum(read_span_name(r) is not None for r in recorded) > 100  # the corpus exercises the rules


def test_the_readme_teaches_the_example_mapping() -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL)
    assert ACME_MAPPING.read_text() in blocks
    assert f"--readers {ACME_MAPPING.relative_to(REPO_ROOT)}" in readme


# --- bad mappings -----------------------------------------------------------------------------------


@pytest.mark.promise(13)
@pytest.mark.parametrize(("text", "where"), [
    ("rules:\n  - match: {span_name: x\n    role: tool\n", r"line 3, column \d+: invalid YAML"),
    ("rules:\n  - match: {span_nam: x}\n    role: tool\n", r"rules\[0\]\.match\.span_nam: unknown field"),
    ("rules:\n  - match: {has: [k]}\n    role: tool\n  - match: {span_name: '(x'}\n    role: node\n",
     r"rules\[1\]\.match\.span_name: not a regular expression \(missing \), unterminated subpattern"),
    ("rules:\n  - match: {has: [k]}\n    role: step\n", r"rules\[0\]\.role: Input should be 'agent', 'tool'"),
    ("rules:\n  - match: {has: [k]}\n    role: tool\n    arguments: k$.a[x]\n",
     r"rules\[0\]\.arguments: expected an attribute key, optionally followed by a JSON path"),
    ("rules:\n  - match: {has: [k]}\n    role: agent\n    arguments: k\n",
     r"rules\[0\]: arguments: agent steps do not read it, only tool steps"),
    ("rules:\n  - match: {}\n    role: tool\n", r"rules\[0\]\.match: expected at least one of span_name, has, equals"),
    ("rules: []\n", r"rules: List should have at least 1 item"),
    ("- role: tool\n", r"expected a mapping with rules, got list"),
])
@pytest.mark.parametrize("command", ["trajectory", "eval"])
def test_a_bad_mapping_is_one_line_naming_the_file_and_where_exit_2(tmp_path, capsys, text, where, command) -> None:
    mapping = tmp_path / "acme.yaml"
    mapping.write_text(text)
    argv = ([command, str(ACME_TRACES)] if command == "trajectory" else
            [command, "--traces", str(ACME_TRACES), "--config", str(REPO_ROOT / "examples/production_policies.json")])
    assert main([*argv, "--readers", str(mapping)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert re.search(rf"^agenteval: error: {re.escape(str(mapping))}: .*{where}", err), err


@pytest.mark.promise(13)
def test_a_missing_file_or_bad_json_mapping_names_the_file(tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"nowhere\.yaml: no such file"):
        load_readers(tmp_path / "nowhere.yaml")
    broken = tmp_path / "acme.json"
    broken.write_text('{"rules": [}')
    with pytest.raises(ConfigError, match=r"acme\.json: line 1, column 12: invalid JSON"):
        load_readers(broken)
    broken.write_text('{"rules": [{"match": {"has": ["k"]}, "role": "tool", "extra": 1}]}')
    with pytest.raises(ConfigError, match=r"acme\.json: rules\[0\]\.extra: unknown field"):
        load_readers(broken)


@pytest.mark.promise(16)
def test_a_yaml_mapping_is_data_never_code(tmp_path) -> None:
    mapping = tmp_path / "acme.yaml"
    mapping.write_text("rules: !!python/object/apply:os.system ['echo owned']\n")
    with pytest.raises(ConfigError, match=r"acme\.yaml: line 1, column 8: invalid YAML"):
        load_readers(mapping)

