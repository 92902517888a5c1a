"""Live evaluation: the agent runs turn by turn, each turn's trace is captured and scored."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel import CriterionConfig, EvalCase, EvalConfig, EvalSet, EvalSetBuilder, ToolCall
from agenteval_otel import semconv as attr
from agenteval_otel.criteria import CriterionContext, criterion
from agenteval_otel.evalsets import MessageContent, SessionInput
from agenteval_otel.evaluation._agents import load_agent
from agenteval_otel.evaluation._live import LiveRunner, aevaluate, evaluate
from agenteval_otel.tracing import agent, tool
from tests.conftest import REPO_ROOT

EXAMPLE_SET = REPO_ROOT / "examples" / "weather_agent.evalset.json"
EXAMPLE_CONFIG = REPO_ROOT / "examples" / "weather_agent.config.json"
STRICT = EvalConfig(criteria={"trajectory_match": CriterionConfig.trajectory(1.0, check_args=True),
                              "response_match": CriterionConfig.response(1.0)})


def test_example_agent_passes_and_spans_are_tagged(exported: InMemorySpanExporter) -> None:
    eval_set = EvalSet.load(EXAMPLE_SET)
    weather_agent = load_agent(f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent")
    report = evaluate(eval_set, weather_agent, EvalConfig.load(EXAMPLE_CONFIG))
    report.assert_passed()
    london = next(r for r in report.results if r.eval_id == "london_follow_up")
    assert [inv.actual_response for inv in london.invocation_results] == [
        "It is 12°C and raining in London.", "It is 53.6°F in London."]
    assert london.metrics["tool_calls"] == 2 and london.metrics["turns"] == 2
    spans = exported.get_finished_spans()
    assert spans and all(s.attributes.get(attr.EVAL_SET_ID) == "weather-agent-v1" for s in spans)
    by_case = {s.attributes[attr.EVAL_ID] for s in spans}
    assert by_case == {c.eval_id for c in eval_set.eval_cases}
    assert set(london.trace_ids) == {format(s.context.trace_id, "032x") for s in spans
                                     if s.attributes[attr.EVAL_ID] == "london_follow_up"}


@tool
def lookup(key: int) -> int:
    return key * 2


@agent(name="echo-agent")
async def async_echo(query: str) -> str:
    key = int(query.split()[-1])
    await asyncio.sleep(random.random() / 200)
    first = lookup(key)
    await asyncio.sleep(random.random() / 200)
    return f"value {lookup(first)}"


@agent(name="sync-echo-agent")
def sync_echo(query: str) -> str:
    key = int(query.split()[-1])
    return f"value {lookup(lookup(key))}"


def _echo_set(n: int) -> EvalSet:
    builder = EvalSetBuilder("echo")
    for key in range(n):
        builder.add_case(query=f"look up {key}", expected=f"value {key * 4}", case_id=f"k{key}",
                         expected_tools=[ToolCall(name="lookup", args={"key": key}),
                                         ToolCall(name="lookup", args={"key": key * 2})])
    return builder.build()


def test_concurrent_async_cases_never_mix(exported: InMemorySpanExporter) -> None:
    report = evaluate(_echo_set(200), async_echo, STRICT, concurrency=64)
    report.assert_passed()
    assert len({tid for r in report.results for tid in r.trace_ids}) == 200


def test_concurrent_sync_cases_in_threads_never_mix(exported: InMemorySpanExporter) -> None:
    evaluate(_echo_set(60), sync_echo, STRICT, concurrency=16).assert_passed()


def test_objects_with_run_or_arun(exported: InMemorySpanExporter) -> None:
    class SyncAgent:
        def run(self, query: str) -> dict[str, str]:
            return {"response": "Hi!"}

    class AsyncAgent:
        async def arun(self, query: str) -> MessageContent:
            return MessageContent.assistant("Hi!")

    eval_set = EvalSetBuilder.quick(("Hello", "Hi!"))
    for candidate in (SyncAgent(), AsyncAgent()):
        report = evaluate(eval_set, candidate)
        report.assert_passed()
        assert report.results[0].actual_response == "Hi!"


def test_turns_share_a_thread_and_see_the_history(exported: InMemorySpanExporter) -> None:
    seen: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = []

    def chat(message: str, thread_id: str, history: list[dict[str, Any]], state: dict[str, Any]) -> str:
        seen.append((thread_id, history, state))
        return f"reply to {message}"

    case = EvalCase.multi_turn([("one", "reply to one"), ("two", "reply to two")], eval_id="c",
                               session_input=SessionInput(thread_id="t-42", initial_state={"user": "ann"}))
    evaluate(EvalSet(eval_set_id="s", eval_cases=[case]), chat).assert_passed()
    assert [s[0] for s in seen] == ["t-42", "t-42"]
    assert seen[0][1] == []
    assert seen[1][1] == [{"role": "user", "content": "one"}, {"role": "assistant", "content": "reply to one"}]
    assert seen[1][2] == {"user": "ann"}


def test_generated_thread_ids_differ_between_cases(exported: InMemorySpanExporter) -> None:
    threads: list[str] = []
    lock = threading.Lock()

    def remember(message: str, **kwargs: Any) -> str:
        with lock:
            threads.append(kwargs["thread_id"])
        return "ok"

    evaluate(EvalSetBuilder.quick(("a", "ok"), ("b", "ok")), remember).assert_passed()
    assert len(set(threads)) == 2


@pytest.mark.promise(12)
def test_failures_are_data_and_other_cases_still_score(exported: InMemorySpanExporter) -> None:
    def moody(query: str) -> str:
        if query == "explode":
            raise ValueError("no weather today")
        return "fine"

    @criterion("raises_on_b_for_test")
    def raises_on_b(ctx: CriterionContext) -> float:
        if ctx.actual.user_input == "b":
            raise RuntimeError("criterion broke")
        return 1.0

    config = EvalConfig(criteria={"response_match": {}, "raises_on_b_for_test": {}})
    eval_set = EvalSetBuilder.quick(("explode", "fine"), ("a", "fine"), ("b", "fine"))
    report = evaluate(eval_set, moody, config)
    statuses = {r.eval_id: r for r in report.results}
    exploded, ok, broken = report.results
    assert exploded.status == "errored"
    assert exploded.error is not None
    assert exploded.error.startswith("the agent raised ValueError: no weather today (raised at ")
    assert ok.status == "passed"
    assert broken.status == "errored"
    assert [r.criterion for r in broken.criterion_results if r.error] == ["raises_on_b_for_test"]
    assert next(r for r in broken.criterion_results if r.criterion == "response_match").score == 1.0
    assert (report.summary.passed_cases, report.summary.error_cases) == (1, 2)
    assert len(statuses) == 3


def _raise_secret(query: str) -> str:
    raise ValueError(f"upstream refused key sk-{query}")  # the raising line


@pytest.mark.promise(19)
def test_an_agent_exception_keeps_its_frame_and_traceback_redacted(
        exported: InMemorySpanExporter) -> None:
    from agenteval_otel.tracing import ContentPolicy, active_policy, set_active_policy

    line = _raise_secret.__code__.co_firstlineno + 1
    before = active_policy()
    set_active_policy(ContentPolicy(redact_patterns=(r"sk-\w+",)))
    try:
        report = evaluate(EvalSetBuilder.quick(("abc123", "fine")), _raise_secret)
    finally:
        set_active_policy(before)
    (result,) = report.results
    assert result.status == "errored" and result.error_type == "ValueError"
    assert result.error == ("the agent raised ValueError: upstream refused key [REDACTED] "
                            f"(raised at tests/evaluation/test_live.py:{line} in _raise_secret)")
    assert result.traceback is not None
    assert f'test_live.py", line {line}, in _raise_secret' in result.traceback
    assert "[REDACTED]" in result.traceback and "abc123" not in result.traceback
    saved = result.model_dump(mode="json")
    assert saved["error_type"] == "ValueError" and saved["traceback"] == result.traceback


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot print me")


def test_an_agent_exception_that_cannot_be_printed_is_still_reported(
        exported: InMemorySpanExporter) -> None:
    def broken(query: str) -> str:
        raise _Unprintable()

    report = evaluate(EvalSetBuilder.quick(("q", "a"), ("r", "a")), broken)
    assert [r.status for r in report.results] == ["errored", "errored"]
    assert (report.results[0].error or "").startswith(
        "the agent raised _Unprintable: <message could not be printed> (raised at ")


def test_repeated_runs_carry_the_first_agent_error(exported: InMemorySpanExporter) -> None:
    calls = iter(range(100))

    def every_other(query: str) -> str:
        if next(calls) % 2:
            raise KeyError("city")
        return "a"

    (result,) = evaluate(EvalSetBuilder.quick(("q", "a")), every_other, concurrency=1, num_runs=2).results
    assert result.error is not None and result.error.startswith("1/2 run(s) errored: the agent raised KeyError")
    assert result.error_type == "KeyError" and "every_other" in (result.traceback or "")


@pytest.mark.promise(17)
def test_case_timeout(exported: InMemorySpanExporter) -> None:
    async def slow(query: str) -> str:
        await asyncio.sleep(5 if query == "slow" else 0)
        return "done"

    report = evaluate(EvalSetBuilder.quick(("slow", "done"), ("fast", "done")), slow, timeout_s=0.3)
    assert [r.status for r in report.results] == ["errored", "passed"]
    assert report.results[0].error == "timed out after 0.3 s"
    assert report.results[0].error_type == "TimeoutError"


def test_repeated_runs_report_pass_at_k(exported: InMemorySpanExporter) -> None:
    calls = {"n": 0}
    lock = threading.Lock()

    def flaky(query: str) -> str:
        with lock:
            calls["n"] += 1
            return "right" if calls["n"] % 2 else "wrong"

    report = evaluate(EvalSetBuilder.quick(("q", "right")), flaky, concurrency=1, num_runs=4)
    result = report.results[0]
    assert calls["n"] == 4 and len(result.run_results) == 4
    assert not result.passed
    assert result.metrics["runs"] == 4 and result.metrics["passed_runs"] == 2
    assert (result.metrics["pass@1"], result.metrics["pass@k"], result.metrics["pass^k"]) == (0.5, 1.0, 0.0)
    response = next(r for r in result.criterion_results if r.criterion == "response_match")
    assert response.score == 0.5
    assert [next(r.score for r in run.criterion_results if r.criterion == "response_match")
            for run in result.run_results] == [1.0, 0.0, 1.0, 0.0]


def test_tags_filter(exported: InMemorySpanExporter) -> None:
    eval_set = (EvalSetBuilder("t").add_case(query="a", expected="ok", tags=["smoke"], case_id="a")
                .add_case(query="b", expected="ok", case_id="b").build())
    report = evaluate(eval_set, lambda q: "ok", tags=["smoke"])
    assert [r.eval_id for r in report.results] == ["a"]


@pytest.mark.promise(12)
def test_judge_criteria_error_rather_than_score(exported: InMemorySpanExporter) -> None:
    report = evaluate(EvalSetBuilder.quick(("q", "a")), lambda q: "a", EvalConfig.default())
    judge = next(r for r in report.results[0].criterion_results if r.criterion == "llm_judge")
    assert judge.error is not None and "no LLM judge is configured" in judge.error
    assert report.results[0].status == "errored"


def test_inside_an_event_loop(exported: InMemorySpanExporter) -> None:
    async def main() -> None:
        with pytest.raises(RuntimeError, match="use 'await aevaluate"):
            LiveRunner(lambda q: "a").evaluate(EvalSetBuilder.quick(("q", "a")))
        report = await aevaluate(EvalSetBuilder.quick(("q", "a")), lambda q: "a")
        report.assert_passed()

    asyncio.run(main())


def test_bad_options_fail_fast() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        LiveRunner(lambda q: q, concurrency=0)
    with pytest.raises(ValueError, match="num_runs"):
        LiveRunner(lambda q: q, num_runs=0)
    with pytest.raises(ValueError, match="not callable"):
        LiveRunner(42)


def _agenteval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agenteval_otel.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**__import__("os").environ, "COLUMNS": "200"})


def test_cli_run_main_job(tmp_path: Path) -> None:
    """The README's main job, in a fresh process: traced, evaluated, traces written locally."""
    proc = _agenteval("run", str(EXAMPLE_SET), "--agent",
                      f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent",
                      "--config", str(EXAMPLE_CONFIG), "--report", "report.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4/4 passed" in proc.stdout and "traces: agenteval-traces.jsonl" in proc.stdout
    assert (tmp_path / "agenteval-traces.jsonl").stat().st_size > 0
    again = _agenteval("eval", str(EXAMPLE_SET), "--traces", "agenteval-traces.jsonl",
                       "--config", str(EXAMPLE_CONFIG), cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr


def test_cli_run_failing_case_exits_1(tmp_path: Path) -> None:
    eval_set = EvalSet.load(EXAMPLE_SET)
    eval_set.eval_cases[0].conversation[0].expected_tool_trajectory.append(ToolCall(name="book_flight"))
    eval_set.save(tmp_path / "failing.evalset.json")
    proc = _agenteval("run", "failing.evalset.json", "--agent",
                      f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent", cwd=tmp_path)
    assert proc.returncode == 1
    assert "paris_weather: trajectory_match scored 0.50 < threshold 0.80" in proc.stdout
    bad = _agenteval("run", "failing.evalset.json", "--agent", "no_such_module:agent", cwd=tmp_path)
    assert bad.returncode == 2 and "cannot import 'no_such_module'" in bad.stderr


def test_a_given_tracer_provider_receives_the_decorators_spans_too(exported: InMemorySpanExporter) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from agenteval_otel.tracing import current_provider

    routed_before = current_provider()
    own = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(own))
    report = evaluate(_echo_set(3), async_echo, STRICT, tracer_provider=provider)
    report.assert_passed()  # the tool calls were captured: they went to the given provider
    assert {s.name for s in own.get_finished_spans()} >= {"execute_tool lookup", "invoke_agent echo-agent"}
    assert not exported.get_finished_spans()
    assert current_provider() is routed_before


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot print me")


def test_an_agent_error_that_cannot_be_printed_is_an_errored_case(exported: InMemorySpanExporter) -> None:
    def unprintable(query: str) -> str:
        if query == "boom":
            raise _Unprintable()
        return "fine"

    report = evaluate(EvalSetBuilder.quick(("boom", "fine"), ("calm", "fine")), unprintable)
    boom, calm = report.results
    assert boom.status == "errored" and boom.error is not None
    assert "_Unprintable" in boom.error and "could not be printed" in boom.error
    assert calm.status == "passed"
    agent_span = next(s for s in exported.get_finished_spans() if s.attributes.get(attr.EVAL_ID) == boom.eval_id
                      and s.name.startswith("invoke_agent"))
    assert agent_span.attributes[attr.ERROR_TYPE] == "_Unprintable"


@pytest.mark.promise(17)
def test_a_hung_sync_agent_is_abandoned_and_the_run_ends_on_time(
    exported: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    release = threading.Event()

    def hangs(query: str) -> str:
        if query == "hang":
            release.wait(30)
        return "done"

    started = time.perf_counter()
    try:
        report = evaluate(EvalSetBuilder.quick(("hang", "done"), ("fast", "done")), hangs, timeout_s=0.5)
        elapsed = time.perf_counter() - started
    finally:
        release.set()
    assert elapsed < 5
    hung, fast = report.results
    assert hung.status == "errored" and fast.status == "passed"
    assert hung.error == "timed out after 0.5 s; the agent was still running and its thread was abandoned"
    assert any("abandoned" in record.getMessage() for record in caplog.records
               if record.levelname == "WARNING")


@pytest.mark.promise(17)
def test_cli_run_exits_on_time_with_a_hung_sync_agent(tmp_path: Path) -> None:
    (tmp_path / "hung_agent.py").write_text(
        "import time\n\n\ndef agent(query: str) -> str:\n    time.sleep(30)\n    return 'late'\n")
    EvalSetBuilder.quick(("q", "late")).save(tmp_path / "one.evalset.json")
    started = time.perf_counter()
    proc = _agenteval("run", "one.evalset.json", "--agent", "hung_agent.py:agent", "--timeout", "1",
                      "--report", "report.json", cwd=tmp_path)
    elapsed = time.perf_counter() - started
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert elapsed < 15
    report = json.loads((tmp_path / "report.json").read_text())
    assert "its thread was abandoned" in report["results"][0]["error"]
    assert "abandoned" in proc.stderr
