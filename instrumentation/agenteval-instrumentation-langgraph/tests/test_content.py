"""Content follows the content setting as the openai instrumentation's does (promise 10): off by
default, on through ``instrument(capture_content=True)`` or the environment, then redacted and
truncated by the content policy in force; the steps themselves are recorded either way."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest
from agenteval_instrumentation_langgraph import LangGraphInstrumentor
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from sample_graphs import tool_agent, tool_call

from agenteval_otel import semconv as attr
from agenteval_otel.tracing import ContentPolicy, active_policy, set_active_policy
from agenteval_otel.tracing.content import CAPTURE_CONTENT_ENV, REDACTED

CONTENT_KEYS = frozenset({
    attr.AGENT_INPUT, attr.AGENT_OUTPUT, attr.NODE_INPUT, attr.NODE_OUTPUT, attr.MESSAGE_CONTENT,
    attr.GEN_AI_INPUT_MESSAGES, attr.GEN_AI_OUTPUT_MESSAGES,
    attr.GEN_AI_TOOL_CALL_ARGUMENTS, attr.GEN_AI_TOOL_CALL_RESULT,
})
SECRET = "hunter2-7f3a9c"


class Login(TypedDict, total=False):
    user: str
    password: str
    notes: str
    answer: str


def login_graph() -> Any:
    """check (reads the password, writes a long answer) → END."""

    def check(state: Login) -> dict[str, Any]:
        return {"answer": "welcome " + "x" * 100_000, "password": state["password"]}

    builder = StateGraph(Login)
    builder.add_node("check", check)
    builder.add_edge(START, "check")
    builder.add_edge("check", END)
    return builder.compile(name="login")


def run_both(thread: str) -> None:
    """A state graph with a password in its state, and a tool-calling agent."""
    login_graph().invoke({"user": "ann", "password": SECRET, "notes": "n" * 100_000},
                         {"configurable": {"thread_id": thread}})
    replies = [AIMessage("", tool_calls=[tool_call("get_weather", "call_1", city="Paris")]), AIMessage("Sunny.")]
    tool_agent(replies).invoke({"messages": [("user", "Weather in Paris?")]}, {"configurable": {"thread_id": thread}})


def content_of(spans: Any) -> dict[str, dict[str, Any]]:
    return {span.name: {k: v for k, v in span.attributes.items() if k in CONTENT_KEYS} for span in spans}


@pytest.fixture
def policy_on() -> Any:
    """The content policy in force captures (as our decorators' default does); put back after."""
    saved = active_policy()
    set_active_policy(ContentPolicy(capture=True))
    yield
    set_active_policy(saved)


@pytest.mark.promise(10, 19)
@pytest.mark.parametrize("how", ["instrument", "environment"])
def test_content_is_off_by_default_and_on_when_asked_then_redacted_and_truncated(
    instrumented: Any, policy_on: None, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
    captured = instrumented()  # the policy in force captures, but a third-party library's default is off
    run_both("t-off")

    assert not any(content_of(captured.spans()).values()), content_of(captured.spans())
    assert SECRET not in str([span.attributes for span in captured.spans()])
    login, agent = captured.trajectories()  # the steps themselves are all there
    assert login.node_order() == ["check"] and login.conversation_id == "t-off"
    assert agent.node_order() == ["agent", "tools", "agent"]
    assert [(call.name, call.call_id) for call in agent.tool_calls()] == [("get_weather", "call_1")]
    assert agent.branches() == [("tools_condition", "tools"), ("tools_condition", "__end__")]

    LangGraphInstrumentor().uninstrument()
    captured.exporter.clear()
    if how == "environment":
        monkeypatch.setenv(CAPTURE_CONTENT_ENV, "true")
        instrumented()
    else:
        instrumented(capture_content=True)
    run_both("t-on")

    assert SECRET not in str([span.attributes for span in captured.spans()])
    node = captured.span("invoke_node check").attributes
    assert f'"password":"{REDACTED}"' in node[attr.NODE_INPUT]
    assert node[attr.NODE_INPUT].endswith(" chars]") and node[attr.NODE_OUTPUT].endswith(" chars]")
    (call,) = [t for t in captured.trajectories() if t.conversation_id == "t-on" and t.tool_calls()][0].tool_calls()
    assert (call.args, call.result) == ({"city": "Paris"}, {"city": "Paris", "celsius": 18})
    agent_step = captured.span("invoke_agent weather-agent").attributes
    assert (agent_step[attr.AGENT_INPUT], agent_step[attr.AGENT_OUTPUT]) == ("Weather in Paris?", "Sunny.")

    LangGraphInstrumentor().uninstrument()
    captured.exporter.clear()
    set_active_policy(ContentPolicy(capture=False))  # the policy in force turns it off again
    instrumented(capture_content=True)
    run_both("t-policy-off")
    assert not any(content_of(captured.spans()).values())
    assert {span.name for span in captured.spans()} >= {"invoke_node check", "execute_tool get_weather"}


@pytest.mark.promise(19)
def test_credentials_in_a_node_error_reach_no_span(instrumented: Any) -> None:
    key = "sk-proj-Q7vR2mX9pL4tK8wZ3nB6c"

    def call_model(state: Login) -> dict[str, Any]:
        raise PermissionError(f"401 Incorrect API key provided: {key}")

    builder = StateGraph(Login)
    builder.add_node("call_model", call_model)
    builder.add_edge(START, "call_model")
    builder.add_edge("call_model", END)
    captured = instrumented()
    with pytest.raises(PermissionError) as raised:
        builder.compile(name="failing").invoke({"user": "ann"})

    assert key in str(raised.value)  # the caller's exception is untouched
    spans = captured.spans()
    assert {span.name for span in spans} == {"invoke_agent failing", "invoke_node call_model"}
    for span in spans:
        assert span.status.description == "PermissionError: 401 Incorrect API key provided: ***"
        assert key not in str(span.attributes) + str([event.attributes for event in span.events])
