"""``SpanRecord``: one finished span, whatever produced or stored it.

Every trace source (the SDK, OTLP/JSON and protobuf files, Jaeger) turns its spans into
``SpanRecord``s; nothing downstream knows where a span came from. Ids are lower-case hex
(trace 32, span 16), times are nanoseconds since the epoch, and attribute values are plain
Python values (str, bool, int, float, bytes, lists and dicts), JSON strings left as they are.

>>> record = SpanRecord(trace_id="0af7651916cd43dd8448eb211c80319c", span_id="b7ad6b7169203331",
...                     parent_id=None, name="invoke_agent weather", start_ns=1, end_ns=5)
>>> record.is_root, record.duration_ns
(True, 4)
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

__all__ = [
    "REMOTE_PARENT_FLAGS",
    "SpanEvent",
    "SpanLink",
    "SpanRecord",
    "SpanStatus",
    "normalize_span_id",
    "normalize_trace_id",
    "plain_value",
    "record_size",
]

REMOTE_PARENT_FLAGS = 0x300
"""OTLP span flags bits 8 and 9: whether the parent's remoteness is known, and that it is remote."""

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())

SPAN_KINDS = ("unspecified", "internal", "server", "client", "producer", "consumer")
"""The span kinds, in the order of their OTLP enum values."""

_HEX = re.compile(r"[0-9a-fA-F]+")


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """A timestamped event recorded on a span (an exception, a log line, a GenAI event)."""

    name: str
    time_ns: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SpanLink:
    """A link from a span to another span, possibly in another trace."""

    trace_id: str
    span_id: str
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SpanStatus:
    """A span's status: ``code`` is ``"unset"``, ``"ok"`` or ``"error"``."""

    code: str = "unset"
    description: str | None = None

    @property
    def is_error(self) -> bool:
        """Whether the span ended in error."""
        return self.code == "error"


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """An immutable, source-neutral view of one finished span.

    ``kind`` is one of ``unspecified, internal, server, client, producer, consumer``.
    ``attributes`` and ``resource`` are plain dicts that must not be mutated.
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str = "internal"
    start_ns: int = 0
    end_ns: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    status: SpanStatus = SpanStatus()
    resource: dict[str, Any] = field(default_factory=dict)
    scope_name: str | None = None
    scope_version: str | None = None
    links: tuple[SpanLink, ...] = ()
    parent_is_remote: bool = False
    """Whether the parent is in another process (a gateway's span, say): the span is the local
    root of its invocation even when its parent id is set (OTLP's span flags carry this)."""

    @property
    def is_root(self) -> bool:
        """Whether the span has no parent."""
        return self.parent_id is None

    @property
    def is_local_root(self) -> bool:
        """Whether the span roots its invocation in its process: no parent, or a remote one."""
        return self.parent_id is None or self.parent_is_remote

    @property
    def duration_ns(self) -> int:
        """End minus start, never negative."""
        return max(0, self.end_ns - self.start_ns)

    @property
    def error(self) -> str | None:
        """Why the span failed, ``Type: message`` where the span says both (status description,
        ``error.type``, the first ``exception`` event); ``None`` if it did not fail (an ERROR
        status, or an ``error.type`` attribute, marks failure)."""
        kind = self.attributes.get("error.type")
        if not self.status.is_error and kind is None:
            return None
        message = self.status.description
        for event in self.events:
            if event.name == "exception":
                kind = kind or event.attributes.get("exception.type")
                message = message or event.attributes.get("exception.message")
                break
        if kind and message and not str(message).startswith(str(kind).rsplit(".", 1)[-1]):
            return f"{kind}: {message}"
        return str(message or kind or "error")

    @property
    def service_name(self) -> str | None:
        """The ``service.name`` resource attribute, if any."""
        value = self.resource.get("service.name")
        return None if value is None else str(value)

    @classmethod
    def from_readable_span(cls, span: ReadableSpan) -> SpanRecord:
        """Build a record from a finished OpenTelemetry SDK span."""
        context = span.get_span_context()
        if context is None:
            raise ValueError(f"span {span.name!r} has no span context")
        parent = span.parent
        scope = span.instrumentation_scope
        status = span.status
        return cls(
            trace_id=format(context.trace_id, "032x"),
            span_id=format(context.span_id, "016x"),
            parent_id=format(parent.span_id, "016x") if parent and parent.span_id else None,
            parent_is_remote=bool(parent is not None and parent.is_remote),
            name=span.name,
            kind=span.kind.name.lower(),
            start_ns=span.start_time or 0,
            end_ns=span.end_time or span.start_time or 0,
            attributes=plain_attributes(span.attributes),
            events=tuple(
                SpanEvent(event.name, event.timestamp or 0, plain_attributes(event.attributes))
                for event in span.events
            ),
            status=SpanStatus(status.status_code.name.lower(), status.description),
            resource=plain_attributes(span.resource.attributes if span.resource else None),
            scope_name=scope.name if scope else None,
            scope_version=scope.version if scope else None,
            links=tuple(
                SpanLink(
                    format(link.context.trace_id, "032x"),
                    format(link.context.span_id, "016x"),
                    plain_attributes(link.attributes),
                )
                for link in span.links
            ),
        )


def _setter(name: str) -> Any:
    return SpanRecord.__dict__[name].__set__


(_set_trace_id, _set_span_id, _set_parent_id, _set_name, _set_kind, _set_start_ns, _set_end_ns, _set_attributes,
 _set_events, _set_status, _set_resource, _set_scope_name, _set_scope_version, _set_links,
 _set_parent_is_remote) = map(_setter, (
    "trace_id", "span_id", "parent_id", "name", "kind", "start_ns", "end_ns", "attributes", "events", "status",
    "resource", "scope_name", "scope_version", "links", "parent_is_remote"))
_UNSET = SpanStatus()


def _init_record(
    self: SpanRecord,
    trace_id: str,
    span_id: str,
    parent_id: str | None,
    name: str,
    kind: str = "internal",
    start_ns: int = 0,
    end_ns: int = 0,
    attributes: dict[str, Any] | None = None,
    events: tuple[SpanEvent, ...] = (),
    status: SpanStatus = _UNSET,
    resource: dict[str, Any] | None = None,
    scope_name: str | None = None,
    scope_version: str | None = None,
    links: tuple[SpanLink, ...] = (),
    parent_is_remote: bool = False,
) -> None:
    # Each field set through its slot, not through the frozen class's checked ``__setattr__``:
    # half the cost of building a record, and files are read a million records at a time.
    _set_trace_id(self, trace_id)
    _set_span_id(self, span_id)
    _set_parent_id(self, parent_id)
    _set_name(self, name)
    _set_kind(self, kind)
    _set_start_ns(self, start_ns)
    _set_end_ns(self, end_ns)
    _set_attributes(self, {} if attributes is None else attributes)
    _set_events(self, events)
    _set_status(self, status)
    _set_resource(self, {} if resource is None else resource)
    _set_scope_name(self, scope_name)
    _set_scope_version(self, scope_version)
    _set_links(self, links)
    _set_parent_is_remote(self, parent_is_remote)


SpanRecord.__init__ = _init_record  # type: ignore[method-assign]


def plain_value(value: Any) -> Any:
    """An attribute value as a plain Python value: sequences become lists."""
    if isinstance(value, (str, bytes, bool, int, float)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(key): plain_value(item) for key, item in value.items()}
    if isinstance(value, Sequence):
        return [plain_value(item) for item in value]
    return value


def plain_attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    """A plain dict copy of an attribute mapping."""
    if not attributes:
        return {}
    return {str(key): plain_value(value) for key, value in attributes.items()}


def _normalize_id(value: str | bytes | None, size: int) -> str | None:
    """Lower-case hex of ``size`` bytes from hex (any case, short ids zero-padded) or base64.

    Returns ``None`` for an absent or all-zero id; raises ``ValueError`` for anything else.
    """
    if value is None:
        return None
    if not isinstance(value, (str, bytes)):
        raise ValueError(f"expected a hex or base64 id, got {type(value).__name__}")
    if isinstance(value, bytes):
        if len(value) not in (0, size):
            raise ValueError(f"expected a {size}-byte id, got {len(value)} bytes")
        hexed = value.hex()
    else:
        text = value.strip()
        width = size * 2
        if not text:
            return None
        if _HEX.fullmatch(text) and len(text) in (16, 32) and len(text) <= width:
            hexed = text.lower().zfill(width)
        else:
            hexed = _base64_id(text, size) or _short_hex_id(text, width)
    if not hexed.strip("0"):
        return None
    return hexed


def _base64_id(text: str, size: int) -> str | None:
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (binascii.Error, ValueError):
            return None
    return raw.hex() if len(raw) == size else None


def _short_hex_id(text: str, width: int) -> str:
    if _HEX.fullmatch(text) and len(text) <= width:
        return text.lower().zfill(width)
    raise ValueError(f"expected a hex or base64 id of {width // 2} bytes, got {text!r}")


def normalize_trace_id(value: str | bytes | None) -> str | None:
    """A trace id as 32 lower-case hex digits (``None`` when absent or all zeros).

    >>> normalize_trace_id("5B8EFFF798038103D269B633813FC60C")
    '5b8efff798038103d269b633813fc60c'
    >>> normalize_trace_id("2be38093ead7a083")
    '00000000000000002be38093ead7a083'
    """
    return _normalize_id(value, 16)


def normalize_span_id(value: str | bytes | None) -> str | None:
    """A span id as 16 lower-case hex digits (``None`` when absent or all zeros).

    >>> normalize_span_id("7uGbfsPBsXQ=")
    'eee19b7ec3c1b174'
    """
    return _normalize_id(value, 8)


_OBJECT = 64  # a small Python object's header, roughly
_ENTRY = 120  # a dict entry with its key and value objects


def record_size(record: SpanRecord) -> int:
    """An estimate, in bytes, of the memory ``record`` holds (its strings, attributes, events
    and links; the resource is shared and not counted): what byte budgets charge for a span.

    >>> record_size(SpanRecord("0" * 32, "1" * 16, None, "tool", attributes={"q": "x" * 1000})) > 1000
    True
    """
    size = 600 + len(record.name) + _value_size(record.attributes)
    for event in record.events:
        size += _OBJECT * 2 + len(event.name) + _value_size(event.attributes)
    for link in record.links:
        size += _OBJECT * 3 + _value_size(link.attributes)
    if record.status.description:
        size += _OBJECT + len(record.status.description)
    return size


def _value_size(value: Any) -> int:
    if isinstance(value, (str, bytes)):
        return _OBJECT + len(value)
    if isinstance(value, dict):
        return _OBJECT * 2 + sum(_ENTRY + len(key) + _value_size(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return _OBJECT + sum(8 + _value_size(item) for item in value)
    return 32
