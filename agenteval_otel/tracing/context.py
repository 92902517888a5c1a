"""Context our steps read and carry: the conversation, the caller's tool-call id, thread pools.

Values live in the OpenTelemetry ``Context`` next to the current span, so they follow it into
asyncio tasks (each task runs in a copy of its creator's context), into generators we trace, and
into threads through :class:`ContextThreadPoolExecutor`.

>>> with conversation("thread-42"):
...     current_conversation_id()
'thread-42'
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from typing import Final, ParamSpec, TypeVar

from opentelemetry import context as otel_context

__all__ = [
    "ContextThreadPoolExecutor",
    "conversation",
    "current_conversation_id",
    "tool_call_id",
]

CONVERSATION_KEY: Final = otel_context.create_key("agenteval.conversation_id")
TOOL_CALL_KEY: Final = otel_context.create_key("agenteval.tool_call_id")
AGENT_CLAIM_KEY: Final = otel_context.create_key("agenteval.agent_claim")
"""An ``AgentClaim`` waiting for the agent step it will hold open (see ``lifecycle.AgentClaim``)."""

_P = ParamSpec("_P")
_T = TypeVar("_T")

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())


def _as_text(value: object, what: str) -> str | None:
    """``value`` as text; ``None``, with one warning, when ``str(value)`` raises."""
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except Exception as exc:  # never reach the caller
        _logger.warning("%s: a %s whose str() raises %s; ignored", what, type(value).__name__, type(exc).__name__)
        return None


@contextmanager
def _value(key: str, value: str | None) -> Iterator[None]:
    """``value`` under ``key`` in the context for the block (nothing set when ``None``)."""
    if value is None:
        yield
        return
    token = otel_context.attach(otel_context.set_value(key, value))
    try:
        yield
    finally:
        otel_context.detach(token)


def conversation(conversation_id: str) -> AbstractContextManager[None]:
    """Every step inside (agent, node, tool, chat, conditional) gets ``gen_ai.conversation.id = conversation_id``
    (a value that is not a ``str`` as ``str()`` makes it; one that cannot be made text is
    logged and ignored).

    >>> with conversation("thread-42"):
    ...     pass  # run_agent("hello")
    """
    return _value(CONVERSATION_KEY, _as_text(conversation_id, "conversation"))


def current_conversation_id() -> str | None:
    """The conversation id in effect here, if any."""
    value = otel_context.get_value(CONVERSATION_KEY)
    return value if isinstance(value, str) else None


def tool_call_id(call_id: str) -> AbstractContextManager[None]:
    """The next tool step started inside records ``gen_ai.tool.call.id = call_id``.

    Use it where the model's tool call is dispatched, so the tool function need not take the id:

    >>> with tool_call_id("call_abc"):
    ...     pass  # tools[name](**arguments)

    Steps nested inside that tool do not inherit the id. A value that cannot be made text is
    logged and ignored.
    """
    return _value(TOOL_CALL_KEY, _as_text(call_id, "tool_call_id"))


class ContextThreadPoolExecutor(ThreadPoolExecutor):
    """A ``ThreadPoolExecutor`` that runs each task in a copy of the submitter's context.

    A plain thread pool runs tasks in the worker thread's own context, so a step traced there
    starts a new trace instead of joining the caller's. This one copies the caller's context at
    ``submit`` (and so at ``map`` and ``loop.run_in_executor``), keeping the current span, the
    conversation and any other context variable:

    >>> with ContextThreadPoolExecutor(max_workers=4) as pool:
    ...     results = list(pool.map(str.upper, ["a", "b"]))  # e.g. pool.map(search_tool, queries)
    >>> results
    ['A', 'B']

    ``asyncio.to_thread`` already copies the context; use this for executors you create.
    """

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> Future[_T]:
        """Schedule ``fn(*args, **kwargs)`` to run in a copy of the current context."""
        context = contextvars.copy_context()

        def run() -> _T:
            return context.run(fn, *args, **kwargs)

        return super().submit(run)
