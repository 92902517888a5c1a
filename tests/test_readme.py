"""The README's code blocks run as written, so the docs cannot drift from the code.

Python blocks run in order in one fresh interpreter, one namespace, as a reader pasting them into
one session would; a block that imports pytest is a test module and runs under pytest. Their
placeholders (``my_agent``, ``my_project.agents``, ``evals/config.json``, ``prod-traces.jsonl``,
``agenteval-traces.jsonl``) are provided by the ``workspace`` fixture. Bash blocks run command by
command: ``agenteval ...`` as ``python -m agenteval_otel.cli ...``; the installs and the test
command are skipped by name (``SKIPPED_COMMANDS``). A block that cannot run here says why in an
``<!-- not run: REASON -->`` comment directly above it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

README = REPO_ROOT / "README.md"
NOT_RUN = re.compile(r"<!-- not run: (?P<reason>.+?) -->")
FENCE = re.compile(r"^```(?P<lang>\w*)\s*$")

SKIPPED_COMMANDS = {
    "pip install -e .": "installs the package: the tests run from the checkout",
    'pip install -e ".[test,all,backends-test]" -e instrumentation/agenteval-instrumentation-openai -e instrumentation/agenteval-instrumentation-langgraph':
        "installs the test extra and the instrumentors: the tests are already running",
    "pytest": "runs this very suite",
    'agenteval view --reports reports --trace-url "http://localhost:16686/trace/{trace_id}?uiFind={span_id}"':
        "serves until stopped (tests/reports/test_viewer.py serves it and stops it)",
}
NOT_RUN_BLOCKS = 7  # the three usage synopses, the judge endpoints, a worker that serves until stopped,
# and the two blocks of a batch run on Ray (an install, a cluster over an archive)

# A stand-in for the reader's own agent: it answers the README's eval set, through traced steps.
AGENTS_MODULE = '''"""The weather agent the README's examples evaluate (a scripted stand-in)."""

from __future__ import annotations

from agenteval_otel import agent, node, tool

ANSWERS = {
    "London": "The weather in London is sunny.",
    "Tokyo": "Raining in Tokyo.",
    "Berlin": "Result from get_weather",  # add_tool_test's default expected response
    "Paris": "It is 18°C in Paris.",
}


@tool
def get_weather(location: str) -> str:
    return ANSWERS[location]


@node
def plan(question: str) -> str | None:
    return next((city for city in ANSWERS if city in question), None)


@node
def tools(city: str) -> str:
    return get_weather(location=city)


@node
def respond(answer: str | None) -> str:
    return answer or "Hi! How can I help?"


@agent(name="weather-agent")
def weather_agent(question: str) -> str:
    city = plan(question)
    return respond(tools(city) if city else None)
'''

CONFIG = {"criteria": {"trajectory_match": {"threshold": 0.8}, "response_match": {"threshold": 0.7}}}

RUNNER = '''"""Run the README's Python blocks in order, in one namespace."""

import json
import shutil
import sys
import traceback

from agenteval_otel.tracing import configure
from my_project.agents import weather_agent

# what the reader already has: traces of their agent, in production and from the quickstart
handle = configure("my-agent", traces_file="prod-traces.jsonl", set_global=False)
for question in ["Weather in London?", "Weather in Tokyo?", "Hello"]:
    weather_agent(question)
handle.shutdown(timeout=5)
shutil.copy("prod-traces.jsonl", "agenteval-traces.jsonl")

namespace = {"__name__": "__main__", "my_agent": weather_agent}
for block in json.loads(open(sys.argv[1]).read()):
    try:
        exec(compile("\\n" * block["line"] + block["code"], "README.md", "exec"), namespace)
    except BaseException:
        traceback.print_exc()
        sys.exit(f"README.md:{block['line']}: this python block failed")
print("ran", len(json.loads(open(sys.argv[1]).read())), "blocks")
'''


@dataclass
class Block:
    """A fenced code block of the README: where its code starts, its language, its code."""

    line: int
    lang: str
    code: str
    not_run: str | None


def readme_blocks() -> list[Block]:
    lines = README.read_text().splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        above = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
        marker = NOT_RUN.fullmatch(above.strip())
        blocks.append(Block(index + 1, opening["lang"], "\n".join(lines[index + 1:end]) + "\n",
                            marker["reason"] if marker else None))
        index = end + 1
    return blocks


def _commands(code: str) -> list[str]:
    """A bash block's commands: continuation lines joined, comments dropped, split on ``&&``."""
    joined = re.sub(r"\\\n\s*", " ", code)
    lines = [line.split(" #")[0].strip() for line in joined.splitlines() if not line.lstrip().startswith("#")]
    return [command.strip() for line in lines if line for command in line.split("&&")]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A reader's project: ``my_project/agents.py``, ``evals/config.json`` and the examples."""
    root = tmp_path_factory.mktemp("readme")
    (root / "my_project").mkdir()
    (root / "my_project" / "__init__.py").write_text("")
    (root / "my_project" / "agents.py").write_text(AGENTS_MODULE)
    (root / "evals").mkdir()
    (root / "evals" / "config.json").write_text(json.dumps(CONFIG))
    shutil.copytree(REPO_ROOT / "examples", root / "examples")
    return root


def test_the_blocks_are_found_and_every_block_not_run_says_why() -> None:
    blocks = readme_blocks()
    assert {b.lang for b in blocks} >= {"python", "bash"}
    not_run = [b for b in blocks if b.not_run is not None]
    assert len(not_run) == NOT_RUN_BLOCKS and all(b.not_run.strip() for b in not_run)


def test_python_blocks_run_as_written(workspace: Path) -> None:
    blocks = [b for b in readme_blocks() if b.lang == "python" and b.not_run is None]
    scripts = [b for b in blocks if "import pytest" not in b.code]
    (workspace / "blocks.json").write_text(json.dumps([b.__dict__ for b in scripts]))
    (workspace / "run_blocks.py").write_text(RUNNER)
    env = {**_env(), "PYTHONPATH": os.pathsep.join([str(workspace), _env()["PYTHONPATH"]])}
    ran = subprocess.run([sys.executable, "run_blocks.py", "blocks.json"], cwd=workspace, env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"ran {len(scripts)} blocks" in ran.stdout
    assert (workspace / "evals" / "weather.evalset.json").is_file()  # written by the builder block

    tests = [b for b in blocks if "import pytest" in b.code]
    assert tests, "the README shows a pytest test module"
    for block in tests:
        (workspace / f"test_readme_{block.line}.py").write_text(block.code)
    suite = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            *(f"test_readme_{b.line}.py" for b in tests)],
                           cwd=workspace, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert suite.returncode == 0, suite.stdout + suite.stderr
    assert re.search(r"\b4 passed\b", suite.stdout), suite.stdout  # one test per case of the set


def test_bash_blocks_run_as_written(workspace: Path) -> None:
    skipped: list[str] = []
    ran: list[str] = []
    for block in readme_blocks():
        if block.lang != "bash" or block.not_run is not None:
            continue
        for command in _commands(block.code):
            if command in SKIPPED_COMMANDS:
                skipped.append(command)
                continue
            program, *args = shlex.split(command)
            assert program == "agenteval", f"README.md:{block.line}: cannot run {command!r} here"
            done = subprocess.run([sys.executable, "-m", "agenteval_otel.cli", *args], cwd=workspace,
                                  env=_env(), capture_output=True, text=True, timeout=120, check=False)
            assert done.returncode == 0, f"README.md:{block.line}: {command}\n{done.stdout}{done.stderr}"
            ran.append(command)
    assert sorted(skipped) == sorted(SKIPPED_COMMANDS)
    assert len(ran) == 12
    assert {"out.json", "junit.xml", "report.html", "run.jsonl"} <= {p.name for p in workspace.iterdir()}
