"""Decoding recorded values: JSON strings, tool arguments, and the text inside agent inputs and
outputs, whichever way a producer wrote them.

>>> text_from({"messages": [{"type": "human", "data": {"content": "Hi"}}]}, "user")
'Hi'
>>> text_from({"messages": [["user", "Hi"]]}, "user")
'Hi'
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from agenteval_otel.trajectory.conventions.reading import ToolDefinition
from agenteval_otel.trajectory.messages import message_text, normalize_role, python_literal

__all__ = [
    "bare_argument_named",
    "is_object_repr",
    "is_plain_text",
    "object_repr_fields",
    "unwrap_call_envelope",
    "unwrap_tool_output",
    "decode_json",
    "decode_result",
    "flattened_list",
    "text_from",
    "tool_definition",
    "tool_definitions",
    "tool_message",
]

_INPUT_KEYS = (
    "input", "user_input", "prompt", "query", "question", "task", "request", "message", "text", "input_args", "kwargs",
)
_OUTPUT_KEYS = (
    "final_response",
    "final_answer",
    "final_output",
    "output",
    "answer",
    "response",
    "result",
    "text",
    "content",
)
_MAX_DEPTH = 4
_MAX_PAYLOAD_DEPTH = 8


def decode_json(value: Any) -> Any:
    """``value`` parsed when it is a string holding a JSON object or array; else unchanged."""
    if isinstance(value, (str, bytes)):
        text = value.strip()
        if text[:1] in ("{", "[", b"{", b"["):
            try:
                return orjson.loads(text)
            except orjson.JSONDecodeError:
                return value
    return value


def decode_result(value: Any) -> Any:
    """A tool result: a string holding any JSON value is parsed (``'64.4'`` → ``64.4``), and so
    is the Python repr of a dict or list (what producers that record ``str(result)`` write)."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            literal = python_literal(value)
            return value if literal is None else literal
    return value


def _is_role_pair(message: Any) -> bool:
    return isinstance(message, list) and len(message) == 2 and isinstance(message[0], str)


def _message_fields(message: Any) -> tuple[str, Any] | None:
    """(role, content) of a message in OpenAI, GenAI-parts or LangChain (dumped or serialised, or
    the ``("user", text)`` pair LangGraph inputs are often given as) form."""
    if _is_role_pair(message):
        return normalize_role(message[0]), message[1]
    if not isinstance(message, dict):
        return None
    if "kwargs" in message and isinstance(message.get("id"), list):  # LangChain lc serialisation
        kwargs = message["kwargs"] if isinstance(message["kwargs"], dict) else {}
        return normalize_role(message["id"][-1]), kwargs.get("content")
    if "data" in message and isinstance(message["data"], dict):  # LangChain message_to_dict
        return normalize_role(message.get("type")), message["data"].get("content")
    role = message.get("role") or message.get("type")
    if "parts" in message:
        return normalize_role(role), message["parts"]
    return normalize_role(role), message.get("content")


def _last_message_text(messages: Sequence[Any], role: str) -> str | None:
    for message in reversed(messages):
        fields = _message_fields(message)
        if fields and fields[0] == role:
            text = message_text(fields[1])
            if text and text.strip():
                return text
    return None


def text_from(value: Any, role: str, _depth: int = 0) -> str | None:
    """The text a user sent (``role="user"``) or an agent answered (``role="assistant"``),
    dug out of a recorded input or output: plain text, a JSON object with a well-known key
    (``input``, ``query``, ``final_answer``, ``output`` ...), or a list of chat messages.
    ``None`` when no such text is found."""
    if _depth > _MAX_DEPTH or value is None:
        return None
    decoded = decode_json(value)
    if isinstance(decoded, str):
        return decoded
    if isinstance(decoded, dict):
        messages = decoded.get("messages")
        if isinstance(messages, list) and messages:
            flat = messages[0] if isinstance(messages[0], list) and not _is_role_pair(messages[0]) else messages
            if (text := _last_message_text(flat, role)) is not None:
                return text
        fields = _message_fields(decoded)
        if fields and fields[0] == role and (text := message_text(fields[1])) is not None:
            return text
        for key in _INPUT_KEYS if role == "user" else _OUTPUT_KEYS:
            if key in decoded and (text := text_from(decoded[key], role, _depth + 1)) is not None:
                return text
        return None
    if isinstance(decoded, list) and decoded and all(isinstance(m, dict) for m in decoded):
        return _last_message_text(decoded, role)
    return None


_FEW_KEYS = 24
_last_sorted: tuple[Any, list[str]] = (None, [])


def _keys_under(attributes: Mapping[str, Any], head: str) -> list[str]:
    """The keys starting with ``head`` (which ends with a dot), found by bisecting the sorted
    keys of the last mapping asked about: a span's readers ask about one span's attributes for
    several prefixes in a row."""
    global _last_sorted
    owner, keys = _last_sorted
    if owner is not attributes:
        try:
            keys = sorted(attributes)
        except TypeError:  # keys of several types
            return [key for key in attributes if isinstance(key, str) and key.startswith(head)]
        _last_sorted = (attributes, keys)
    return keys[bisect_left(keys, head) : bisect_left(keys, head[:-1] + "/")]


def flattened_list(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """A list flattened into indexed keys, back as a list of ``{suffix: value}`` dicts.

    >>> flattened_list({"m.0.role": "user", "m.1.role": "tool", "m.1.id": "c1"}, "m")
    [{'role': 'user'}, {'role': 'tool', 'id': 'c1'}]
    """
    head = prefix + "."
    keys = _keys_under(attributes, head) if len(attributes) > _FEW_KEYS else [
        key for key in attributes if key.startswith(head)
    ]
    if not keys:
        return []
    items: dict[int, dict[str, Any]] = {}
    start = len(head)
    for key in keys:
        index, _, suffix = key[start:].partition(".")
        if index.isdigit() and suffix:
            items.setdefault(int(index), {})[suffix] = attributes[key]
    return [items[index] for index in sorted(items)]


def tool_message(value: Any) -> tuple[Any, str | None, str | None] | None:
    """``(content, tool_call_id, status)`` when ``value`` is a dumped LangChain ``ToolMessage``
    (``{"type": "tool", "data": {...}}``, its ``lc`` serialisation, or its fields as pydantic dumps
    them, ``{"type": "tool", "content", "tool_call_id", "status", ...}``); ``None`` otherwise."""
    decoded = decode_json(value)
    if not isinstance(decoded, dict):
        return None
    body: Any = None
    if decoded.get("type") == "tool" and isinstance(decoded.get("data"), dict):
        body = decoded["data"]
    elif decoded.get("type") == "tool" and "tool_call_id" in decoded and "content" in decoded:
        body = decoded
    elif isinstance(decoded.get("id"), list) and decoded["id"][-1:] == ["ToolMessage"]:
        body = decoded.get("kwargs")
    if not isinstance(body, dict):
        return None
    call_id = body.get("tool_call_id")
    status = body.get("status")
    return (
        decode_result(body.get("content")),
        None if call_id is None else str(call_id),
        None if status is None else str(status),
    )


def unwrap_tool_message(result: Any, call_id: Any, error: str | None) -> tuple[Any, Any, str | None]:
    """``(result, call_id, error)`` of a tool span whose result may be a dumped LangChain
    ``ToolMessage``: then its content is the result, its ``tool_call_id`` the call id where the
    span had none, and an ``error`` status makes the content the error where the span had none."""
    message = tool_message(result)
    if message is None:
        return result, call_id, error
    content, message_call_id, status = message
    if status == "error" and error is None:
        error = str(content)
    return content, call_id or message_call_id, error


def tool_definition(value: Any, name: Any = None) -> ToolDefinition | None:
    """A tool definition from a JSON schema in any of the usual wrappings: OpenAI's
    ``{"type": "function", "function": {"name", "parameters"}}``, the GenAI ``{"name",
    "parameters"}``, or a bare parameters schema (then ``name`` names the tool)."""
    decoded = decode_json(value)
    if not isinstance(decoded, dict):
        return None
    if isinstance(decoded.get("function"), dict):
        decoded = decoded["function"]
    schema = decoded.get("parameters", decoded.get("input_schema", decoded))
    schema = decode_json(schema)
    tool_name = decoded.get("name") or name
    if not tool_name or not isinstance(schema, dict):
        return None
    properties = schema.get("properties")
    parameters = tuple(str(key) for key in properties) if isinstance(properties, dict) else ()
    return ToolDefinition(str(tool_name), parameters)


def tool_definitions(value: Any) -> tuple[ToolDefinition, ...]:
    """The tool definitions of a JSON list attribute such as ``gen_ai.tool.definitions``."""
    decoded = decode_json(value)
    if not isinstance(decoded, list):
        return ()
    return tuple(d for item in decoded if (d := tool_definition(item)) is not None)


_OBJECT_REPR = re.compile(r"^(?:[A-Z][\w.]*\((?:[a-z_]\w*=|\)$)|<[\w.]+ object at 0x[0-9a-fA-F]+>)", re.S)


def is_plain_text(value: Any) -> bool:
    """Whether ``value`` is text a person wrote or reads: a string that is neither a JSON object
    or array (a recorded envelope or pipeline payload) nor an object's repr.

    >>> is_plain_text("Book LX92."), is_plain_text('{"messages": ["ChatMessage(...)"]}')
    (True, False)
    """
    return isinstance(value, str) and not isinstance(decode_json(value), (dict, list)) and not is_object_repr(value)


def is_object_repr(text: str) -> bool:
    """Whether ``text`` is the Python repr of a framework object (``StopEvent(result=...)``,
    ``<pkg.Agent object at 0x...>``): never an input or an answer.

    >>> is_object_repr("StopEvent(result=AgentOutput(response=...))"), is_object_repr("It is 18 C.")
    (True, False)
    >>> is_object_repr("<haystack.core.pipeline.Pipeline object at 0x7f3a>")
    True
    """
    return _OBJECT_REPR.match(text.strip()) is not None


_ENUM_REPR = re.compile(r"<[A-Za-z_][\w.]*: ('[^'\\]*'|-?\d+)>")


def _repr_value(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_repr_value(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        return {_repr_value(k) if k is not None else None: _repr_value(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        return -value if isinstance(value, (int, float)) else None
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
        name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        return {"__type__": name, **{kw.arg: _repr_value(kw.value) for kw in node.keywords if kw.arg}}
    return None


def object_repr_fields(text: str) -> dict[str, Any] | None:
    """The fields of a framework object's Python repr (a dataclass's ``Name(field=value, ...)``),
    nested objects as dicts too, each with its class name under ``__type__``; enum members
    (``<Role.USER: 'user'>``) read as their values, anything else that is not a literal as
    ``None``. ``None`` when ``text`` is no such repr. Only for producers that record nothing
    better than the repr.

    >>> object_repr_fields("Msg(_role=<Role.USER: 'user'>, parts=[Text(text='Hi')], meta={})")
    {'__type__': 'Msg', '_role': 'user', 'parts': [{'__type__': 'Text', 'text': 'Hi'}], 'meta': {}}
    """
    if not is_object_repr(text):
        return None
    try:
        node = ast.parse(_ENUM_REPR.sub(r"\1", text.strip()), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    value = _repr_value(node)
    return value if isinstance(value, dict) else None


def unwrap_call_envelope(args: dict[str, Any], parameters: tuple[str, ...] = ()) -> dict[str, Any]:
    """A call's named arguments out of the envelopes frameworks record them in:
    ``{"args": [...], "kwargs": {...}}`` (flags such as ``sanitize_inputs_outputs`` beside them),
    ``{"kwargs": {...}}``, LangChain's ``{"input_str": ..., "inputs": {...}, ...}`` and BeeAI's
    ``{"input": {...}, "options": ...}``. Positional ``args`` are named by ``parameters`` when the
    tool's schema is known (else kept as ``args``).

    >>> unwrap_call_envelope({"args": [], "sanitize_inputs_outputs": True, "kwargs": {"city": "Paris"}})
    {'city': 'Paris'}
    >>> unwrap_call_envelope({"args": ["Paris"], "kwargs": {}}, ("city",))
    {'city': 'Paris'}
    >>> unwrap_call_envelope({"input": {"city": "Paris"}, "options": None})
    {'city': 'Paris'}
    >>> unwrap_call_envelope({"city": "Paris"})
    {'city': 'Paris'}
    """
    if "input_str" in args and isinstance(args.get("inputs"), dict):
        return dict(args["inputs"])
    if len(args) == 2 and "options" in args and isinstance(args.get("input"), dict) and (
        args["options"] is None or isinstance(args["options"], dict)
    ):
        return dict(args["input"])
    kwargs = args.get("kwargs")
    if not isinstance(kwargs, dict):
        return args
    positional = args.get("args", [])
    others = [key for key in args if key not in ("args", "kwargs")]
    if not isinstance(positional, list) or any(not isinstance(args[key], bool) for key in others):
        return args
    named = dict(kwargs)
    if positional:
        if len(parameters) >= len(positional):
            named = {**dict(zip(parameters, positional)), **named}
        else:
            named["args"] = positional
    return named


def unwrap_tool_output(result: Any) -> tuple[Any, bool]:
    """``(value, is_error)`` of a tool result a framework wrapped (LlamaIndex's ``ToolOutput``:
    ``{"tool_name", "raw_input", "raw_output", "is_error", ...}``); anything else as it is."""
    if isinstance(result, dict) and "raw_output" in result and "tool_name" in result:
        return decode_result(result["raw_output"]), bool(result.get("is_error"))
    return result, False


def _same_value(recorded: Any, given: Any) -> bool:
    """Whether a bare recorded value is ``given``: equal, or ``given`` a string that was decoded
    as JSON on the way (``"1234"`` recorded, ``1234`` read)."""
    if recorded == given:
        return True
    return isinstance(given, str) and not isinstance(recorded, str) and given == orjson.dumps(recorded).decode()


def _calls_holding(node: Any, tool: str, value: Any, found: dict[str, Any], depth: int) -> None:
    """Collect into ``found`` the one argument of every call to ``tool`` under ``node`` whose only
    argument is ``value`` (``{"name", "args"}`` as LangChain's ``ToolCall``, ``{"name",
    "arguments"}`` as OpenAI's ``function``)."""
    if depth > _MAX_PAYLOAD_DEPTH:
        return
    if isinstance(node, dict):
        if node.get("name") == tool:
            args = decode_json(node.get("args", node.get("arguments")))
            if isinstance(args, dict) and len(args) == 1:
                ((key, given),) = args.items()
                if _same_value(value, given):
                    found[str(key)] = given
        children: Any = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return
    for child in children:
        if isinstance(child, (dict, list)):
            _calls_holding(child, tool, value, found, depth + 1)


def bare_argument_named(payload: Any, tool: str, value: Any) -> dict[str, Any] | None:
    """A tool's one argument recorded as its bare ``value`` (OpenInference records a one-key
    string argument dict as the string), named by a ``payload`` that holds it, such as the input
    a graph node was given: the arguments of a call to ``tool`` there whose only value it is (a
    LangGraph ``Send`` payload ``{"call": {"name", "args", "id"}}``, a model message's tool
    calls), else the one top-level key that maps to it as a string (a graph state field). ``None`` when no
    name, or more than one, fits.

    >>> bare_argument_named('{"call": {"name": "book", "args": {"flight_id": "LX92"}}}', "book", "LX92")
    {'flight_id': 'LX92'}
    >>> bare_argument_named({"request": "Weather in Paris", "city": "Paris"}, "get_weather", "Paris")
    {'city': 'Paris'}
    >>> bare_argument_named({"origin": "Paris", "city": "Paris"}, "get_weather", "Paris") is None
    True
    """
    decoded = decode_json(payload)
    if not isinstance(decoded, (dict, list)):
        return None
    found: dict[str, Any] = {}
    _calls_holding(decoded, tool, value, found, 0)
    if not found and isinstance(decoded, dict):
        found = {str(key): given for key, given in decoded.items()
                 if isinstance(given, str) and _same_value(value, given)}
    return found if len(found) == 1 else None
