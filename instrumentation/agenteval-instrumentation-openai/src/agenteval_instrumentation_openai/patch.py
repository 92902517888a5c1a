"""The wrappers put around the client's ``create`` methods, and the model call each one traces.

A wrapper starts a ``message`` step (``chat {model}``) through agenteval-otel's public step
lifecycle, calls the client exactly once, and ends the step with the reply, or with the
client's exception, which it re-raises unchanged. A stream is handed back inside a transparent
proxy (:mod:`agenteval_instrumentation_openai.streams`) that ends the step when the stream ends.
Everything of ours runs inside ``try``: a failure is logged (once at WARNING, then at DEBUG) and
the user's call goes on with its own return value and exceptions. Suppressed instrumentation
means a plain call; a span that is not recording means no attribute work. A failed call's
recorded message, stack trace and status have the client's keys masked (a server may echo the
key it refused), read from the client when the call fails.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import openai
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.trace import TracerProvider

from agenteval_instrumentation_openai import request as requests
from agenteval_instrumentation_openai.reply import (
    ChatChunks,
    Reply,
    ResponseEvents,
    chat_reply,
    response_reply,
)
from agenteval_otel import semconv as attr
from agenteval_otel.tracing import StepRun, active_policy, start_step

__all__ = ["TARGETS", "ModelCall", "Settings", "client_secrets", "report"]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())
_reported: set[str] = set()
_CLIENT_SECRETS: Final = ("api_key", "admin_api_key", "webhook_secret")
"""The client's attributes holding credentials."""


def client_secrets(resource: Any) -> tuple[str, ...]:
    """The credentials of the client a resource (``client.chat.completions``) belongs to."""
    client = getattr(resource, "_client", None)
    values = (getattr(client, name, None) for name in _CLIENT_SECRETS)
    return tuple(value for value in values if isinstance(value, str) and value)


def report(what: str) -> None:
    """Log a failure of ours: once at WARNING with its traceback, then at DEBUG."""
    level = logging.DEBUG if what in _reported else logging.WARNING
    _reported.add(what)
    _logger.log(level, "openai instrumentation: %s failed; the call is unaffected", what, exc_info=True)


@dataclass(frozen=True, slots=True)
class Settings:
    """What ``instrument()`` was given: whether message content is recorded, and the provider."""

    capture_content: bool
    tracer_provider: TracerProvider | None = None


@dataclass(frozen=True, slots=True)
class Api:
    """How one API's calls are read."""

    request_attributes: Callable[[Any, Mapping[str, Any]], dict[str, Any]]
    messages: Callable[[Mapping[str, Any]], Any]
    reply: Callable[[Any], Reply]
    stream_reader: Callable[[], ChatChunks | ResponseEvents]


CHAT: Final = Api(requests.chat_attributes, requests.chat_messages, chat_reply, ChatChunks)
RESPONSES: Final = Api(requests.response_attributes, requests.response_messages, response_reply, ResponseEvents)


class ModelCall:
    """One traced model call: its step, whether content is recorded, the resource called (whose
    client's keys are masked in a failure), and (for a stream) its reader."""

    __slots__ = ("api", "capture", "reader", "resource", "run")

    def __init__(self, api: Api, run: StepRun, capture: bool, resource: Any = None) -> None:
        self.api = api
        self.run = run
        self.capture = capture
        self.resource = resource
        self.reader: ChatChunks | ResponseEvents | None = None

    @classmethod
    def start(cls, api: Api, settings: Settings, instance: Any, kwargs: Mapping[str, Any]) -> ModelCall | None:
        """Start the step, current while the client sends the request; ``None`` if suppressed or failed."""
        if not is_instrumentation_enabled():
            return None
        try:
            model = kwargs.get("model")
            run = start_step(
                "message",
                model=model if isinstance(model, str) else None,
                provider=attr.PROVIDER_OPENAI,
                tracer_provider=settings.tracer_provider,
            )
        except Exception:
            report("starting the span")
            return None
        call = cls(api, run, False, instance)
        if run.recording:
            try:
                call.capture = settings.capture_content and active_policy().capture is True
                run.set_attributes(api.request_attributes(instance, kwargs))
                if call.capture:
                    run.set_input(api.messages(kwargs))
                    definitions = requests.tool_definitions(kwargs)
                    if definitions:
                        run.set_attributes({attr.GEN_AI_TOOL_DEFINITIONS: active_policy().json(definitions)})
            except Exception:
                report("recording the request")
        run.activate()
        return call

    def returned(self, result: Any) -> Any:
        """The client returned ``result``: end the step (a stream: hand back a proxy that will)."""
        self.run.deactivate()
        try:
            if isinstance(result, (openai.Stream, openai.AsyncStream)):
                if not self.run.recording:
                    self.run.end()
                    return result
                from agenteval_instrumentation_openai.streams import proxy

                self.reader = self.api.stream_reader()
                return proxy(result, self)
            reply = self.api.reply(result) if self.run.recording else None
        except Exception:
            report("reading the reply")
            reply = None
        self.finish(reply, None)
        return result

    def observe(self, item: Any) -> None:
        """A chunk or event of the stream went by."""
        reader = self.reader
        if reader is None:
            return
        try:
            reader.add(item)
        except Exception:
            report("reading a stream chunk")
            self.reader = None

    def stream_ended(self, error: BaseException | None) -> None:
        """The stream ended (exhausted, closed, abandoned, or failed with ``error``): once."""
        if self.run.ended:
            return
        reply = None
        try:
            if self.reader is not None:
                reply = self.reader.result()
        except Exception:
            report("reading the stream's reply")
        self.finish(reply, error)

    def finish(self, reply: Reply | None, error: BaseException | None) -> None:
        """Record ``reply`` and end the step, failed with ``error`` when there is one."""
        run = self.run
        if reply is not None and run.recording:
            try:
                run.set_attributes(_reply_attributes(reply))
                if self.capture:
                    run.set_result(reply.message())
            except Exception:
                report("recording the reply")
        if error is None:
            run.end()
            return
        try:
            secrets = client_secrets(self.resource)
        except Exception:
            report("reading the client's keys")
            secrets = ()
        run.fail(error, secrets=secrets)


def _reply_attributes(reply: Reply) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    if reply.response_id:
        attributes[attr.GEN_AI_RESPONSE_ID] = reply.response_id
    if reply.model:
        attributes[attr.GEN_AI_RESPONSE_MODEL] = reply.model
    if reply.finish_reasons:
        attributes[attr.GEN_AI_RESPONSE_FINISH_REASONS] = tuple(reply.finish_reasons)
    if reply.input_tokens is not None:
        attributes[attr.GEN_AI_USAGE_INPUT_TOKENS] = reply.input_tokens
    if reply.output_tokens is not None:
        attributes[attr.GEN_AI_USAGE_OUTPUT_TOKENS] = reply.output_tokens
    return attributes


Wrapper = Callable[[Callable[..., Any], Any, tuple[Any, ...], dict[str, Any]], Any]


def sync_wrapper(api: Api, settings: Settings) -> Wrapper:
    """The ``wrapt`` wrapper of a sync ``create``."""

    def traced_create(wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        call = ModelCall.start(api, settings, instance, kwargs)
        if call is None:
            return wrapped(*args, **kwargs)
        try:
            result = wrapped(*args, **kwargs)
        except BaseException as error:
            call.finish(None, error)
            raise
        return call.returned(result)

    return traced_create


def async_wrapper(api: Api, settings: Settings) -> Wrapper:
    """The ``wrapt`` wrapper of an async ``create``."""

    async def traced_create(
        wrapped: Callable[..., Any], instance: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        call = ModelCall.start(api, settings, instance, kwargs)
        if call is None:
            return await wrapped(*args, **kwargs)
        try:
            result = await wrapped(*args, **kwargs)
        except BaseException as error:
            call.finish(None, error)
            raise
        return call.returned(result)

    return traced_create


TARGETS: Final[tuple[tuple[str, str, Callable[[Api, Settings], Wrapper], Api], ...]] = (
    ("openai.resources.chat.completions", "Completions", sync_wrapper, CHAT),
    ("openai.resources.chat.completions", "AsyncCompletions", async_wrapper, CHAT),
    ("openai.resources.responses", "Responses", sync_wrapper, RESPONSES),
    ("openai.resources.responses", "AsyncResponses", async_wrapper, RESPONSES),
)
"""``(module, class, wrapper factory, API)``: each class's ``create`` is wrapped."""
