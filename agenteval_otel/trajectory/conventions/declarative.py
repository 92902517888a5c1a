"""Declarative readers: a producer's convention taught by a JSON or YAML mapping, no Python.

A mapping lists rules, tried in order; the first whose ``match`` a span meets reads it::

    convention: acme                    # what --explain names (default: the file's name)
    rules:
      - match:                          # every condition given must hold
          equals: {acme.step.kind: tool}  # attribute values (a list: any one of them)
          has: [acme.tool.args]         # attribute keys the span carries
          span_name: "acme (?P<name>.+)"  # a regular expression the whole span name matches
        role: tool
        name: acme.tool.name
        arguments: acme.tool.args

``role`` is ``agent``, ``tool``, ``model`` (or ``chat``), ``node``, ``conditional``, ``handoff``
or ``ignored``. Every role reads ``name`` (default: the ``name`` group of ``span_name``, else the
span's name) and ``conversation_id``; tools read ``arguments``, ``result`` and ``error`` (default:
the span's error status); agents and models read ``input`` and ``output`` (the user's input and
the answer; a model's may be a list of chat messages); conditionals read ``result``, the branch
taken. Each is a source: an attribute key, optionally followed by a JSON path into the
attribute's JSON value (``key$.a.b``, ``key$.messages[-1].content``: ``.name`` steps into an
object, ``[N]`` into an array, from its end when negative), or a list of sources, the first
present winning.

A ``DeclarativeReader`` is a reader like any other: ``readers=(*load_readers("acme.yaml"),
*default_readers())``, or ``agenteval trajectory --readers acme.yaml``.

>>> reader = DeclarativeReader({"rules": [{"match": {"equals": {"acme.step.kind": "tool"}},
...     "role": "tool", "name": "acme.tool.name", "arguments": "acme.tool.args$.query"}]})
>>> record = SpanRecord(trace_id="a" * 32, span_id="b" * 16, parent_id=None, name="step",
...     attributes={"acme.step.kind": "tool", "acme.tool.name": "search",
...                 "acme.tool.args": '{"query": {"city": "Paris"}}'})
>>> reading = reader(record)
>>> reading.role.value, reading.name, reading.args
('tool', 'search', {'city': 'Paris'})
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agenteval_otel.errors import ConfigError
from agenteval_otel.loading import read_json, read_yaml, validation_message
from agenteval_otel.trajectory.conventions.genai_messages import parse_messages
from agenteval_otel.trajectory.conventions.reading import ChatMessage, SpanReading, SpanRole
from agenteval_otel.trajectory.conventions.values import decode_json, decode_result
from agenteval_otel.trajectory.messages import decode_arguments, message_text
from agenteval_otel.trajectory.spans import SpanRecord

__all__ = ["DeclarativeReader", "load_readers"]

_ROLES = {"agent": SpanRole.AGENT, "tool": SpanRole.TOOL, "model": SpanRole.MODEL, "chat": SpanRole.MODEL,
          "node": SpanRole.NODE, "conditional": SpanRole.CONDITIONAL, "handoff": SpanRole.HANDOFF,
          "ignored": SpanRole.IGNORED}
_READ_BY = {"arguments": ("tool",), "result": ("tool", "conditional"), "error": ("tool",),
            "input": ("agent", "model", "chat"), "output": ("agent", "model", "chat")}
_STEP = re.compile(r"\.(?P<key>[^.\[\]]+)|\[(?P<index>-?[0-9]+)\]")
_SOURCE_FORM = "an attribute key, optionally followed by a JSON path such as $.messages[-1].content"

Scalar = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class _Source:
    """An attribute key and the JSON path into its value."""

    key: str
    path: tuple[str | int, ...]

    @classmethod
    def parse(cls, text: str) -> _Source:
        key, dollar, rest = text.partition("$")
        if not key.strip() or (dollar and not rest):
            raise ValueError(f"expected {_SOURCE_FORM}, got {text!r}")
        path: list[str | int] = []
        position = 0
        while position < len(rest):
            step = _STEP.match(rest, position)
            if step is None:
                raise ValueError(f"expected {_SOURCE_FORM}, got {text!r} (cannot read {rest[position:]!r})")
            path.append(step["key"] if step["key"] is not None else int(step["index"]))
            position = step.end()
        return cls(key, tuple(path))

    def value(self, attributes: Mapping[str, Any]) -> Any:
        """The value at this source, ``None`` when any step of it is missing."""
        value = attributes.get(self.key)
        for step in self.path:
            value = decode_json(value)
            if isinstance(step, int):
                value = value[step] if isinstance(value, list) and -len(value) <= step < len(value) else None
            else:
                value = value.get(step) if isinstance(value, dict) else None
            if value is None:
                return None
        return value


def _sources(value: str | list[str] | None) -> tuple[_Source, ...]:
    if value is None:
        return ()
    texts = [value] if isinstance(value, str) else value
    if not texts:
        raise ValueError(f"expected {_SOURCE_FORM}, or a list of them; got an empty list")
    return tuple(_Source.parse(text) for text in texts)


class _MatchSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    span_name: str | None = None
    has: list[str] = Field(default_factory=list)
    equals: dict[str, Scalar | list[Scalar]] = Field(default_factory=dict)

    @field_validator("span_name")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"not a regular expression ({exc}): {pattern!r}") from None
        return pattern

    @model_validator(mode="after")
    def _says_something(self) -> _MatchSpec:
        if self.span_name is None and not self.has and not self.equals:
            raise ValueError("expected at least one of span_name, has, equals")
        return self


class _RuleSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    match: _MatchSpec
    role: Literal["agent", "tool", "model", "chat", "node", "conditional", "handoff", "ignored"]
    name: str | list[str] | None = None
    conversation_id: str | list[str] | None = None
    arguments: str | list[str] | None = None
    result: str | list[str] | None = None
    error: str | list[str] | None = None
    input: str | list[str] | None = None
    output: str | list[str] | None = None

    @field_validator("name", "conversation_id", "arguments", "result", "error", "input", "output")
    @classmethod
    def _readable(cls, value: str | list[str] | None) -> str | list[str] | None:
        _sources(value)
        return value

    @model_validator(mode="after")
    def _read_by_role(self) -> _RuleSpec:
        for field, roles in _READ_BY.items():
            if getattr(self, field) is not None and self.role not in roles:
                raise ValueError(f"{field}: {self.role} steps do not read it, only {' and '.join(roles)} steps")
        return self


class _MappingSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    convention: str | None = Field(default=None, min_length=1)
    rules: list[_RuleSpec] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class _Rule:
    """One compiled rule: what a span must carry, and where each step field comes from."""

    span_name: re.Pattern[str] | None
    has: tuple[str, ...]
    equals: tuple[tuple[str, tuple[Scalar, ...]], ...]
    role: SpanRole
    fields: tuple[tuple[str, tuple[_Source, ...]], ...]

    @classmethod
    def of(cls, spec: _RuleSpec) -> _Rule:
        match = spec.match
        fields = tuple((field, _sources(getattr(spec, field)))
                       for field in ("name", "conversation_id", *_READ_BY) if getattr(spec, field) is not None)
        return cls(
            None if match.span_name is None else re.compile(match.span_name),
            tuple(match.has),
            tuple((key, tuple(v) if isinstance(v, list) else (v,)) for key, v in match.equals.items()),
            _ROLES[spec.role],
            fields,
        )

    def read(self, record: SpanRecord, convention: str) -> SpanReading | None:
        """The reading of ``record`` when it meets this rule, else ``None``."""
        a = record.attributes
        if any(key not in a for key in self.has) or any(
                key not in a or a[key] not in values for key, values in self.equals):
            return None
        named = None
        if self.span_name is not None:
            found = self.span_name.fullmatch(record.name)
            if found is None:
                return None
            named = found.groupdict().get("name")
        values = {field: next((v for s in sources if (v := s.value(a)) is not None), None)
                  for field, sources in self.fields}
        name = values.get("name")
        reading = SpanReading(self.role, str(name) if name is not None else named or record.name, convention,
                              conversation_id=_text(values.get("conversation_id")))
        role = self.role
        if role is SpanRole.TOOL:
            reading.args, reading.raw_args = decode_arguments(values.get("arguments"))
            reading.result = decode_result(values.get("result"))
            reading.error = _text(values.get("error") or None) or record.error
        elif role is SpanRole.CONDITIONAL:
            branch = decode_result(values.get("result"))
            reading.branch = branch if branch is None or isinstance(branch, (str, list)) else str(branch)
        elif role is SpanRole.AGENT:
            reading.input, reading.output = values.get("input"), values.get("output")
        elif role is SpanRole.MODEL:
            reading.input_messages = _messages(values.get("input"), "user")
            reading.output_messages = _messages(values.get("output"), "assistant")
        return reading


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _messages(value: Any, role: str) -> tuple[ChatMessage, ...]:
    """Chat messages as a producer's JSON holds them, or one message of ``role`` with the text."""
    if value is None:
        return ()
    messages = parse_messages(value) if isinstance(decode_json(value), (list, dict)) else ()
    if messages:
        return messages
    text = message_text(decode_json(value))
    return (ChatMessage(role, text),) if text else ()


class DeclarativeReader:
    """A convention reader made from a mapping (see the module docstring): the first rule a span
    meets reads it. A mapping that is not valid raises ``ConfigError`` naming ``source`` and the
    JSON path of what is wrong."""

    __slots__ = ("convention", "rules")

    def __init__(self, mapping: Any, *, source: str = "reader mapping", convention: str = "declarative") -> None:
        if not isinstance(mapping, dict):
            raise ConfigError(f"{source}: expected a mapping with rules, got {type(mapping).__name__}")
        try:
            spec = _MappingSpec.model_validate(mapping)
        except ValidationError as exc:
            raise ConfigError(validation_message(source, exc)) from None
        self.convention = spec.convention or convention
        self.rules = tuple(_Rule.of(rule) for rule in spec.rules)

    def __call__(self, record: SpanRecord) -> SpanReading | None:
        for rule in self.rules:
            reading = rule.read(record, self.convention)
            if reading is not None:
                return reading
        return None

    def __repr__(self) -> str:
        return f"DeclarativeReader({self.convention!r}, {len(self.rules)} rules)"


def load_readers(*paths: str | Path) -> tuple[DeclarativeReader, ...]:
    """One reader per mapping file: JSON, or YAML (``.yaml``/``.yml``, needs PyYAML). A file that
    cannot be read or is not a valid mapping raises ``ConfigError`` naming it and the line or the
    JSON path."""
    readers = []
    for path in paths:
        file = Path(path)
        data = _read_yaml(file) if file.suffix.lower() in (".yaml", ".yml") else read_json(file, ConfigError)
        readers.append(DeclarativeReader(data, source=str(file), convention=file.name.split(".")[0] or "declarative"))
    return tuple(readers)


def _read_yaml(file: Path) -> Any:
    return read_yaml(file, ConfigError, hint=", or write the mapping as JSON")
