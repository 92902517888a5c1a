"""The five kinds of step and what each records: span name, fixed attributes, inputs, result.

A ``Step`` is built once per decorated function (or per kind of step ``start_step`` starts) with everything
that does not change between calls: the span name, the fixed attributes and the argument-binding
plan. A call starts the span and, only when it is recording, gathers the fixed attributes and
those that depend on the call into one dict, set in a single ``set_attributes`` call when the
step ends (each attribute call on an SDK span has a fixed cost; one call is the cheapest).
Samplers see the span name, which carries the operation and the step's name. The sync and async
decorators do what ``begin`` does inline (keep them alike) and call ``end``/``fail``;
:mod:`agenteval_otel.tracing.lifecycle` wraps the same three calls in a public object.
"""

from __future__ import annotations

import contextlib
import logging
import traceback
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import orjson
from opentelemetry import context as otel_context
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY
from opentelemetry.sdk.trace import Span as SdkSpan
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer
from opentelemetry.util.types import AttributeValue

from agenteval_otel import semconv as attr
from agenteval_otel.tracing import content as _content
from agenteval_otel.tracing import conventions as _conventions
from agenteval_otel.tracing import providers as _providers
from agenteval_otel.tracing._binding import ArgumentBinder
from agenteval_otel.tracing._runtime import with_span
from agenteval_otel.tracing.content import REDACTED, ContentPolicy
from agenteval_otel.tracing.context import AGENT_CLAIM_KEY, CONVERSATION_KEY, TOOL_CALL_KEY
from agenteval_otel.tracing.conventions import openinference_attributes
from agenteval_otel.tracing.messages import input_messages, read_message, text_messages_json
from agenteval_otel.tracing.providers import current_tracer

__all__ = [
    "FRESH_SPANS_RECORD",
    "AgentStep",
    "ConditionalStep",
    "MessageStep",
    "NodeStep",
    "Step",
    "ToolStep",
    "current_tracer",  # the lookup Step.begin makes; the decorators' fast path makes it here too
    "keyword_binder",
]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())

_set_value = otel_context.set_value
_PRIMITIVES: Final = (str, bool, int, float)
FRESH_SPANS_RECORD: Final = frozenset({SdkSpan, *SdkSpan.__subclasses__()})
"""The SDK's span classes: a span of theirs just started records (else the SDK returns a
``NonRecordingSpan``), so ``is_recording()`` need not be asked."""
_ABSENT: Final = object()
CLAIMED: Final = "agenteval.claimed"
"""Where an agent step's pending attributes keep the ``AgentClaim`` holding it (taken out before they are set)."""


_PLAIN: Final = frozenset({str, int, float, bool})


def _set_plain(span: Span, attributes: dict[str, Any], *, checked: bool = False) -> None:
    """Set ``attributes`` on ``span``. When every value is a plain str, int, float or bool
    (``checked``: known to be) and they fit the span's limits (no value length limit, room under
    the attribute count limit), they go straight into its attribute map: the SDK would keep such
    values as they are, and its check per key costs as much as the rest of a step. Anything else
    goes through ``set_attributes``."""
    held = getattr(span, "_attributes", None)
    if (type(held) is BoundedAttributes and held.max_value_len is None and held.maxlen is not None
            and len(held) + len(attributes) <= held.maxlen
            and (checked or all(type(value) in _PLAIN for value in attributes.values()))):
        with held._lock:
            if not held._immutable:
                held._dict.update(attributes)
                return
    span.set_attributes(attributes)


def _keywords(**values: Any) -> None:
    """The signature of ``trace_step`` blocks: their values arrive as keyword arguments."""


keyword_binder: Final = ArgumentBinder(_keywords)


class Step:
    """What one decorated function or one ``trace_step`` block records; built once, used per call."""

    step_type: ClassVar[str]
    span_kind: ClassVar[SpanKind] = SpanKind.INTERNAL
    """The span's kind: a model call is a CLIENT span, as the GenAI conventions say."""
    structural_result: ClassVar[bool] = False
    """Whether the result carries more than content (then it is read with capture off too)."""
    __slots__ = ("_reported", "attributes", "binder", "name", "span_name")

    def __init__(
        self, name: str, span_name: str, attributes: dict[str, AttributeValue], binder: ArgumentBinder
    ) -> None:
        self.name = name
        self.span_name = span_name
        self.attributes = {attr.STEP_TYPE: self.step_type, **attributes}
        self.binder = binder
        self._reported: set[str] = set()

    def begin(
        self,
        parent: otel_context.Context,
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
        tracer: Tracer | None = None,
        policy: ContentPolicy | None = None,
    ) -> tuple[Span, dict[str, Any] | None, otel_context.Context] | None:
        """Start the span under ``parent`` with ``tracer`` (default: ``current_tracer()``), its
        content under ``policy`` (default: the active one): ``(span, pending attributes, context to run in)``.

        ``pending`` is ``None`` when the span is not recording: then nothing is serialised.
        ``None`` when instrumentation is suppressed or the span could not be started.
        """
        try:
            if parent.get(_SUPPRESS_INSTRUMENTATION_KEY):
                return None
            if tracer is None:  # the cached tracer while the routed provider is the one it is for
                routed = _providers._routed
                cached_provider, tracer = _providers._cache
                if routed is None or routed is not cached_provider or tracer is None:
                    tracer = current_tracer()
            span = tracer.start_span(self.span_name, parent, self.span_kind)
            recording = type(span) in FRESH_SPANS_RECORD or span.is_recording()
        except Exception:
            self.report("starting the span")
            return None
        if not recording:
            return span, None, with_span(span, parent)
        pending = self.attributes.copy()
        conversation: Any = parent.get(CONVERSATION_KEY)
        if conversation is not None:  # on every step of a conversation, so a trace routes by it whole
            pending[attr.GEN_AI_CONVERSATION_ID] = conversation
        try:
            context = self.open(span, parent, pending, _content._active if policy is None else policy, args, kwargs)
        except Exception:
            self.report("recording the inputs")
            context = parent
        return span, pending, with_span(span, context)

    def end(
        self,
        span: Span,
        pending: dict[str, Any] | None,
        result: Any,
        end_time: int | None = None,
        policy: ContentPolicy | None = None,
    ) -> None:
        """Set the attributes (the result's included, under ``policy``, default the active one) in
        one call and end the span (at ``end_time``, ns since the epoch, when given)."""
        if pending is not None:
            if policy is None:
                policy = _content._active
            if policy.capture or self.structural_result:
                try:
                    self.add_result(pending, policy, result)
                except Exception:
                    self.report("recording the result")
            try:
                _set_plain(span, pending)
            except Exception:
                self.report("setting attributes")
            if _conventions.openinference:
                self.add_conventions(span, pending, bool(policy.capture))
        try:
            span.end(end_time=end_time)
        except Exception:  # a span processor that raises must not reach the user's code
            self.report("ending the span")

    def fail(
        self, span: Span, pending: dict[str, Any] | None, error: BaseException, secrets: tuple[str | None, ...] = ()
    ) -> None:
        """End the span with the user's ``error``: ``error.type``, ERROR status, an exception event;
        credential shapes and ``secrets`` are masked in its text (``ContentPolicy.clean_error``)."""
        if pending is not None:
            pending[attr.ERROR_TYPE] = type(error).__qualname__
            try:
                _set_plain(span, pending)
            except Exception:
                self.report("setting attributes")
            if _conventions.openinference:
                self.add_conventions(span, pending, True)  # the inputs in ``pending`` followed the policy
            try:  # the message and the stack trace may quote secrets: a server echoing a key, a password
                policy = _content._active
                span.set_status(Status(StatusCode.ERROR, policy.clean_error(_description(error), secrets)))
                span.add_event(attr.EXCEPTION_EVENT, _exception_attributes(error, policy, secrets))
            except Exception:
                self.report("recording the error")
        try:
            span.end()
        except Exception:
            self.report("ending the span")

    def open(
        self,
        span: Span,
        parent: otel_context.Context,
        pending: dict[str, Any],
        policy: ContentPolicy,
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
    ) -> otel_context.Context:
        """Add the call's attributes to ``pending``; return the context the step runs in."""
        return parent

    def add_input(self, pending: dict[str, Any], policy: ContentPolicy, value: Any) -> None:
        """Add the attributes of the step's input to ``pending`` (called with content capture on)."""

    def add_result(self, pending: dict[str, Any], policy: ContentPolicy, result: Any) -> None:
        """Add the attributes that depend on the step's result to ``pending``.

        Called when content capture is on, and with it off too for a ``structural_result``.
        """

    def add_conventions(self, span: Span, pending: dict[str, Any], content: bool) -> None:
        """Set the keys of the other conventions in force (OpenInference), derived from ``pending``
        (set on ``span`` already)."""
        try:
            _set_plain(span, openinference_attributes(pending, content=content), checked=True)
        except Exception:
            self.report("adding the OpenInference keys")

    def report(self, what: str) -> None:
        """Log a failure of ours once per step at WARNING (then at DEBUG); the user's call goes on."""
        _logger.log(
            self._level(what),
            "%s step %r: %s failed; the call is unaffected",
            self.step_type,
            self.name,
            what,
            exc_info=True,
        )

    def warn(self, what: str) -> None:
        """Log a misuse of a started step (e.g. ending it twice) once per step at WARNING, then at DEBUG."""
        _logger.log(self._level(what), "%s step %r: %s; ignored", self.step_type, self.name, what)

    def _level(self, what: str) -> int:
        level = logging.DEBUG if what in self._reported else logging.WARNING
        self._reported.add(what)
        return level


def _message(error: BaseException) -> str | None:
    """``str(error)``; ``None`` when its ``__str__`` raises."""
    try:
        return str(error)
    except Exception:
        return None


def _description(error: BaseException) -> str:
    message = _message(error)
    return type(error).__name__ if message is None else f"{type(error).__name__}: {message}"


def _exception_attributes(
    error: BaseException, policy: ContentPolicy, secrets: tuple[str | None, ...]
) -> dict[str, str]:
    """What the SDK's ``record_exception`` writes, with the message and stack trace cleaned by ``policy``."""
    cls = type(error)
    module = cls.__module__
    stacktrace = "".join(traceback.format_exception(cls, error, error.__traceback__))
    return {
        attr.EXCEPTION_TYPE: f"{module}.{cls.__qualname__}" if module and module != "builtins" else cls.__qualname__,
        attr.EXCEPTION_MESSAGE: policy.clean_error(_message(error) or "", secrets),
        attr.EXCEPTION_STACKTRACE: policy.clean_error(stacktrace, secrets),
        attr.EXCEPTION_ESCAPED: "False",
    }


def _input(
    binder: ArgumentBinder,
    input_arg: str | None,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    policy: ContentPolicy,
) -> Any:
    """The named argument, else the only argument, else all arguments by name (``_ABSENT`` if none).

    A lone argument under a secret-looking parameter name (``password``, ``token``, per
    ``policy``) is ``[REDACTED]``, as it is among several, where the names become redacted keys.
    """
    if input_arg is not None:
        value = binder.value(input_arg, args, kwargs)
        if value is None:
            return _ABSENT
        return REDACTED if policy.is_sensitive(input_arg) else value
    bound = binder.bind(args, kwargs)
    if not bound:
        return _ABSENT
    if len(bound) == 1:
        ((name, value),) = bound.items()
        return REDACTED if policy.is_sensitive(name) else value
    return bound


class AgentStep(Step):
    """``invoke_agent {name}``: the user input, the final response, the conversation id."""

    step_type = attr.STEP_AGENT
    __slots__ = ("conversation_id_arg", "input_arg")

    def __init__(
        self,
        name: str,
        binder: ArgumentBinder,
        *,
        conversation_id_arg: str | None = None,
        input_arg: str | None = None,
        description: str | None = None,
    ) -> None:
        static: dict[str, AttributeValue] = {
            attr.GEN_AI_OPERATION_NAME: attr.OP_INVOKE_AGENT,
            attr.GEN_AI_AGENT_NAME: name,
        }
        if description:
            static[attr.GEN_AI_AGENT_DESCRIPTION] = description
        super().__init__(name, f"{attr.OP_INVOKE_AGENT} {name}", static, binder)
        self.conversation_id_arg = conversation_id_arg
        self.input_arg = input_arg

    def open(
        self,
        span: Span,
        parent: otel_context.Context,
        pending: dict[str, Any],
        policy: ContentPolicy,
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
    ) -> otel_context.Context:
        context = parent  # the context's conversation is in ``pending`` already (``begin``)
        if self.conversation_id_arg is not None:
            given = self.binder.value(self.conversation_id_arg, args, kwargs)
            if given is not None:
                pending[attr.GEN_AI_CONVERSATION_ID] = conversation = str(given)
                context = _set_value(CONVERSATION_KEY, conversation, parent)
        value: Any = _ABSENT
        claim: Any = parent.get(AGENT_CLAIM_KEY)
        if claim is not None:  # a caller's turn: this step is its root, kept open for it
            context = _set_value(AGENT_CLAIM_KEY, None, context)
            if claim.take(self, span, pending, context, policy):
                pending[CLAIMED] = claim
                value = _ABSENT if claim.input is None else claim.input
        if policy.capture:
            if value is _ABSENT:
                value = _input(self.binder, self.input_arg, args, kwargs, policy)
            if value is not _ABSENT:
                self.add_input(pending, policy, value)
        return context

    def end(
        self,
        span: Span,
        pending: dict[str, Any] | None,
        result: Any,
        end_time: int | None = None,
        policy: ContentPolicy | None = None,
    ) -> None:
        """End the span, unless an ``AgentClaim`` holds it: then the claim's caller ends it."""
        if pending is not None and CLAIMED in pending and pending.pop(CLAIMED).hold(result):
            return
        super().end(span, pending, result, end_time, policy)

    def fail(
        self, span: Span, pending: dict[str, Any] | None, error: BaseException, secrets: tuple[str | None, ...] = ()
    ) -> None:
        if pending is not None and CLAIMED in pending:
            pending.pop(CLAIMED).failed()
        super().fail(span, pending, error, secrets)

    def add_input(self, pending: dict[str, Any], policy: ContentPolicy, value: Any) -> None:
        text = policy.text(value)
        pending[attr.AGENT_INPUT] = text
        if type(value) is str:
            pending[attr.GEN_AI_INPUT_MESSAGES] = text_messages_json("user", text)

    def add_result(self, pending: dict[str, Any], policy: ContentPolicy, result: Any) -> None:
        if result is None:
            return
        text = policy.text(result)
        pending[attr.AGENT_OUTPUT] = text
        if type(result) is str:
            pending[attr.GEN_AI_OUTPUT_MESSAGES] = text_messages_json("assistant", text, "stop")


class ToolStep(Step):
    """``execute_tool {name}``: the call id, the arguments by name, the result (JSON)."""

    step_type = attr.STEP_TOOL
    __slots__ = ("call_id_arg",)

    def __init__(
        self,
        name: str,
        binder: ArgumentBinder,
        *,
        call_id_arg: str | None = None,
        description: str | None = None,
        tool_type: str | None = None,
    ) -> None:
        static: dict[str, AttributeValue] = {
            attr.GEN_AI_OPERATION_NAME: attr.OP_EXECUTE_TOOL,
            attr.GEN_AI_TOOL_NAME: name,
        }
        if description:
            static[attr.GEN_AI_TOOL_DESCRIPTION] = description
        if tool_type:
            static[attr.GEN_AI_TOOL_TYPE] = tool_type
        super().__init__(name, f"{attr.OP_EXECUTE_TOOL} {name}", static, binder)
        self.call_id_arg = call_id_arg

    def open(
        self,
        span: Span,
        parent: otel_context.Context,
        pending: dict[str, Any],
        policy: ContentPolicy,
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
    ) -> otel_context.Context:
        context = parent
        call_id = parent.get(TOOL_CALL_KEY)
        if call_id is not None:  # the id is for this call only, not for steps nested in it
            context = _set_value(TOOL_CALL_KEY, None, parent)
        if self.call_id_arg is not None:
            value = self.binder.value(self.call_id_arg, args, kwargs)
            if value is not None:
                call_id = str(value)
        pending[attr.GEN_AI_TOOL_CALL_ID] = (
            call_id if call_id is not None else f"call_{span.get_span_context().span_id:016x}"
        )
        if policy.capture:  # what ``add_input`` does, without the call
            pending[attr.GEN_AI_TOOL_CALL_ARGUMENTS] = policy.json(self.binder.bind(args, kwargs))
        return context

    def add_input(self, pending: dict[str, Any], policy: ContentPolicy, value: Any) -> None:
        pending[attr.GEN_AI_TOOL_CALL_ARGUMENTS] = policy.json(value)

    def add_result(self, pending: dict[str, Any], policy: ContentPolicy, result: Any) -> None:
        pending[attr.GEN_AI_TOOL_CALL_RESULT] = policy.json(result)


class NodeStep(Step):
    """``invoke_node {name}``: a graph node; its input and output only when ``capture_io``."""

    step_type = attr.STEP_NODE
    __slots__ = ("capture_io", "input_arg")

    def __init__(
        self, name: str, binder: ArgumentBinder, *, capture_io: bool = False, input_arg: str | None = None
    ) -> None:
        static: dict[str, AttributeValue] = {
            attr.GEN_AI_OPERATION_NAME: attr.OP_INVOKE_NODE,
            attr.GEN_AI_NODE_NAME: name,
        }
        super().__init__(name, f"{attr.OP_INVOKE_NODE} {name}", static, binder)
        self.capture_io = capture_io
        self.input_arg = input_arg

    def open(
        self,
        span: Span,
        parent: otel_context.Context,
        pending: dict[str, Any],
        policy: ContentPolicy,
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
    ) -> otel_context.Context:
        if self.capture_io and policy.capture:
            value = _input(self.binder, self.input_arg, args, kwargs, policy)
            if value is not _ABSENT:
                self.add_input(pending, policy, value)
        return parent

    def add_input(self, pending: dict[str, Any], policy: ContentPolicy, value: Any) -> None:
        if self.capture_io:
            pending[attr.NODE_INPUT] = policy.text(value)

    def add_result(self, pending: dict[str, Any], policy: ContentPolicy, result: Any) -> None:
        if self.capture_io and result is not None:
            pending[attr.NODE_OUTPUT] = policy.text(result)


class MessageStep(Step):
    """``chat`` / ``chat {model}``: the model message the function returned (and, given, what it was sent)."""

    step_type = attr.STEP_MESSAGE
    span_kind = SpanKind.CLIENT
    structural_result = True  # role, model, finish reason, token usage
    __slots__ = ("input_arg", "role")

    def __init__(
        self,
        binder: ArgumentBinder,
        *,
        name: str | None = None,
        model: str | None = None,
        role: str = "assistant",
        provider: str | None = None,
        input_arg: str | None = None,
    ) -> None:
        static: dict[str, AttributeValue] = {attr.GEN_AI_OPERATION_NAME: attr.OP_CHAT}
        if model:
            static[attr.GEN_AI_REQUEST_MODEL] = model
        if provider:
            static[attr.GEN_AI_PROVIDER_NAME] = provider
        span_name = f"{attr.OP_CHAT} {model}" if model else attr.OP_CHAT
        super().__init__(name or span_name, span_name, static, binder)
        self.role = role
        self.input_arg = input_arg

    def open(
        self,
        span: Span,
        parent: otel_context.Context,
        pending: dict[str, Any],
        policy: ContentPolicy,
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
    ) -> otel_context.Context:
        if self.input_arg is not None and policy.capture:
            value = _input(self.binder, self.input_arg, args, kwargs, policy)
            if value is not _ABSENT:
                self.add_input(pending, policy, value)
        return parent

    def add_input(self, pending: dict[str, Any], policy: ContentPolicy, value: Any) -> None:
        """``gen_ai.input.messages``: a str is one user message; message dicts or objects as they read."""
        pending[attr.GEN_AI_INPUT_MESSAGES] = policy.json(input_messages(value, "user"))

    def add_result(self, pending: dict[str, Any], policy: ContentPolicy, result: Any) -> None:
        message = read_message(result, self.role)
        if message is None:
            pending[attr.MESSAGE_ROLE] = self.role
            if policy.capture and result is not None:
                pending[attr.MESSAGE_CONTENT] = policy.text(result)
            return
        pending[attr.MESSAGE_ROLE] = message.role
        if message.model:
            pending[attr.GEN_AI_RESPONSE_MODEL] = message.model
        if message.finish_reason:
            pending[attr.GEN_AI_RESPONSE_FINISH_REASONS] = (message.finish_reason,)
        if message.input_tokens is not None:
            pending[attr.GEN_AI_USAGE_INPUT_TOKENS] = message.input_tokens
        if message.output_tokens is not None:
            pending[attr.GEN_AI_USAGE_OUTPUT_TOKENS] = message.output_tokens
        if not policy.capture:
            return
        content = None if message.content is None else policy.clean(message.content)
        if content is not None:
            pending[attr.MESSAGE_CONTENT] = content
        output = message.output_messages(content)
        # tool-call arguments still need key redaction; plain text was cleaned above
        pending[attr.GEN_AI_OUTPUT_MESSAGES] = (
            policy.json(output) if message.tool_calls else orjson.dumps(output).decode()
        )


class ConditionalStep(Step):
    """``conditional {name}``: the condition's value and the branch taken (recorded with capture off too)."""

    step_type = attr.STEP_CONDITIONAL
    structural_result = True  # the branch taken
    __slots__ = ("branches",)

    def __init__(self, name: str, binder: ArgumentBinder, *, branches: Mapping[Any, Any] | None = None) -> None:
        static: dict[str, AttributeValue] = {attr.CONDITION_NAME: name}
        super().__init__(name, f"conditional {name}", static, binder)
        self.branches = branches

    def add_result(self, pending: dict[str, Any], policy: ContentPolicy, result: Any) -> None:
        pending[attr.CONDITION_VALUE] = result if type(result) in _PRIMITIVES else policy.json(result)
        pending[attr.CONDITION_BRANCH] = self._branch(result, policy)

    def _branch(self, value: Any, policy: ContentPolicy) -> str:
        if self.branches is not None:
            with contextlib.suppress(TypeError):  # an unhashable value is not a key
                value = self.branches.get(value, value)
        if isinstance(value, str):
            return value
        if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
            return orjson.dumps(list(value)).decode()
        return policy.json(value)
