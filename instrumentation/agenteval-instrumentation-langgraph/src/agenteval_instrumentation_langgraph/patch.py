"""The wrappers: LangGraph's calls as agenteval-otel steps, through the public step lifecycle.

=========================================  ==================================================
hook (``wrapt`` wrapper)                   step
=========================================  ==================================================
``Pregel.invoke`` / ``ainvoke``            ``agent``: the graph run, its thread id as the
``Pregel.stream`` / ``astream``            conversation id, the user's message, the final
                                           response (a stream's span ends exactly once)
``pregel._runner.run_with_retry`` /        ``node``: one per node run (retries inside it),
``arun_with_retry``                        its input state and the update it wrote
``BranchSpec._finish``                     ``conditional``: the routing function's value and
                                           the branch taken (a list for a fan-out)
``ToolNode._run_one`` / ``_arun_one``      ``tool``: one per tool call, with its arguments,
                                           call id and result, or its error
=========================================  ==================================================

Each wrapper is built once by a factory that captured the instrumentor's :class:`Settings`:
whether content is recorded (then as the content policy in force says), and the tracer provider
(``None``: the one our steps go to, which a live evaluation routes). The hot path checks
suppression first, starts the step, calls the user's code untouched and ends the step; content
is read only when the step records it; everything of ours runs inside a guard that logs (once
per kind of failure at WARNING, then at DEBUG) and falls back to the plain call, so the user's
return value and exceptions are exactly what they would have been.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from langgraph.errors import GraphBubbleUp
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.trace import TracerProvider

from agenteval_instrumentation_langgraph import graph_values
from agenteval_otel.tracing import StepRun, start_step

__all__ = ["HOOKS", "Settings", "ToolCallError", "Wrapper"]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())

Wrapper = Callable[[Callable[..., Any], Any, tuple[Any, ...], dict[str, Any]], Any]
_T = TypeVar("_T")

_graph_calling: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "agenteval_langgraph_graph_calling", default=None
)
"""The graph whose ``invoke``/``ainvoke`` is being traced here: the ``stream``/``astream`` call it
makes itself is part of that step, not a step of its own."""

_NO_STATE: Final = object()
_reported: set[str] = set()


@dataclass(frozen=True, slots=True)
class Settings:
    """What ``instrument()`` was given: whether node states, messages, tool arguments and results
    are recorded (the content policy in force may still turn that off), and the provider."""

    capture_content: bool = False
    tracer_provider: TracerProvider | None = None


class ToolCallError(Exception):
    """A tool call that ``ToolNode`` answered with an error message (``status="error"``): the
    tool raised and ToolNode handled it, or the model asked for a tool it does not have."""


def _report(what: str) -> None:
    level = logging.DEBUG if what in _reported else logging.WARNING
    _reported.add(what)
    _logger.log(level, "langgraph instrumentation: %s failed; the call is unaffected", what, exc_info=True)


def _guarded(what: str, function: Callable[..., _T], *args: Any) -> _T | None:
    """``function(*args)``; ``None`` when it raises (logged): our failures stay ours."""
    try:
        return function(*args)
    except Exception:
        _report(what)
        return None


def _settle(what: str, finish: Callable[..., None], run: StepRun, *args: Any) -> None:
    """``finish(run, *args)`` (end or fail the step), guarded; the step is no longer current
    afterwards even when recording its end failed (a step left current would parent the next
    graph's spans)."""
    _guarded(what, finish, run, *args)
    _guarded("leaving the step", run.deactivate)


def _argument(args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str) -> Any:
    return args[index] if len(args) > index else kwargs.get(name)


def _fail(run: StepRun, error: BaseException) -> None:
    """End ``run`` with the user's ``error``; an interrupt or a hand-off to the parent graph
    (``GraphBubbleUp``) is LangGraph's control flow, not a failure."""
    if isinstance(error, GraphBubbleUp):
        run.end()
    else:
        run.fail(error)


# --- the graph run: an agent step ------------------------------------------------------------


def _start_graph(
    settings: Settings, graph: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], activate: bool
) -> StepRun:
    config = _argument(args, kwargs, 1, "config")
    run = start_step(
        "agent",
        graph_values.graph_name(graph),
        conversation_id=_guarded("reading the thread id", graph_values.thread_id, graph, config),
        tracer_provider=settings.tracer_provider,
        capture_content=settings.capture_content,
    )
    if run.capturing:
        user_input = _guarded("reading the user input", graph_values.user_input, _argument(args, kwargs, 0, "input"))
        if user_input is not None:
            run.set_input(user_input)
    if activate:
        run.activate()
    return run


def _end_graph(run: StepRun, output: Any) -> None:
    if run.capturing and output is not _NO_STATE:
        response = _guarded("reading the final response", graph_values.final_response, output)
        if response is not None:
            run.set_result(response)
    run.end()


def _called_by_invoke(graph: object) -> bool:
    """Whether this ``stream``/``astream`` call is the one the traced ``invoke`` of ``graph`` makes."""
    if _graph_calling.get() is graph:
        _graph_calling.set(None)  # only that first call: a graph run inside a node is a step again
        return True
    return False


def graph_invoke(settings: Settings) -> Wrapper:
    """``Pregel.invoke``: the graph run as an agent step."""

    def wrapper(wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not is_instrumentation_enabled():
            return wrapped(*args, **kwargs)
        run = _guarded("starting the graph's step", _start_graph, settings, instance, args, kwargs, True)
        if run is None:
            return wrapped(*args, **kwargs)
        token = _graph_calling.set(instance)
        try:
            output = wrapped(*args, **kwargs)
        except BaseException as error:
            _settle("recording the graph's error", _fail, run, error)
            raise
        finally:
            _graph_calling.reset(token)
        _settle("recording the graph's output", _end_graph, run, output)
        return output

    return wrapper


def graph_ainvoke(settings: Settings) -> Wrapper:
    """``Pregel.ainvoke``: the graph run as an agent step."""

    async def traced(wrapped: Callable[..., Awaitable[Any]], graph: Any, args: Any, kwargs: Any) -> Any:
        # started in the awaiting task, where the graph's nodes start: a coroutine never awaited leaves no span
        run = _guarded("starting the graph's step", _start_graph, settings, graph, args, kwargs, True)
        if run is None:
            return await wrapped(*args, **kwargs)
        token = _graph_calling.set(graph)
        try:
            output = await wrapped(*args, **kwargs)
        except BaseException as error:
            _settle("recording the graph's error", _fail, run, error)
            raise
        finally:
            _graph_calling.reset(token)
        _settle("recording the graph's output", _end_graph, run, output)
        return output

    def wrapper(wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not is_instrumentation_enabled():
            return wrapped(*args, **kwargs)
        return traced(wrapped, instance, args, kwargs)

    return wrapper


class _StreamState:
    """Finds the graph's state among a stream's chunks (for the final response): the chunks of
    ``"values"`` mode, in any of the shapes ``stream`` gives them (with other modes, subgraphs or
    ``version="v2"``)."""

    __slots__ = ("last", "multi", "subgraphs", "values")

    def __init__(self, graph: Any, kwargs: Mapping[str, Any]) -> None:
        mode: Any = kwargs.get("stream_mode") or getattr(graph, "stream_mode", "values")
        self.multi = not isinstance(mode, str)
        self.values = mode == "values" if not self.multi else "values" in mode
        self.subgraphs = bool(kwargs.get("subgraphs"))
        self.last: Any = _NO_STATE

    def see(self, chunk: Any) -> None:
        if not self.values:
            return
        if isinstance(chunk, Mapping) and chunk.get("type") == "values" and "data" in chunk:  # version="v2"
            if not chunk.get("ns"):
                self.last = chunk["data"]
            return
        if self.subgraphs:
            if not isinstance(chunk, tuple) or not chunk or chunk[0]:
                return  # a subgraph's chunk
            chunk = chunk[1:] if self.multi else chunk[1]
        if self.multi:
            if isinstance(chunk, tuple) and len(chunk) == 2 and chunk[0] == "values":
                self.last = chunk[1]
            return
        self.last = chunk


def _start_stream(
    settings: Settings, graph: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[StepRun, _StreamState]:
    return _start_graph(settings, graph, args, kwargs, False), _StreamState(graph, kwargs)


def graph_stream(settings: Settings) -> Wrapper:
    """``Pregel.stream``: the graph run as an agent step, from the first chunk asked for until the
    stream ends (exhausted, failed, closed or abandoned: the span ends exactly once)."""

    def traced(wrapped: Callable[..., Iterator[Any]], graph: Any, args: Any, kwargs: Any) -> Iterator[Any]:
        started = _guarded("starting the graph's step", _start_stream, settings, graph, args, kwargs)
        if started is None:
            yield from wrapped(*args, **kwargs)
            return
        run, state = started
        try:
            iterator = iter(wrapped(*args, **kwargs))
            while True:
                _guarded("activating the step", run.activate)
                try:
                    chunk = next(iterator)
                except StopIteration:
                    break
                finally:
                    run.deactivate()
                if run.capturing:
                    _guarded("reading a chunk", state.see, chunk)
                yield chunk
        except GeneratorExit:  # closed or abandoned by the caller: close the graph's stream too
            try:
                iterator.close()  # type: ignore[attr-defined]
            finally:
                _guarded("ending the graph's step", run.end)
            raise
        except BaseException as error:
            _settle("recording the graph's error", _fail, run, error)
            raise
        _settle("recording the graph's output", _end_graph, run, state.last)

    def wrapper(wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not is_instrumentation_enabled() or _called_by_invoke(instance):
            return wrapped(*args, **kwargs)
        return traced(wrapped, instance, args, kwargs)

    return wrapper


def graph_astream(settings: Settings) -> Wrapper:
    """``Pregel.astream``: the graph run as an agent step, from the first chunk asked for until the
    stream ends (exhausted, failed, closed or abandoned: the span ends exactly once)."""

    async def traced(
        wrapped: Callable[..., AsyncIterator[Any]], graph: Any, args: Any, kwargs: Any
    ) -> AsyncIterator[Any]:
        started = _guarded("starting the graph's step", _start_stream, settings, graph, args, kwargs)
        if started is None:
            async for chunk in wrapped(*args, **kwargs):
                yield chunk
            return
        run, state = started
        try:
            iterator = aiter(wrapped(*args, **kwargs))
            while True:
                _guarded("activating the step", run.activate)
                try:
                    chunk = await anext(iterator)
                except StopAsyncIteration:
                    break
                finally:
                    run.deactivate()
                if run.capturing:
                    _guarded("reading a chunk", state.see, chunk)
                yield chunk
        except GeneratorExit:
            try:
                await iterator.aclose()  # type: ignore[attr-defined]
            finally:
                _guarded("ending the graph's step", run.end)
            raise
        except BaseException as error:
            _settle("recording the graph's error", _fail, run, error)
            raise
        _settle("recording the graph's output", _end_graph, run, state.last)

    def wrapper(wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not is_instrumentation_enabled() or _called_by_invoke(instance):
            return wrapped(*args, **kwargs)
        return traced(wrapped, instance, args, kwargs)

    return wrapper


# --- a node run: a node step -----------------------------------------------------------------


def _start_node(settings: Settings, task: Any) -> StepRun | None:
    if graph_values.is_hidden(task):
        return None
    run = start_step(
        "node", str(task.name), tracer_provider=settings.tracer_provider, capture_content=settings.capture_content
    )
    if run.capturing:
        _guarded("recording the node's input", run.set_input, task.input)
    return run


def _end_node(run: StepRun, task: Any) -> None:
    if run.capturing:
        run.set_result(_guarded("reading the node's output", graph_values.node_output, task.writes))
    run.end()


def node_run(settings: Settings) -> Wrapper:
    """``run_with_retry(task, ...)``: each node run (with its retries) as a node step."""

    def wrapper(wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not is_instrumentation_enabled():
            return wrapped(*args, **kwargs)
        task = _argument(args, kwargs, 0, "task")
        run = _guarded("starting the node's step", _start_node, settings, task)
        if run is None:
            return wrapped(*args, **kwargs)
        _guarded("activating the step", run.activate)
        try:
            result = wrapped(*args, **kwargs)
        except BaseException as error:
            _settle("recording the node's error", _fail, run, error)
            raise
        _settle("recording the node's output", _end_node, run, task)
        return result

    return wrapper


def node_arun(settings: Settings) -> Wrapper:
    """``arun_with_retry(task, ...)``: each async node run (with its retries) as a node step."""

    async def traced(wrapped: Callable[..., Awaitable[Any]], args: Any, kwargs: Any) -> Any:
        task = _argument(args, kwargs, 0, "task")
        run = _guarded("starting the node's step", _start_node, settings, task)
        if run is None:
            return await wrapped(*args, **kwargs)
        _guarded("activating the step", run.activate)
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as error:
            _settle("recording the node's error", _fail, run, error)
            raise
        _settle("recording the node's output", _end_node, run, task)
        return result

    def wrapper(wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not is_instrumentation_enabled():
            return wrapped(*args, **kwargs)
        return traced(wrapped, args, kwargs)

    return wrapper


# --- a conditional edge: a conditional step --------------------------------------------------


def _start_branch(settings: Settings, branch: Any, result: Any) -> StepRun:
    value, branches = graph_values.branch_taken(result, getattr(branch, "ends", None))
    run = start_step(
        "conditional",
        graph_values.branch_name(branch),
        branches=branches,
        tracer_provider=settings.tracer_provider,
        capture_content=settings.capture_content,
    )
    run.set_result(value)
    return run


def branch_finish(settings: Settings) -> Wrapper:
    """``BranchSpec._finish(writer, input, result, config)``: where the routing function's result
    becomes the branch taken."""

    def wrapper(wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not is_instrumentation_enabled():
            return wrapped(*args, **kwargs)
        run = _guarded("starting the conditional's step", _start_branch, settings, instance,
                       _argument(args, kwargs, 2, "result"))
        if run is None:
            return wrapped(*args, **kwargs)
        try:
            routed = wrapped(*args, **kwargs)
        except BaseException as error:
            _settle("recording the conditional's error", _fail, run, error)
            raise
        _guarded("ending the conditional's step", run.end)
        return routed

    return wrapper


# --- a tool call of ToolNode: a tool step ----------------------------------------------------


def _start_tool(settings: Settings, call: Any) -> StepRun:
    arguments = call.get("args")
    call_id = call.get("id")
    run = start_step(
        "tool",
        str(call.get("name")),
        arguments=arguments if isinstance(arguments, Mapping) else None,
        call_id=None if call_id is None else str(call_id),
        tracer_provider=settings.tracer_provider,
        capture_content=settings.capture_content,
    )
    run.activate()
    return run


def _end_tool(run: StepRun, output: Any) -> None:
    error = _guarded("reading the tool's error", graph_values.tool_error, output)
    if error is not None:
        run.fail(ToolCallError(error))
        return
    if run.capturing:
        run.set_result(_guarded("reading the tool's result", graph_values.tool_result, output))
    run.end()


def tool_run(settings: Settings) -> Wrapper:
    """``ToolNode._run_one(call, ...)``: each tool call as a tool step."""

    def wrapper(wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not is_instrumentation_enabled():
            return wrapped(*args, **kwargs)
        run = _guarded("starting the tool's step", _start_tool, settings, _argument(args, kwargs, 0, "call"))
        if run is None:
            return wrapped(*args, **kwargs)
        try:
            output = wrapped(*args, **kwargs)
        except BaseException as error:
            _settle("recording the tool's error", _fail, run, error)
            raise
        _settle("recording the tool's result", _end_tool, run, output)
        return output

    return wrapper


def tool_arun(settings: Settings) -> Wrapper:
    """``ToolNode._arun_one(call, ...)``: each async tool call as a tool step."""

    async def traced(wrapped: Callable[..., Awaitable[Any]], args: Any, kwargs: Any) -> Any:
        run = _guarded("starting the tool's step", _start_tool, settings, _argument(args, kwargs, 0, "call"))
        if run is None:
            return await wrapped(*args, **kwargs)
        try:
            output = await wrapped(*args, **kwargs)
        except BaseException as error:
            _settle("recording the tool's error", _fail, run, error)
            raise
        _settle("recording the tool's result", _end_tool, run, output)
        return output

    def wrapper(wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if not is_instrumentation_enabled():
            return wrapped(*args, **kwargs)
        return traced(wrapped, args, kwargs)

    return wrapper


HOOKS: Final[tuple[tuple[str, str, Callable[[Settings], Wrapper]], ...]] = (
    ("langgraph.pregel.main", "Pregel.invoke", graph_invoke),
    ("langgraph.pregel.main", "Pregel.ainvoke", graph_ainvoke),
    ("langgraph.pregel.main", "Pregel.stream", graph_stream),
    ("langgraph.pregel.main", "Pregel.astream", graph_astream),
    ("langgraph.pregel._runner", "run_with_retry", node_run),
    ("langgraph.pregel._runner", "arun_with_retry", node_arun),
    ("langgraph.graph._branch", "BranchSpec._finish", branch_finish),
    ("langgraph.prebuilt.tool_node", "ToolNode._run_one", tool_run),
    ("langgraph.prebuilt.tool_node", "ToolNode._arun_one", tool_arun),
)
"""``(module, attribute, wrapper factory)`` for each function the instrumentor wraps."""
