"""Judge-backed runs end to end: an agent file evaluated live, stored traces scored by the command
line, with a scripted judge on 127.0.0.1 behind the real openai client."""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel import CriterionConfig, EvalConfig, EvalSet, evaluate
from agenteval_otel import semconv as attr
from agenteval_otel.cli import main
from agenteval_otel.evaluation._agents import load_agent
from agenteval_otel.evaluation._judging import judge_client
from agenteval_otel.evaluation._live import LiveRunner
from agenteval_otel.judge import JudgeSettings
from agenteval_otel.tracing import OtlpJsonFileExporter
from agenteval_otel.trajectory import SpanRecord, build_trajectories
from tests.conftest import REPO_ROOT
from tests.judge.judge_server import Reply, Request, serve, verdict

EXAMPLE_SET = REPO_ROOT / "examples" / "weather_agent.evalset.json"
EXAMPLE_AGENT = f"{REPO_ROOT / 'examples' / 'weather_agent.py'}:weather_agent"
JUDGE_ENV = ("AGENTEVAL_JUDGE_BASE_URL", "AGENTEVAL_JUDGE_API_KEY", "AGENTEVAL_JUDGE_MODEL", "OPENAI_API_KEY",
             "OPENAI_BASE_URL", "AGENTEVAL_JUDGE_CACHE", "AGENTEVAL_JUDGE_TIMEOUT")


@pytest.fixture(autouse=True)
def no_judge_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in JUDGE_ENV:
        monkeypatch.delenv(name, raising=False)


def _response(request: Request) -> str:
    found = re.search(r"<agent_response>\n(.*?)\n</agent_response>", request.prompt, re.DOTALL)
    return found.group(1) if found else ""


@pytest.fixture(scope="module")
def stored_traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example agent's runs over the example eval set, stored as OTLP JSON lines."""
    path = tmp_path_factory.mktemp("judge_traces") / "traces.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(path)))
    evaluate(EvalSet.load(EXAMPLE_SET), load_agent(EXAMPLE_AGENT), tracer_provider=provider)
    provider.shutdown()
    return path


def _eval(tmp_path: Path, traces: Path, monkeypatch: pytest.MonkeyPatch, criteria: str = '{"llm_judge": {}}') \
        -> tuple[int, dict[str, object]]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.json").write_text(f'{{"criteria": {criteria}}}')
    code = main(["eval", str(EXAMPLE_SET), "--traces", str(traces), "--config", "config.json",
                 "--report", "report.json", "--junit", "junit.xml", "--html", "report.html"])
    return code, json.loads((tmp_path / "report.json").read_text())


class TestCommandLine:
    def test_eval_exits_0_when_the_judge_says_the_responses_match(
            self, tmp_path: Path, stored_traces: Path, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> None:
        with serve(lambda r: verdict(1.0, "same meaning")) as server:
            monkeypatch.setenv("AGENTEVAL_JUDGE_BASE_URL", server.url)
            monkeypatch.setenv("AGENTEVAL_JUDGE_MODEL", "local-judge")
            code, report = _eval(tmp_path, stored_traces, monkeypatch)
        out = capsys.readouterr().out
        assert code == 0, out
        assert server.count == 5  # one call per turn: 3 single-turn cases, one of two turns
        assert {r.body["model"] for r in server.requests} == {"local-judge"}
        usage = report["summary"]["judge_usage"]["llm_judge"]  # type: ignore[index]
        assert (usage["calls"], usage["input_tokens"], usage["output_tokens"]) == (5, 600, 75)
        assert "LLM judge · llm_judge: 5 call(s), 0 from cache, 600 in / 75 out tokens" in out

    def test_a_rerun_with_the_cache_asks_the_judge_nothing(
            self, tmp_path: Path, stored_traces: Path, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> None:
        with serve(lambda r: verdict(1.0)) as server:
            monkeypatch.setenv("AGENTEVAL_JUDGE_BASE_URL", server.url)
            monkeypatch.setenv("AGENTEVAL_JUDGE_CACHE", str(tmp_path / "judge-cache"))
            assert _eval(tmp_path, stored_traces, monkeypatch)[0] == 0
            (tmp_path / ".agenteval").rename(tmp_path / "first-run")
            code, report = _eval(tmp_path, stored_traces, monkeypatch)
        assert code == 0 and server.count == 5
        usage = report["summary"]["judge_usage"]["llm_judge"]  # type: ignore[index]
        assert (usage["calls"], usage["cache_hits"], usage["input_tokens"]) == (0, 5, 0)
        assert "0 call(s), 5 from cache" in capsys.readouterr().out

    def test_eval_exits_1_with_the_judges_error_when_it_answers_garbage(
            self, tmp_path: Path, stored_traces: Path, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> None:
        with serve(lambda r: Reply("I cannot decide, sorry.")) as server:
            monkeypatch.setenv("AGENTEVAL_JUDGE_BASE_URL", server.url)
            code, report = _eval(tmp_path, stored_traces, monkeypatch)
        assert code == 1
        summary = report["summary"]
        assert summary["error_cases"] == 4 and summary["judge_errors"] == 4  # type: ignore[index]
        said = "the LLM judge gave no usable verdict: its answer could not be read"
        for case in report["results"]:  # type: ignore[union-attr]
            (result,) = case["criterion_results"]
            assert said in result["error"] and result["score"] == 0.0 and not result["passed"]
        out = capsys.readouterr().out
        assert "LLM judge did not score 4 result(s); those cases are errored" in out and said in out
        assert said in (tmp_path / "junit.xml").read_text() and said in (tmp_path / "report.html").read_text()

    def test_eval_exits_1_saying_no_judge_is_configured(
            self, tmp_path: Path, stored_traces: Path, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> None:
        code, report = _eval(tmp_path, stored_traces, monkeypatch,
                             '{"llm_judge": {}, "trajectory_match": {}}')
        assert code == 1
        said = "the LLM judge did not run: no LLM judge is configured"
        for case in report["results"]:  # type: ignore[union-attr]
            by_name = {r["criterion"]: r for r in case["criterion_results"]}
            assert said in by_name["llm_judge"]["error"]
            assert by_name["trajectory_match"]["error"] is None  # the other criterion still scored
        assert said in capsys.readouterr().out
        for name in ("junit.xml", "report.html"):
            assert said in (tmp_path / name).read_text()

    def test_a_bad_judge_setting_is_bad_input(self, tmp_path: Path, stored_traces: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("AGENTEVAL_JUDGE_TIMEOUT", "soon")
        (tmp_path / "config.json").write_text('{"criteria": {"llm_judge": {}}}')
        assert main(["eval", str(EXAMPLE_SET), "--traces", str(stored_traces), "--config", "config.json"]) == 2
        assert "AGENTEVAL_JUDGE_TIMEOUT='soon': expected a number" in capsys.readouterr().err


AGENT_FILE = '''
from agenteval_otel.tracing import agent, tool

@tool
def get_weather(city: str) -> dict:
    return {"city": city, "celsius": 18}

@agent(name="weather")
def weather(query: str) -> str:
    city = query.rstrip("?").split()[-1]
    found = get_weather(city)
    return f"It is {found['celsius']} C in {city}."
'''


class TestLiveRuns:
    def _eval_set(self) -> EvalSet:
        from agenteval_otel import EvalSetBuilder

        return (EvalSetBuilder("judged")
                .add_case("Weather in Paris?", "18 C in Paris.", case_id="paris")
                .add_case("Weather in Tokyo?", "18 C in Tokyo.", case_id="tokyo")
                .add_case("Weather in Lima?", "18 C in Lima.", case_id="lima")
                .build())

    @pytest.mark.promise(19)
    def test_an_agent_file_scored_by_the_judge_end_to_end_with_spans_and_no_key(
            self, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
        key = "sk-test-judge-key-0123456789"
        (tmp_path / "agent.py").write_text(AGENT_FILE)
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))

        def script(request: Request) -> Reply:
            if "<tool_calls>" in request.body["messages"][-1]["content"]:  # hallucination's data
                return Reply(json.dumps({"claims": [{"claim": _response(request), "supported": True}]}))
            return verdict(1.0, "same")

        config = EvalConfig(criteria={"llm_judge": CriterionConfig.llm_judge(), "hallucination": CriterionConfig()})
        caplog.set_level(logging.DEBUG)
        with serve(script) as server:
            judge = judge_client(JudgeSettings(base_url=server.url, api_key=key, model="local-judge"))
            report = LiveRunner(load_agent(f"{tmp_path / 'agent.py'}:weather"), config, tracer_provider=provider,
                               judge=judge).evaluate(self._eval_set())
        assert report.summary.passed_cases == 3, report.failure_message()
        assert all(r.headers["authorization"] == f"Bearer {key}" for r in server.requests)
        hallucination_prompt = next(r.prompt for r in server.requests if "HallucinationVerdict" in r.prompt)
        assert '"celsius": 18' in hallucination_prompt
        marked = [s for s in exporter.get_finished_spans() if (s.attributes or {}).get(attr.EVALUATION_MARKER)]
        judge_spans = [s for s in marked if attr.GEN_AI_EVALUATION_NAME not in (s.attributes or {})]
        assert len(judge_spans) == 6 and {s.name for s in judge_spans} == {"chat local-judge"}
        assert [s for s in marked if s not in judge_spans] == []  # no evaluation span in the turns' traces
        roots = [s for s in exporter.get_finished_spans() if s.parent is None and s not in marked]
        assert len(roots) == 3 and all(  # the verdicts are on the turns' roots
            (s.attributes or {}).get(f"agenteval.evaluation.{name}.label") == "pass"
            for s in roots for name in ("llm_judge", "hallucination"))
        assert {s.attributes[attr.EVAL_CRITERION] for s in judge_spans} == {"llm_judge", "hallucination"}  # type: ignore[index]
        # the judge's calls are never steps of the agent's trajectory, nor trajectories of their own
        for case in report.results:
            assert [s.name for s in case.actual_trajectory if s.step_type.value == "message"] == []
        read_back = build_trajectories(SpanRecord.from_readable_span(s) for s in exporter.get_finished_spans())
        assert sorted(t.user_input or "" for t in read_back) == [
            "Weather in Lima?", "Weather in Paris?", "Weather in Tokyo?"]
        everything = (report.model_dump_json() + caplog.text
                      + "".join(str(dict(s.attributes or {})) + str(s.status) for s in exporter.get_finished_spans()))
        assert key not in everything

    @pytest.mark.promise(12, 15)
    def test_judge_failures_are_data_and_every_other_case_and_criterion_is_scored(self, tmp_path: Path) -> None:
        """Reliability promise 12: garbage and a hang each error one case's judge result."""
        def script(request: Request) -> Reply:
            response = _response(request)
            if "Tokyo" in response:
                return Reply("no idea")
            if "Lima" in response:
                return Reply(text="{}", delay_s=3)
            return verdict(0.9)

        config = EvalConfig(criteria={"llm_judge": CriterionConfig.llm_judge(),
                                      "response_match": CriterionConfig.response(0.1)})
        with serve(script) as server:
            judge = judge_client(JudgeSettings(base_url=server.url, timeout_s=0.5))
            started = time.monotonic()
            (tmp_path / "agent.py").write_text(AGENT_FILE)
            report = evaluate(self._eval_set(), load_agent(f"{tmp_path / 'agent.py'}:weather"), config,
                              judge=judge)
            assert time.monotonic() - started < 3
        by_id = {case.eval_id: case for case in report.results}
        assert [by_id[i].status for i in ("paris", "tokyo", "lima")] == ["passed", "errored", "errored"]
        assert "could not be read" in (by_id["tokyo"].criterion_results[0].error or "")
        assert "gave no answer within 0.5 s" in (by_id["lima"].criterion_results[0].error or "")
        for case in report.results:
            scored = {r.criterion: r for r in case.criterion_results}
            assert scored["response_match"].error is None and scored["response_match"].passed
        assert report.summary.judge_errors == 2 and report.summary.judge_usage["llm_judge"].failures == 2
