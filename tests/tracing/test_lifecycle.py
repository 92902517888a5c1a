"""``start_step``: the public step lifecycle that decorators, blocks and instrumentors share."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import INVALID_SPAN, NonRecordingSpan, StatusCode

from agenteval_otel.tracing import (
    ContentPolicy,
    StepRun,
    _steps,
    agent,
    conditional,
    configure,
    conversation,
    lifecycle,
    message,
    node,
    set_active_policy,
    start_step,
    tool,
    tool_call_id,
)

LOGGERS = "agenteval_otel"


class Failure(Exception):
    pass


def _ours(caplog: pytest.LogCaptureFixture, level: int = logging.WARNING) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith(LOGGERS) and r.levelno >= level]


def _run(run: StepRun, result: Any) -> None:
    run.set_result(result)
    run.end()


# --- the lifecycle records what the decorators record ----------------------------------------------
def _decorated_tool() -> None:
    @tool(name="lookup", description="finds things", tool_type="function")
    def lookup(city: str, api_key: str) -> dict[str, Any]:
        return {"city": city, "found": True}

    with tool_call_id("call_1"):
        lookup("Oslo", api_key="sk-1")


def _started_tool() -> None:
    run = start_step(
        "tool",
        "lookup",
        arguments={"city": "Oslo", "api_key": "sk-1"},
        call_id="call_1",
        description="finds things",
        tool_type="function",
    )
    _run(run, {"city": "Oslo", "found": True})


def _decorated_agent() -> None:
    @agent(name="planner", description="plans trips")
    def planner(question: str) -> str:
        return "Go to Oslo"

    with conversation("c-1"):
        planner("Where to?")


def _started_agent() -> None:
    _run(start_step("agent", "planner", input="Where to?", conversation_id="c-1", description="plans trips"), "Go to Oslo")


def _decorated_node() -> None:
    @node("plan", capture_io=True)
    def plan(state: dict[str, Any]) -> dict[str, Any]:
        return {"done": True}

    plan({"goal": "trip"})


def _started_node() -> None:
    _run(start_step("node", "plan", input={"goal": "trip"}), {"done": True})


REPLY = {
    "role": "assistant",
    "content": "Checking.",
    "tool_calls": [{"id": "c1", "function": {"name": "lookup", "arguments": '{"city": "Oslo", "token": "t"}'}}],
}


def _decorated_message() -> None:
    @message(model="m1", provider="openai")
    def reply() -> dict[str, Any]:
        return REPLY

    with conversation("c-2"):
        reply()


def _started_message() -> None:
    _run(start_step("message", model="m1", provider="openai", conversation_id="c-2"), REPLY)


def _decorated_conditional() -> None:
    @conditional("route", branches={True: "tools", False: "end"})
    def route() -> bool:
        return True

    route()


def _started_conditional() -> None:
    _run(start_step("conditional", "route", branches={True: "tools", False: "end"}), True)


@pytest.mark.parametrize(
    ("decorated", "started"),
    [
        (_decorated_tool, _started_tool),
        (_decorated_agent, _started_agent),
        (_decorated_node, _started_node),
        (_decorated_message, _started_message),
        (_decorated_conditional, _started_conditional),
    ],
    ids=["tool", "agent", "node", "message", "conditional"],
)
@pytest.mark.parametrize("capture", [True, False], ids=["content", "no-content"])
def test_start_step_records_what_the_decorator_records(
    spans: Any, decorated: Callable[[], None], started: Callable[[], None], capture: bool
) -> None:
    set_active_policy(ContentPolicy(capture=capture))
    decorated()
    started()
    by_decorator, by_lifecycle = spans.all()
    assert by_lifecycle.name == by_decorator.name
    assert dict(by_lifecycle.attributes) == dict(by_decorator.attributes)
    assert len(by_lifecycle.attributes) >= 3
    assert by_lifecycle.status.status_code is by_decorator.status.status_code
    assert by_lifecycle.instrumentation_scope == by_decorator.instrumentation_scope


def test_a_failed_step_records_what_a_failing_decorated_function_records(spans: Any) -> None:
    @tool(name="fragile")
    def fragile(x: int) -> None:
        raise Failure("boom")

    with tool_call_id("call_9"), pytest.raises(Failure):
        fragile(1)
    run = start_step("tool", "fragile", arguments={"x": 1}, call_id="call_9")
    run.fail(Failure("boom"))
    by_decorator, by_lifecycle = spans.all()
    assert dict(by_lifecycle.attributes) == dict(by_decorator.attributes)
    assert by_lifecycle.attributes["error.type"] == "Failure"
    assert by_lifecycle.status.status_code is StatusCode.ERROR
    assert by_lifecycle.status.description == by_decorator.status.description == "Failure: boom"
    assert [e.name for e in by_lifecycle.events] == [e.name for e in by_decorator.events] == ["exception"]


# --- input, result, message input -------------------------------------------------------------------
def test_set_input_replaces_the_input_given_at_start(spans: Any) -> None:
    run = start_step("agent", "later", input="first")
    run.set_input("second")
    run.end()
    attributes = spans.attributes("invoke_agent later")
    assert attributes["agenteval.agent.input"] == "second"
    assert json.loads(attributes["gen_ai.input.messages"])[0]["parts"][0]["content"] == "second"
    assert "agenteval.agent.output" not in attributes


def test_a_tools_arguments_can_come_after_start(spans: Any) -> None:
    run = start_step("tool", "deferred")
    run.set_input({"q": "weather", "password": "p"})
    _run(run, "sunny")
    attributes = spans.attributes("execute_tool deferred")
    assert json.loads(attributes["gen_ai.tool.call.arguments"]) == {"q": "weather", "password": "[REDACTED]"}
    assert attributes["gen_ai.tool.call.result"] == '"sunny"'


def test_a_messages_input_is_recorded_as_input_messages(spans: Any) -> None:
    sent = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "name": "lookup", "args": {"city": "Oslo"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    _run(start_step("message", model="m1", input=sent), "It is sunny.")
    recorded = json.loads(spans.attributes("chat m1")["gen_ai.input.messages"])
    assert recorded == [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Oslo?"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"city": "Oslo"}}]},
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "sunny"}]},
    ]


def test_a_decorated_message_records_no_input(spans: Any) -> None:
    @message(model="m2")
    def reply(prompt: str) -> str:
        return "hi"

    reply("hello")
    assert "gen_ai.input.messages" not in spans.attributes("chat m2")


def test_content_capture_off_records_no_input(spans: Any) -> None:
    set_active_policy(ContentPolicy(capture=False))
    run = start_step("node", "private", input={"secret": 1})
    run.set_input("more")
    _run(run, "out")
    attributes = spans.attributes("invoke_node private")
    assert "agenteval.node.input" not in attributes and "agenteval.node.output" not in attributes


# --- ending exactly once --------------------------------------------------------------------------
def test_a_step_ends_exactly_once(spans: Any, caplog: pytest.LogCaptureFixture) -> None:
    run = start_step("tool", "twice_ended")
    run.set_result(1)
    with caplog.at_level(logging.DEBUG, logger=LOGGERS):
        run.end()
        run.end()
        run.fail(Failure("late"))
        run.set_result(2)
    assert run.ended
    assert len(spans.all()) == 1
    span = spans.named("execute_tool twice_ended")
    assert span.status.status_code is StatusCode.UNSET
    assert span.attributes["gen_ai.tool.call.result"] == "1"
    logged = [r.getMessage() for r in _ours(caplog, logging.DEBUG)]
    assert any("end after the step ended" in m for m in logged)
    assert any("fail after the step ended" in m for m in logged)
    assert any("set_result after the step ended" in m for m in logged)


def test_a_step_ended_inside_its_block_is_not_ended_again(spans: Any, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger=LOGGERS):
        with start_step("node", "early") as run:
            run.end()
            assert trace.get_current_span() is not run.span
    assert len(spans.all()) == 1
    assert _ours(caplog, logging.DEBUG) == []


# --- the context manager ------------------------------------------------------------------------------
def test_the_block_makes_the_span_current_and_restores_the_previous_one(spans: Any) -> None:
    @tool
    def inner() -> int:
        return 1

    before = trace.get_current_span()
    with start_step("agent", "outer") as run:
        assert trace.get_current_span() is run.span
        inner()
    assert trace.get_current_span() is before
    outer, child = spans.named("invoke_agent outer"), spans.named("execute_tool inner")
    assert child.parent is not None and child.parent.span_id == outer.context.span_id


@pytest.mark.promise(3)
def test_an_exception_leaving_the_block_is_recorded_and_propagates_unchanged(spans: Any) -> None:
    original = Failure("boom")
    with pytest.raises(Failure) as caught:
        with start_step("tool", "raises"):
            raise original
    assert caught.value is original
    span = spans.named("execute_tool raises")
    assert span.attributes["error.type"] == "Failure"
    assert span.status.status_code is StatusCode.ERROR


def test_activate_and_deactivate_parent_steps_started_between_them(spans: Any) -> None:
    run = start_step("node", "manual")
    assert trace.get_current_span() is not run.span  # not current until activated
    run.activate()
    child = start_step("tool", "child")
    child.end()
    run.deactivate()
    sibling = start_step("tool", "sibling")
    sibling.end()
    run.end()
    manual = spans.named("invoke_node manual")
    assert spans.named("execute_tool child").parent.span_id == manual.context.span_id
    assert spans.named("execute_tool sibling").parent is None


def test_an_explicit_parent_context_is_used(spans: Any) -> None:
    root = start_step("agent", "root")
    run = start_step("tool", "remote_child", parent_context=trace.set_span_in_context(root.span))
    run.end()
    root.end()
    assert spans.named("execute_tool remote_child").parent.span_id == spans.named("invoke_agent root").context.span_id


def test_a_step_can_start_on_a_given_provider(spans: Any, caplog: pytest.LogCaptureFixture) -> None:
    other = TracerProvider()
    elsewhere = InMemorySpanExporter()
    other.add_span_processor(SimpleSpanProcessor(elsewhere))
    with start_step("agent", "there", tracer_provider=other):
        start_step("tool", "inside").end()  # a child: on the routed provider, in the same trace
    start_step("agent", "bad", tracer_provider="not a provider").end()  # type: ignore[arg-type]
    (there,) = elsewhere.get_finished_spans()
    assert there.name == "invoke_agent there"
    assert spans.named("execute_tool inside").parent.span_id == there.context.span_id
    assert spans.named("invoke_agent bad")
    assert [r.getMessage() for r in _ours(caplog) if "tracer_provider=" in r.getMessage()]


def test_a_conversation_id_reaches_the_steps_inside(spans: Any) -> None:
    with start_step("agent", "chatty", conversation_id="c-9"):
        start_step("message", model="m9").end()
    assert spans.attributes("chat m9")["gen_ai.conversation.id"] == "c-9"


# --- policy: redaction, truncation ----------------------------------------------------------------
def test_the_active_policy_redacts_and_truncates(spans: Any) -> None:
    set_active_policy(ContentPolicy(redact_patterns=(r"sk-\w+",), max_length=60))
    run = start_step("tool", "leaky", arguments={"api_key": "x", "note": "key sk-abc"})
    _run(run, "y" * 100)
    attributes = spans.attributes("execute_tool leaky")
    assert json.loads(attributes["gen_ai.tool.call.arguments"]) == {"api_key": "[REDACTED]", "note": "key [REDACTED]"}
    assert attributes["gen_ai.tool.call.result"].endswith("...[truncated 42 chars]")


# --- no work when not recording, suppression ----------------------------------------------------------
class Tripwire:
    """A value that records every attempt to serialise it."""

    touched: ClassVar[list[str]] = []

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        Tripwire.touched.append("model_dump")
        return {}

    def __repr__(self) -> str:
        Tripwire.touched.append("repr")
        return "Tripwire()"


@pytest.mark.promise(9)
@pytest.mark.parametrize("make_provider", [trace.NoOpTracerProvider, lambda: TracerProvider(sampler=ALWAYS_OFF)])
def test_a_non_recording_span_gets_no_attribute_work(monkeypatch: pytest.MonkeyPatch, make_provider: Any) -> None:
    calls: list[str] = []
    for name in ("set_attribute", "set_attributes", "set_status", "record_exception"):
        monkeypatch.setattr(NonRecordingSpan, name, lambda self, *a, _n=name, **k: calls.append(_n))
    handle = configure(tracer_provider=make_provider(), set_global=False)
    Tripwire.touched = []
    wire = Tripwire()
    for kind in ("agent", "node", "message"):
        run = start_step(kind, "quiet", input=wire)  # type: ignore[arg-type]
        assert not run.recording
        run.set_input(wire)
        _run(run, wire)
    run = start_step("tool", "quiet", arguments={"value": wire})
    run.fail(Failure())
    with start_step("conditional", "quiet") as route:
        route.set_result(wire)
    assert Tripwire.touched == []
    assert calls == []
    handle.shutdown(timeout=1)


@pytest.mark.promise(9)
def test_suppressed_instrumentation_starts_no_span(spans: Any) -> None:
    token = otel_context.attach(otel_context.set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
    try:
        with start_step("agent", "suppressed", input="x") as run:
            assert run.span is INVALID_SPAN
            run.set_input("y")
            run.set_result("z")
    finally:
        otel_context.detach(token)
    assert spans.all() == []
    start_step("agent", "not_suppressed").end()
    assert len(spans.all()) == 1


# --- errors of ours never reach the caller ----------------------------------------------------------
@pytest.mark.promise(2, 3)
@pytest.mark.parametrize(
    ("target", "attribute"),
    [
        (_steps, "current_tracer"),
        (_steps, "read_message"),
        (_steps, "input_messages"),
        (ContentPolicy, "json"),
        (ContentPolicy, "text"),
        (lifecycle, "_step"),
    ],
)
def test_an_internal_failure_never_reaches_the_caller(
    spans: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, target: Any, attribute: str
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"injected failure in {attribute}")

    monkeypatch.setattr(target, attribute, broken)
    with caplog.at_level(logging.WARNING, logger=LOGGERS):
        for kind in ("agent", "tool", "node", "message", "conditional"):
            value = {"tool": None, "conditional": None}.get(kind, ["in"])
            run = start_step(kind, f"broken_{attribute}", input=value)  # type: ignore[arg-type]
            run.activate()
            run.set_input(["more"] if kind != "tool" else {"a": 1})
            run.set_result({"role": "assistant", "content": "out"})
            run.end()
        original = Failure("user's")
        with pytest.raises(Failure) as caught:
            with start_step("tool", f"broken_{attribute}_block"):
                raise original
        assert caught.value is original
    logged = _ours(caplog)
    assert logged and all(r.exc_info for r in logged)
    assert trace.get_current_span() is INVALID_SPAN  # every activation was undone


# --- arguments checked --------------------------------------------------------------------------------
@pytest.mark.promise(1)
def test_an_unknown_kind_is_logged_and_traces_nothing(spans: Any, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGERS):
        with start_step("llm", "x") as run:  # type: ignore[arg-type]
            run.set_result("ignored")
    assert not run.recording and run.span is INVALID_SPAN
    assert [r.getMessage() for r in _ours(caplog)][0].startswith("start_step: kind must be one of")
    assert spans.all() == []


@pytest.mark.promise(1)
def test_options_that_do_not_apply_are_logged_and_ignored(spans: Any, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGERS):
        start_step("node", "misused", call_id="c1", model="m1").end()
    assert len(_ours(caplog)) == 2
    assert "gen_ai.tool.call.id" not in spans.attributes("invoke_node misused")


@pytest.mark.promise(2)
def test_steps_started_per_call_log_a_failure_of_ours_once(
    spans: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ContentPolicy, "json", lambda self, value: 1 / 0)
    with caplog.at_level(logging.WARNING, logger=LOGGERS):
        for _ in range(3):
            run = start_step("tool", "repeated_failure", arguments={"a": 1})
            _run(run, "result")
    assert [r.getMessage().split(": ")[1] for r in _ours(caplog)] == [
        "recording the inputs failed; the call is unaffected",
        "recording the result failed; the call is unaffected",
    ]
    assert len(spans.all()) == 3
