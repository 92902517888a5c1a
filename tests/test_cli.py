"""The ``agenteval`` command: exit codes and messages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agenteval_otel.cli import main
from tests.conftest import REPO_ROOT


def test_show_prints_the_cases(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["show", str(REPO_ROOT / "examples" / "weather_agent.evalset.json")]) == 0
    out = capsys.readouterr().out
    assert "weather-agent" in out and "Follow-up question" in out and "get_weather" in out


def test_bad_input_exits_2_with_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.evalset.json"
    assert main(["show", str(missing)]) == 2
    assert f"agenteval: error: {missing}: no such file" in capsys.readouterr().err


def test_console_script_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agenteval_otel.cli", "show",
         str(REPO_ROOT / "examples" / "weather_agent.evalset.json")],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "4 case(s)" in proc.stdout


def test_a_jaeger_url_is_printed_without_its_credentials(capsys: pytest.CaptureFixture[str]) -> None:
    evalset = str(REPO_ROOT / "examples" / "weather_agent.evalset.json")
    for url in ("http://admin:s3cret@127.0.0.1:9", "ftp://admin:s3cret@127.0.0.1:9"):
        assert main(["eval", evalset, "--jaeger", url, "--service", "svc", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "admin:***@127.0.0.1:9" in err and "s3cret" not in err


EXAMPLE_SET = REPO_ROOT / "examples" / "weather_agent.evalset.json"
EXAMPLE_AGENT = f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent"


def _agenteval(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "agenteval_otel.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})


def test_tags_matching_nothing_list_the_tags_there_are(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(EXAMPLE_SET), "--agent", EXAMPLE_AGENT, "--tags", "nope", "none"]) == 2
    assert capsys.readouterr().err == (
        f"agenteval: error: --tags nope none: no case has one of these tags; the tags in {EXAMPLE_SET} "
        "are: multi-turn, smalltalk, units, weather\n")


def test_an_eval_set_given_as_config_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(EXAMPLE_SET), "--traces", "x.jsonl", "--config", str(EXAMPLE_SET)]) == 2
    assert f"{EXAMPLE_SET}: this is an eval set, not a config" in capsys.readouterr().err
    config = REPO_ROOT / "examples" / "weather_agent.config.json"
    assert main(["show", str(config)]) == 2
    assert f"{config}: this is a config (criteria), not an eval set" in capsys.readouterr().err


def test_a_json_syntax_error_shows_the_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"criteria": {"response_match": 0.7,}}')
    assert main(["eval", str(EXAMPLE_SET), "--traces", "x.jsonl", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.endswith('line 1, column 37: invalid JSON (Expecting property name enclosed in double quotes)\n'
                        '    {"criteria": {"response_match": 0.7,}}\n'
                        + " " * 40 + "^\n")


def test_a_closed_pipe_ends_the_command_quietly(tmp_path: Path) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from agenteval_otel import EvalSetBuilder, evaluate
    from agenteval_otel.tracing import OtlpJsonFileExporter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(tmp_path / "t.jsonl")))
    builder = EvalSetBuilder("many")
    for index in range(150):
        builder.add_case(f"Question {index} about the weather?", "x")
    evaluate(builder.build(), lambda query: "A long reply. " * 40, tracer_provider=provider)
    provider.shutdown()
    proc = subprocess.Popen([sys.executable, "-m", "agenteval_otel.cli", "trajectory", "t.jsonl",
                             "--format", "json"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == b"[\n"  # like `| head -1`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1
    assert err == ""


def test_criteria_of_ones_own_and_an_unreachable_otlp_endpoint(tmp_path: Path) -> None:
    import socket

    (tmp_path / "my_criteria.py").write_text(
        "from agenteval_otel import criterion\n\n"
        "@criterion('polite_reply', default_threshold=1.0)\n"
        "def polite_reply(ctx):\n"
        "    return 'rude' not in (ctx.actual.final_response or '')\n")
    (tmp_path / "config.json").write_text('{"criteria": {"polite_reply": {}}}')
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"http://user:***@127.0.0.1:{port}"  # as shown: the password masked, as in every message
    proc = _agenteval("run", str(EXAMPLE_SET), "--agent", EXAMPLE_AGENT, "--config", "config.json",
                      "--criteria-module", "my_criteria.py", cwd=tmp_path,
                      env={"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://user:s3cret@127.0.0.1:{port}"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "polite_reply" in proc.stdout and "4/4 passed" in proc.stdout
    assert f"the OTLP endpoint {endpoint} is unreachable" in proc.stderr
    assert f"traces: OTLP {endpoint} (unreachable: " in proc.stdout
    assert "s3cret" not in proc.stdout + proc.stderr
    without = _agenteval("run", str(EXAMPLE_SET), "--agent", EXAMPLE_AGENT, "--config", "config.json",
                         cwd=tmp_path)
    assert without.returncode == 2 and "unknown criterion 'polite_reply'" in without.stderr


@pytest.mark.promise(5, 20)
def test_down_otlp_endpoints_cost_a_run_no_time_and_one_warning_each(tmp_path: Path) -> None:
    import time

    from tests.otlp_receiver import closed_port

    run = ("run", str(EXAMPLE_SET), "--agent", EXAMPLE_AGENT)
    started = time.monotonic()
    assert _agenteval(*run, cwd=tmp_path).returncode == 0
    baseline = time.monotonic() - started
    traces, verdicts = f"http://user:s3cret@127.0.0.1:{closed_port()}", f"http://127.0.0.1:{closed_port()}"
    started = time.monotonic()
    proc = _agenteval(*run, "--export-results", verdicts, cwd=tmp_path,
                      env={"OTEL_EXPORTER_OTLP_ENDPOINT": traces})
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert took < 5.0 and took - baseline < 3.0, f"{took:.1f} s against {baseline:.1f} s with no endpoint"
    assert proc.stderr.splitlines() == [
        f"agenteval: WARNING: the OTLP endpoint {endpoint} is unreachable (Connection refused): spans and "
        "log records sent there are dropped until it answers"
        for endpoint in (traces.replace("s3cret", "***"), verdicts)]


@pytest.mark.promise(14)
def test_an_eval_set_file_without_ids_resumes_its_own_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import json

    monkeypatch.chdir(tmp_path)  # the run file goes to ./.agenteval
    (tmp_path / "agent.py").write_text("def agent(query):\n"
                                       "    with open('calls.txt', 'a') as calls:\n"
                                       "        calls.write(query + '\\n')\n"
                                       "    return 'Sunny.'\n")
    (tmp_path / "weather.evalset.json").write_text(json.dumps({"eval_cases": [
        {"conversation": [{"user_content": f"Weather in {city}?", "expected_final_response": "Sunny."}]}
        for city in ("Paris", "Tokyo")]}))
    # one case at a time, so the agent's calls are written in the cases' order
    run = ["run", "weather.evalset.json", "--agent", "agent.py:agent", "--concurrency", "1", "--quiet"]
    assert main(run) == 0
    assert (tmp_path / ".agenteval" / "weather.run.jsonl").exists()
    assert main([*run[:-1], "--resume"]) == 0
    assert (tmp_path / "calls.txt").read_text().splitlines() == ["Weather in Paris?", "Weather in Tokyo?"]
    assert "resuming .agenteval/weather.run.jsonl: 2 case(s) already scored" in capsys.readouterr().err


def test_deeply_nested_input_exits_2_without_a_traceback(tmp_path: Path) -> None:
    eval_set = tmp_path / "deep.evalset.json"
    eval_set.write_text('{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "tags": %s}]}'
                        % ("[" * 3000 + "]" * 3000))
    trace = tmp_path / "deep.otlp.json"
    trace.write_text('{"resourceSpans": %s}' % ("[" * 3000 + "]" * 3000))
    for args in (["show", str(eval_set)], ["trajectory", str(trace)]):
        proc = subprocess.run([sys.executable, "-m", "agenteval_otel.cli", *args],
                              capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        assert proc.stderr.startswith(f"agenteval: error: {args[1]}: ") and "nested more than" in proc.stderr


def _recorded_weather_runs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """An eval set of three cases (the second expects another reply, so it fails), the OTLP
    JSON lines of one real run of each, and a config scoring tools and responses."""
    import json

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from agenteval_otel import EvalCase, EvalSet, ToolCall, evaluate, tool
    from agenteval_otel.tracing import OtlpJsonFileExporter

    @tool
    def get_weather(city: str) -> str:
        return "sunny"

    def agent(query: str) -> str:
        city = query.split()[-1].rstrip("?")
        return f"It is {get_weather(city)} in {city}."

    eval_set = EvalSet(eval_set_id="weather", eval_cases=[
        EvalCase.single_turn(f"Weather in City{i}?", f"It is {'rainy' if i == 1 else 'sunny'} in City{i}.",
                             [ToolCall(name="get_weather", args={"city": f"City{i}"})], eval_id=f"case-{i}")
        for i in range(3)])
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(tmp_path / "runs.jsonl")))
    evaluate(eval_set, agent, tracer_provider=provider)
    provider.shutdown()
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"trajectory_match": {"threshold": 1.0},
                                               "response_match": {"threshold": 0.9}}}))
    return eval_set.save(tmp_path / "weather.evalset.json"), tmp_path / "runs.jsonl", config


def test_eval_keep_trajectories_through_the_cli(tmp_path: Path) -> None:
    import json

    evalset, traces, config = _recorded_weather_runs(tmp_path)
    reports = {}
    for flag in ([], ["--keep-trajectories"]):
        name = "kept" if flag else "default"
        code = main(["eval", str(evalset), "--traces", str(traces), "--config", str(config), "--quiet",
                     "--report", str(tmp_path / f"{name}.json"), "--run-file", str(tmp_path / f"{name}.run.jsonl"),
                     *flag])
        assert code == 1  # case-1 failed
        reports[name] = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))["results"]
    tools = {name: [[step["name"] for step in result["actual_trajectory"] if step["step_type"] == "tool"]
                    for result in results] for name, results in reports.items()}
    assert tools["kept"] == [["get_weather"]] * 3  # every case's actual trajectory
    statuses = [result["passed"] for result in reports["default"]]
    assert statuses == [True, False, True]
    assert tools["default"][1] == ["get_weather"]  # the failure keeps its trajectory
    assert reports["default"] == reports["kept"]  # the flag changes what is held, not the report


POLICIES = REPO_ROOT / "examples" / "production_policies.json"


def test_policies_score_a_third_party_trace_with_no_eval_set(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    generated = shared_data / "traces" / "generated"
    holding = generated / "openinference" / "run1_sequential_two_tools.otlp.json"
    broken = generated / "langgraph_openinference" / "run4_tool_error_unknown_city.otlp.json"
    run_file = ["--run-file", str(tmp_path / "run.jsonl")]
    assert main(["eval", "--traces", str(holding), "--config", str(POLICIES), *run_file]) == 0
    assert "1/1 passed" in capsys.readouterr().out
    assert main(["eval", "--traces", str(broken), "--config", str(POLICIES), *run_file]) == 1
    out = capsys.readouterr().out
    assert "b26cefdc4512d3f3a13d72b6935547d3:7c799c549cb8286e: no_tool_errors scored 0.00 < threshold 1.00: " \
           "get_weather failed at step 7: ValueError('Unknown city: Atlantis')" in out
    bad = tmp_path / "bad.json"
    bad.write_text('{"criteria": {"max_tool_calls": {"params": {"limit": "ten"}}}}')
    assert main(["eval", "--traces", str(holding), "--config", str(bad), *run_file]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agenteval: error: {bad}: ") and "'max_tool_calls' params: limit:" in err
    assert "Traceback" not in err


def test_eval_without_an_eval_set_needs_criteria_that_need_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = REPO_ROOT / "tests" / "data" / "corpus" / "crewai_openinference" / "run1_sequential.otlp.json"
    assert main(["eval", "--traces", str(trace)]) == 2
    assert "without an eval set, give the criteria to score every invocation with: --config FILE" \
        in capsys.readouterr().err
    config = tmp_path / "reference.json"
    config.write_text('{"criteria": {"trajectory_match": 0.8}}')
    assert main(["eval", "--traces", str(trace), "--config", str(config)]) == 2
    assert "no criterion of the config (trajectory_match) scores an invocation without one" in capsys.readouterr().err


def test_policies_on_shipped_traces_write_every_report_and_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    corpus = REPO_ROOT / "tests" / "data" / "corpus" / "crewai_openinference"
    monkeypatch.chdir(tmp_path)
    holding = [str(corpus / f"{run}.otlp.json") for run in ("run1_sequential", "run2_parallel", "run3_multi_turn")]
    assert main(["eval", "--traces", *holding, "--config", str(POLICIES), "--quiet"]) == 0
    assert (tmp_path / ".agenteval" / "traces.eval.jsonl").is_file()
    failing = str(corpus / "run4_failing_tool.otlp.json")
    reports = ["--report", "out.json", "--junit", "junit.xml", "--html", "report.html"]
    assert main(["eval", "--traces", failing, "--config", str(POLICIES), "--quiet", *reports]) == 1
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert report["eval_set_id"] == "run4_failing_tool"
    [result] = report["results"]
    assert result["eval_id"] == f"{result['trace_id']}:{result['span_id']}"
    assert "get_weather failed at step 2: ValueError: unknown city: Atlantis" in (tmp_path / "junit.xml").read_text()
    assert result["eval_id"] in (tmp_path / "report.html").read_text(encoding="utf-8")
    run_file = tmp_path / ".agenteval" / "run4_failing_tool.eval.jsonl"
    assert len(run_file.read_text().splitlines()) == 2  # the header and the invocation
    assert main(["eval", "--traces", failing, "--config", str(POLICIES), "--resume"]) == 1
    assert "resuming" in capsys.readouterr().err
    assert len(run_file.read_text().splitlines()) == 2  # nothing scored twice


def test_policies_score_a_jaeger_query_with_no_eval_set(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real Jaeger UI trace of a triage agent (seven tool calls), served on 127.0.0.1 as the
    query service answers a search."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    trace = json.loads((shared_data / "traces" / "jaeger" /
                        "jaeger-ui__components__TracePage__TraceTimelineViewer__genaiTestTrace.json").read_text())
    body = json.dumps({"data": [trace]}).encode()

    class Jaeger(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server hook
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

    config = tmp_path / "policies.json"
    config.write_text('{"criteria": {"max_tool_calls": {"params": {"limit": 5}}, "no_tool_errors": {}}}')
    server = ThreadingHTTPServer(("127.0.0.1", 0), Jaeger)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        code = main(["eval", "--jaeger", f"http://127.0.0.1:{server.server_address[1]}", "--service", "triage",
                     "--config", str(config), "--quiet", "--report", str(tmp_path / "out.json"),
                     "--run-file", str(tmp_path / "run.jsonl")])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert code == 1, capsys.readouterr().err
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert report["eval_set_id"] == "jaeger-triage"
    [result] = report["results"]
    assert result["trace_id"] == "4a1b2c3d4e5f60718293a4b5c6d7e8f9"
    assert [(r["criterion"], r["passed"], r["reason"]) for r in result["criterion_results"]] == [
        ("max_tool_calls", False, "7 tool calls > limit 5"), ("no_tool_errors", True, "7 tool call(s), none failed")]
