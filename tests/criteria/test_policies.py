"""The policies, reference-free criteria: each through the registry as a run calls it, holding and
broken, with and without an expected invocation, and refusing bad params when the config loads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agenteval_otel import EvalConfig
from agenteval_otel.criteria import CriterionContext, get_criterion, run_criterion
from agenteval_otel.errors import ConfigError
from agenteval_otel.evalsets import Invocation
from agenteval_otel.results._results import CriterionResult
from agenteval_otel.trajectory import TrajectoryStep
from agenteval_otel.trajectory.trajectory import Trajectory
from agenteval_otel.trajectory.usage import TokenUsage

POLICIES = ("max_tool_calls", "forbidden_tools", "required_tools", "required_tool_order", "latency_budget",
            "no_tool_errors", "max_tokens", "final_response_present")


def _score(name: str, actual: Trajectory, params: dict[str, Any] | None = None,
           expected: Invocation | None = None) -> CriterionResult:
    """``name`` scored as a config file would set it up: its default threshold, params validated."""
    config = EvalConfig.model_validate({"criteria": {name: {"params": params or {}}}}).criteria[name]
    result = asyncio.run(run_criterion(name, CriterionContext(actual=actual, expected=expected, config=config)))
    assert result is not None and result.error is None, result
    return result


def _run(*steps: TrajectoryStep, response: str | None = "Done.", **fields: Any) -> Trajectory:
    return Trajectory(steps=list(steps), final_response=response, **fields)


def _tools(*names: str) -> Trajectory:
    return _run(*(TrajectoryStep.tool(name, {"n": i}) for i, name in enumerate(names)))


def _holds(result: CriterionResult) -> bool:
    assert result.score in (0.0, 1.0) and result.threshold == 1.0
    return result.passed


@pytest.mark.parametrize("name", POLICIES)
def test_every_policy_is_registered_reference_free_with_threshold_one(name: str) -> None:
    registered = get_criterion(name)
    assert (registered.default_threshold, registered.reference_free) == (1.0, True)
    assert registered.settings is not None


class TestMaxToolCalls:
    def test_within_the_limit(self) -> None:
        result = _score("max_tool_calls", _tools("a", "b"), {"limit": 2})
        assert _holds(result) and result.reason == "2 tool call(s) ≤ limit 2"

    def test_over_the_limit_names_the_count_and_the_calls_past_it(self) -> None:
        result = _score("max_tool_calls", _tools("a", "b", "c"), {"limit": 2})
        assert not _holds(result)
        assert result.reason == "3 tool calls > limit 2"
        assert [(row.status, row.actual, row.note) for row in result.evidence] == [
            ("unexpected", 'c({"n": 2})', "step 3: call 3 > limit 2")]

    def test_only_tool_steps_count(self) -> None:
        run = _run(TrajectoryStep.node("plan"), TrajectoryStep.message("assistant", "hi"), TrajectoryStep.tool("a"))
        assert _holds(_score("max_tool_calls", run, {"limit": 1}))

    def test_zero_forbids_any_call(self) -> None:
        assert not _holds(_score("max_tool_calls", _tools("a"), {"limit": 0}))


class TestForbiddenTools:
    def test_names_the_forbidden_call_and_its_step(self) -> None:
        run = _run(TrajectoryStep.node("plan"), TrajectoryStep.tool("search"), TrajectoryStep.message("assistant"),
                   TrajectoryStep.tool("delete_db", {"table": "users"}))
        result = _score("forbidden_tools", run, {"tools": ["delete_db", "drop"]})
        assert not _holds(result)
        assert result.reason == "forbidden tool delete_db called at step 4"
        assert [(row.status, row.actual) for row in result.evidence] == [
            ("unexpected", 'delete_db({"table": "users"})')]

    def test_holds_when_none_is_called(self) -> None:
        result = _score("forbidden_tools", _tools("search"), {"tools": ["delete_db"]})
        assert _holds(result) and "delete_db" in result.reason


class TestRequiredTools:
    def test_names_what_is_missing(self) -> None:
        result = _score("required_tools", _tools("search"), {"tools": ["search", "get_weather", "book"]})
        assert not _holds(result)
        assert result.reason == "required tools not called: get_weather, book"
        assert [(row.status, row.expected) for row in result.evidence] == [
            ("match", "search"), ("missing", "get_weather"), ("missing", "book")]

    def test_holds_in_any_order(self) -> None:
        assert _holds(_score("required_tools", _tools("b", "a"), {"tools": ["a", "b"]}))


class TestRequiredToolOrder:
    def test_a_subsequence_with_other_calls_between_holds(self) -> None:
        result = _score("required_tool_order", _tools("search", "log", "get_weather", "log", "respond"),
                        {"tools": ["search", "get_weather", "respond"]})
        assert _holds(result)
        assert [row.note for row in result.evidence] == ["step 1", "step 3", "step 5"]

    def test_a_call_out_of_order_is_named_with_its_step(self) -> None:
        result = _score("required_tool_order", _tools("get_weather", "search"), {"tools": ["search", "get_weather"]})
        assert not _holds(result)
        assert result.reason == ("required order search → get_weather broken: "
                                 "get_weather called at step 1, not after search (step 2)")
        assert [(row.status, row.expected) for row in result.evidence] == [
            ("match", "search"), ("missing", "get_weather")]

    def test_a_missing_first_tool(self) -> None:
        result = _score("required_tool_order", _tools("b"), {"tools": ["a", "b"]})
        assert not _holds(result) and result.reason.endswith("broken: a not called")

    def test_a_name_listed_twice_needs_two_calls(self) -> None:
        assert not _holds(_score("required_tool_order", _tools("search"), {"tools": ["search", "search"]}))
        assert _holds(_score("required_tool_order", _tools("search", "x", "search"), {"tools": ["search", "search"]}))


def _timed(duration_s: float, *tools: tuple[str, float]) -> Trajectory:
    steps = [TrajectoryStep.tool(name, duration_ms=seconds * 1000) for name, seconds in tools]
    return _run(*steps, start_ns=0, end_ns=int(duration_s * 1e9))


class TestLatencyBudget:
    def test_whole_run_over_budget(self) -> None:
        result = _score("latency_budget", _timed(31.5), {"max_seconds": 30})
        assert not _holds(result)
        assert result.reason == "run took 31.5 s > budget 30 s"
        assert result.details["duration_s"] == 31.5

    def test_per_tool_budget_and_the_wildcard(self) -> None:
        run = _timed(4.0, ("search", 1.5), ("get_weather", 2.5), ("search", 2.25))
        params = {"max_seconds": 30, "per_tool_seconds": {"search": 2, "*": 5}}
        result = _score("latency_budget", run, params)
        assert not _holds(result)
        assert result.reason == "search took 2.25 s at step 3 > budget 2 s"
        assert [(row.status, row.expected, row.actual, row.note) for row in result.evidence] == [
            ("mismatch", "search ≤ 2 s", "search 2.25 s", "step 3")]
        assert _holds(_score("latency_budget", run, {"per_tool_seconds": {"search": 3}}))

    def test_within_budget(self) -> None:
        result = _score("latency_budget", _timed(1.0, ("a", 0.5)), {"max_seconds": 2, "per_tool_seconds": {"*": 1}})
        assert _holds(result) and result.reason == "run took 1 s ≤ 2 s; 1 tool call(s) within budget"

    def test_a_tool_call_without_a_duration_is_not_measured_but_named(self) -> None:
        run = _run(TrajectoryStep.tool("get_weather", {"city": "Paris"}), start_ns=0, end_ns=int(1.5e9))
        result = _score("latency_budget", run, {"max_seconds": 30, "per_tool_seconds": {"*": 5}})
        assert _holds(result) and result.reason == (
            "run took 1.5 s ≤ 30 s; per-tool budget not applicable to get_weather at step 1: no duration "
            "recorded (a tool call read from a model's messages has none)")
        assert result.details["untimed_tool_calls"] == ["get_weather at step 1"]

    def test_only_per_tool_budgets_and_no_tool_duration_does_not_apply(self) -> None:
        config = EvalConfig.model_validate({"criteria": {"latency_budget": {"params": {"per_tool_seconds": {"*": 5}}}}})
        ctx = CriterionContext(actual=_tools("a"), expected=None, config=config.criteria["latency_budget"])
        assert asyncio.run(run_criterion("latency_budget", ctx)) is None

    def test_a_duration_not_recorded_is_an_error_not_a_pass(self) -> None:
        config = EvalConfig.model_validate({"criteria": {"latency_budget": {"params": {"max_seconds": 1}}}})
        ctx = CriterionContext(actual=_tools("a"), expected=None, config=config.criteria["latency_budget"])
        result = asyncio.run(run_criterion("latency_budget", ctx))
        assert result is not None and not result.passed
        assert result.error is not None and "duration was not recorded" in result.error


class TestNoToolErrors:
    def test_names_the_failed_call_its_step_and_the_gist_of_its_error(self) -> None:
        error = ("ValueError('Unknown city: Atlantis')Traceback (most recent call last):\n\n"
                 '  File "tools.py", line 51, in get_weather\nValueError: Unknown city: Atlantis')
        run = _run(TrajectoryStep.node("agent"), TrajectoryStep.tool("get_weather", {"city": "Atlantis"}, error=error))
        result = _score("no_tool_errors", run)
        assert not _holds(result)
        assert result.reason == "get_weather failed at step 2: ValueError('Unknown city: Atlantis')"
        assert result.evidence[0].note == "step 2: ValueError('Unknown city: Atlantis')"

    def test_holds_without_errors(self) -> None:
        result = _score("no_tool_errors", _tools("a", "b"))
        assert _holds(result) and result.reason == "2 tool call(s), none failed"

    def test_many_failures_are_listed_briefly(self) -> None:
        run = _run(*(TrajectoryStep.tool(f"t{i}", error="boom") for i in range(8)))
        result = _score("no_tool_errors", run)
        assert result.reason.endswith("; and 3 more") and result.details["failed"] == 8


class TestMaxTokens:
    def test_total_input_and_output_limits(self) -> None:
        run = _run(usage=TokenUsage(input_tokens=4800, output_tokens=400))
        total = _score("max_tokens", run, {"limit": 4000})
        assert not _holds(total) and total.reason == "5,200 tokens > limit 4,000"
        output = _score("max_tokens", run, {"limit": 10000, "output_limit": 300})
        assert not _holds(output) and output.reason == "400 output tokens > limit 300"
        within = _score("max_tokens", run, {"input_limit": 5000, "output_limit": 500})
        assert _holds(within) and within.reason == "4,800 input tokens ≤ 5,000, 400 output tokens ≤ 500"


class TestFinalResponsePresent:
    @pytest.mark.parametrize(("response", "holds", "reason"), [
        ("Sunny.", True, "final response of 6 character(s)"),
        ("  \n", False, "the final response is empty"),
        (None, False, "no final response"),
    ])
    def test_response(self, response: str | None, holds: bool, reason: str) -> None:
        result = _score("final_response_present", _run(response=response))
        assert (_holds(result), result.reason) == (holds, reason)


def test_policies_score_the_same_with_an_expected_invocation() -> None:
    expected = Invocation(user_content="q", expected_final_response="Done.")
    for name, params in (("max_tool_calls", {"limit": 1}), ("no_tool_errors", {}), ("final_response_present", {})):
        with_case = _score(name, _tools("a", "b"), params, expected)
        without = _score(name, _tools("a", "b"), params)
        assert (with_case.score, with_case.reason) == (without.score, without.reason)


@pytest.mark.parametrize(("name", "params", "problem"), [
    ("max_tool_calls", {}, "limit: Field required"),
    ("max_tool_calls", {"limit": -1}, "limit: Input should be greater than or equal to 0"),
    ("max_tool_calls", {"limit": 2, "max": 3}, "max: Extra inputs are not permitted"),
    ("forbidden_tools", {"tools": []}, "tools: List should have at least 1 item"),
    ("required_tools", {"tools": "search"}, "tools: Input should be a valid list"),
    ("required_tool_order", {}, "tools: Field required"),
    ("latency_budget", {}, "give max_seconds, per_tool_seconds or both"),
    ("latency_budget", {"per_tool_seconds": {"search": 0}}, "per_tool_seconds.search: Input should be greater than 0"),
    ("max_tokens", {"limit": "lots"}, "limit: Input should be a valid integer"),
    ("max_tokens", {}, "give limit, input_limit, output_limit"),
    ("no_tool_errors", {"ignore": ["x"]}, "ignore: Extra inputs are not permitted"),
    ("final_response_present", {"min_length": 3}, "min_length: Extra inputs are not permitted"),
])
def test_bad_params_are_a_config_error_naming_the_criterion_and_the_param(
    tmp_path: Path, name: str, params: dict[str, Any], problem: str
) -> None:
    path = tmp_path / "policies.json"
    path.write_text(json.dumps({"criteria": {name: {"params": params}}}))
    with pytest.raises(ConfigError) as raised:
        EvalConfig.load(path)
    message = str(raised.value)
    assert str(path) in message and f"criterion {name!r} params" in message and problem in message


def test_reference_free_criteria_of_a_config() -> None:
    config = EvalConfig.model_validate({"criteria": {
        "trajectory_match": 0.8, "response_match": 0.7, "safety": {}, "no_tool_errors": {},
        "max_tool_calls": {"enabled": False, "params": {"limit": 1}}}})
    assert list(config.reference_free()) == ["safety", "no_tool_errors"]
