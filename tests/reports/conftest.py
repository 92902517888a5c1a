"""A report with passes, failures and errors, and hostile text in every place it can reach.

Three of our own weather runs are scored against their ground truth: run1 expects a tool it never
called (failed, a *missing* diff row), run2 expects another argument that is a ``<script>``
(failed, a *mismatch* row), run3 passes, and a case no trace matches errors. One case is built
directly: its judge failed (errored), and its user input, name, tool arguments, node names and
reasons are markup.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agenteval_otel import (
    CriterionConfig,
    EvalCase,
    EvalConfig,
    EvalReport,
    EvalSet,
    ToolCall,
    evaluate_traces,
)
from agenteval_otel.criteria._trajectory_match import describe_call
from agenteval_otel.results import CriterionResult, EvalCaseResult, InvocationResult
from agenteval_otel.results._results import CaseResults, EvidenceRow, ResultCodec
from tests.ground_truth import ground_truth_case

RUNS = ["run1_sequential_two_tools", "run2_parallel_calls", "run3_streaming_sequential"]

SCRIPT = "<script>window.__pwned = 1</script>"
IMG = '<img src="x" onerror="window.__pwned = 2">'


def _hostile_case() -> EvalCaseResult:
    judge = CriterionResult.failure("llm_judge", 0.7, f"judge answered {SCRIPT}")
    call = ToolCall(name="search", args={"q": f"</td>{SCRIPT}"})
    trajectory = CriterionResult(criterion="trajectory_match", score=0.0, passed=False,
                                 threshold=0.8, reason=f"unexpected: {IMG}",
                                 evidence=[EvidenceRow(status="unexpected", actual=describe_call(call))])
    nodes = CriterionResult(criterion="node_order", score=0.5, passed=False, threshold=1.0)
    turn = InvocationResult(
        invocation_id="turn1", user_input=f"Weather in {SCRIPT}?",
        expected_response="Sunny.", actual_response=f"</p>{IMG}",
        actual_tool_calls=[call],
        expected_node_order=["plan", "respond"], actual_node_order=["plan", f"<b>{SCRIPT}</b>"],
        criterion_results=[trajectory, nodes, judge])
    return EvalCaseResult(eval_id="hostile", name=f"<i>{IMG}</i>", passed=False,
                          criterion_results=[trajectory, judge], invocation_results=[turn],
                          metrics={"tool_calls": 1.0, "runs": 3.0, "pass@1": 1 / 3, "pass@k": 1.0,
                                   "pass^k": 0.0})


@pytest.fixture(scope="session")
def report(weather_runs: Path) -> EvalReport:
    cases = [ground_truth_case(weather_runs / f"{run}.ground_truth.json") for run in RUNS]
    cases[0].conversation[0].expected_tool_trajectory.append(ToolCall(name="book_flight"))
    cases[1].conversation[0].expected_tool_trajectory[0].args = {"city": SCRIPT}
    cases.append(EvalCase.single_turn("A question nobody asked", eval_id="ghost"))
    config = EvalConfig(criteria={
        "trajectory_match": CriterionConfig.trajectory(0.8, check_args=True),
        "response_match": CriterionConfig.response(0.7),
    })
    scored = evaluate_traces(EvalSet(eval_set_id="weather", name="weather runs", eval_cases=cases),
                             [weather_runs / f"{run}.otlp.json" for run in RUNS], config)
    return EvalReport.from_results(scored.eval_set_id, [*scored.results, _hostile_case()],
                                   eval_set_name=scored.eval_set_name,
                                   config_used=scored.config_used,
                                   duration_seconds=scored.duration_seconds)


# --- a live run, with no shared data: passes, a failure, an agent that raises, repeated runs --------

SECRET = "sk-live0123456789"
LONG_IDS = ("weather_in_paris_then_fahrenheit_conversion", "tokyo_weather_expected_but_never_checked",
            "an_agent_exception_with_a_secret_inside")


def _crash(city: str) -> str:
    raise ConnectionError(f"weather backend <b>down</b> for {city} (key {SECRET})")


def _weather_agent(query: str) -> str:
    from agenteval_otel.tracing import tool

    @tool
    def get_weather(city: str) -> str:
        if city == "Nowhere":
            return _crash(city)
        return f"Sunny in {city}."

    city = query.removeprefix("Weather in ").rstrip("?")
    return get_weather(city)


@pytest.fixture(scope="session")
def live_report() -> EvalReport:
    """The example cases of ``LONG_IDS`` run twice each by a real traced agent: the first passes,
    the second fails, the third raises (its message holds markup and a secret the content policy
    redacts)."""
    from opentelemetry.sdk.trace import TracerProvider

    from agenteval_otel import EvalSetBuilder, evaluate
    from agenteval_otel.tracing import ContentPolicy, active_policy, set_active_policy

    eval_set = (EvalSetBuilder("weather")
                .add_case("Weather in Paris?", "Sunny in Paris.", ["get_weather"], case_id=LONG_IDS[0])
                .add_case("Weather in Tokyo?", "Rain in Tokyo.", ["get_weather", "get_forecast"],
                          case_id=LONG_IDS[1])
                .add_case("Weather in Nowhere?", "Sunny.", ["get_weather"], case_id=LONG_IDS[2])
                .build())
    config = EvalConfig(criteria={"trajectory_match": CriterionConfig.trajectory(0.8),
                                  "response_match": CriterionConfig.response(0.7),
                                  "tool_name_match": {}})
    before = active_policy()
    set_active_policy(ContentPolicy(redact_patterns=(r"sk-\w+",)))
    try:
        return evaluate(eval_set, _weather_agent, config, num_runs=2, tracer_provider=TracerProvider())
    finally:
        set_active_policy(before)


class CountingCodec(ResultCodec):
    """The real codec, counting the results it decodes."""

    def __init__(self) -> None:
        super().__init__()
        self.decoded = 0

    def decode(self, data: bytes) -> EvalCaseResult:
        self.decoded += 1
        return super().decode(data)


def held_slim(report: EvalReport) -> tuple[EvalReport, CountingCodec]:
    """``report`` with its results held slim and compressed, as a long offline run holds them."""
    codec = CountingCodec()
    results = CaseResults(codec=codec)
    for result in report.results:
        results.append(result, compact=True)
    return report.model_copy(update={"results": results}), codec
