"""Each judge call as an OpenTelemetry GenAI ``chat`` span, marked as evaluation traffic
(``agenteval.evaluation`` = true) so it is never evaluated itself.

The span carries the model, the endpoint's address, the token usage, the finish reason, the
number of requests made and the response format used; its duration is the call's latency. The
messages are recorded only when the content policy given captures content, and cleaned by it.
The API key is never recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from agenteval_otel import semconv as attr

__all__ = ["ContentCleaner", "end_chat_span", "start_chat_span"]

TRACER_NAME = "agenteval_otel.judge"


class ContentCleaner(Protocol):
    """What the judge needs of a content policy (``agenteval_otel.tracing.ContentPolicy``)."""

    @property
    def capture(self) -> bool | None: ...

    def json(self, value: Any) -> str: ...


def _parts(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages in the GenAI semantic conventions' shape (role and text parts)."""
    return [{"role": m.get("role"), "parts": [{"type": "text", "content": m.get("content") or ""}]}
            for m in messages]


def start_chat_span(
    tracer: Tracer | None,
    policy: ContentCleaner | None,
    *,
    model: str,
    base_url: str,
    messages: Sequence[dict[str, Any]],
    temperature: float,
    seed: int | None,
    criterion: str | None,
    output_type: str = "json",
) -> Span:
    """Start the span of one judge call (ended by :func:`end_chat_span`)."""
    url = urlsplit(base_url)
    attributes: dict[str, Any] = {
        attr.GEN_AI_OPERATION_NAME: attr.OP_CHAT,
        attr.GEN_AI_PROVIDER_NAME: "openai",
        attr.GEN_AI_REQUEST_MODEL: model,
        attr.GEN_AI_REQUEST_TEMPERATURE: temperature,
        attr.GEN_AI_OUTPUT_TYPE: output_type,
        attr.EVALUATION_MARKER: True,
    }
    if seed is not None:
        attributes[attr.GEN_AI_REQUEST_SEED] = seed
    if url.hostname:
        attributes[attr.SERVER_ADDRESS] = url.hostname
    if url.port:
        attributes[attr.SERVER_PORT] = url.port
    if criterion:
        attributes[attr.EVAL_CRITERION] = criterion
    if policy is not None and policy.capture:
        attributes[attr.GEN_AI_INPUT_MESSAGES] = policy.json(_parts(messages))
    return (tracer or trace.get_tracer(TRACER_NAME)).start_span(
        f"{attr.OP_CHAT} {model}", kind=SpanKind.CLIENT, attributes=attributes)


def end_chat_span(
    span: Span,
    policy: ContentCleaner | None,
    *,
    response: Any = None,
    text: str | None = None,
    attempts: int,
    response_format: str,
    error: BaseException | None = None,
    redact: Callable[[str], str] = str,
) -> None:
    """Record how the call went and end ``span``; a response of the wrong shape (the judge's
    answer could not be read) records nothing of it, and never raises."""
    if span.is_recording():
        span.set_attribute(attr.JUDGE_ATTEMPTS, attempts)
        span.set_attribute(attr.JUDGE_RESPONSE_FORMAT, response_format)
        if response is not None:
            try:
                _record_response(span, response)
            except Exception:  # noqa: BLE001 - the call's error says what was wrong with it
                pass
        if text is not None and policy is not None and policy.capture:
            span.set_attribute(attr.GEN_AI_OUTPUT_MESSAGES,
                               policy.json(_parts([{"role": "assistant", "content": text}])))
        if error is not None:
            span.set_attribute(attr.ERROR_TYPE, type(error).__name__)
            span.set_status(Status(StatusCode.ERROR, redact(str(error))))
    span.end()


def _record_response(span: Span, response: Any) -> None:
    model = getattr(response, "model", None)
    if model:
        span.set_attribute(attr.GEN_AI_RESPONSE_MODEL, str(model))
    response_id = getattr(response, "id", None)
    if response_id:
        span.set_attribute(attr.GEN_AI_RESPONSE_ID, str(response_id))
    reasons = [str(c.finish_reason) for c in getattr(response, "choices", None) or [] if c.finish_reason]
    if reasons:
        span.set_attribute(attr.GEN_AI_RESPONSE_FINISH_REASONS, reasons)
    usage = getattr(response, "usage", None)
    if usage is not None:
        span.set_attribute(attr.GEN_AI_USAGE_INPUT_TOKENS, int(getattr(usage, "prompt_tokens", 0) or 0))
        span.set_attribute(attr.GEN_AI_USAGE_OUTPUT_TOKENS, int(getattr(usage, "completion_tokens", 0) or 0))
