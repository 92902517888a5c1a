"""Reliability promises 1-5 and 9 of RELIABILITY.md for capture (10 and 11: test_content, test_context)."""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import NonRecordingSpan, StatusCode

from agenteval_otel.tracing import _steps, agent, conditional, configure, message, node, tool, trace_step
from agenteval_otel.tracing._binding import ArgumentBinder
from agenteval_otel.tracing.content import ContentPolicy

LOGGERS = "agenteval_otel"


class Failure(Exception):
    pass


def _ours(caplog: pytest.LogCaptureFixture, level: int = logging.WARNING) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith(LOGGERS) and r.levelno >= level]


# --- promise 1: nothing of ours raises into the user's code --------------------------------------
@pytest.mark.promise(1)
@pytest.mark.parametrize(
    "decorate",
    [
        lambda f: tool(name=42)(f),  # type: ignore[call-overload]
        lambda f: agent(conversation_id_arg="no_such_parameter")(f),
        lambda f: conditional(branches=["not", "a", "mapping"])(f),  # type: ignore[call-overload]
        lambda f: node(input_arg=7)(f),  # type: ignore[call-overload]
    ],
)
def test_bad_decorator_options_are_logged_once_and_tolerated(
    spans: Any, caplog: pytest.LogCaptureFixture, decorate: Any
) -> None:
    def lookup(city: str) -> str:
        return city.upper()

    with caplog.at_level(logging.WARNING, logger=LOGGERS):
        traced = decorate(lookup)
        assert traced("oslo") == "OSLO"
    assert len(_ours(caplog)) == 1
    assert len(spans.all()) == 1


@pytest.mark.promise(1)
def test_bad_block_arguments_are_logged_and_tolerated(spans: Any, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGERS):
        with trace_step.tool(None, arguments="not a mapping") as step:  # type: ignore[arg-type]
            step.set_result(object())
    assert len(_ours(caplog)) == 2  # the name and the arguments
    assert spans.all()[0].name == "execute_tool tool"


@pytest.mark.promise(1)
def test_decorating_something_not_callable_leaves_it_alone(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGERS):
        assert tool()(42) == 42  # type: ignore[call-overload, type-var]
    assert len(_ours(caplog)) == 1


@pytest.mark.promise(1)
def test_unserialisable_arguments_and_results_are_tolerated(spans: Any) -> None:
    class Weird:
        def __repr__(self) -> str:
            raise RuntimeError("cannot repr")

        def __str__(self) -> str:
            raise RuntimeError("cannot str")

    weird = Weird()

    @tool
    def accept(value: Any) -> Any:
        return value

    assert accept(weird) is weird
    attributes = spans.attributes("execute_tool accept")
    assert attributes["gen_ai.tool.call.arguments"].startswith('{"value":"<Weird')


@pytest.mark.promise(1)
def test_calls_after_shutdown_are_tolerated(provider: TracerProvider, caplog: pytest.LogCaptureFixture) -> None:
    exporter = InMemorySpanExporter()
    handle = configure(exporter=exporter, set_global=False)

    @tool
    def ping() -> str:
        return "pong"

    assert handle.shutdown(timeout=5) is True
    with caplog.at_level(logging.WARNING, logger=LOGGERS):
        assert ping() == "pong"
        assert handle.force_flush(timeout=1) is False
        assert handle.shutdown(timeout=1) is True
    assert len(_ours(caplog)) == 1  # force_flush after shutdown says so once


# --- promise 2: a failure of ours leaves the user's call untouched -------------------------------
@pytest.mark.promise(2)
@pytest.mark.parametrize(
    ("target", "attribute"),
    [
        (ArgumentBinder, "bind"),
        (ContentPolicy, "json"),
        (_steps, "read_message"),
        (_steps, "current_tracer"),
        (_steps, "text_messages_json"),
    ],
)
def test_an_internal_failure_leaves_the_call_untouched(
    spans: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, target: Any, attribute: str
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"injected failure in {attribute}")

    monkeypatch.setattr(target, attribute, broken)
    side_effects: list[str] = []
    result = {"answer": 42}

    @tool
    def compute(x: int) -> dict[str, int]:
        side_effects.append("tool")
        return result

    @message
    def speak() -> str:
        side_effects.append("message")
        return "hello"

    @agent
    def run(q: str) -> str:
        side_effects.append("agent")
        speak()
        return "done" if compute(1) is result else "wrong"

    with caplog.at_level(logging.WARNING, logger=LOGGERS):
        assert run("q") == "done"
        assert run("again") == "done"
    assert side_effects == ["agent", "message", "tool"] * 2
    logged = _ours(caplog)
    assert logged and all(r.exc_info for r in logged)
    assert len(logged) <= 3  # once per step at WARNING; repeats go to DEBUG


@pytest.mark.promise(2)
def test_an_internal_failure_in_a_generator_leaves_it_untouched(
    spans: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ContentPolicy, "text", lambda self, value: 1 / 0)

    @agent
    def stream(q: str) -> Iterator[str]:
        yield "a"
        yield "b"

    with caplog.at_level(logging.WARNING, logger=LOGGERS):
        assert list(stream("q")) == ["a", "b"]
    assert _ours(caplog)
    assert spans.named("invoke_agent stream").end_time is not None


# --- promise 3: the user's exception propagates unchanged ----------------------------------------
def _raising_frames(error: BaseException) -> list[str]:
    return [frame.name for frame in traceback.extract_tb(error.__traceback__)]


@pytest.mark.promise(3)
def test_sync_exception_is_the_same_object_with_its_traceback(spans: Any) -> None:
    original = Failure("boom")

    @tool
    def fails() -> None:
        raise original

    with pytest.raises(Failure) as caught:
        fails()
    assert caught.value is original
    assert _raising_frames(caught.value)[-1] == "fails"
    span = spans.named("execute_tool fails")
    assert span.attributes["error.type"] == "Failure"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "Failure: boom"


@pytest.mark.promise(3)
async def test_async_exception_is_the_same_object_with_its_traceback(spans: Any) -> None:
    original = Failure("async boom")

    @agent
    async def fails() -> None:
        await asyncio.sleep(0)
        raise original

    with pytest.raises(Failure) as caught:
        await fails()
    assert caught.value is original
    assert _raising_frames(caught.value)[-1] == "fails"
    assert spans.named("invoke_agent fails").attributes["error.type"] == "Failure"


@pytest.mark.promise(3)
async def test_generator_exceptions_are_the_same_objects(spans: Any) -> None:
    sync_error, async_error = Failure("gen"), Failure("agen")

    @node("sync_gen")
    def sync_gen() -> Iterator[int]:
        yield 1
        raise sync_error

    @node("async_gen")
    async def async_gen() -> AsyncIterator[int]:
        yield 1
        raise async_error

    with pytest.raises(Failure) as caught_sync:
        list(sync_gen())
    with pytest.raises(Failure) as caught_async:
        [item async for item in async_gen()]
    assert caught_sync.value is sync_error and _raising_frames(sync_error)[-1] == "sync_gen"
    assert caught_async.value is async_error and _raising_frames(async_error)[-1] == "async_gen"
    assert {s.attributes["error.type"] for s in spans.all()} == {"Failure"}


@pytest.mark.promise(3)
def test_base_exceptions_propagate_too(spans: Any) -> None:
    @tool
    def interrupt() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupt()
    assert spans.named("execute_tool interrupt").attributes["error.type"] == "KeyboardInterrupt"


# --- promise 4: span processors never raise into the user's code ---------------------------------
class RaisingProcessor(SpanProcessor):
    def __init__(self, on_start: bool = True, on_end: bool = True) -> None:
        self.raise_on_start = on_start
        self.raise_on_end = on_end

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if self.raise_on_start:
            raise RuntimeError("callback failed in on_start")

    def on_end(self, span: Any) -> None:
        if self.raise_on_end:
            raise RuntimeError("evaluator failed in on_end")


@pytest.mark.promise(4)
def test_processors_added_by_configure_are_isolated(caplog: pytest.LogCaptureFixture) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    handle = configure(
        tracer_provider=provider, span_processors=[RaisingProcessor(), SimpleSpanProcessor(exporter)], set_global=False
    )

    @tool
    def ping() -> str:
        return "pong"

    with caplog.at_level(logging.WARNING, logger=LOGGERS):
        assert ping() == "pong"
        with provider.get_tracer("app").start_as_current_span("plain otel span"):
            pass
    assert [s.name for s in exporter.get_finished_spans()] == ["execute_tool ping", "plain otel span"]
    assert len(_ours(caplog)) == 2  # on_start and on_end, each once
    handle.shutdown(timeout=1)


@pytest.mark.promise(4)
@pytest.mark.parametrize(("on_start", "on_end"), [(True, False), (False, True)])
def test_a_raising_processor_on_the_provider_never_reaches_the_user(
    spans: Any, provider: TracerProvider, caplog: pytest.LogCaptureFixture, on_start: bool, on_end: bool
) -> None:
    provider.add_span_processor(RaisingProcessor(on_start=on_start, on_end=on_end))
    result = object()

    @tool
    def ping() -> object:
        return result

    with caplog.at_level(logging.WARNING, logger=LOGGERS):
        assert ping() is result
        assert ping() is result
    assert len(_ours(caplog)) == 1


# --- promise 5: an OTLP endpoint that is down never blocks or crashes the app ---------------------
@pytest.mark.promise(5)
def test_a_down_endpoint_never_blocks_span_ends(monkeypatch: pytest.MonkeyPatch, closed_port: int) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    handle = configure("down", set_global=False)

    @tool
    def ping(i: int) -> int:
        return i

    started = time.monotonic()
    for i in range(1000):
        assert ping(i) == i
    elapsed = time.monotonic() - started
    assert elapsed < 5.0, f"1000 span ends took {elapsed:.2f} s"

    started = time.monotonic()
    handle.shutdown(timeout=1.0)
    assert time.monotonic() - started < 2.0


@pytest.mark.promise(5, 20)
def test_a_down_endpoint_costs_no_retries_and_one_warning_naming_it(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, closed_port: int) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://user:s3cret@127.0.0.1:{closed_port}")
    handle = configure("down", set_global=False)

    @tool
    def ping(i: int) -> int:
        return i

    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        for i in range(3):
            ping(i)
            handle.force_flush(timeout=10)  # spans and log records, batch after batch
        handle.shutdown(timeout=10)
    assert time.monotonic() - started < 2.0  # the SDK exporter alone retries for about 8 s
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [f"the OTLP endpoint http://user:***@127.0.0.1:{closed_port} is unreachable "
                        "(Connection refused): spans and log records sent there are dropped until it answers"]


@pytest.mark.promise(5)
def test_an_endpoint_that_comes_up_is_used_again(monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    import socket

    from agenteval_otel.tracing import destinations

    monkeypatch.setattr(destinations, "UNREACHABLE_FOR_S", 0.0)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))  # bound, not listening: connections are refused
        watch = destinations.EndpointWatch(f"http://127.0.0.1:{server.getsockname()[1]}")
        assert watch.problem() is not None
        watch.drop(3)
        server.listen()
        with caplog.at_level(logging.INFO, logger="agenteval_otel.tracing.destinations"):
            assert watch.problem() is None
        assert "answers again; 3 span(s) and log record(s) were dropped" in caplog.text and watch.dropped == 0


# --- promise 9: no attribute work on spans that are not recording ---------------------------------
class Tripwire:
    """An argument that records every attempt to serialise it."""

    touched: ClassVar[list[str]] = []

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        Tripwire.touched.append("model_dump")
        return {}

    def __repr__(self) -> str:
        Tripwire.touched.append("repr")
        return "Tripwire()"


@pytest.mark.promise(9)
@pytest.mark.parametrize("make_provider", [trace.NoOpTracerProvider, lambda: TracerProvider(sampler=ALWAYS_OFF)])
async def test_non_recording_spans_get_no_attribute_work(monkeypatch: pytest.MonkeyPatch, make_provider: Any) -> None:
    calls: list[str] = []
    for name in ("set_attribute", "set_attributes", "set_status", "record_exception"):
        monkeypatch.setattr(NonRecordingSpan, name, lambda self, *a, _n=name, **k: calls.append(_n))
    handle = configure(tracer_provider=make_provider(), set_global=False)
    Tripwire.touched = []

    @tool
    def use(value: Tripwire) -> Tripwire:
        return value

    @agent(conversation_id_arg="thread")
    async def run(value: Tripwire, thread: str) -> Tripwire:
        return use(value)

    @node("stream")
    def stream(value: Tripwire) -> Iterator[Tripwire]:
        yield value

    @tool
    def fails(value: Tripwire) -> None:
        raise Failure

    wire = Tripwire()
    assert await run(wire, "t") is wire
    assert list(stream(wire)) == [wire]
    with pytest.raises(Failure):
        fails(wire)
    with trace_step.tool("block", arguments={"value": wire}) as step:
        step.set_result(wire)
    assert Tripwire.touched == []
    assert calls == []
    handle.shutdown(timeout=1)


@pytest.mark.promise(9)
def test_suppressed_instrumentation_makes_no_spans(spans: Any) -> None:
    @tool
    def ping() -> str:
        return "pong"

    token = otel_context.attach(otel_context.set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
    try:
        assert ping() == "pong"
        with trace_step.node("quiet"):
            pass
    finally:
        otel_context.detach(token)
    assert spans.all() == []
    ping()
    assert len(spans.all()) == 1
