"""What the instrumentor reads from LangGraph's own values: the thread id, the user's message, the
graph's final response, the branch a conditional edge took, a node's writes, a tool call's result.

Each reader is a small pure function; the wrappers in :mod:`.patch` call them only when the span
records, and inside a guard, so a value of an unexpected shape never reaches the user's call.

>>> user_input({"messages": [("user", "Weather in Paris?")]})
'Weather in Paris?'
>>> final_response({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]})
'Hello!'
>>> branch_taken(True, {True: "tools", False: "__end__"})
(True, {True: 'tools', False: '__end__'})
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from langgraph.constants import TAG_HIDDEN
from langgraph.types import Command, Send

__all__ = [
    "branch_name",
    "branch_taken",
    "final_response",
    "graph_name",
    "is_hidden",
    "node_output",
    "thread_id",
    "tool_error",
    "tool_result",
    "user_input",
]

_USER_ROLES: Final = frozenset({"user", "human"})
_ASSISTANT_ROLES: Final = frozenset({"assistant", "ai"})
_INTERNAL_CHANNEL_PREFIXES: Final = ("__", "branch:", "join:")
_RESPONSE_KEYS: Final = ("final_response", "final_answer", "response", "answer", "output")


def graph_name(graph: Any) -> str:
    """The graph's name (``compile(name=...)``; LangGraph's default is ``LangGraph``)."""
    name = getattr(graph, "name", None)
    return name if isinstance(name, str) and name else "LangGraph"


def thread_id(graph: Any, config: Any) -> str | None:
    """``config["configurable"]["thread_id"]`` of the call, else of the graph's own config."""
    for source in (config, getattr(graph, "config", None)):
        if isinstance(source, Mapping):
            configurable = source.get("configurable")
            if isinstance(configurable, Mapping) and configurable.get("thread_id") is not None:
                return str(configurable["thread_id"])
    return None


def _role_and_content(message: Any) -> tuple[str | None, Any]:
    """(role, content) of a LangChain message, a message dict, a ``(role, content)`` pair or a str."""
    if isinstance(message, str):
        return "user", message
    if isinstance(message, Mapping):
        role = message.get("role", message.get("type"))
        return (role if isinstance(role, str) else None), message.get("content")
    if isinstance(message, (tuple, list)) and len(message) == 2 and isinstance(message[0], str):
        return message[0], message[1]
    role = getattr(message, "type", None)
    return (role if isinstance(role, str) else None), getattr(message, "content", None)


def _text(content: Any) -> str | None:
    """The text of a message's content: a str, or the text blocks of a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            block if isinstance(block, str) else block.get("text")
            for block in content
            if isinstance(block, str) or (isinstance(block, Mapping) and block.get("type") == "text")
        ]
        joined = "".join(text for text in texts if isinstance(text, str))
        return joined or None
    return None


def _messages(value: Any) -> Sequence[Any] | None:
    """The messages of a messages state (``{"messages": [...]}``) or a list of messages."""
    if isinstance(value, Mapping):
        value = value.get("messages")
    if isinstance(value, (list, tuple)) and not (len(value) == 2 and isinstance(value[0], str)):
        return value
    return None


def _last_text(messages: Sequence[Any], roles: frozenset[str]) -> str | None:
    for message in reversed(messages):
        role, content = _role_and_content(message)
        if role is not None and role.lower() in roles:
            text = _text(content)
            if text:
                return text
    return None


def user_input(value: Any) -> Any:
    """The user's message in the graph's input: the text of the last user message of a messages
    state, a str as it is; ``None`` for a ``Command`` (a resumed run has no new user input); any
    other input as it is."""
    if value is None or isinstance(value, Command):
        return None
    if isinstance(value, str):
        return value
    messages = _messages(value)
    if messages is not None:
        text = _last_text(messages, _USER_ROLES)
        if text is not None:
            return text
    return value


def final_response(output: Any) -> str | None:
    """The graph's final response, when its output has one: the text of the last assistant message
    of a messages state, a str as it is, or the text under a response key of the state
    (``final_response``, ``final_answer``, ``response``, ``answer``, ``output``). ``None`` for any
    other state: a state is not a response (what each node wrote is on its own step)."""
    if hasattr(output, "value") and hasattr(output, "interrupts"):  # GraphOutput (version="v2")
        output = output.value
    if output is None or isinstance(output, str):
        return output
    messages = _messages(output)
    if messages is not None:
        return _last_text(messages, _ASSISTANT_ROLES)
    if isinstance(output, Mapping):
        return next((output[key] for key in _RESPONSE_KEYS if isinstance(output.get(key), str)), None)
    return None


def is_hidden(task: Any) -> bool:
    """Whether a Pregel task is LangGraph's own plumbing (the ``__start__`` input writer), not a node."""
    name = getattr(task, "name", "")
    if isinstance(name, str) and name.startswith("__") and name.endswith("__"):
        return True
    config = getattr(task, "config", None)
    tags = config.get("tags") if isinstance(config, Mapping) else None
    return isinstance(tags, (list, tuple)) and TAG_HIDDEN in tags


def node_output(writes: Any) -> dict[str, Any] | None:
    """What a node wrote to the state (its update), without LangGraph's internal channels."""
    update: dict[str, Any] = {}
    for write in list(writes or ()):
        if isinstance(write, tuple) and len(write) == 2 and isinstance(write[0], str):
            channel, value = write
            if not channel.startswith(_INTERNAL_CHANNEL_PREFIXES):
                update[channel] = value
    return update or None


def branch_name(branch: Any) -> str:
    """A conditional edge's name: its routing function's (LangGraph names the branch so too)."""
    path = getattr(branch, "path", None)
    name = getattr(path, "name", None)
    return name if isinstance(name, str) and name else "condition"


def branch_taken(result: Any, ends: Mapping[Any, str] | None) -> tuple[Any, Mapping[Any, str] | None]:
    """``(value, branches)`` for a conditional step: the routing function's value with its
    ``path_map`` when it returned one destination; for a fan-out (a list, or ``Send`` packets)
    the list of the nodes it goes to, with no map."""
    if isinstance(result, (list, tuple)) or isinstance(result, Send):
        items = result if isinstance(result, (list, tuple)) else [result]
        names = []
        for item in items:
            if isinstance(item, Send):
                names.append(item.node)
            elif ends is not None and item in ends:
                names.append(ends[item])
            else:
                names.append(item if isinstance(item, str) else str(item))
        return names, None
    return result, ends


def _decoded(content: Any) -> Any:
    """A tool message's content: LangChain sends a tool's non-text result as JSON text; read it back."""
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content


def tool_result(output: Any) -> Any:
    """A tool call's result as ``ToolNode`` returned it: a tool message's content (JSON read back),
    each message's for a list; anything else (a ``Command``) as it is."""
    if isinstance(output, list):
        return [tool_result(item) for item in output]
    if hasattr(output, "tool_call_id") and hasattr(output, "content"):
        return _decoded(output.content)
    return output


def tool_error(output: Any) -> str | None:
    """The error text when ``ToolNode`` answered the call with an error message
    (``status="error"``: the tool raised, or was unknown, and the error went back to the model)."""
    if getattr(output, "status", None) == "error" and hasattr(output, "tool_call_id"):
        text = _text(getattr(output, "content", None))
        return text if text is not None else "the tool call failed"
    return None
