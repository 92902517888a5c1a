"""The data shape of a message and of a tool call, shared by trajectories, eval sets and reports.

One role table, one "text of a message" helper and one argument decoder live here, so a message
or a set of tool arguments reads the same whether it came from a trace or from an eval-set file.

>>> MessageContent(role="model", content=[{"text": "Hi"}, {"type": "text", "content": "there"}]).get_text()
'Hi\\nthere'
>>> ToolCall(name="get_weather", args='{"city": "Paris"}').args
{'city': 'Paris'}
>>> ToolCall(name="f", args={"n": 1}).matches(ToolCall(name="f", args={"n": 1.0}))
True
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import orjson
from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "ArgumentRule",
    "MessageContent",
    "ToolCall",
    "decode_arguments",
    "describe_call",
    "json_equal",
    "message_text",
    "normalize_role",
    "parse_args",
    "python_literal",
]

_ROLES = {
    "human": "user",
    "humanmessage": "user",
    "user": "user",
    "ai": "assistant",
    "aimessage": "assistant",
    "assistant": "assistant",
    "model": "assistant",
    "system": "system",
    "systemmessage": "system",
    "developer": "system",
    "tool": "tool",
    "toolmessage": "tool",
    "function": "tool",
}
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
_MAX_LITERAL = 100_000


def normalize_role(role: Any) -> str:
    """A message role in the GenAI vocabulary: ``user``, ``assistant``, ``system`` or ``tool``
    (LangChain's ``human``/``ai``, Google's ``model`` ...); other roles lower-cased.

    >>> normalize_role("AIMessage"), normalize_role("model")
    ('assistant', 'assistant')
    """
    text = str(role or "").lower()
    return _ROLES.get(text, text or "unknown")


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type", "text") in _TEXT_PARTS:
        for key in ("text", "content"):
            value = part.get(key)
            if isinstance(value, str):
                return value
    return None


def message_text(content: Any) -> str | None:
    """The text of a message's content: a string, or the text parts of a list of parts
    (``{"type": "text", "text"|"content": ...}`` or Google's ``{"text": ...}``) joined by newlines.
    ``None`` when there is no text."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, dict):
        for key in ("text", "content"):
            value = content.get(key)
            if isinstance(value, str):
                return value
        return None
    if isinstance(content, Sequence):
        texts = [text for part in content if (text := _part_text(part))]
        return "\n".join(texts) if texts else None
    return str(content)


def decode_arguments(value: Any) -> tuple[dict[str, Any] | None, Any]:
    """Tool arguments as ``(args, raw)``: a JSON object (a string, bytes or a mapping) gives
    ``(dict, None)``; anything else that was recorded (a bare string, a number, a list) gives
    ``(None, value)``; nothing recorded gives ``(None, None)``.

    >>> decode_arguments('{"city": "Paris"}'), decode_arguments("Paris"), decode_arguments("")
    (({'city': 'Paris'}, None), (None, 'Paris'), (None, None))
    >>> decode_arguments("{'city': 'Paris'}")  # a Python repr, read as a literal
    ({'city': 'Paris'}, None)
    """
    if value is None:
        return None, None
    if isinstance(value, dict):
        return dict(value), None
    if isinstance(value, (str, bytes)):
        if not value.strip():
            return None, None
        try:
            decoded = orjson.loads(value)
        except orjson.JSONDecodeError:
            literal = python_literal(value)
            return (literal, None) if isinstance(literal, dict) else (None, value)
        if isinstance(decoded, dict):
            return decoded, None
        return None, decoded
    return None, value


def python_literal(value: str | bytes) -> Any:
    """The dict or list a Python repr such as ``"{'city': 'Paris'}"`` spells (read as a literal,
    never run), else ``None``.

    >>> python_literal("[{'city': 'Paris', 'temp_c': 18.0}]"), python_literal("Paris")
    ([{'city': 'Paris', 'temp_c': 18.0}], None)
    """
    text = value.decode(errors="replace") if isinstance(value, bytes) else value
    text = text.strip()
    if text[:1] + text[-1:] not in ("{}", "[]") or len(text) > _MAX_LITERAL:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def parse_args(value: Any) -> dict[str, Any]:
    """Arguments as a dict: a JSON object string is parsed, nothing is ``{}``, anything else is
    kept under ``"value"``.

    >>> parse_args('{"n": 1}'), parse_args(None), parse_args(3)
    ({'n': 1}, {}, {'value': 3})
    """
    args, raw = decode_arguments(value)
    if args is not None:
        return args
    return {} if raw is None else {"value": raw}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_equal(expected: Any, actual: Any, leaf: Callable[[Any, Any], bool | None] | None = None) -> bool:
    """Equality after JSON normalisation: ``1 == 1.0`` but ``1 != "1"`` and ``True != 1``; a JSON
    string of an object equals the object. ``leaf(expected, actual)`` is asked first at every
    level and decides when it returns a bool (rules such as a numeric tolerance plug in there).

    >>> json_equal({"n": 1, "m": [True]}, {"n": 1.0, "m": [True]}), json_equal(1, "1")
    (True, False)
    """
    if leaf is not None:
        verdict = leaf(expected, actual)
        if verdict is not None:
            return verdict
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if _is_number(expected) or _is_number(actual):
        return _is_number(expected) and _is_number(actual) and expected == actual
    if isinstance(expected, dict) or isinstance(actual, dict):
        if isinstance(expected, str) or isinstance(actual, str):
            return json_equal(parse_args(expected), parse_args(actual), leaf)
        if not (isinstance(expected, dict) and isinstance(actual, dict)):
            return False
        return expected.keys() == actual.keys() and all(json_equal(expected[k], actual[k], leaf) for k in expected)
    if isinstance(expected, (list, tuple)) or isinstance(actual, (list, tuple)):
        if not (isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple))):
            return False
        return len(expected) == len(actual) and all(json_equal(e, a, leaf) for e, a in zip(expected, actual))
    return bool(expected == actual)


class MessageContent(BaseModel):
    """A message: a role and its content, as text or as a list of parts.

    Parts are dicts such as ``{"type": "text", "text": ...}`` or Google ADK's ``{"text": ...}``.
    Roles read through one table: ``model`` (ADK) and ``ai`` are ``assistant``, ``human`` is ``user``.
    """

    model_config = ConfigDict(extra="forbid")

    role: str
    content: str | list[dict[str, Any]]
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("role")
    @classmethod
    def _normalise_role(cls, role: str) -> str:
        return normalize_role(role)

    @classmethod
    def user(cls, text: str, **metadata: Any) -> MessageContent:
        """A user message."""
        return cls(role="user", content=text, metadata=metadata)

    @classmethod
    def assistant(cls, text: str, **metadata: Any) -> MessageContent:
        """An assistant message."""
        return cls(role="assistant", content=text, metadata=metadata)

    def get_text(self) -> str:
        """The text of the message; text parts are joined with a newline."""
        return message_text(self.content) or ""


class ArgumentRule(Protocol):
    """How expected tool arguments are compared with actual ones (``ArgMatch`` in evaluation)."""

    def arguments_match(self, expected: Mapping[str, Any], actual: Mapping[str, Any], tool_name: str) -> bool:
        """Whether ``actual`` satisfies ``expected`` for a call of ``tool_name``."""
        ...


class ToolCall(BaseModel):
    """An expected or actual tool call. ``args`` given as a JSON string is parsed."""

    model_config = ConfigDict(extra="forbid")

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    call_id: str | None = None
    result: Any | None = None

    @field_validator("args", mode="before")
    @classmethod
    def _parse_args(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else parse_args(value)

    def matches(
        self,
        actual: ToolCall,
        check_args: bool = True,
        check_call_id: bool = False,
        arg_match: ArgumentRule | None = None,
    ) -> bool:
        """Whether ``actual`` satisfies this expected call.

        Names must be equal. With ``check_args``, an expected ``args`` of ``{}`` matches any
        arguments; otherwise the arguments compare under ``arg_match`` (an
        ``agenteval_otel.evaluation.ArgMatch``; default: equal after JSON normalisation). With
        ``check_call_id``, the call ids must be equal too.
        """
        if self.name != actual.name:
            return False
        if check_call_id and self.call_id != actual.call_id:
            return False
        if check_args and self.args:
            if arg_match is None:
                return json_equal(self.args, actual.args)
            return arg_match.arguments_match(self.args, actual.args, self.name)
        return True


_MAX_ARGS_TEXT = 120
_ARGS_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)
"""``json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)``, its encoder made once."""


def describe_call(call: ToolCall) -> str:
    """``name(args)`` for reasons and reports, the arguments cut at 120 characters.

    >>> describe_call(ToolCall(name="get_weather", args={"city": "Paris"}))
    'get_weather({"city": "Paris"})'
    """
    if not call.args:
        return f"{call.name}()"
    text = _ARGS_JSON.encode(call.args)
    if len(text) > _MAX_ARGS_TEXT:
        text = text[: _MAX_ARGS_TEXT - 1] + "…"
    return f"{call.name}({text})"
