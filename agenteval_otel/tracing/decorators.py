"""``@agent``, ``@node``, ``@tool``, ``@message``, ``@conditional``: each call becomes a span.

Each decorator works bare or with options, on functions, methods, ``async def``, generators and
async generators::

    @tool
    def get_weather(city: str) -> dict: ...

    @agent(name="weather-agent", conversation_id_arg="thread_id")
    async def run(query: str, thread_id: str) -> str: ...

Spans follow the OpenTelemetry GenAI semantic conventions and always carry
``agenteval.step.type``. The span is current while the function runs, so steps it calls become
its children. A generator's span covers the whole iteration: it starts at the first ``next()``
(or ``anext()``), is current while the generator body runs (not while the consumer runs), and
ends exactly once: on exhaustion, on ``close()``/``aclose()`` (which a ``break`` leads to once
the generator is dropped), or on error. When a generator returns nothing, what it yielded is its
result (str chunks joined). Calling a generator with arguments its signature rejects raises at
the first ``next()``, as for any generator wrapper.

Our code never raises into the decorated function and never changes its return value or its
exception: the same exception object propagates, and the span records ``error.type``, ERROR status
and an exception event. Failures of ours are logged (``agenteval_otel.tracing`` loggers).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar, overload

from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY

from agenteval_otel import semconv as attr
from agenteval_otel.tracing import _steps
from agenteval_otel.tracing import content as _content
from agenteval_otel.tracing import providers as _providers
from agenteval_otel.tracing._binding import ArgumentBinder
from agenteval_otel.tracing._runtime import attach as _attach
from agenteval_otel.tracing._runtime import detach as _detach
from agenteval_otel.tracing._runtime import detach_failed as _detach_failed
from agenteval_otel.tracing._runtime import get_current as _get_current
from agenteval_otel.tracing._runtime import reset as _reset
from agenteval_otel.tracing._runtime import with_span
from agenteval_otel.tracing._steps import (
    FRESH_SPANS_RECORD,
    AgentStep,
    ConditionalStep,
    MessageStep,
    NodeStep,
    Step,
    ToolStep,
)
from agenteval_otel.tracing.content import active_policy
from agenteval_otel.tracing.context import CONVERSATION_KEY
from agenteval_otel.tracing.lifecycle import StepRun

__all__ = ["agent", "conditional", "message", "node", "step_kind_of", "tool"]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())

F = TypeVar("F", bound=Callable[..., Any])

_MAX_COLLECTED: Final = 10_000
_KIND_MARK: Final = "__agenteval_step_kind__"


# --- wrappers, one per function shape ------------------------------------------------------------
# The sync and async wrappers are the hot path. They inline ``Step.begin`` (a Python call costs
# more than most of what it does): start the span, and only when it records gather the step's
# attributes; then one ``Step.end`` (or ``fail``). Everything that does not depend on the call
# (the step's span name, attributes and bound methods) is looked up once, when the function is
# decorated; the tracer and the content policy are read from state cached in their modules. The
# async wrapper is the one coroutine that awaits the function's own. Generators, resumed many
# times, run as a ``StepRun``. Nothing of ours raises into the call: a failure before the span
# started runs the function untraced, one after it is logged by the step.
def _sync(fn: Callable[..., Any], step: Step) -> Callable[..., Any]:
    name, kind, attributes, open_step, end, fail, report = (
        step.span_name, step.span_kind, step.attributes, step.open, step.end, step.fail, step.report
    )

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        parent = _get_current()
        try:
            if parent.get(_SUPPRESS_INSTRUMENTATION_KEY):
                span = None
            else:
                routed = _providers._routed
                cached_provider, tracer = _providers._cache
                if routed is None or routed is not cached_provider or tracer is None:
                    tracer = _steps.current_tracer()  # the lookup ``Step.begin`` makes
                span = tracer.start_span(name, parent, kind)
                recording = type(span) in FRESH_SPANS_RECORD or span.is_recording()
        except Exception:
            report("starting the span")
            span = None
        if span is None:
            return fn(*args, **kwargs)
        pending = None
        context = parent
        if recording:
            pending = attributes.copy()
            conversation: Any = parent.get(CONVERSATION_KEY)  # what ``Step.begin`` adds, inline
            if conversation is not None:
                pending[attr.GEN_AI_CONVERSATION_ID] = conversation
            try:
                context = open_step(span, parent, pending, _content._active, args, kwargs)
            except Exception:
                report("recording the inputs")
        token = _attach(with_span(span, context))
        try:
            result = fn(*args, **kwargs)
        except BaseException as error:
            _detach(token)
            fail(span, pending, error)
            raise
        try:  # ``_detach``, inline
            _reset(token)
        except Exception:
            _detach_failed()
        end(span, pending, result)
        return result

    return wrapper


def _async(fn: Callable[..., Any], step: Step) -> Callable[..., Any]:
    name, kind, attributes, open_step, end, fail, report = (
        step.span_name, step.span_kind, step.attributes, step.open, step.end, step.fail, step.report
    )

    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        parent = _get_current()
        try:
            if parent.get(_SUPPRESS_INSTRUMENTATION_KEY):
                span = None
            else:
                routed = _providers._routed
                cached_provider, tracer = _providers._cache
                if routed is None or routed is not cached_provider or tracer is None:
                    tracer = _steps.current_tracer()  # the lookup ``Step.begin`` makes
                span = tracer.start_span(name, parent, kind)
                recording = type(span) in FRESH_SPANS_RECORD or span.is_recording()
        except Exception:
            report("starting the span")
            span = None
        if span is None:
            return await fn(*args, **kwargs)
        pending = None
        context = parent
        if recording:
            pending = attributes.copy()
            conversation: Any = parent.get(CONVERSATION_KEY)  # what ``Step.begin`` adds, inline
            if conversation is not None:
                pending[attr.GEN_AI_CONVERSATION_ID] = conversation
            try:
                context = open_step(span, parent, pending, _content._active, args, kwargs)
            except Exception:
                report("recording the inputs")
        token = _attach(with_span(span, context))
        try:
            result = await fn(*args, **kwargs)
        except BaseException as error:
            _detach(token)
            fail(span, pending, error)
            raise
        try:  # ``_detach``, inline
            _reset(token)
        except Exception:
            _detach_failed()
        end(span, pending, result)
        return result

    return wrapper


def _collector(run: StepRun) -> list[Any] | None:
    """Where a traced generator keeps what it yields (its result when it returns nothing); ``None``: nowhere."""
    return [] if run.recording and active_policy().capture else None


def _generator_result(value: Any, yielded: list[Any] | None) -> Any:
    """A generator's result: its return value, else what it yielded (str chunks joined)."""
    if value is None and yielded:
        return "".join(yielded) if all(type(item) is str for item in yielded) else yielded
    return value


def _generator(fn: Callable[..., Any], step: Step) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        run = StepRun()
        if not run._start(step, args, kwargs, _get_current()):
            return (yield from fn(*args, **kwargs))
        try:
            generator = fn(*args, **kwargs)
        except BaseException as error:
            run.fail(error)
            raise
        yielded = _collector(run)
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            run.activate()
            try:
                item = generator.send(sent) if thrown is None else generator.throw(thrown)
            except StopIteration as stop:
                run.set_result(_generator_result(stop.value, yielded))
                run.end()
                return stop.value
            except BaseException as error:
                run.fail(error)
                raise
            run.deactivate()
            if yielded is not None and len(yielded) < _MAX_COLLECTED:
                yielded.append(item)
            try:
                sent = yield item
            except GeneratorExit:
                run.activate()
                try:
                    generator.close()
                except BaseException as error:
                    run.fail(error)
                    raise
                run.set_result(_generator_result(None, yielded))
                run.end()
                raise
            except BaseException as error:
                thrown = error
            else:
                thrown = None

    return wrapper


def _async_generator(fn: Callable[..., Any], step: Step) -> Callable[..., Any]:
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        run = StepRun()  # stays inert (every call a no-op) when no span was started
        run._start(step, args, kwargs, _get_current())
        try:
            generator = fn(*args, **kwargs)
        except BaseException as error:
            run.fail(error)
            raise
        yielded = _collector(run)
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            run.activate()
            try:
                item = await (generator.asend(sent) if thrown is None else generator.athrow(thrown))
            except StopAsyncIteration:
                run.set_result(_generator_result(None, yielded))
                run.end()
                return
            except BaseException as error:
                run.fail(error)
                raise
            run.deactivate()
            if yielded is not None and len(yielded) < _MAX_COLLECTED:
                yielded.append(item)
            try:
                sent = yield item
            except GeneratorExit:
                run.activate()
                try:
                    await generator.aclose()
                except BaseException as error:
                    run.fail(error)
                    raise
                run.set_result(_generator_result(None, yielded))
                run.end()
                raise
            except BaseException as error:
                thrown = error
            else:
                thrown = None

    return wrapper


def _wrap(fn: Any, build: Callable[[Callable[..., Any]], Step]) -> Any:
    """``fn`` traced by the step ``build(fn)`` makes; ``fn`` itself if that fails (logged)."""
    if isinstance(fn, (staticmethod, classmethod)):
        return type(fn)(_wrap(fn.__func__, build))
    if not callable(fn):
        _logger.warning("cannot trace %r: not callable; left as it is", fn)
        return fn
    try:
        step = build(fn)
        if inspect.isasyncgenfunction(fn):
            wrapper = _async_generator(fn, step)
        elif inspect.iscoroutinefunction(fn):
            wrapper = _async(fn, step)
        elif inspect.isgeneratorfunction(fn):
            wrapper = _generator(fn, step)
        else:
            wrapper = _sync(fn, step)
        functools.update_wrapper(wrapper, fn)
        setattr(wrapper, _KIND_MARK, step.step_type)
        return wrapper
    except Exception:
        _logger.warning("cannot trace %r; left untraced", fn, exc_info=True)
        return fn


def step_kind_of(fn: object) -> str | None:
    """The kind of step (``agenteval.step.type``) calling ``fn`` records when one of our decorators
    traced it (a method of a class, bound or not, too); ``None`` otherwise.

    >>> @agent
    ... def answer(question: str) -> str:
    ...     return "Paris"
    >>> step_kind_of(answer), step_kind_of(len)
    ('agent', None)
    """
    try:
        kind = getattr(fn, _KIND_MARK, None)
    except Exception:  # an object whose attribute lookup raises is not ours
        return None
    return kind if isinstance(kind, str) else None


# --- option checks -------------------------------------------------------------------------------
def _name(name: object, fn: Callable[..., Any]) -> str:
    if isinstance(name, str) and name:
        return name
    fallback = getattr(fn, "__name__", None) or type(fn).__name__
    if name is not None:
        _logger.warning("step name %r is not a non-empty str; using %r", name, fallback)
    return fallback


def _text(value: object, option: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    _logger.warning("%s=%r is not a str; ignored", option, value)
    return None


def _parameter(binder: ArgumentBinder, value: object, option: str, fn: Callable[..., Any]) -> str | None:
    name = _text(value, option)
    if name is not None and not binder.accepts(name):
        _logger.warning("%s=%r: %r has no such parameter; ignored", option, name, fn)
        return None
    return name


def _decorator(fn: Any, build: Callable[[Callable[..., Any]], Step]) -> Any:
    return (lambda f: _wrap(f, build)) if fn is None else _wrap(fn, build)


# --- the decorators ------------------------------------------------------------------------------
@overload
def agent(fn: F, /) -> F: ...
@overload
def agent(
    fn: str | None = None,
    /,
    *,
    name: str | None = None,
    conversation_id_arg: str | None = None,
    input_arg: str | None = None,
    description: str | None = None,
) -> Callable[[F], F]: ...
def agent(
    fn: Any = None,
    /,
    *,
    name: str | None = None,
    conversation_id_arg: str | None = None,
    input_arg: str | None = None,
    description: str | None = None,
) -> Any:
    """Trace an agent invocation as ``invoke_agent {name}``.

    Records the user input (``input_arg``, else the only argument, else all arguments by name; a
    str stays a str, anything else is JSON), the final response (the return value, same rule), and
    ``gen_ai.conversation.id`` from the ``conversation_id_arg`` argument or from an enclosing
    ``conversation(id)``. Text input/output also go to ``gen_ai.input.messages`` /
    ``gen_ai.output.messages``. Steps inside see the conversation id.

    >>> @agent(name="support", conversation_id_arg="thread_id")
    ... def answer(question: str, thread_id: str) -> str:
    ...     return "Paris"
    >>> answer("Capital of France?", thread_id="t-1")
    'Paris'
    """
    if isinstance(fn, str):
        fn, name = None, fn

    def build(f: Callable[..., Any]) -> Step:
        conversation = _text(conversation_id_arg, "conversation_id_arg")
        binder = ArgumentBinder(f, exclude=() if conversation is None else (conversation,))
        return AgentStep(
            _name(name, f),
            binder,
            conversation_id_arg=_parameter(binder, conversation, "conversation_id_arg", f),
            input_arg=_parameter(binder, input_arg, "input_arg", f),
            description=_text(description, "description"),
        )

    return _decorator(fn, build)


@overload
def tool(fn: F, /) -> F: ...
@overload
def tool(
    fn: str | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    call_id_arg: str | None = None,
    tool_type: str | None = None,
) -> Callable[[F], F]: ...
def tool(
    fn: Any = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    call_id_arg: str | None = None,
    tool_type: str | None = None,
) -> Any:
    """Trace a tool call as ``execute_tool {name}``.

    Records the arguments by name as a JSON object (``self``/``cls`` left out, defaults not filled
    in), the result as JSON (a str result too: ``"sunny"`` is recorded as ``"\\"sunny\\""``), and
    ``gen_ai.tool.call.id``: the ``call_id_arg`` argument, else an enclosing ``tool_call_id(id)``,
    else ``call_`` + the span id.

    >>> @tool(name="get_weather")
    ... def weather(city: str) -> dict:
    ...     return {"city": city, "sky": "clear"}
    >>> weather("Tokyo")["sky"]
    'clear'
    """
    if isinstance(fn, str):
        fn, name = None, fn

    def build(f: Callable[..., Any]) -> Step:
        call_id = _text(call_id_arg, "call_id_arg")
        binder = ArgumentBinder(f, exclude=() if call_id is None else (call_id,))
        return ToolStep(
            _name(name, f),
            binder,
            call_id_arg=_parameter(binder, call_id, "call_id_arg", f),
            description=_text(description, "description"),
            tool_type=_text(tool_type, "tool_type"),
        )

    return _decorator(fn, build)


@overload
def node(fn: F, /) -> F: ...
@overload
def node(
    fn: str | None = None, /, *, name: str | None = None, capture_io: bool = False, input_arg: str | None = None
) -> Callable[[F], F]: ...
def node(fn: Any = None, /, *, name: str | None = None, capture_io: bool = False, input_arg: str | None = None) -> Any:
    """Trace a graph node as ``invoke_node {name}``.

    With ``capture_io=True`` (and content capture on) it also records its input (``input_arg``,
    else the only argument, else all arguments by name) and its output.

    >>> @node("plan")
    ... def plan(state: dict) -> dict:
    ...     return {**state, "plan": ["search"]}
    >>> plan({})["plan"]
    ['search']
    """
    if isinstance(fn, str):
        fn, name = None, fn

    def build(f: Callable[..., Any]) -> Step:
        binder = ArgumentBinder(f)
        return NodeStep(
            _name(name, f),
            binder,
            capture_io=capture_io is True,
            input_arg=_parameter(binder, input_arg, "input_arg", f),
        )

    return _decorator(fn, build)


@overload
def message(fn: F, /) -> F: ...
@overload
def message(
    fn: None = None, /, *, model: str | None = None, role: str = "assistant", provider: str | None = None
) -> Callable[[F], F]: ...
def message(
    fn: Any = None, /, *, model: str | None = None, role: str = "assistant", provider: str | None = None
) -> Any:
    """Trace a function that produces a model message (an LLM call) as ``chat`` / ``chat {model}``.

    The return value may be a str, a message dict or object (``role``, ``content``,
    ``tool_calls``), an OpenAI chat completion or an Anthropic message. Records
    ``agenteval.message.role`` (the message's, else ``role``), ``agenteval.message.content`` (its
    text), ``gen_ai.output.messages`` (semconv JSON, tool calls included) and, when the response
    says, model, finish reason and token usage.

    >>> @message(model="gpt-4o-mini")
    ... def reply(prompt: str) -> str:
    ...     return "Hello!"
    >>> reply("hi")
    'Hello!'
    """

    def build(f: Callable[..., Any]) -> Step:
        return MessageStep(
            ArgumentBinder(f),
            name=_name(None, f),
            model=_text(model, "model"),
            role=_text(role, "role") or "assistant",
            provider=_text(provider, "provider"),
        )

    return _decorator(fn, build)


@overload
def conditional(fn: F, /) -> F: ...
@overload
def conditional(
    fn: str | None = None, /, *, name: str | None = None, branches: Mapping[Any, Any] | None = None
) -> Callable[[F], F]: ...
def conditional(fn: Any = None, /, *, name: str | None = None, branches: Mapping[Any, Any] | None = None) -> Any:
    """Trace a router (a conditional edge) as ``conditional {name}``.

    The return value is the condition's value (``agenteval.conditional.value``). The branch taken
    (``agenteval.conditional.branch``) is ``branches[value]`` when given, else the value itself
    when it is a str, a JSON list for a list of str (a fan-out), ``"true"``/``"false"`` for a bool.

    >>> @conditional(branches={True: "tools", False: "end"})
    ... def should_continue(state: dict) -> bool:
    ...     return bool(state.get("tool_calls"))
    >>> should_continue({"tool_calls": []})
    False
    """
    if isinstance(fn, str):
        fn, name = None, fn
    if branches is not None and not isinstance(branches, Mapping):
        _logger.warning("branches=%r is not a mapping; ignored", branches)
        branches = None

    def build(f: Callable[..., Any]) -> Step:
        return ConditionalStep(_name(name, f), ArgumentBinder(f), branches=branches)

    return _decorator(fn, build)
