"""How an agent under evaluation is called: one turn at a time, in one conversation per case.

An agent is a sync or async callable, or an object with ``arun`` (async) or ``run`` (sync). It
receives the user's message as its first argument, and whichever of these it names as
parameters (or all of them, if it takes ``**kwargs``):

=================================  ===========================================================
``thread_id`` / ``conversation_id`` the case's conversation id (``session_input.thread_id``, or
/ ``session_id``                    a generated id), the same for every turn of a case
``history`` / ``messages``          the earlier turns as ``[{"role": ..., "content": ...}]``
``state`` / ``initial_state``       ``session_input.initial_state``
``config``                          ``session_input.config``
``turn``                            the whole :class:`AgentTurn`
=================================  ===========================================================

It returns the reply: a string, a :class:`MessageContent`, a dict with one of ``response``,
``output``, ``content``, ``text`` or ``answer``, or anything else (turned into JSON text).

>>> async def my_agent(query: str, thread_id: str, history: list[dict]) -> str:
...     return "It is sunny."
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, Union

from agenteval_otel.errors import ConfigError
from agenteval_otel.evalsets import MessageContent, SessionInput
from agenteval_otel.evaluation._sync import in_daemon_thread
from agenteval_otel.loading import load_object

__all__ = ["Agent", "AgentCaller", "AgentTurn", "AgentWithArun", "AgentWithRun", "abandoned_agent_threads",
           "agent_thread_cpu", "entry_point", "is_async_callable", "load_agent", "reply_text"]

_abandoned: contextvars.ContextVar[list[threading.Thread] | None] = contextvars.ContextVar(
    "agenteval_abandoned_agent_threads", default=None)
_thread_cpu: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar(
    "agenteval_agent_thread_cpu", default=None)

_NAMES = {
    "thread_id": "thread_id", "conversation_id": "thread_id", "session_id": "thread_id",
    "history": "history", "messages": "history",
    "state": "state", "initial_state": "state",
    "config": "config",
    "turn": "turn",
}
_REPLY_KEYS = ("response", "output", "content", "text", "answer")


class AgentWithRun(Protocol):
    """An agent object called through its sync ``run`` method (the user's message first)."""

    @property
    def run(self) -> Callable[..., object]:
        """Takes the user's message (and the parameters it names, see the module docstring),
        returns the reply."""
        ...


class AgentWithArun(Protocol):
    """An agent object called through its async ``arun`` method (the user's message first)."""

    @property
    def arun(self) -> Callable[..., Awaitable[object]]:
        """Takes the user's message (and the parameters it names, see the module docstring),
        returns an awaitable of the reply."""
        ...


Agent = Union[Callable[..., object], AgentWithRun, AgentWithArun]
"""An agent under evaluation: a sync or async callable, or an object with ``arun`` (async) or
``run`` (sync), taking the user's message first (see the module docstring)."""


@dataclass(frozen=True)
class AgentTurn:
    """One turn of a conversation, as handed to the agent."""

    user_input: str
    thread_id: str
    history: list[dict[str, Any]] = field(default_factory=list)
    session: SessionInput | None = None
    eval_id: str = ""
    turn_index: int = 0

    def argument(self, kind: str) -> Any:
        """The value for a parameter of the given kind (see the module docstring)."""
        if kind == "thread_id":
            return self.thread_id
        if kind == "history":
            return [dict(m) for m in self.history]
        if kind == "state":
            return dict(self.session.initial_state) if self.session else {}
        if kind == "config":
            return dict(self.session.config) if self.session else {}
        return self


def reply_text(reply: Any) -> str | None:
    """The text of an agent's reply."""
    if reply is None or isinstance(reply, str):
        return reply
    if isinstance(reply, MessageContent):
        return reply.get_text()
    if isinstance(reply, dict):
        for key in _REPLY_KEYS:
            if isinstance(reply.get(key), str):
                return str(reply[key])
    try:
        return json.dumps(reply, ensure_ascii=False, default=str)
    except Exception:  # not JSON, and its __str__ failed too
        pass
    try:
        return repr(reply)
    except Exception:
        return f"<{type(reply).__name__} that could not be printed>"


def entry_point(agent: Agent) -> Callable[..., Any]:
    """What calling ``agent`` means: its ``arun`` or ``run`` method, or the agent itself."""
    for name in ("arun", "run"):
        method: object = getattr(agent, name, None)
        if callable(method) and not inspect.isclass(agent):
            return method
    if callable(agent):
        return agent
    raise ConfigError(
        f"the agent {agent!r} is not callable and has no 'run' or 'arun' method; expected a "
        "function, a coroutine function, or an object with run/arun"
    )


def is_async_callable(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` gives a coroutine: a coroutine function, or an object whose
    ``__call__`` is one."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


class AgentCaller:
    """Calls an agent for one turn, passing what its signature asks for.

    Sync agents run in a daemon thread of their own with the caller's context (so their spans
    nest under the turn's span), abandoned if the turn is cancelled while they still run; async
    agents run on the event loop.
    """

    def __init__(self, agent: Agent) -> None:
        self._fn = entry_point(agent)
        self.name = getattr(agent, "name", None) or getattr(
            self._fn, "__qualname__", type(agent).__name__)
        parameters: Mapping[str, inspect.Parameter]
        try:
            parameters = inspect.signature(self._fn).parameters
        except (TypeError, ValueError):
            parameters = {}
        self._takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
        positional = [p for p in parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        first = positional[0].name if positional else None
        self._keywords = {name: kind for name, kind in _NAMES.items()
                          if name in parameters and name != first}
        if self._takes_kwargs:
            self._keywords = {"thread_id": "thread_id", "history": "history", **self._keywords}
        self._is_async = is_async_callable(self._fn)

    @property
    def entry_point(self) -> Callable[..., Any]:
        """What a turn calls: the agent's ``arun`` or ``run`` method, or the agent itself."""
        return self._fn

    async def __call__(self, turn: AgentTurn) -> Any:
        kwargs = {name: turn.argument(kind) for name, kind in self._keywords.items()}
        if self._is_async:
            return await self._fn(turn.user_input, **kwargs)
        call = functools.partial(self._fn, turn.user_input, **kwargs)
        reply = await _in_daemon_thread(call, f"agenteval agent {turn.eval_id} turn {turn.turn_index}")
        if inspect.isawaitable(reply):
            reply = await reply
        return reply


@contextmanager
def abandoned_agent_threads() -> Iterator[list[threading.Thread]]:
    """The threads of sync agent calls given up on while still running (e.g. past a timeout),
    as they are abandoned inside this block (and the tasks it starts)."""
    abandoned: list[threading.Thread] = []
    token = _abandoned.set(abandoned)
    try:
        yield abandoned
    finally:
        _abandoned.reset(token)


@contextmanager
def agent_thread_cpu() -> Iterator[list[float]]:
    """The CPU seconds (``time.thread_time``) each sync agent call made inside this block (and
    the tasks it starts) spent in its own thread, appended as each call ends, raised or not."""
    spent: list[float] = []
    token = _thread_cpu.set(spent)
    try:
        yield spent
    finally:
        _thread_cpu.reset(token)


async def _in_daemon_thread(call: Callable[[], Any], name: str) -> Any:
    """``call()`` in a daemon thread (:func:`~agenteval_otel.evaluation._sync.in_daemon_thread`),
    its CPU time counted for :func:`agent_thread_cpu` and its thread, if given up on, listed for
    :func:`abandoned_agent_threads`."""

    def timed() -> Any:
        cpu_started = time.thread_time()
        try:
            return call()
        finally:
            spent = _thread_cpu.get()
            if spent is not None:
                spent.append(time.thread_time() - cpu_started)

    return await in_daemon_thread(timed, name, abandoned=_abandoned.get())


def load_agent(spec: str) -> Any:
    """The object named by ``"module:attr"`` or ``"path/to/file.py:attr"``."""
    return load_object(spec, f"--agent {spec!r}", prefix="agenteval_agent_")
