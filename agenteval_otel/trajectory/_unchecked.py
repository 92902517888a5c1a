"""Pydantic models built from values already of their declared types, without validation: trace
assembly builds millions of steps from values it made itself, and checking each field again
costs more than the rest of reading the span."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["unchecked"]

M = TypeVar("M", bound=BaseModel)
_set = object.__setattr__


def unchecked(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of ``cls`` holding ``values``, which name every field of ``cls``."""
    model = cls.__new__(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", set(values))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model
