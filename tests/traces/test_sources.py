"""Trace sources: each kind gives the invocations an offline run scores, log files join the spans
of the kinds that read spans and are refused by name by the others, and a source of your own
plugs in the same way."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path

import pytest

from agenteval_otel import CriterionConfig, EvalConfig, EvalSet, evaluate_traces
from agenteval_otel.errors import ConfigError
from agenteval_otel.traces import (
    HttpRequest,
    HttpResponse,
    JaegerClient,
    JaegerSource,
    MockTransport,
    SpanSource,
    TraceFileSource,
    TraceSource,
    TrajectorySource,
    read_spans,
    trace_source,
)
from agenteval_otel.traces.files import read_logs
from agenteval_otel.trajectory import SpanRecord, Trajectory, TrajectoryStep
from agenteval_otel.trajectory.conventions import Reader
from tests.conftest import REPO_ROOT
from tests.ground_truth import ground_truth_eval_set

POLICIES = EvalConfig.load(REPO_ROOT / "examples" / "production_policies.json")
CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus" / "openai_v2_events"
EXACT = EvalConfig(criteria={"trajectory_match": CriterionConfig.trajectory(1.0, check_args=True),
                             "response_match": CriterionConfig.response(1.0)})
JAEGER_TRACE = "jaeger-ui__components__TracePage__TraceTimelineViewer__genaiTestTrace.json"


def _files(folder: Path) -> list[Path]:
    """Each weather run once (``all_runs.otlp.json`` repeats three of them)."""
    return sorted(p for p in folder.glob("*.otlp.json") if p.name != "all_runs.otlp.json")


def _single_turn_cases_with_their_logs() -> tuple[EvalSet, list[Path], list[Path]]:
    eval_set = ground_truth_eval_set(CORPUS)
    eval_set = eval_set.model_copy(update={"eval_cases": [c for c in eval_set.eval_cases if len(c.conversation) == 1]})
    return eval_set, sorted(CORPUS.glob("*.otlp.json")), sorted(CORPUS.glob("*.logs.json"))


# --- each kind ---------------------------------------------------------------------------------
def test_trace_files_are_a_source(weather_runs: Path) -> None:
    source = TraceFileSource(_files(weather_runs))
    assert len(list(source.trajectories())) == 7  # six runs, one a conversation of two turns
    assert evaluate_traces(None, source, POLICIES).summary.total_cases == 7
    single = TraceFileSource(_files(weather_runs)[0])
    assert single.paths == (_files(weather_runs)[0],)


def test_spans_are_a_source(weather_runs: Path) -> None:
    spans = [span for file in _files(weather_runs) for span in read_spans(file)]
    assert evaluate_traces(None, SpanSource(spans), POLICIES).summary.total_cases == 7


def test_trajectories_are_a_source() -> None:
    runs = [Trajectory(trace_id="7e57", span_id="01", steps=[TrajectoryStep.tool("search")] * 2)]
    config = EvalConfig.model_validate({"criteria": {"max_tool_calls": {"params": {"limit": 1}}}})
    report = evaluate_traces(None, TrajectorySource(runs), config)
    assert report.results[0].problems() == ["7e57:01: max_tool_calls scored 0.00 < threshold 1.00: 2 tool calls > limit 1"]


def _jaeger(shared_data: Path, asked: list[HttpRequest]) -> JaegerClient:
    trace = json.loads((shared_data / "traces" / "jaeger" / JAEGER_TRACE).read_text(encoding="utf-8"))
    body = json.dumps({"data": [trace]}).encode()

    def answer(request: HttpRequest) -> HttpResponse:
        asked.append(request)
        return HttpResponse(200, body)

    return JaegerClient("http://jaeger:16686", transport=MockTransport(answer))


def test_a_jaeger_query_is_a_source(shared_data: Path) -> None:
    asked: list[HttpRequest] = []
    source = JaegerSource(_jaeger(shared_data, asked), "triage", lookback=timedelta(hours=1), limit=50)
    assert asked == []  # queried when read, not when made
    config = EvalConfig.model_validate({"criteria": {"max_tool_calls": {"params": {"limit": 5}}, "no_tool_errors": {}}})
    [result] = evaluate_traces(None, source, config).results
    assert result.trace_id == "4a1b2c3d4e5f60718293a4b5c6d7e8f9"
    assert [(r.criterion, r.passed, r.reason) for r in result.criterion_results] == [
        ("max_tool_calls", False, "7 tool calls > limit 5"), ("no_tool_errors", True, "7 tool call(s), none failed")]
    [request] = asked
    query = urllib.parse.parse_qs(urllib.parse.urlparse(request.url).query)
    assert (query["service"], query["limit"]) == (["triage"], ["50"]) and "start" in query


# --- log files ---------------------------------------------------------------------------------
def test_log_files_join_trace_files() -> None:
    eval_set, traces, logs = _single_turn_cases_with_their_logs()
    with_logs = evaluate_traces(eval_set, TraceFileSource(traces, logs), EXACT)
    given_beside = evaluate_traces(eval_set, TraceFileSource(traces), EXACT, logs=logs)
    without = evaluate_traces(eval_set, TraceFileSource(traces), EXACT)
    assert with_logs.summary.passed_cases == given_beside.summary.passed_cases == 3
    assert without.summary.passed_cases == 0  # the content is only in the logs


def test_log_files_join_spans() -> None:
    eval_set, traces, logs = _single_turn_cases_with_their_logs()

    def spans() -> list[SpanRecord]:
        return [span for file in traces for span in read_spans(file)]

    as_records = evaluate_traces(eval_set, SpanSource(spans(), read_logs(logs)), EXACT)
    as_files = evaluate_traces(eval_set, spans(), EXACT, logs=logs)
    without = evaluate_traces(eval_set, spans(), EXACT)
    assert as_records.summary.passed_cases == as_files.summary.passed_cases == 3
    assert without.summary.passed_cases == 0


def test_log_files_are_refused_by_name_where_they_cannot_join(shared_data: Path) -> None:
    runs = [Trajectory(trace_id="7e57", span_id="01", final_response="hi")]
    with pytest.raises(ConfigError, match=r"^logs=: the source holds trajectories already assembled"):
        evaluate_traces(None, runs, POLICIES, logs=["content.logs.json"])
    with pytest.raises(ConfigError, match=r"^logs=: the source holds trajectories already assembled"):
        evaluate_traces(None, TrajectorySource(runs), POLICIES, logs=["content.logs.json"])
    asked: list[HttpRequest] = []
    jaeger = JaegerSource(_jaeger(shared_data, asked), "triage")
    with pytest.raises(ConfigError, match=r"^logs=: JaegerSource\(service='triage'\) reads spans from Jaeger's "
                                          "query API, which returns no log records"):
        evaluate_traces(None, jaeger, POLICIES, logs=["content.logs.json"])
    assert asked == []  # refused before anything is read


# --- your own source, and the forms turned into one ---------------------------------------------
class _Recorded(TraceSource):
    """Invocations kept by an application, handed out as trajectories."""

    def __init__(self, runs: Sequence[Trajectory]) -> None:
        self.runs = runs
        self.readers: list[Sequence[Reader] | None] = []

    def trajectories(self, readers: Sequence[Reader] | None = None) -> Iterator[Trajectory]:
        self.readers.append(readers)
        yield from self.runs


def test_a_source_of_your_own() -> None:
    source = _Recorded([Trajectory(trace_id="a", span_id="1", steps=[TrajectoryStep.tool("delete_database")]),
                        Trajectory(trace_id="b", span_id="2", final_response="done")])
    config = EvalConfig.model_validate({"criteria": {"forbidden_tools": {"params": {"tools": ["delete_database"]}}}})
    report = evaluate_traces(None, source, config, readers=[])
    assert [(r.eval_id, r.status) for r in report.results] == [("a:1", "failed"), ("b:2", "passed")]
    assert source.readers == [[]]
    assert trace_source(source) is source
    with pytest.raises(ConfigError, match=r"^logs=: a _Recorded gives no spans for the records of log files"):
        evaluate_traces(None, source, config, logs=["content.logs.json"])


def test_the_forms_evaluate_traces_takes_become_sources(weather_runs: Path) -> None:
    files = _files(weather_runs)
    spans = list(read_spans(files[0]))
    runs = [Trajectory(final_response="hi")]
    assert isinstance(trace_source(str(files[0])), TraceFileSource)
    assert isinstance(trace_source(files[0]), TraceFileSource)
    several = trace_source(files, logs=[CORPUS / "x.logs.json"])
    assert isinstance(several, TraceFileSource)
    assert (several.paths, several.logs) == (tuple(files), (CORPUS / "x.logs.json",))
    assert isinstance(trace_source([]), TraceFileSource)
    assert isinstance(trace_source(iter(spans)), SpanSource)
    assert isinstance(trace_source(runs), TrajectorySource)
    assert list(trace_source(iter(runs)).trajectories()) == runs


def test_a_source_of_mixed_or_unknown_items_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="Trajectory objects mixed with a str"):
        list(trace_source([Trajectory(), "trace.json"]).trajectories())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got an iterable of int"):
        trace_source([1, 2])  # type: ignore[arg-type]
