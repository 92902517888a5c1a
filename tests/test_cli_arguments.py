"""Every bad argument of every command exits 2 with one line naming it; Ctrl-C exits 130 with
one line; ``--version``; ``--help`` stays light."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agenteval_otel.cli import EXIT_BAD_INPUT, main
from tests.conftest import REPO_ROOT

EVALSET = str(REPO_ROOT / "examples" / "weather_agent.evalset.json")
AGENT = "examples/weather_agent.py:weather_agent"

BAD_ARGUMENTS = [
    (["run", EVALSET, "--agent", AGENT, "--concurrency", "0"], "--concurrency 0"),
    (["run", EVALSET, "--agent", AGENT, "--runs", "0"], "--runs 0"),
    (["run", EVALSET, "--agent", AGENT, "--runs", "two"], "--runs two"),
    (["run", EVALSET, "--agent", AGENT, "--timeout", "0"], "--timeout 0"),
    (["run", EVALSET, "--agent", AGENT, "--timeout", "nan"], "--timeout nan"),
    (["run", EVALSET], "--agent"),
    (["run", EVALSET, "--agent", AGENT, "--no-such-option"], "--no-such-option"),
    (["eval", EVALSET, "--traces", "t.jsonl", "--limit", "0"], "--limit 0"),
    (["eval", EVALSET, "--jaeger", "http://127.0.0.1:9", "--lookback", "yesterday"], "--lookback yesterday"),
    (["serve", "--port", "70000"], "--port 70000"),
    (["serve", "--grpc-port", "-5"], "--grpc-port -5"),
    (["serve", "--sample-rate", "1.5"], "--sample-rate 1.5"),
    (["serve", "--shutdown-timeout", "0"], "--shutdown-timeout 0"),
    (["simulate", "q.jsonl", "--agent", AGENT, "--out", "r.jsonl", "--concurrency", "0"], "--concurrency 0"),
    (["simulate", "q.jsonl", "--agent", AGENT, "--out", "r.jsonl", "--expand", "-1"], "--expand -1"),
    (["simulate", "q.jsonl", "--agent", AGENT, "--out", "r.jsonl", "--timeout", "-1"], "--timeout -1"),
    (["experiment", "run", "r.jsonl", "--grader", "g", "--out", "e.jsonl", "--concurrency", "0"],
     "--concurrency 0"),
    (["experiment", "run", "r.jsonl", "--grader", "g", "--config", "c.json", "--out", "e.jsonl"], "--config"),
    (["experiment", "run", "r.jsonl", "--grader", "g", "--out", "e.jsonl", "--threshold", "high"],
     "--threshold high"),
    (["experiment", "compare", "a.jsonl", "b.jsonl", "--alpha", "1"], "--alpha 1"),
    (["experiment", "compare", "a.jsonl", "b.jsonl", "--resamples", "0"], "--resamples 0"),
    (["experiment", "compare", "a.jsonl", "b.jsonl", "--seed", "x"], "--seed x"),
    (["trajectory", "t.jsonl", "--group", "session"], "--group"),
    (["trajectory", "t.jsonl", "--format", "xml"], "--format"),
    (["no-such-command"], "no-such-command"),
    (["experiment"], "COMMAND"),
    ([], "COMMAND"),
]


@pytest.mark.parametrize(("argv", "named"), BAD_ARGUMENTS, ids=[" ".join(a[:3]) + f" [{n}]" for a, n in BAD_ARGUMENTS])
def test_a_bad_argument_exits_2_with_one_line_naming_it(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "error" in lines[0], captured.err
    assert "Traceback" not in captured.err and captured.out == ""


def test_every_command_has_a_bad_argument_test() -> None:
    tested = {tuple(argv[:2]) if argv[:1] == ["experiment"] else tuple(argv[:1]) for argv, _ in BAD_ARGUMENTS}
    assert tested >= {("run",), ("eval",), ("serve",), ("simulate",), ("trajectory",),
                      ("experiment", "run"), ("experiment", "compare")}


def test_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    import agenteval_otel

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"agenteval {agenteval_otel.__version__}"


def test_help_loads_no_evaluation_judge_or_pydantic_module() -> None:
    code = ("import sys\nfrom agenteval_otel.cli import main\n"
            "main(['--help'])\n"
            "print(sorted(m for m in sys.modules if m.startswith(('agenteval_otel.evaluation', "
            "'agenteval_otel.judge', 'agenteval_otel.criteria', 'agenteval_otel.results', 'pydantic', "
            "'openai', 'rich', 'opentelemetry.sdk'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_ctrl_c_exits_130_with_one_line(tmp_path: Path) -> None:
    """A run interrupted while its agent works stops with one line, not a traceback."""
    (tmp_path / "slow.py").write_text("import time\n\ndef agent(query):\n    time.sleep(30)\n    return 'late'\n")
    (tmp_path / "set.evalset.json").write_text(
        '{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [{"invocation_id": "i", '
        '"user_content": {"parts": [{"text": "hi"}]}}]}]}')
    env = {**os.environ, "OTEL_TRACES_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"}
    proc = subprocess.Popen([sys.executable, "-m", "agenteval_otel.cli", "run", "set.evalset.json",
                             "--agent", "slow.py:agent", "--quiet"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)  # the agent is asleep by now
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "agenteval: interrupted" and "Traceback" not in err, err
