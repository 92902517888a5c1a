"""Checks that a parsed JSON value has the shape a reader expects, naming its JSON path if not.

Each raises ``ValueError`` (``"<path>: expected a list, got a string"``), which readers turn into
a skipped line or a ``TraceReadError`` naming the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["item_at", "json_type", "list_at", "object_at", "text_at"]

_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
               float: "a number", type(None): "null"}


def json_type(value: Any) -> str:
    """What ``value`` is, in JSON's words (``"a list"``, ``"null"``, ...)."""
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def object_at(value: Any, path: str) -> Mapping[str, Any]:
    """``value`` as an object (absent: empty)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{path}: expected an object, got {json_type(value)}")
    return value


def item_at(value: Any, path: str) -> Mapping[str, Any]:
    """``value``, an item of a list, as an object (``null`` is not one)."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{path}: expected an object, got {json_type(value)}")
    return value


def list_at(value: Any, path: str) -> list[Any]:
    """``value`` as a list (absent: empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{path}: expected a list, got {json_type(value)}")
    return value


def text_at(value: Any, path: str) -> str | None:
    """``value`` as a string (absent or empty: ``None``)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"{path}: expected a string, got {json_type(value)}")
    return value
