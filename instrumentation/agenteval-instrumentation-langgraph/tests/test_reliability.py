"""Promises 2 and 9 of RELIABILITY.md: an error inside the instrumentation leaves the user's call
untouched; suppressed instrumentation and spans that do not record cost no attribute work."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from agenteval_instrumentation_langgraph import LangGraphInstrumentor, graph_values, patch
from langchain_core.messages import AIMessage
from opentelemetry import trace
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import INVALID_SPAN
from sample_graphs import router_graph, tool_agent, tool_call

READERS = ("user_input", "final_response", "node_output", "tool_result", "tool_error", "thread_id", "branch_taken")
QUESTION = {"question": "Weather?", "answer": "", "log": []}


def _broken(*args: Any, **kwargs: Any) -> Any:
    raise ValueError("a bug of ours")


@pytest.fixture(autouse=True)
def _fresh_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patch, "_reported", set())  # each test sees our first WARNING


@pytest.mark.promise(2)
@pytest.mark.parametrize("reader", READERS)
def test_a_failing_reader_leaves_the_return_value_untouched(
    reader: str, captured: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    graph = tool_agent([AIMessage("", tool_calls=[tool_call("get_weather", "c1", city="Paris")]),
                        AIMessage("Sunny.")])
    expected = graph.invoke({"messages": [("user", "Weather?")]}, {"configurable": {"thread_id": "t"}})
    graph = tool_agent([AIMessage("", tool_calls=[tool_call("get_weather", "c1", city="Paris")]),
                        AIMessage("Sunny.")])
    monkeypatch.setattr(graph_values, reader, _broken)
    with caplog.at_level(logging.WARNING, logger=patch.__name__):
        output = graph.invoke({"messages": [("user", "Weather?")]}, {"configurable": {"thread_id": "t"}})

    assert [m.content for m in output["messages"]] == [m.content for m in expected["messages"]]
    assert any("failed; the call is unaffected" in record.getMessage() for record in caplog.records)
    assert trace.get_current_span() is INVALID_SPAN  # every step ended, none left current
    assert len(captured.trajectories()) == 2


@pytest.mark.promise(2)
def test_the_same_object_comes_back_when_our_code_fails(
    captured: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(patch, "start_step", _broken)
    with caplog.at_level(logging.WARNING, logger=patch.__name__):
        output = router_graph().invoke(QUESTION)

    assert output == {"question": "Weather?", "answer": "It is sunny.", "log": ["classify", "weather"]}
    assert captured.spans() == []
    assert any("starting the graph's step failed" in record.getMessage() for record in caplog.records)
    returned = object()
    for factory, args in ((patch.graph_invoke, (QUESTION,)), (patch.node_run, (_Task(),)),
                          (patch.branch_finish, (None, None, True, {})), (patch.tool_run, ({"name": "t"},))):
        assert factory(None)(lambda *a, **k: returned, router_graph(), args, {}) is returned


@pytest.mark.promise(3)
def test_the_users_exception_is_the_same_object_when_our_code_fails(
    captured: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    failure = KeyError("missing")

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise failure

    monkeypatch.setattr(patch, "_fail", _broken)  # recording the error fails too
    with pytest.raises(KeyError) as raised:
        patch.graph_invoke(captured.provider)(fails, router_graph(), (QUESTION,), {})
    assert raised.value is failure
    with pytest.raises(KeyError) as raised:
        patch.node_run(captured.provider)(fails, None, (_Task(),), {})
    assert raised.value is failure
    assert trace.get_current_span() is INVALID_SPAN  # the steps were left even so


class _Task:
    name = "node"
    input: dict[str, Any] = {}
    writes: list[Any] = []
    config: dict[str, Any] = {}


@pytest.mark.promise(9)
def test_suppressed_instrumentation_makes_no_spans_and_reads_nothing(
    captured: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for reader in READERS:
        monkeypatch.setattr(graph_values, reader, _broken)
    graph = tool_agent([AIMessage("", tool_calls=[tool_call("get_weather", "c1", city="Paris")]),
                        AIMessage("Sunny.")])
    with suppress_instrumentation():
        output = graph.invoke({"messages": [("user", "Weather?")]})
        list(router_graph().stream(QUESTION))

    assert output["messages"][-1].content == "Sunny."
    assert captured.spans() == []


@pytest.fixture
def sampled_out() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=ALWAYS_OFF)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    LangGraphInstrumentor().instrument(tracer_provider=provider)
    try:
        yield exporter
    finally:
        LangGraphInstrumentor().uninstrument()


@pytest.mark.promise(9)
def test_spans_that_do_not_record_get_no_attribute_work(
    sampled_out: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    called: list[str] = []
    for reader in ("user_input", "final_response", "node_output", "tool_result"):
        monkeypatch.setattr(graph_values, reader, lambda *args, _name=reader: called.append(_name))
    graph = tool_agent([AIMessage("", tool_calls=[tool_call("get_weather", "c1", city="Paris")]),
                        AIMessage("Sunny.")])
    output = graph.invoke({"messages": [("user", "Weather?")]})
    list(router_graph().stream(QUESTION))

    assert output["messages"][-1].content == "Sunny."
    assert called == [] and sampled_out.get_finished_spans() == ()
