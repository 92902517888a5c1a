"""``LogRecord``: a log record correlated with a span, and how it joins its span.

The GenAI semantic conventions now carry content in log records (the
``gen_ai.client.inference.operation.details`` event, and the per-message events
``gen_ai.user.message``, ``gen_ai.choice`` ...) instead of span attributes. A log record names
its span by trace and span id; :func:`attach_logs` hands each span its records as span events,
so the convention readers find content in one place whichever way it was written.

>>> from agenteval_otel.trajectory.spans import SpanRecord
>>> span = SpanRecord(trace_id="a" * 32, span_id="b" * 16, parent_id=None, name="chat")
>>> log = LogRecord(trace_id="a" * 32, span_id="b" * 16, event_name="gen_ai.user.message",
...                 body={"content": "Hi"})
>>> [(e.name, e.attributes) for e in next(attach_logs([span], [log])).events]
[('gen_ai.user.message', {'content': 'Hi'})]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from agenteval_otel.trajectory.spans import SpanEvent, SpanRecord

__all__ = ["LogRecord", "attach_logs"]

EVENT_NAME_ATTRIBUTE = "event.name"
"""Where log records written before ``LogRecord.event_name`` existed carry their event name."""


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One log record: the span it belongs to (``None`` ids when it belongs to none), its event
    name, its body (any plain value) and attributes."""

    trace_id: str | None
    span_id: str | None
    event_name: str = ""
    body: Any = None
    attributes: dict[str, Any] = field(default_factory=dict)
    time_ns: int = 0

    @property
    def name(self) -> str:
        """The event name: ``event_name``, else the ``event.name`` attribute."""
        return self.event_name or str(self.attributes.get(EVENT_NAME_ATTRIBUTE) or "")

    def as_event(self) -> SpanEvent:
        """The record as a span event: the body's fields (a map, or a string holding a JSON
        object, as Semantic Kernel writes it) or ``body`` beside the attributes."""
        attributes = {k: v for k, v in self.attributes.items() if k != EVENT_NAME_ATTRIBUTE}
        body = _json_object(self.body) if isinstance(self.body, str) else self.body
        if isinstance(body, Mapping):
            attributes = {**body, **attributes}
        elif body is not None:
            attributes.setdefault("body", body)
        return SpanEvent(self.name, self.time_ns, attributes)


def _json_object(text: str) -> Any:
    """``text`` decoded when it holds a JSON object; else ``text`` as it is."""
    if text[:1] != "{":
        return text
    try:
        decoded = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
    return decoded if isinstance(decoded, dict) else text


def attach_logs(records: Iterable[SpanRecord], logs: Iterable[LogRecord]) -> Iterator[SpanRecord]:
    """``records`` with the log records of each span appended to its events (in time order);
    records without logs pass through unchanged, and streaming is kept (the logs are indexed
    first, by span)."""
    by_span: dict[tuple[str, str], list[LogRecord]] = {}
    for log in logs:
        if log.trace_id and log.span_id:
            by_span.setdefault((log.trace_id, log.span_id), []).append(log)
    if not by_span:
        yield from records
        return
    for record in records:
        found = by_span.get((record.trace_id, record.span_id))
        if not found:
            yield record
            continue
        events = tuple(log.as_event() for log in sorted(found, key=lambda log: log.time_ns))
        yield dataclasses.replace(record, events=record.events + events)
