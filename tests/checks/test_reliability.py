"""ReliabilityCheck over the tool calls of real agents, captured live through @agent/@tool."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import ValidationError

from agenteval_otel import agent, tool
from agenteval_otel.checks import ExpectedToolCall, ReliabilityCheck
from agenteval_otel.evalsets import ToolCall

QUERY = "weather in Paris"


@tool
def search(query: str, limit: int = 5) -> list[str]:
    return [query][:limit]


@tool
def get_weather(city: str, units: str = "C") -> str:
    return f"18°{units} in {city}"


@tool
def delete_records(table: str) -> int:
    return 0


@agent(name="weather-agent")
def weather_agent(query: str) -> str:
    search(query, limit=3)
    return get_weather(query.split()[-1], units="C")


@agent(name="careless-agent")
async def careless_agent(query: str) -> str:
    await asyncio.sleep(0)
    delete_records("bookings")
    return get_weather("Paris")


@agent(name="chatty-agent")
def chatty_agent(query: str) -> str:
    return "Hello!"


def _failure(evaluator: ReliabilityCheck, agent_under_test: Any = weather_agent) -> str:
    result = evaluator.run(agent_under_test, QUERY)
    assert not result.passed
    with pytest.raises(AssertionError) as raised:
        result.assert_passed()
    assert str(raised.value) == result.summary
    return result.summary


def test_expected_calls_in_order_with_arguments_and_nothing_else_pass(exported: InMemorySpanExporter) -> None:
    evaluator = ReliabilityCheck(
        ["search", ExpectedToolCall(name="get_weather", args={"city": "Paris"}, times=1)],
        order_matters=True, exact_match=True, arg_match="subset")
    result = evaluator.run(weather_agent, QUERY)
    result.assert_passed()
    assert (result.passed, result.summary) == (True, "All reliability checks passed.")
    assert result.actual_tool_calls == ["search", "get_weather"]
    assert result.expected_tool_calls == ["search", "get_weather"]
    assert [(c.tool_name, c.was_called, c.times_called, c.ok) for c in result.checks] == [
        ("search", True, 1, True), ("get_weather", True, 1, True)]
    assert (result.missing_tool_calls, result.unexpected_tool_calls) == ([], [])
    # the run was a real capture: the agent and its tools are spans of one trace
    names = [span.name for span in exported.get_finished_spans()]
    assert "execute_tool search" in names and "execute_tool get_weather" in names


def test_a_missing_tool_is_listed_and_named_in_the_message(exported: InMemorySpanExporter) -> None:
    evaluator = ReliabilityCheck(["search", "book_flight", "get_weather"])
    assert _failure(evaluator) == "Reliability check failed: missing tool calls: book_flight"
    result = evaluator.run(weather_agent, QUERY)
    assert result.missing_tool_calls == ["book_flight"]
    assert [(c.tool_name, c.was_called, c.times_called, c.reason) for c in result.checks][1] == (
        "book_flight", False, 0, "not called")


def test_call_counts(exported: InMemorySpanExporter) -> None:
    assert _failure(ReliabilityCheck([ExpectedToolCall(name="search", times=2)])) == (
        "Reliability check failed: search: called 1 time(s), expected 2")
    assert ReliabilityCheck([{"name": "search", "times": 1}]).run(weather_agent, QUERY).passed


def test_order(exported: InMemorySpanExporter) -> None:
    reversed_order = ["get_weather", "search"]
    assert _failure(ReliabilityCheck(reversed_order, order_matters=True)) == (
        "Reliability check failed: tools called out of order: expected get_weather → search, "
        "got search → get_weather")
    assert ReliabilityCheck(reversed_order).run(weather_agent, QUERY).passed


def test_arguments_exact_by_default_or_as_a_subset(exported: InMemorySpanExporter) -> None:
    paris = ExpectedToolCall(name="get_weather", args={"city": "Paris"})
    assert _failure(ReliabilityCheck([paris])) == (
        'Reliability check failed: get_weather({"city": "Paris"}): no call with the expected arguments '
        "(unexpected argument 'units' = 'C')")
    assert ReliabilityCheck([paris], arg_match="subset").run(weather_agent, QUERY).passed
    rome = ExpectedToolCall(name="get_weather", args={"city": "Rome"})
    assert _failure(ReliabilityCheck([rome], arg_match="subset")) == (
        'Reliability check failed: get_weather({"city": "Rome"}): no call with the expected arguments '
        "(argument 'city': expected 'Rome', got 'Paris')")
    twice = ExpectedToolCall(name="get_weather", args={"city": "Paris"}, times=2)
    assert _failure(ReliabilityCheck([twice], arg_match="subset")) == (
        'Reliability check failed: get_weather({"city": "Paris"}): called 1 time(s) with the expected '
        "arguments, expected 2")


def test_a_tool_that_must_never_be_called(exported: InMemorySpanExporter) -> None:
    never = ReliabilityCheck(["get_weather", ExpectedToolCall(name="delete_records", times=0)])
    assert never.run(weather_agent, QUERY).passed
    summary = _failure(never, careless_agent)
    assert summary == "Reliability check failed: delete_records: called 1 time(s), expected never"
    result = never.run(careless_agent, QUERY)
    assert result.expected_tool_calls == ["get_weather"]  # a forbidden tool is not expected to be called
    assert [(c.tool_name, c.times_called, c.ok) for c in result.checks][1] == ("delete_records", 1, False)


def test_no_tool_at_all(exported: InMemorySpanExporter) -> None:
    none = ReliabilityCheck([], exact_match=True)
    assert none.run(chatty_agent, QUERY).summary == "All reliability checks passed."
    assert _failure(none) == "Reliability check failed: unexpected tool calls: search, get_weather"


def test_exact_match_lists_the_unexpected_calls_only_when_asked(exported: InMemorySpanExporter) -> None:
    exact = ReliabilityCheck(["search"], exact_match=True)
    assert _failure(exact) == "Reliability check failed: unexpected tool calls: get_weather"
    assert exact.run(weather_agent, QUERY).unexpected_tool_calls == ["get_weather"]
    loose = ReliabilityCheck(["search"]).run(weather_agent, QUERY)
    assert loose.passed and loose.unexpected_tool_calls == []


def test_every_problem_is_in_one_summary(exported: InMemorySpanExporter) -> None:
    evaluator = ReliabilityCheck(
        ["get_weather", "book_flight", ExpectedToolCall(name="delete_records", times=0)],
        exact_match=True)
    assert _failure(evaluator, careless_agent) == (
        "Reliability check failed: missing tool calls: book_flight; delete_records: called 1 time(s), "
        "expected never")
    assert _failure(ReliabilityCheck(["get_weather", "search"], order_matters=True, exact_match=True),
                    careless_agent) == (
        "Reliability check failed: missing tool calls: search; unexpected tool calls: delete_records")


async def test_an_async_agent_from_async_code(exported: InMemorySpanExporter) -> None:
    result = await ReliabilityCheck(["delete_records", "get_weather"], order_matters=True).arun(
        careless_agent, QUERY)
    assert result.passed and result.actual_tool_calls == ["delete_records", "get_weather"]


def test_tool_calls_given_directly() -> None:
    calls = [ToolCall(name="search", args={"query": "x"}), ToolCall(name="search", args={"query": "y"})]
    evaluator = ReliabilityCheck([ExpectedToolCall(name="search", args={"query": "y"}, times=1)])
    assert evaluator.evaluate(calls).passed
    assert evaluator.evaluate([]).summary == "Reliability check failed: missing tool calls: search"


def test_the_agents_exception_propagates(exported: InMemorySpanExporter) -> None:
    failure = RuntimeError("no weather today")

    @agent(name="broken-agent")
    def broken(query: str) -> str:
        raise failure

    with pytest.raises(RuntimeError) as raised:
        ReliabilityCheck(["search"]).run(broken, QUERY)
    assert raised.value is failure


def test_bad_expectations_are_refused() -> None:
    with pytest.raises(ValidationError):
        ReliabilityCheck([42])  # type: ignore[list-item]
    with pytest.raises(ValidationError):
        ReliabilityCheck([{"name": "search", "times": -1}])
    with pytest.raises(ValidationError):
        ReliabilityCheck(["search"], arg_match="fuzzy")
