"""The five decorators: span names, parents and attributes, on every kind of callable."""

from __future__ import annotations

import asyncio
import json
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from agenteval_otel.tracing import agent, conditional, conversation, message, node, tool, tool_call_id


def _by_name(spans: Any) -> dict[str, Any]:
    return {span.name: span for span in spans.all()}


# --- the example agent: the span tree the trajectory reader relies on ----------------------------
def test_example_agent_span_tree(spans: Any, traced_agent: ModuleType) -> None:
    answer = traced_agent.run_agent("What is the weather in Tokyo?", thread_id="thread-7")

    assert answer == "It is 21°C and clear in Tokyo."
    finished = spans.all()
    root = spans.named("invoke_agent weather-agent")
    assert root.parent is None
    assert {span.context.trace_id for span in finished} == {root.context.trace_id}
    by_id = {span.context.span_id: span for span in finished}

    def parent_name(span: Any) -> str:
        return by_id[span.parent.span_id].name

    order = [span.name for span in sorted(finished, key=lambda s: s.start_time)]
    assert order == [
        "invoke_agent weather-agent",
        "invoke_node model",
        "chat scripted-model",
        "conditional wants_tools",
        "invoke_node tools",
        "execute_tool get_weather",
        "invoke_node model",
        "chat scripted-model",
        "conditional wants_tools",
    ]
    for span in finished:  # a model call is a client span (GenAI conventions), every other step internal
        assert span.kind is (SpanKind.CLIENT if span.name.startswith("chat") else SpanKind.INTERNAL)
        assert span.attributes["agenteval.step.type"] in {"agent", "node", "message", "conditional", "tool"}
        if span is not root:
            expected_parent = {
                "chat scripted-model": "invoke_node model",
                "execute_tool get_weather": "invoke_node tools",
            }.get(span.name, "invoke_agent weather-agent")
            assert parent_name(span) == expected_parent

    assert dict(root.attributes) == {
        "agenteval.step.type": "agent",
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather-agent",
        "gen_ai.conversation.id": "thread-7",
        "agenteval.agent.input": "What is the weather in Tokyo?",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "What is the weather in Tokyo?"}]}],
            separators=(",", ":"),
        ),
        "agenteval.agent.output": "It is 21°C and clear in Tokyo.",
        "gen_ai.output.messages": json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [{"type": "text", "content": "It is 21°C and clear in Tokyo."}],
                    "finish_reason": "stop",
                }
            ],
            separators=(",", ":"),
            ensure_ascii=False,
        ),
    }
    assert dict(spans.named("execute_tool get_weather").attributes) == {
        "agenteval.step.type": "tool",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.conversation.id": "thread-7",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.arguments": '{"city":"Tokyo"}',
        "gen_ai.tool.call.result": '{"city":"Tokyo","temperature":21,"sky":"clear"}',
    }
    first_chat, second_chat = sorted(
        (s for s in finished if s.name == "chat scripted-model"), key=lambda s: s.start_time
    )
    assert first_chat.attributes["gen_ai.conversation.id"] == "thread-7"
    assert json.loads(first_chat.attributes["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Tokyo"}}],
            "finish_reason": "tool_call",
        }
    ]
    assert "agenteval.message.content" not in first_chat.attributes
    assert second_chat.attributes["agenteval.message.content"] == "It is 21°C and clear in Tokyo."
    branches = [
        (s.attributes["agenteval.conditional.value"], s.attributes["agenteval.conditional.branch"])
        for s in sorted(finished, key=lambda s: s.start_time)
        if s.name == "conditional wants_tools"
    ]
    assert branches == [(True, "tools"), (False, "end")]
    assert dict(spans.named("invoke_node tools").attributes) == {
        "agenteval.step.type": "node",
        "gen_ai.operation.name": "invoke_node",
        "gen_ai.node.name": "tools",
        "gen_ai.conversation.id": "thread-7",
    }


# --- forms: bare, with options, positional name ---------------------------------------------------
def test_bare_and_configured_forms_name_the_span(spans: Any) -> None:
    @tool
    def lookup(q: str) -> str:
        return q

    @tool(name="get_weather", description="Weather by city", tool_type="function")
    def weather(city: str) -> str:
        return city

    @node("plan")
    def planner() -> None:
        return None

    @agent
    def helper(q: str) -> str:
        return q

    lookup("a"), weather("b"), planner(), helper("c")

    names = _by_name(spans)
    assert set(names) == {"execute_tool lookup", "execute_tool get_weather", "invoke_node plan", "invoke_agent helper"}
    assert names["execute_tool get_weather"].attributes["gen_ai.tool.description"] == "Weather by city"
    assert names["execute_tool get_weather"].attributes["gen_ai.tool.type"] == "function"
    assert names["invoke_node plan"].attributes["gen_ai.node.name"] == "plan"
    assert lookup.__name__ == "lookup" and lookup.__wrapped__("x") == "x"  # type: ignore[attr-defined]


def test_decorated_functions_keep_their_kind() -> None:
    import inspect

    @tool
    async def a() -> None: ...

    @tool
    def g() -> Any:
        yield 1

    @tool
    async def ag() -> Any:
        yield 1

    assert inspect.iscoroutinefunction(a)
    assert inspect.isgeneratorfunction(g)
    assert inspect.isasyncgenfunction(ag)
    assert str(inspect.signature(a)) == "() -> 'None'"


# --- tools ---------------------------------------------------------------------------------------
def test_tool_binds_arguments_by_name_without_self_or_defaults(spans: Any) -> None:
    class Weather:
        @tool
        def forecast(self, city: str, days: int = 3, *extra: str, **options: Any) -> list[str]:
            return [city] * days

        @tool
        @classmethod
        def units(cls, system: str) -> str:
            return system

        @tool
        @staticmethod
        def normalise(city: str) -> str:
            return city.title()

    weather = Weather()
    assert weather.forecast("Oslo", 2, "x", "y", lang="no") == ["Oslo", "Oslo"]
    assert Weather.units("metric") == "metric"
    assert weather.normalise("paris") == "Paris"

    names = _by_name(spans)
    assert json.loads(names["execute_tool forecast"].attributes["gen_ai.tool.call.arguments"]) == {
        "city": "Oslo",
        "days": 2,
        "extra": ["x", "y"],
        "lang": "no",
    }
    assert names["execute_tool forecast"].attributes["gen_ai.tool.call.result"] == '["Oslo","Oslo"]'
    assert names["execute_tool units"].attributes["gen_ai.tool.call.arguments"] == '{"system":"metric"}'
    assert names["execute_tool normalise"].attributes["gen_ai.tool.call.arguments"] == '{"city":"paris"}'
    assert names["execute_tool normalise"].attributes["gen_ai.tool.call.result"] == '"Paris"'


def test_tool_call_id_from_argument_context_or_generated(spans: Any) -> None:
    @tool(call_id_arg="call_id")
    def search(query: str, call_id: str | None = None) -> int:
        return 1

    @tool
    def fetch(url: str) -> int:
        return 2

    search("q", call_id="call_from_arg")
    with tool_call_id("call_from_context"):
        fetch("u")
    fetch("v")

    calls = [(s.name, dict(s.attributes)) for s in spans.all()]
    assert calls[0][1]["gen_ai.tool.call.id"] == "call_from_arg"
    assert calls[0][1]["gen_ai.tool.call.arguments"] == '{"query":"q"}'
    assert calls[1][1]["gen_ai.tool.call.id"] == "call_from_context"
    generated = calls[2][1]["gen_ai.tool.call.id"]
    assert generated == f"call_{spans.all()[2].context.span_id:016x}"


def test_tool_call_id_context_is_for_one_call_only(spans: Any) -> None:
    @tool
    def inner() -> None:
        return None

    @tool
    def outer() -> None:
        inner()

    with tool_call_id("call_outer"):
        outer()

    ids = {s.name: s.attributes["gen_ai.tool.call.id"] for s in spans.all()}
    assert ids["execute_tool outer"] == "call_outer"
    assert ids["execute_tool inner"] != "call_outer"


def test_tool_error_records_type_and_status(spans: Any) -> None:
    @tool
    def broken(city: str) -> None:
        raise LookupError(f"no city {city}")

    with pytest.raises(LookupError):
        broken("Atlantis")

    span = spans.named("execute_tool broken")
    assert span.attributes["error.type"] == "LookupError"
    assert span.attributes["gen_ai.tool.call.arguments"] == '{"city":"Atlantis"}'
    assert "gen_ai.tool.call.result" not in span.attributes
    assert span.status.status_code is StatusCode.ERROR
    assert span.events[0].name == "exception"


# --- agents --------------------------------------------------------------------------------------
def test_agent_conversation_id_from_context_and_argument(spans: Any) -> None:
    @message
    def reply(prompt: str) -> str:
        return "ok"

    @agent(name="chat-agent")
    def chat(prompt: str) -> str:
        return reply(prompt)

    @agent(conversation_id_arg="thread_id", input_arg="question")
    def support(question: str, thread_id: str, verbose: bool = False) -> dict[str, str]:
        reply(question)
        return {"answer": "42"}

    with conversation("conv-1"):
        chat("hi")
    support("why?", "thread-9", verbose=True)
    chat("no conversation")

    agents = [s for s in spans.all() if s.attributes["agenteval.step.type"] == "agent"]
    chats = [s for s in spans.all() if s.attributes["agenteval.step.type"] == "message"]
    assert [a.attributes.get("gen_ai.conversation.id") for a in agents] == ["conv-1", "thread-9", None]
    assert [c.attributes.get("gen_ai.conversation.id") for c in chats] == ["conv-1", "thread-9", None]
    support_span = agents[1]
    assert support_span.attributes["agenteval.agent.input"] == "why?"
    assert support_span.attributes["agenteval.agent.output"] == '{"answer":"42"}'
    assert "gen_ai.output.messages" not in support_span.attributes  # not text


def test_every_step_of_a_conversation_carries_its_id(spans: Any) -> None:
    """Nodes, tools and conditionals in a conversation carry its id too, so a Collector routing by
    ``gen_ai.conversation.id`` keeps every span of the trace together."""
    @tool
    def lookup(city: str) -> str:
        return "sunny"

    @conditional(name="route")
    def route(answer: str) -> str:
        return "done"

    @node
    def plan(question: str) -> str:
        return route(lookup(question))

    @agent(conversation_id_arg="thread_id")
    def support(question: str, thread_id: str) -> str:
        return plan(question)

    support("Paris?", "thread-7")
    plan("no conversation")
    steps = {(s.attributes["agenteval.step.type"], s.attributes.get("gen_ai.conversation.id")) for s in spans.all()}
    assert steps == {("agent", "thread-7"), ("node", "thread-7"), ("tool", "thread-7"), ("conditional", "thread-7"),
                     ("node", None), ("tool", None), ("conditional", None)}


def test_agent_input_with_several_arguments_is_json(spans: Any) -> None:
    @agent
    def plan(goal: str, budget: int) -> None:
        return None

    plan("trip", 300)

    attributes = spans.attributes("invoke_agent plan")
    assert json.loads(attributes["agenteval.agent.input"]) == {"goal": "trip", "budget": 300}
    assert "gen_ai.input.messages" not in attributes
    assert "agenteval.agent.output" not in attributes


async def test_async_agent_with_nested_async_tools(spans: Any) -> None:
    @tool
    async def fetch(i: int) -> int:
        await asyncio.sleep(0)
        return i * 2

    @agent
    async def gather(n: int) -> list[int]:
        return list(await asyncio.gather(*(fetch(i) for i in range(n))))

    assert await gather(3) == [0, 2, 4]

    root = spans.named("invoke_agent gather")
    tools = [s for s in spans.all() if s.name == "execute_tool fetch"]
    assert len(tools) == 3
    assert all(t.parent.span_id == root.context.span_id for t in tools)
    assert sorted(t.attributes["gen_ai.tool.call.result"] for t in tools) == ["0", "2", "4"]


# --- nodes ---------------------------------------------------------------------------------------
def test_node_records_io_only_when_asked(spans: Any) -> None:
    @node
    def quiet(state: dict[str, int]) -> dict[str, int]:
        return {"n": state["n"] + 1}

    @node("loud", capture_io=True)
    def loud(state: dict[str, int]) -> dict[str, int]:
        return {"n": state["n"] + 1}

    quiet({"n": 1})
    loud({"n": 1})

    assert "agenteval.node.input" not in spans.attributes("invoke_node quiet")
    loud_attributes = spans.attributes("invoke_node loud")
    assert loud_attributes["agenteval.node.input"] == '{"n":1}'
    assert loud_attributes["agenteval.node.output"] == '{"n":2}'


def test_current_span_inside_a_step_is_the_step(spans: Any) -> None:
    seen: list[int] = []

    @node
    def inside() -> None:
        seen.append(trace.get_current_span().get_span_context().span_id)

    inside()
    assert seen == [spans.named("invoke_node inside").context.span_id]
    assert not trace.get_current_span().get_span_context().is_valid


# --- messages ------------------------------------------------------------------------------------
def test_message_from_plain_text(spans: Any) -> None:
    @message(role="user")
    def ask() -> str:
        return "What time is it?"

    ask()
    attributes = spans.attributes("chat")
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["agenteval.step.type"] == "message"
    assert attributes["agenteval.message.role"] == "user"
    assert attributes["agenteval.message.content"] == "What time is it?"
    assert json.loads(attributes["gen_ai.output.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "What time is it?"}], "finish_reason": "stop"}
    ]


def test_message_from_an_openai_style_completion(spans: Any) -> None:
    completion = SimpleNamespace(
        model="gpt-4o-mini-2024-07-18",
        usage=SimpleNamespace(prompt_tokens=12, completion_tokens=5),
        choices=[
            SimpleNamespace(
                finish_reason="tool_calls",
                message=SimpleNamespace(
                    role="assistant",
                    content=None,
                    tool_calls=[
                        SimpleNamespace(
                            id="call_x",
                            type="function",
                            function=SimpleNamespace(name="get_weather", arguments='{"city":"Oslo","api_key":"k"}'),
                        )
                    ],
                ),
            )
        ],
    )

    @message(model="gpt-4o-mini", provider="openai")
    def call_llm(prompt: str) -> Any:
        return completion

    assert call_llm("weather?") is completion

    attributes = spans.attributes("chat gpt-4o-mini")
    assert attributes["gen_ai.request.model"] == "gpt-4o-mini"
    assert attributes["gen_ai.provider.name"] == "openai"
    assert attributes["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
    assert attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert attributes["gen_ai.usage.input_tokens"] == 12
    assert attributes["gen_ai.usage.output_tokens"] == 5
    assert json.loads(attributes["gen_ai.output.messages"]) == [
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "tool_call",
                    "id": "call_x",
                    "name": "get_weather",
                    "arguments": {"city": "Oslo", "api_key": "[REDACTED]"},
                }
            ],
            "finish_reason": "tool_call",
        }
    ]


def test_message_from_anthropic_style_blocks(spans: Any) -> None:
    @message
    def claude() -> dict[str, Any]:
        return {
            "role": "assistant",
            "model": "claude-x",
            "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "Hello "}, {"type": "text", "text": "there"}],
            "usage": {"input_tokens": 3, "output_tokens": 2},
        }

    claude()
    attributes = spans.attributes("chat")
    assert attributes["agenteval.message.content"] == "Hello there"
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert attributes["gen_ai.usage.output_tokens"] == 2


def test_message_of_unknown_shape_is_recorded_as_json(spans: Any) -> None:
    @message
    def odd() -> list[int]:
        return [1, 2]

    odd()
    attributes = spans.attributes("chat")
    assert attributes["agenteval.message.role"] == "assistant"
    assert attributes["agenteval.message.content"] == "[1,2]"


# --- conditionals --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("returned", "branches", "value", "branch"),
    [
        ("tools", None, "tools", "tools"),
        (["search", "summarise"], None, '["search","summarise"]', '["search","summarise"]'),
        (True, {True: "tools", False: "end"}, True, "tools"),
        (False, None, False, "false"),
        (2, {1: "one", 2: "two"}, 2, "two"),
        ({"route": "x"}, None, '{"route":"x"}', '{"route":"x"}'),
    ],
)
def test_conditional_value_and_branch(spans: Any, returned: Any, branches: Any, value: Any, branch: str) -> None:
    @conditional("route", branches=branches)
    def route(state: dict[str, Any]) -> Any:
        return returned

    assert route({}) == returned
    attributes = spans.attributes("conditional route")
    assert attributes["agenteval.step.type"] == "conditional"
    assert attributes["agenteval.conditional.name"] == "route"
    assert attributes["agenteval.conditional.value"] == value
    assert attributes["agenteval.conditional.branch"] == branch
