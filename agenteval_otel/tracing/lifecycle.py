"""The step lifecycle: start a step, give it its input and result, end it once.

This is the seam that instrumentor packages (one per instrumented client library) and our own
decorators and ``trace_step`` blocks share: the same span names, attributes, content policy,
redaction and truncation, the same respect for suppressed instrumentation, and no attribute
work when the span is not recording. In the shape of OpenTelemetry's GenAI ``TelemetryHandler``
(``start_llm`` → ``stop_llm`` / ``fail_llm``):

>>> run = start_step("tool", "get_weather", arguments={"city": "Tokyo"}, call_id="call_1")
>>> run.set_result({"sky": "clear"})
>>> run.end()

or as a context manager, whose span is current inside the block (steps started there are its
children) and which records an exception leaving the block, then lets it propagate unchanged:

>>> with start_step("message", model="gpt-4o-mini", input="Hello") as reply:
...     reply.set_result({"role": "assistant", "content": "Hi!"})

A wrapped client call, instrumentor style (nothing of ours raises into the call; ``end`` and
``fail`` may be called more than once, the span ends once):

>>> def traced_create(create, **request):
...     run = start_step("message", model=request.get("model"), input=request.get("messages"))
...     run.activate()  # make the span current for the client's own instrumentation
...     try:
...         response = create(**request)
...     except BaseException as error:
...         run.fail(error)
...         raise
...     run.set_result(response)
...     run.end()
...     return response
>>> traced_create(lambda **request: "Hi!", model="m1", messages=[{"role": "user", "content": "Hello"}])
'Hi!'
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, Final, Literal, get_args

from opentelemetry import context as otel_context
from opentelemetry.trace import INVALID_SPAN, Span, Tracer, TracerProvider

from agenteval_otel import semconv as attr
from agenteval_otel.tracing._runtime import attach, detach
from agenteval_otel.tracing._steps import (
    AgentStep,
    ConditionalStep,
    MessageStep,
    NodeStep,
    Step,
    ToolStep,
    keyword_binder,
)
from agenteval_otel.tracing.content import ContentPolicy, active_policy, remember_secrets
from agenteval_otel.tracing.context import AGENT_CLAIM_KEY, CONVERSATION_KEY, TOOL_CALL_KEY
from agenteval_otel.tracing.providers import tracer_of

__all__ = ["AgentClaim", "StepKind", "StepRun", "start_step"]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())

StepKind = Literal["agent", "tool", "node", "message", "conditional"]
"""The kinds of step; the values of ``agenteval.step.type``."""

_KINDS: Final = frozenset(get_args(StepKind))

_OPTIONS: Final[dict[str, frozenset[str]]] = {
    attr.STEP_AGENT: frozenset({"input", "conversation_id", "description"}),
    attr.STEP_TOOL: frozenset({"arguments", "call_id", "description", "tool_type"}),
    attr.STEP_NODE: frozenset({"input"}),
    attr.STEP_MESSAGE: frozenset({"input", "conversation_id", "model", "role", "provider"}),
    attr.STEP_CONDITIONAL: frozenset({"branches"}),
}
"""The options that apply to each kind of step; the others are ignored (logged)."""

_CONTENT_OPTIONS: Final = frozenset({"input", "arguments"})
"""Options carrying content: a log names their type, never their value."""

_MAX_STEPS: Final = 512
_steps: dict[tuple[Any, ...], Step] = {}
"""Steps by their fixed options, so a step started per call logs a failure of ours once, not per call."""

_attach = attach
_detach = detach
_without_content: tuple[ContentPolicy, ContentPolicy] | None = None
"""``(policy in force, the same with capture off)``: what a step started with ``capture_content=False`` follows."""


def _content_off(policy: ContentPolicy) -> ContentPolicy:
    """``policy`` with capture off (its patterns still clean exception text); made once per policy."""
    global _without_content
    if not policy.capture:
        return policy
    cached = _without_content
    if cached is not None and cached[0] is policy:
        return cached[1]
    variant = dataclasses.replace(policy, capture=False)
    _without_content = (policy, variant)
    return variant


class StepRun:
    """A started step (made by :func:`start_step`): set its input and result, then end it once.

    ``span`` is its OpenTelemetry span (``INVALID_SPAN`` when instrumentation is suppressed).
    ``end``/``fail`` after the step ended are logged and ignored; nothing here raises.
    """

    __slots__ = ("_context", "_ended", "_pending", "_policy", "_result", "_step", "_token", "span")

    def __init__(self) -> None:
        self._step: Step | None = None
        self._pending: dict[str, Any] | None = None
        self._context: otel_context.Context | None = None
        self._token: object | None = None
        self._result: Any = None
        self._ended = False
        self._policy: ContentPolicy | None = None
        """The content policy of this step; ``None``: the one in force."""
        self.span: Span = INVALID_SPAN

    def _start(
        self,
        step: Step,
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
        parent: otel_context.Context,
        tracer: Tracer | None = None,
        policy: ContentPolicy | None = None,
    ) -> bool:
        """Start ``step`` under ``parent`` (not current yet), its content under ``policy`` (default:
        the one in force); ``False`` when no span was started."""
        self._step = step
        self._ended = False
        self._policy = policy
        opened = step.begin(parent, args, kwargs, tracer, policy)
        if opened is None:
            return False
        self.span, self._pending, self._context = opened
        return True

    @property
    def recording(self) -> bool:
        """Whether the span records: else input and result are not even looked at."""
        return self._pending is not None

    @property
    def capturing(self) -> bool:
        """Whether the span records content: it records, and capture is on for this step (see
        ``start_step(capture_content=...)``) and in the content policy in force."""
        if self._pending is None:
            return False
        return bool((active_policy() if self._policy is None else self._policy).capture)

    @property
    def ended(self) -> bool:
        """Whether ``end`` or ``fail`` was called."""
        return self._ended

    def set_input(self, value: Any) -> None:
        """The step's input, replacing any given at start: the agent's user input, the node's
        input, the tool's arguments (a mapping), the messages sent to the model (a str, a message
        or a list of them). Recorded at once, under the content policy; a conditional has none."""
        pending, step = self._pending, self._step
        if pending is None or step is None:
            return
        if self._ended:
            step.warn("set_input after the step ended")
            return
        policy = active_policy() if self._policy is None else self._policy
        if not policy.capture:
            return
        try:
            step.add_input(pending, policy, value)
        except Exception:
            step.report("recording the input")

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        """Attributes of the caller's own (an instrumentor's request and response keys), set with
        the step's when it ends, so that what is derived from them (the OpenInference keys of
        ``configure(conventions=...)``) sees them too. Nothing when the span is not recording."""
        pending, step = self._pending, self._step
        if pending is None or step is None:
            return
        if self._ended:
            step.warn("set_attributes after the step ended")
            return
        try:
            pending.update(attributes)
        except Exception:
            step.report("recording the attributes")

    def set_result(self, value: Any) -> None:
        """The step's result, recorded when it ends: the tool's result, the agent's final response,
        the node's output, the model message (str, dict, response object), the condition's value."""
        if self._ended:
            if self._step is not None:
                self._step.warn("set_result after the step ended")
            return
        self._result = value

    def activate(self) -> None:
        """Make the span current (steps started from here on are its children) until ``deactivate``."""
        if self._context is not None and self._token is None and not self._ended:
            self._token = _attach(self._context)

    def deactivate(self) -> None:
        """Make current again what was current before ``activate`` (call it in the same thread or task)."""
        token = self._token
        if token is not None:
            self._token = None
            _detach(token)

    def end(self, end_time: int | None = None) -> None:
        """End the step with its result (deactivating it first), at ``end_time`` (ns since the
        epoch) when given: a step may stay open after its work, to take attributes that come
        later, and still end when its work did. Once: later calls are ignored."""
        self.deactivate()
        step = self._step
        if self._ended:
            if step is not None:
                step.warn("end after the step ended")
            return
        self._ended = True
        if step is not None and self._context is not None:
            step.end(self.span, self._pending, self._result, end_time, self._policy)

    def fail(self, error: BaseException, *, secrets: Iterable[str | None] = ()) -> None:
        """End the step with ``error``: ``error.type``, ERROR status, an exception event. Once.

        Credential shapes (``sk-...``, ``Bearer ...``) and each of ``secrets`` (an instrumentor's
        client keys), whole or any 8 or more of their characters in a row, are masked in the
        recorded message, stack trace and status description; ``error`` itself is left untouched.
        The secrets are remembered: the steps this error (or one quoting it) fails later mask
        them too (``content.remember_secrets``).
        """
        self.deactivate()
        step = self._step
        if self._ended:
            if step is not None:
                step.warn("fail after the step ended")
            return
        self._ended = True
        if step is not None and self._context is not None:
            try:
                kept = _secrets(secrets, step)
                remember_secrets(kept)
            except Exception:
                step.report("reading the secrets")
                kept = ()
            step.fail(self.span, self._pending, error, kept)

    def __enter__(self) -> StepRun:
        self.activate()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._ended:  # ended inside the block: nothing left to do
            self.deactivate()
        elif error is None:
            self.end()
        else:
            self.fail(error)

    def __repr__(self) -> str:
        name = None if self._step is None else self._step.span_name
        state = "ended" if self._ended else "open" if self._context is not None else "not started"
        return f"<StepRun {name!r} {state}>"


def start_step(
    kind: StepKind,
    name: str | None = None,
    *,
    input: Any = None,
    arguments: Mapping[str, Any] | None = None,
    call_id: str | None = None,
    conversation_id: str | None = None,
    model: str | None = None,
    role: str = "assistant",
    provider: str | None = None,
    branches: Mapping[Any, Any] | None = None,
    description: str | None = None,
    tool_type: str | None = None,
    parent_context: otel_context.Context | None = None,
    tracer_provider: TracerProvider | None = None,
    capture_content: bool = True,
) -> StepRun:
    """Start a step of ``kind`` under ``parent_context`` (default: the current context); not current yet.

    Records what the matching decorator records. ``name`` names the agent, tool, node or
    conditional (a message is named by ``model``: ``chat {model}``). ``input``: the agent's user
    input, the node's input, the messages sent to the model. ``arguments``: the tool's arguments
    by name; ``call_id``: its ``gen_ai.tool.call.id`` (default ``call_`` + the span id).
    ``conversation_id``: ``gen_ai.conversation.id`` of an agent or message step and of the steps
    inside it. ``model``/``role``/``provider``: a message's request model, default role and
    ``gen_ai.provider.name``. ``branches``: a conditional's value → branch mapping.
    ``description``/``tool_type``: static attributes of an agent or tool. Options that do not
    apply to ``kind`` are logged and ignored; an unknown ``kind`` is logged and gives a step that
    records nothing (the caller's code runs on untraced). ``tracer_provider``: the provider this
    step's span is started on (default: ``current_provider()``, where our steps go).
    ``capture_content=False``: no content at all (input, arguments, result) whatever the policy
    in force, for an instrumentor whose own content setting is off; with ``True`` the policy in
    force decides. Exception text is cleaned by that policy either way.
    """
    run = StepRun()
    if kind not in _KINDS:
        _logger.warning("start_step: kind must be one of %s, not %r; the step is not traced", sorted(_KINDS), kind)
        return run
    prepared = _prepare(
        kind,
        name,
        input=input,
        arguments=arguments,
        call_id=call_id,
        conversation_id=conversation_id,
        model=model,
        role=role,
        provider=provider,
        branches=branches,
        description=description,
        tool_type=tool_type,
        parent_context=parent_context,
    )
    if prepared is not None:
        policy = None if capture_content is not False else _content_off(active_policy())
        run._start(*prepared, _tracer(tracer_provider), policy)
    return run


def _tracer(provider: object) -> Tracer | None:
    """Our tracer on ``provider``; ``None`` (the current one) when none is given or it is no provider (logged)."""
    if provider is None:
        return None
    if not isinstance(provider, TracerProvider):
        _logger.warning("tracer_provider=%r is not a TracerProvider; using the current one", provider)
        return None
    try:
        return tracer_of(provider)
    except Exception:
        _logger.warning("cannot get a tracer from %r; using the current one", provider, exc_info=True)
        return None


def _prepare(
    kind: str, name: object, *, parent_context: otel_context.Context | None = None, **options: Any
) -> tuple[Step, tuple[Any, ...], dict[str, Any], otel_context.Context] | None:
    """What a step of ``kind`` starts with: ``(step, args, kwargs, parent)``; ``None`` if that fails (logged)."""
    try:
        _check_options(kind, options)
        get = options.get
        fixed = (get("description"), get("tool_type"), get("model"), get("role", "assistant"), get("provider"))
        step = _step(kind, name, *fixed, get("branches"))
        parent = otel_context.get_current() if parent_context is None else parent_context
        conversation_id = get("conversation_id")
        if conversation_id is not None and kind in (attr.STEP_AGENT, attr.STEP_MESSAGE):
            parent = otel_context.set_value(CONVERSATION_KEY, str(conversation_id), parent)
        if kind != attr.STEP_TOOL:
            return step, (), {"input": get("input")}, parent
        call_id = get("call_id")
        if call_id is not None:
            parent = otel_context.set_value(TOOL_CALL_KEY, str(call_id), parent)
        return step, (), _arguments(get("arguments")), parent
    except Exception:
        _logger.warning("cannot start a %s step %r; not traced", kind, name, exc_info=True)
        return None


def _check_options(kind: str, options: Mapping[str, Any]) -> None:
    applies = _OPTIONS[kind]
    for option, value in options.items():
        if value is None or option in applies or (option == "role" and value == "assistant"):
            continue
        shown = f"<{type(value).__name__}>" if option in _CONTENT_OPTIONS else repr(value)
        _logger.warning("%s=%s does not apply to a %s step; ignored", option, shown, kind)


def _secrets(secrets: object, step: Step) -> tuple[str | None, ...]:
    """``secrets`` as a tuple (a lone str is one secret); a value that is not a str is left out (logged by type)."""
    if isinstance(secrets, str):
        return (secrets,)
    found = tuple(secrets) if isinstance(secrets, Iterable) else (secrets,)
    kept = tuple(secret for secret in found if secret is None or isinstance(secret, str))
    if len(kept) != len(found):
        odd = next(secret for secret in found if secret is not None and not isinstance(secret, str))
        step.warn(f"a secret of type {type(odd).__name__} is not a str; it is not masked")
    return kept


def _text(value: object, option: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    _logger.warning("%s=%r is not a str; ignored", option, value)
    return None


def _name(name: object, default: str) -> str:
    if isinstance(name, str) and name:
        return name
    _logger.warning("step name %r is not a non-empty str; using %r", name, default)
    return default


def _arguments(arguments: object) -> dict[str, Any]:
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if arguments is not None:
        _logger.warning("tool arguments of type %s are not a mapping; not recorded", type(arguments).__name__)
    return {}


def _step(
    kind: str,
    name: object,
    description: object,
    tool_type: object,
    model: object,
    role: object,
    provider: object,
    branches: object,
) -> Step:
    """The step for these fixed options: built once, then reused."""
    try:
        branches_key = tuple(branches.items()) if isinstance(branches, Mapping) else branches
        key = (kind, name, description, tool_type, model, role, provider, branches_key)
        cached = _steps.get(key)
    except TypeError:  # an unhashable option: build a step for this call only
        return _build(kind, name, description, tool_type, model, role, provider, branches)
    if cached is not None:
        return cached
    step = _build(kind, name, description, tool_type, model, role, provider, branches)
    if len(_steps) >= _MAX_STEPS:
        _steps.clear()
    _steps[key] = step
    return step


def _build(
    kind: str,
    name: object,
    description: object,
    tool_type: object,
    model: object,
    role: object,
    provider: object,
    branches: object,
) -> Step:
    if kind == attr.STEP_MESSAGE:
        return MessageStep(
            keyword_binder,
            name=name if isinstance(name, str) and name else None,
            model=_text(model, "model"),
            role=role if isinstance(role, str) else "assistant",
            provider=_text(provider, "provider"),
            input_arg="input",
        )
    step_name = _name(name, kind)
    if kind == attr.STEP_AGENT:
        return AgentStep(step_name, keyword_binder, input_arg="input", description=_text(description, "description"))
    if kind == attr.STEP_TOOL:
        return ToolStep(
            step_name,
            keyword_binder,
            description=_text(description, "description"),
            tool_type=_text(tool_type, "tool_type"),
        )
    if kind == attr.STEP_NODE:
        return NodeStep(step_name, keyword_binder, capture_io=True, input_arg="input")
    if branches is not None and not isinstance(branches, Mapping):
        _logger.warning("branches=%r is not a mapping; ignored", branches)
        branches = None
    return ConditionalStep(step_name, keyword_binder, branches=branches)


class AgentClaim:
    """A caller's hold on the agent step of an agent it calls, so that one span is the turn's root.

    A caller that runs an agent decorated with ``@agent`` as one turn of its own (an evaluation
    run) and needs the turn's root span open after the agent returned (to set the verdicts on it)
    runs the agent in ``claim.context()``: the first agent step started there, with no span
    above it, starts a new trace and is not ended when the agent returns; ``claim.run`` is then
    that step, open, for the caller to end. ``input``: the user input recorded on it instead of
    the agent's arguments; ``conversation_id``: the conversation the agent's steps are in.

    >>> from agenteval_otel.tracing import agent
    >>> @agent(name="helper")
    ... def helper(question: str) -> str:
    ...     return "Paris"
    >>> claim = AgentClaim(input="Capital of France?")
    >>> token = attach(claim.context())
    >>> helper("Capital of France?")
    'Paris'
    >>> detach(token)
    >>> run = claim.run  # the agent's own step, still open (None when nothing was recorded)
    >>> run is None or not run.ended
    True
    >>> claim.release()  # ends it now; an agent still running ends its step itself
    """

    _WAITING, _RUNNING, _HELD, _DONE = range(4)

    def __init__(self, *, input: Any = None, conversation_id: str | None = None) -> None:
        self.input = input
        self.conversation_id = conversation_id
        self._lock = threading.Lock()
        self._state = self._WAITING
        self._run: StepRun | None = None

    def context(self, parent: otel_context.Context | None = None) -> otel_context.Context:
        """``parent`` (default: an empty context, so the agent's step starts a new trace) with this
        claim waiting in it, and the conversation id when one was given."""
        context = otel_context.Context() if parent is None else parent
        if self.conversation_id is not None:
            context = otel_context.set_value(CONVERSATION_KEY, str(self.conversation_id), context)
        return otel_context.set_value(AGENT_CLAIM_KEY, self, context)

    @property
    def run(self) -> StepRun | None:
        """The agent's step once the agent returned, open until ``end``/``release``; ``None`` while
        it runs, when it failed (its step ended with the error) or when no step was recorded."""
        return self._run if self._state == self._HELD else None

    def take(self, step: Step, span: Span, pending: dict[str, Any], context: otel_context.Context,
             policy: ContentPolicy | None) -> bool:
        """Called by the agent step starting under this claim: whether it is now held (once)."""
        with self._lock:
            if self._state != self._WAITING:
                return False
            self._state = self._RUNNING
        run = StepRun()
        run._step, run._pending, run._context, run._policy, run.span = step, pending, context, policy, span
        self._run = run
        return True

    def hold(self, result: Any) -> bool:
        """Called when the held agent returned ``result``: ``True`` if the caller will end the step,
        ``False`` (end it as usual) once the caller gave up on it."""
        with self._lock:
            if self._state != self._RUNNING or self._run is None:
                return False
            self._state = self._HELD
            self._run._result = result
            return True

    def failed(self) -> None:
        """Called when the held agent raised: its step ends with the error, as usual."""
        with self._lock:
            self._state = self._DONE

    def release(self) -> None:
        """Give up on the step: a held one ends now; one whose agent still runs ends when it returns."""
        with self._lock:
            run = self._run if self._state == self._HELD else None
            self._state = self._DONE
        if run is not None and not run.ended:
            run.end()
