"""Offline runs keep the judge's concurrency limit full: cases (and invocations) are scored
concurrently, with a bounded number in flight, the runs of one case one after another, results
reaching the sinks as each is scored and the report in a fixed order. Against a scripted judge
on 127.0.0.1 behind the real openai client."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from agenteval_otel import CriterionConfig, EvalCase, EvalConfig, EvalSet, evaluate, evaluate_traces
from agenteval_otel.cli import main
from agenteval_otel.evaluation import load_agent
from agenteval_otel.judge import JudgeClient, JudgeSettings
from agenteval_otel.reports import RunProgress, progress_sink
from agenteval_otel.results import CallbackSink
from agenteval_otel.traces import ReadProgress, TraceFileSource, read_spans
from agenteval_otel.tracing import OtlpJsonFileExporter
from agenteval_otel.trajectory import Trajectory, TrajectoryStep
from tests.conftest import REPO_ROOT
from tests.judge.judge_server import Reply, Request, serve, verdict

EXAMPLE_SET = REPO_ROOT / "examples" / "weather_agent.evalset.json"
EXAMPLE_AGENT = f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent"
SAFETY = EvalConfig(criteria={"safety": CriterionConfig(threshold=0.5)})
JUDGED_MATCH = EvalConfig(criteria={"llm_judge": CriterionConfig(threshold=0.5)})


def _invocations(count: int) -> list[Trajectory]:
    return [Trajectory(trace_id=f"{i:032x}", span_id=f"{i:016x}", user_input=f"question {i}",
                       final_response=f"answer {i}", start_ns=1_000 + i,
                       steps=[TrajectoryStep.message("assistant", f"answer {i}")])
            for i in range(count)]


def _judge(url: str, concurrency: int) -> JudgeClient:
    return JudgeClient(JudgeSettings(base_url=url, model="judge", concurrency=concurrency, max_retries=0))


def _asked(request: Request) -> int:
    found = re.search(r"answer (\d+)", request.prompt)
    return int(found.group(1)) if found else -1


def test_invocations_are_judged_up_to_the_judges_limit_at_once() -> None:
    with serve(lambda request: Reply(verdict(1.0).text, delay_s=0.1)) as server:
        report = evaluate_traces(None, _invocations(32), SAFETY, judge=_judge(server.url, 8))
    assert report.summary.passed_cases == 32
    assert server.count == 32
    assert server.max_in_flight == 8  # one at a time before


def test_the_case_limit_bounds_what_is_read_ahead_of_the_scoring() -> None:
    consumed = [0]
    read_ahead: list[int] = []

    def stream() -> Iterator[Trajectory]:
        for trajectory in _invocations(12):
            consumed[0] += 1
            yield trajectory

    def count_ahead(request: Request) -> Reply:
        read_ahead.append(consumed[0] - (server.count - 1))  # read, less those whose judging started before
        return Reply(verdict(1.0).text, delay_s=0.05)

    with serve(count_ahead) as server:
        report = evaluate_traces(None, stream(), SAFETY, judge=_judge(server.url, 8), concurrency=2)
    assert report.summary.passed_cases == 12
    assert server.max_in_flight == 2
    assert max(read_ahead) <= 3  # two in flight and the one read next, never the whole source


def test_the_report_keeps_its_order_whatever_order_the_judge_answers_in() -> None:
    finished: list[str] = []
    slowest_first = (lambda request: Reply(verdict(1.0).text, delay_s=0.02 * (10 - _asked(request))))
    with serve(slowest_first) as server:
        shuffled = _invocations(10)[::-1]  # read newest first: the report still goes by start time
        report = evaluate_traces(None, shuffled, SAFETY, judge=_judge(server.url, 10),
                                 sinks=[CallbackSink(lambda result: finished.append(result.eval_id))])
    by_start = [f"{i:032x}:{i:016x}" for i in range(10)]
    assert [result.eval_id for result in report.results] == by_start
    assert finished != by_start  # the sinks got each result as it was scored, in another order
    assert sorted(finished) == by_start


def test_a_newer_run_of_a_case_is_scored_after_the_older_one_and_stands() -> None:
    case = EvalCase.single_turn("Weather in Paris?", "Sunny", eval_id="paris")
    older = Trajectory(user_input="Weather in Paris?", final_response="answer 0", trace_ids=["a"], start_ns=1)
    newer = Trajectory(user_input="Weather in Paris?", final_response="answer 1", trace_ids=["b"], start_ns=2)

    def older_is_slow(request: Request) -> Reply:  # answers the newer run first if both were in flight
        asked = _asked(request)
        return Reply(verdict(0.0 if asked == 0 else 1.0).text, delay_s=0.3 if asked == 0 else 0.0)

    with serve(older_is_slow) as server:
        report = evaluate_traces(EvalSet(eval_set_id="s", eval_cases=[case]), [older, newer], JUDGED_MATCH,
                                 judge=_judge(server.url, 8))
        assert server.max_in_flight == 1
    (result,) = report.results
    assert result.trace_ids == ["b"] and result.passed and result.set_aside_runs == 1


def test_cases_are_judged_concurrently_from_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    traces = tmp_path / "traces.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(traces)))
    evaluate(EvalSet.load(EXAMPLE_SET), load_agent(EXAMPLE_AGENT), tracer_provider=provider)
    provider.shutdown()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.json").write_text('{"criteria": {"llm_judge": {"threshold": 0.5}}}')
    with serve(lambda request: Reply(verdict(1.0).text, delay_s=0.1)) as server:
        monkeypatch.setenv("AGENTEVAL_JUDGE_BASE_URL", server.url)
        monkeypatch.setenv("AGENTEVAL_JUDGE_MODEL", "judge")
        monkeypatch.setenv("AGENTEVAL_JUDGE_CONCURRENCY", "3")
        code = main(["eval", str(EXAMPLE_SET), "--traces", str(traces), "--config", "config.json", "--quiet"])
    assert code == 0
    assert server.count == 5 and server.max_in_flight == 3  # 3 single-turn cases and one of two turns


def test_trace_files_say_how_far_they_have_been_read(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"  # one line per span: the simple processor exports each alone
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(traces)))
    evaluate(EvalSet.load(EXAMPLE_SET), load_agent(EXAMPLE_AGENT), tracer_provider=provider)
    provider.shutdown()
    source = TraceFileSource([traces])
    assert [t.final_response for t in source.trajectories()]
    assert (source.progress.unit, source.progress.done, source.progress.total) == (
        "bytes", traces.stat().st_size, traces.stat().st_size)
    file = read_spans(traces)
    steps: list[int] = []
    file.on_read = steps.append
    shares = [file.bytes_read for _ in file]
    assert shares == sorted(shares) and 0 < shares[0] < shares[-1] <= traces.stat().st_size  # line by line
    assert sum(steps) == file.bytes_read == traces.stat().st_size


def test_progress_shows_the_share_read_the_rate_and_the_time_left() -> None:
    read = ReadProgress("bytes", total=48_000_000, done=12_000_000)
    state = RunProgress("eval", None, work=read, status=lambda: "judge calls in flight: 8/8", started=0.0)
    for _ in range(40):
        state.advance()
    assert state.line(now=20.0) == ("eval: 40 results, 12.0/48.0 MB read (2.0/s), 25%, about 1m00s left, "
                                    "judge calls in flight: 8/8")
    resumed = RunProgress("eval", 100, 50, started=0.0)
    for _ in range(10):
        resumed.advance()
    assert resumed.line(now=10.0) == "eval: 60/100 results (1.0/s), 60%, about 40s left"  # resumed ones took no time


def test_progress_is_plain_lines_when_not_on_a_terminal() -> None:
    stream = io.StringIO()
    with progress_sink("eval", 3, stream=stream, interval_s=0.05) as sink:
        sink.submit(object())
        deadline = time.monotonic() + 5
        while "eval: 1/3 results" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    assert "eval: 1/3 results" in stream.getvalue()
    assert "\x1b[" not in stream.getvalue()  # no bar, no escape codes in a log
