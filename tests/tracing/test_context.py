"""Context across concurrency (promise 11): asyncio tasks, thread pools, conversations."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from agenteval_otel.tracing import (
    ContextThreadPoolExecutor,
    agent,
    conversation,
    current_conversation_id,
    message,
    node,
    tool,
    tool_call_id,
)


def _trajectories(spans: Any) -> dict[int, list[Any]]:
    by_trace: dict[int, list[Any]] = defaultdict(list)
    for span in spans.all():
        by_trace[span.context.trace_id].append(span)
    return by_trace


@pytest.mark.promise(11)
async def test_a_thousand_concurrent_asyncio_runs_never_mix(spans: Any) -> None:
    @tool
    async def fetch(run_id: int, part: int) -> str:
        await asyncio.sleep(0)
        return f"{run_id}-{part}"

    @node("work")
    async def work(run_id: int) -> list[str]:
        first = await fetch(run_id, 1)
        await asyncio.sleep(0)
        return [first, await fetch(run_id, 2)]

    @message
    async def reply(run_id: int) -> str:
        await asyncio.sleep(0)
        return f"answer {run_id}"

    @agent(conversation_id_arg="thread")
    async def run(run_id: int, thread: str) -> str:
        await work(run_id)
        return await reply(run_id)

    results = await asyncio.gather(*(run(i, f"t{i}") for i in range(1000)))

    assert results == [f"answer {i}" for i in range(1000)]
    trajectories = _trajectories(spans)
    assert len(trajectories) == 1000
    for trajectory in trajectories.values():
        root = next(s for s in trajectory if s.parent is None)
        run_id = int(root.attributes["agenteval.agent.input"])  # the conversation argument is not input
        by_id = {s.context.span_id: s for s in trajectory}
        work_span = next(s for s in trajectory if s.name == "invoke_node work")
        tools = [s for s in trajectory if s.name == "execute_tool fetch"]
        chat = next(s for s in trajectory if s.name == "chat")
        assert len(trajectory) == 5
        assert work_span.parent.span_id == root.context.span_id
        assert chat.parent.span_id == root.context.span_id
        assert chat.attributes["gen_ai.conversation.id"] == root.attributes["gen_ai.conversation.id"] == f"t{run_id}"
        assert all(by_id[t.parent.span_id] is work_span for t in tools)
        assert sorted(json.loads(t.attributes["gen_ai.tool.call.arguments"])["run_id"] for t in tools) == [
            run_id,
            run_id,
        ]


def _threaded_run(spans: Any, pool_type: type[ThreadPoolExecutor]) -> tuple[Any, list[Any]]:
    @tool
    def fetch(page: int) -> int:
        return page

    @agent
    def crawl(pages: int) -> list[int]:
        with pool_type(max_workers=4) as pool:
            return list(pool.map(fetch, range(pages)))

    assert crawl(8) == list(range(8))
    root = next(s for s in spans.all() if s.name == "invoke_agent crawl")
    return root, [s for s in spans.all() if s.name == "execute_tool fetch"]


@pytest.mark.promise(11)
def test_context_thread_pool_carries_the_span_into_workers(spans: Any) -> None:
    root, tools = _threaded_run(spans, ContextThreadPoolExecutor)
    assert len(tools) == 8
    assert all(t.parent is not None and t.parent.span_id == root.context.span_id for t in tools)
    assert {t.context.trace_id for t in tools} == {root.context.trace_id}


def test_a_plain_thread_pool_loses_the_parent(spans: Any) -> None:
    """The control for the test above: without the helper the tools start traces of their own."""
    _, tools = _threaded_run(spans, ThreadPoolExecutor)
    assert all(t.parent is None for t in tools)


@pytest.mark.promise(11)
def test_concurrent_runs_in_threads_never_mix(spans: Any) -> None:
    @tool
    def step(run_id: int) -> int:
        return run_id

    @agent
    def run(run_id: int) -> int:
        for _ in range(3):
            step(run_id)
        return run_id

    barrier = threading.Barrier(8)

    def start(run_id: int) -> int:
        barrier.wait()
        return run(run_id)

    with ContextThreadPoolExecutor(max_workers=8) as pool:
        assert sorted(pool.map(start, range(8))) == list(range(8))

    for trajectory in _trajectories(spans).values():
        root = next(s for s in trajectory if s.parent is None)
        run_id = int(root.attributes["agenteval.agent.input"])
        tools = [s for s in trajectory if s.parent is not None]
        assert len(tools) == 3
        assert {t.attributes["gen_ai.tool.call.result"] for t in tools} == {str(run_id)}


@pytest.mark.promise(11)
async def test_to_thread_and_run_in_executor_keep_the_context(spans: Any) -> None:
    @tool
    def blocking(i: int) -> int:
        return i

    @agent
    async def run() -> None:
        await asyncio.to_thread(blocking, 1)
        loop = asyncio.get_running_loop()
        with ContextThreadPoolExecutor(max_workers=1) as pool:
            await loop.run_in_executor(pool, blocking, 2)

    await run()
    root = next(s for s in spans.all() if s.name == "invoke_agent run")
    tools = [s for s in spans.all() if s.name == "execute_tool blocking"]
    assert len(tools) == 2 and all(t.parent.span_id == root.context.span_id for t in tools)


def test_conversation_context_nests_and_restores() -> None:
    assert current_conversation_id() is None
    with conversation("outer"):
        assert current_conversation_id() == "outer"
        with conversation("inner"):
            assert current_conversation_id() == "inner"
        assert current_conversation_id() == "outer"
    assert current_conversation_id() is None


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")


@pytest.mark.promise(1)
@pytest.mark.parametrize("block", [conversation, tool_call_id])
def test_an_id_that_cannot_be_made_text_is_logged_and_ignored(
        block: Any, spans: Any, caplog: pytest.LogCaptureFixture) -> None:
    @tool
    def lookup(city: str) -> str:
        return f"sunny in {city}"

    with caplog.at_level(logging.WARNING, logger="agenteval_otel"):
        with block(Unprintable()):
            assert lookup("Paris") == "sunny in Paris"
            assert current_conversation_id() is None
    assert [r.getMessage() for r in caplog.records] == [
        f"{block.__name__}: a Unprintable whose str() raises RuntimeError; ignored"]
    (span,) = spans.all()
    assert "gen_ai.conversation.id" not in span.attributes
    assert span.attributes["gen_ai.tool.call.id"].startswith("call_")  # generated, as without a block


def test_agent_conversation_argument_is_visible_to_its_steps(spans: Any) -> None:
    seen: list[str | None] = []

    @tool
    def remember() -> None:
        seen.append(current_conversation_id())

    @agent(conversation_id_arg="thread_id")
    def run(thread_id: str) -> None:
        remember()

    run("thread-3")
    assert seen == ["thread-3"]
    assert current_conversation_id() is None
