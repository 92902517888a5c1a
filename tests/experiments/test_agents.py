from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest

from agenteval_otel.errors import ConfigError
from agenteval_otel.evaluation._agents import AgentCaller, AgentTurn
from agenteval_otel.experiments._agents import (
    AgentRunner,
    AgentSpec,
    AsyncAgentRunner,
    check_requirements,
    load_runner,
)

AGENT = '''
from HELPER import GREETING


class Assistant:
    def run(self, query):
        return {"response": GREETING + query}


class AsyncAssistant:
    async def arun(self, query, thread_id):
        return f"async {query} in {thread_id}"


def function_agent(query):
    return "fn " + query


class NeedsArguments:
    def __init__(self, key):
        self.key = key
'''


def _repository(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    (folder / "agents").mkdir(parents=True)
    (folder / "agents" / f"{name}_agent.py").write_text(AGENT.replace("HELPER", f"{name}_helper"))
    (folder / f"{name}_agents").mkdir()  # a package of its own name: imported once per test run
    (folder / f"{name}_agents" / "__init__.py").write_text("")
    (folder / f"{name}_agents" / "agent.py").write_text(AGENT.replace("HELPER", f"{name}_helper"))
    (folder / f"{name}_helper.py").write_text(f"GREETING = '{name}: '\n")
    return folder


def _reply(agent: object, query: str = "hi") -> object:
    return asyncio.run(AgentCaller(agent)(AgentTurn(user_input=query, thread_id="t1")))


def test_a_yaml_spec_loads_its_class_relative_to_the_yaml_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    folder = _repository(tmp_path, "rental")
    (folder / "requirements.txt").write_text("pydantic>=2\n")
    spec = folder / "agent.yaml"
    spec.write_text("module: rental_agents.agent\nclassName: Assistant\nrequirementsPath: requirements.txt\n")
    monkeypatch.chdir(tmp_path)
    agent = load_runner(str(spec.relative_to(tmp_path)))
    assert isinstance(agent, AgentRunner)
    assert _reply(agent) == {"response": "rental: hi"}


@pytest.mark.parametrize(("module", "class_name", "expected"), [
    ("agents/shop_agent.py", "AsyncAssistant", "async hi in t1"),
    ("agents/shop_agent.py", "function_agent", "fn hi"),
])
def test_a_spec_may_name_a_file_and_an_async_class_or_a_function(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, class_name: str, expected: str) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    folder = _repository(tmp_path, "shop")
    spec = folder / "agent.yml"
    spec.write_text(f"module: {module}\nclass_name: {class_name}\n")
    agent = load_runner(str(spec))
    assert _reply(agent) == expected
    if class_name == "AsyncAssistant":
        assert isinstance(agent, AsyncAgentRunner)


def test_module_attr_loads_like_eval_runs_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    folder = _repository(tmp_path, "bank")
    monkeypatch.chdir(folder)
    assert _reply(load_runner("bank_agents.agent:function_agent")) == "fn hi"


@pytest.mark.parametrize(("text", "expected"), [
    ("module: a\n", r"agent.yaml: className: Field required"),
    ("module: a\nclassName: B\nkwargs: {}\n", r"agent.yaml: kwargs: unknown field"),
    ("module: [a\n", r"agent.yaml: line 2, column 1: invalid YAML"),
    ("- module\n", r"agent.yaml: expected a mapping with module, className"),
    ("module: no_such_module_xyz\nclassName: A\n", r"module 'no_such_module_xyz': cannot import it \(ModuleNotFoundError"),
    ("module: agents/spec_agent.py\nclassName: Missing\n", r"has no attribute 'Missing' \(className\)"),
    ("module: agents/spec_agent.py\nclassName: NeedsArguments\n", r"NeedsArguments\(\) failed \(TypeError.*takes no arguments"),
    ("module: agents/spec_agent.py\nclassName: Assistant\nrequirementsPath: absent.txt\n", r"absent.txt: no such requirements file"),
])
def test_a_bad_spec_is_a_config_error_naming_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: str) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    folder = _repository(tmp_path, "spec")
    (folder / "agent.yaml").write_text(text)
    with pytest.raises(ConfigError, match=expected):
        load_runner(str(folder / "agent.yaml"))


def test_requirements_are_checked_and_reported_never_installed(tmp_path: Path) -> None:
    file = tmp_path / "requirements.txt"
    file.write_text("# the agent's dependencies\n"
                    "pydantic>=2  # installed\n"
                    "agenteval-no-such-distribution>=1\n"
                    "PyYAML<1\n"
                    'rouge-score<0.0.1; python_version < "3"\n'
                    "-e .\n"
                    "\n")
    report = check_requirements(file)
    assert report.missing == ["agenteval-no-such-distribution>=1"]
    assert len(report.wrong_version) == 1 and report.wrong_version[0].startswith("PyYAML<1 (installed 6.")
    assert report.unchecked == ["-e ."]
    assert not report.ok
    assert "not installed: agenteval-no-such-distribution>=1" in report.describe()


def test_a_bad_requirement_line_is_named(tmp_path: Path) -> None:
    file = tmp_path / "requirements.txt"
    file.write_text("pydantic>=2\nnot a requirement!\n")
    with pytest.raises(ConfigError, match=r"requirements.txt: line 2: expected a requirement"):
        check_requirements(file)


def test_unmet_requirements_warn_or_with_strict_stop_the_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    folder = _repository(tmp_path, "req")
    (folder / "requirements.txt").write_text("agenteval-no-such-distribution\n")
    spec = folder / "agent.yaml"
    spec.write_text("module: req_agents.agent\nclassName: Assistant\nrequirementsPath: requirements.txt\n")
    with caplog.at_level(logging.WARNING):
        agent = load_runner(str(spec))
    assert _reply(agent) == {"response": "req: hi"}
    assert "requirements are not met" in caplog.text and "agenteval-no-such-distribution" in caplog.text
    with pytest.raises(ConfigError, match="not installed: agenteval-no-such-distribution"):
        load_runner(str(spec), strict=True)


def test_spec_fields_read_in_the_pages_camel_case(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("module: m\nclassName: C\nrequirementsPath: r.txt\n")
    spec = AgentSpec.load(tmp_path / "a.yaml")
    assert (spec.module, spec.class_name, spec.requirements_path, spec.folder) == ("m", "C", "r.txt", tmp_path.resolve())
