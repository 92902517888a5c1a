"""Traced generators: one span over the whole iteration, ended exactly once however it ends."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode

from agenteval_otel.tracing import agent, node, tool


class Boom(Exception):
    pass


def _current_span_id() -> int:
    return trace.get_current_span().get_span_context().span_id


def _only(spans: Any, name: str) -> Any:
    matching = [s for s in spans.all() if s.name == name]
    assert len(matching) == 1, [s.name for s in spans.all()]
    return matching[0]


# --- sync generators -----------------------------------------------------------------------------
@pytest.fixture
def stream() -> Any:
    log: list[str] = []

    @node("stream")
    def produce(n: int) -> Iterator[str]:
        try:
            for i in range(n):
                yield f"chunk{i} "
        finally:
            log.append("cleanup")

    produce.log = log  # type: ignore[attr-defined]
    return produce


def test_exhaustion_ends_the_span_once_with_the_joined_chunks(spans: Any) -> None:
    @agent
    def answer(q: str) -> Iterator[str]:
        yield "It is "
        yield "sunny."

    assert list(answer("weather?")) == ["It is ", "sunny."]
    span = _only(spans, "invoke_agent answer")
    assert span.end_time is not None
    assert span.attributes["agenteval.agent.output"] == "It is sunny."
    assert span.status.status_code is StatusCode.UNSET


def test_return_value_is_the_result_when_there_is_one(spans: Any) -> None:
    @tool
    def numbers() -> Generator[int, None, int]:
        yield 1
        yield 2
        return 3

    def consume() -> Any:
        return (yield from numbers())

    driver = consume()
    assert next(driver) == 1 and next(driver) == 2
    with pytest.raises(StopIteration) as stop:
        next(driver)
    assert stop.value.value == 3
    assert _only(spans, "execute_tool numbers").attributes["gen_ai.tool.call.result"] == "3"


def test_non_str_items_are_recorded_as_a_list(spans: Any) -> None:
    @tool
    def rows() -> Iterator[dict[str, int]]:
        yield {"a": 1}
        yield {"a": 2}

    list(rows())
    assert _only(spans, "execute_tool rows").attributes["gen_ai.tool.call.result"] == '[{"a":1},{"a":2}]'


def test_break_ends_the_span_when_the_generator_is_dropped(spans: Any, stream: Any) -> None:
    for chunk in stream(5):
        if chunk == "chunk1 ":
            break
    gc.collect()
    span = _only(spans, "invoke_node stream")
    assert span.end_time is not None
    assert stream.log == ["cleanup"]
    assert span.status.status_code is StatusCode.UNSET


def test_close_ends_the_span_and_closes_the_inner_generator(spans: Any, stream: Any) -> None:
    generator = stream(5)
    next(generator)
    assert spans.all() == []
    generator.close()
    generator.close()  # a second close changes nothing
    assert stream.log == ["cleanup"]
    assert len(spans.all()) == 1


def test_error_inside_ends_the_span_with_the_error(spans: Any) -> None:
    original = Boom("mid-stream")

    @node("failing")
    def failing() -> Iterator[int]:
        yield 1
        raise original

    generator = failing()
    next(generator)
    with pytest.raises(Boom) as caught:
        next(generator)
    assert caught.value is original
    span = _only(spans, "invoke_node failing")
    assert span.attributes["error.type"] == "Boom"
    assert span.status.status_code is StatusCode.ERROR


def test_throw_is_delivered_to_the_generator(spans: Any) -> None:
    @node("resilient")
    def resilient() -> Generator[str, None, None]:
        try:
            yield "first"
        except Boom:
            yield "recovered"

    generator = resilient()
    assert next(generator) == "first"
    assert generator.throw(Boom()) == "recovered"
    with pytest.raises(StopIteration):
        next(generator)
    assert _only(spans, "invoke_node resilient").status.status_code is StatusCode.UNSET


def test_send_reaches_the_generator(spans: Any) -> None:
    @node("echo")
    def echo() -> Generator[str, str, None]:
        received = yield "ready"
        yield f"got {received}"

    generator = echo()
    assert next(generator) == "ready"
    assert generator.send("ping") == "got ping"
    generator.close()
    assert len(spans.all()) == 1


def test_span_is_current_in_the_body_not_in_the_consumer(spans: Any) -> None:
    inside: list[int] = []

    @tool
    def lookup() -> None:
        inside.append(_current_span_id())

    @node("walk")
    def walk() -> Iterator[int]:
        inside.append(_current_span_id())
        lookup()
        yield 1
        inside.append(_current_span_id())

    outside: list[int] = []
    for _ in walk():
        outside.append(_current_span_id())

    node_span = _only(spans, "invoke_node walk")
    tool_span = _only(spans, "execute_tool lookup")
    assert inside == [node_span.context.span_id, tool_span.context.span_id, node_span.context.span_id]
    assert outside == [0]
    assert tool_span.parent.span_id == node_span.context.span_id


def test_generator_never_started_makes_no_span(spans: Any, stream: Any) -> None:
    generator = stream(3)
    del generator
    gc.collect()
    assert spans.all() == []


# --- async generators ----------------------------------------------------------------------------
@pytest.fixture
def astream() -> Any:
    log: list[str] = []

    @node("astream")
    async def produce(n: int) -> AsyncIterator[str]:
        try:
            for i in range(n):
                await asyncio.sleep(0)
                yield f"chunk{i} "
        finally:
            log.append("cleanup")

    produce.log = log  # type: ignore[attr-defined]
    return produce


async def test_async_exhaustion(spans: Any) -> None:
    @agent
    async def answer(q: str) -> AsyncIterator[str]:
        yield "It is "
        await asyncio.sleep(0)
        yield "sunny."

    assert [chunk async for chunk in answer("weather?")] == ["It is ", "sunny."]
    span = _only(spans, "invoke_agent answer")
    assert span.attributes["agenteval.agent.output"] == "It is sunny."
    assert span.attributes["agenteval.agent.input"] == "weather?"


async def test_async_aclose_ends_the_span(spans: Any, astream: Any) -> None:
    generator = astream(5)
    assert await generator.__anext__() == "chunk0 "
    await generator.aclose()
    await generator.aclose()
    assert astream.log == ["cleanup"]
    span = _only(spans, "invoke_node astream")
    assert span.attributes.get("agenteval.node.output") is None
    assert span.status.status_code is StatusCode.UNSET


async def test_async_break_ends_the_span_once_finalised(spans: Any, astream: Any) -> None:
    async for chunk in astream(5):
        if chunk == "chunk1 ":
            break
    gc.collect()
    for _ in range(5):  # the event loop's finaliser schedules aclose() as a task
        await asyncio.sleep(0)
    assert astream.log == ["cleanup"]
    assert len(spans.all()) == 1


async def test_async_error_inside(spans: Any) -> None:
    original = Boom("async mid-stream")

    @tool
    async def failing() -> AsyncIterator[int]:
        yield 1
        raise original

    with pytest.raises(Boom) as caught:
        async for _ in failing():
            pass
    assert caught.value is original
    span = _only(spans, "execute_tool failing")
    assert span.attributes["error.type"] == "Boom"
    assert span.status.status_code is StatusCode.ERROR


async def test_async_athrow_and_asend(spans: Any) -> None:
    @node("conversation")
    async def talk() -> AsyncGenerator[str, str | None]:
        heard = yield "hello"
        try:
            yield f"heard {heard}"
        except Boom:
            yield "recovered"

    generator = talk()
    assert await generator.asend(None) == "hello"
    assert await generator.asend("hi") == "heard hi"
    assert await generator.athrow(Boom()) == "recovered"
    with pytest.raises(StopAsyncIteration):
        await generator.__anext__()
    assert _only(spans, "invoke_node conversation").status.status_code is StatusCode.UNSET


async def test_async_cancellation_ends_the_span_with_the_error(spans: Any) -> None:
    started = asyncio.Event()

    @node("slow")
    async def slow() -> AsyncIterator[int]:
        started.set()
        await asyncio.sleep(10)
        yield 1

    async def consume() -> None:
        async for _ in slow():
            pass

    task = asyncio.create_task(consume())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    span = _only(spans, "invoke_node slow")
    assert span.attributes["error.type"] == "CancelledError"


async def test_async_span_is_current_only_in_the_body(spans: Any) -> None:
    inside: list[int] = []
    outside: list[int] = []

    @node("walk")
    async def walk() -> AsyncIterator[int]:
        inside.append(_current_span_id())
        yield 1
        await asyncio.sleep(0)
        inside.append(_current_span_id())

    async for _ in walk():
        outside.append(_current_span_id())

    span = _only(spans, "invoke_node walk")
    assert inside == [span.context.span_id] * 2
    assert outside == [0]
