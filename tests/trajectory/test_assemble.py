"""Trace assembly: tree order, invocations, conversations, and what models asked for."""

from __future__ import annotations

import gc
import json

import pytest

from agenteval_otel.trajectory import (
    SpanRecord,
    StepType,
    TraceBuffer,
    build_trajectories,
    iter_trajectories,
    trajectories_from_trace,
    tree_order,
)

TOOL = {"gen_ai.operation.name": "execute_tool"}


def _tool(name: str, **extra: object) -> dict[str, object]:
    return {**TOOL, "gen_ai.tool.name": name, **extra}


def _chat(output_parts: list[dict], input_messages: list[dict] | None = None) -> dict[str, object]:
    attributes: dict[str, object] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": output_parts}]),
    }
    if input_messages is not None:
        attributes["gen_ai.input.messages"] = json.dumps(input_messages)
    return attributes


def test_parents_come_before_children_and_siblings_by_start_time(make_span) -> None:
    root = make_span("root", start=100)
    late = make_span("late", parent=root, start=300)
    early = make_span("early", parent=root, start=200)
    grandchild = make_span("grandchild", parent=late, start=50)  # clock skew: before its parent
    orphan = make_span("orphan", parent_id="00000000000000ff", start=150)  # its parent never arrived
    tie_a = make_span("tie-a", parent=root, start=300)
    assert [r.name for r in tree_order([grandchild, late, tie_a, early, orphan, root])] == [
        "root",
        "early",
        "late",
        "grandchild",
        "tie-a",
        "orphan",
    ]


def test_a_parent_cycle_does_not_lose_spans(make_span) -> None:
    a = make_span("a", span_id="000000000000000a", parent_id="000000000000000b")
    b = make_span("b", span_id="000000000000000b", parent_id="000000000000000a")
    assert sorted(r.name for r in tree_order([a, b])) == ["a", "b"]


def test_a_read_trace_leaves_nothing_for_the_cycle_collector(make_span) -> None:
    agent = make_span("invoke_agent a", attributes={"gen_ai.operation.name": "invoke_agent"})
    tool = make_span("execute_tool t", parent=agent, attributes=_tool("t"))
    trajectories_from_trace([agent, tool])  # the readers' one-time lookups
    gc.collect()
    gc.disable()
    try:
        assert [s.name for s in trajectories_from_trace([agent, tool])[0].steps] == ["t"]
        assert gc.collect() == 0  # the spans' tree was freed as soon as it was read
    finally:
        gc.enable()


def test_duplicate_span_ids_keep_the_first(make_span) -> None:
    first = make_span("first", span_id="0000000000000001")
    second = make_span("second", span_id="0000000000000001")
    assert [r.name for r in tree_order([first, second])] == ["first"]


def test_a_trace_splits_into_its_outermost_agent_invocations(make_span) -> None:
    server = make_span("POST /chat", start=0, end=10_000)
    first = make_span(
        "invoke_agent a",
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"},
        parent=server,
        start=100,
    )
    make_tool = make_span("execute_tool t1", _tool("t1"), parent=first, start=200)
    nested = make_span(
        "invoke_agent helper", {"gen_ai.operation.name": "invoke_agent"}, parent=first, start=300
    )
    nested_tool = make_span("execute_tool t2", _tool("t2"), parent=nested, start=400)
    second = make_span(
        "invoke_agent b",
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "b"},
        parent=server,
        start=5000,
    )
    later_tool = make_span("execute_tool t3", _tool("t3"), parent=second, start=5100)
    spans = [make_tool, nested_tool, nested, first, later_tool, second, server]

    invocations = trajectories_from_trace(spans)
    assert [t.agent_name for t in invocations] == ["a", "b"]
    assert [[c.name for c in t.tool_calls()] for t in invocations] == [["t1", "t2"], ["t3"]]
    (whole,) = trajectories_from_trace(spans, split=False)
    assert [c.name for c in whole.tool_calls()] == ["t1", "t2", "t3"]


def test_requested_tool_calls_become_the_trajectory_when_no_tool_span_exists(make_span) -> None:
    agent = make_span("invoke_agent a", {"gen_ai.operation.name": "invoke_agent"})
    first = make_span(
        "chat m",
        _chat(
            [
                {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}},
                {
                    "type": "tool_call",
                    "id": "c2",
                    "name": "transfer_to_agent",
                    "arguments": {"agent_name": "x"},
                },
            ],
            [{"role": "user", "parts": [{"type": "text", "content": "Oslo?"}]}],
        ),
        parent=agent,
    )
    second = make_span(
        "chat m",
        _chat(
            [{"type": "text", "content": "Cold."}],
            [
                {
                    "role": "tool",
                    "parts": [{"type": "tool_call_response", "id": "c1", "response": {"temp_c": -3}}],
                }
            ],
        ),
        parent=agent,
    )
    (trajectory,) = trajectories_from_trace([agent, first, second])
    (call,) = trajectory.tool_calls()
    assert (call.name, call.args, call.call_id, call.result) == (
        "get_weather",
        {"city": "Oslo"},
        "c1",
        {"temp_c": -3},
    )
    assert [s.step_type for s in trajectory.steps] == [StepType.MESSAGE, StepType.TOOL, StepType.MESSAGE]
    assert (trajectory.user_input, trajectory.final_response) == ("Oslo?", "Cold.")


def test_openai_agents_handoff_requests_are_not_tool_calls(make_span) -> None:
    agent = make_span("Triage.agent", {"traceloop.span.kind": "agent", "gen_ai.agent.name": "Triage"})
    other = make_span(
        "Billing Agent.agent",
        {"traceloop.span.kind": "agent", "gen_ai.agent.name": "Billing Agent"},
        parent=agent,
    )
    chat = make_span(
        "openai.response",
        _chat([{"type": "tool_call", "id": "c1", "name": "transfer_to_billing_agent", "arguments": {}}]),
        parent=agent,
    )
    (trajectory,) = trajectories_from_trace([agent, other, chat])
    assert trajectory.tool_calls() == []


def test_tool_spans_borrow_arguments_ids_and_results_from_the_model(make_span) -> None:
    chat = make_span(
        "chat m",
        _chat(
            [
                {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}},
                {"type": "tool_call", "id": "c2", "name": "get_weather", "arguments": {"city": "Rome"}},
            ]
        ),
    )
    by_id = make_span("execute_tool get_weather", _tool("get_weather", **{"gen_ai.tool.call.id": "c2"}))
    by_name = make_span("execute_tool get_weather", _tool("get_weather"))
    answer = make_span(
        "chat m",
        _chat(
            [{"type": "text", "content": "ok"}],
            [{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "3"}]}],
        ),
    )
    (trajectory,) = trajectories_from_trace([chat, by_id, by_name, answer])
    assert [(c.args, c.call_id, c.result) for c in trajectory.tool_calls()] == [
        ({"city": "Rome"}, "c2", None),
        ({"city": "Oslo"}, "c1", 3),
    ]


def test_routers_hold_only_under_their_node_after_its_work(make_span) -> None:
    metadata = json.dumps({"langgraph_node": "agent"})
    node = make_span("agent", {"openinference.span.kind": "CHAIN", "metadata": metadata}, start=100, end=1000)
    llm = make_span(
        "LLM", {"openinference.span.kind": "LLM", "metadata": metadata}, parent=node, start=200, end=400
    )
    early = make_span(
        "helper",
        {"openinference.span.kind": "CHAIN", "metadata": metadata, "output.value": "x"},
        parent=node,
        start=300,
        end=350,
    )
    router = make_span(
        "route",
        {"openinference.span.kind": "CHAIN", "metadata": metadata, "output.value": "tools"},
        parent=node,
        start=500,
        end=600,
    )
    stray = make_span(
        "route",
        {"openinference.span.kind": "CHAIN", "metadata": metadata, "output.value": "tools"},
        start=700,
    )
    (trajectory,) = trajectories_from_trace([node, llm, early, router, stray])
    assert trajectory.branches() == [("route", "tools")]


def test_conversations_join_invocations_by_id_in_start_order(make_span) -> None:
    def turn(trace_id: str, start: int, question: str) -> list:
        agent = make_span(
            "invoke_agent a",
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.conversation.id": "conv",
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": question}]}]
                ),
            },
            trace_id=trace_id,
            start=start,
        )
        return [
            agent,
            make_span("execute_tool t", _tool("t"), parent=agent, trace_id=trace_id, start=start + 1),
        ]

    alone = make_span(
        "invoke_agent solo", {"gen_ai.operation.name": "invoke_agent"}, trace_id="c" * 32, start=5
    )
    spans = [*turn("b" * 32, 2000, "second"), *turn("a" * 32, 1000, "first"), alone]
    conversation, solo = sorted(
        build_trajectories(spans, group="conversation"), key=lambda t: len(t.trace_ids), reverse=True
    )
    assert conversation.trace_ids == ["a" * 32, "b" * 32]
    assert [t.user_input for t in conversation.turns] == ["first", "second"]
    assert conversation.user_input == "first" and solo.agent_name == "solo"
    assert len(build_trajectories(spans, group="trace")) == 3


def test_unknown_grouping_is_rejected(make_span) -> None:
    with pytest.raises(ValueError, match="group"):
        build_trajectories([make_span("x")], group="span")  # type: ignore[arg-type]


class SpanGrouper:
    """A ``TraceBuffer`` of span records as ``iter_trajectories`` uses it: lists of spans out."""

    def __init__(self, **options: int) -> None:
        self.buffer: TraceBuffer[SpanRecord] = TraceBuffer(**options)

    @property
    def open_traces(self) -> int:
        return self.buffer.open_traces

    def add(self, record: SpanRecord) -> list[list[SpanRecord]]:
        return [t.items for t in self.buffer.add(record.trace_id, record, is_root=record.parent_id is None)]

    def flush(self) -> list[list[SpanRecord]]:
        return [t.items for t in self.buffer.flush()]


def test_assembler_hands_out_a_trace_once_its_root_is_in_and_quiet(make_span) -> None:
    assembler = SpanGrouper(linger=2)
    root = make_span("root", trace_id="a" * 32)
    child = make_span("child", parent=root, trace_id="a" * 32)
    others = [make_span(f"other{i}", trace_id="b" * 32, parent_id="00000000000000ff") for i in range(3)]
    assert assembler.add(child) == []
    assert assembler.add(root) == []
    assert assembler.add(others[0]) == []
    assert assembler.add(others[1]) == [[child, root]]
    assert assembler.open_traces == 1
    assert assembler.flush() == [others[:2]] and assembler.open_traces == 0


def test_assembler_bounds_the_open_traces(make_span) -> None:
    assembler = SpanGrouper(linger=100, max_open_traces=2)
    spans = [
        make_span(f"s{i}", trace_id=format(i + 1, "032x"), parent_id="00000000000000ff") for i in range(3)
    ]
    assert assembler.add(spans[0]) == [] and assembler.add(spans[1]) == []
    assert assembler.add(spans[2]) == [[spans[0]]]
    assert assembler.open_traces == 2


def test_iter_trajectories_streams_trace_by_trace(make_span) -> None:
    def trace(index: int) -> list:
        trace_id = format(index + 1, "032x")
        agent = make_span("invoke_agent a", {"gen_ai.operation.name": "invoke_agent"}, trace_id=trace_id)
        return [make_span("execute_tool t", _tool(f"t{index}"), parent=agent, trace_id=trace_id), agent]

    consumed: list[str] = []

    def stream():
        for index in range(3):
            for span in trace(index):
                consumed.append(span.trace_id)
                yield span

    iterator = iter_trajectories(stream(), linger=1)
    first = next(iterator)
    assert [c.name for c in first.tool_calls()] == ["t0"]
    assert len(consumed) < 6  # the first trajectory came before the stream ended
    assert [[c.name for c in t.tool_calls()] for t in iterator] == [["t1"], ["t2"]]
