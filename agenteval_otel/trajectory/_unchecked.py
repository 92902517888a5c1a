"""Pydantic models built from values already of their declared types, without validation: trace
assembly builds millions of steps from values it made itself, and checking each field again
costs more than the rest of reading the span.

Two savings make such a model small: its ``__dict__`` is a copy of one blank instance dict of
its class, so all of them share one table of keys (a third of the size of a dict of their own),
and, every field being set, the models of one class share one set of fields-set names (pydantic
only ever adds a field's name to it, which then changes nothing).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["blank_fields", "from_fields", "unchecked"]

M = TypeVar("M", bound=BaseModel)
_set = object.__setattr__
_blank: dict[type[BaseModel], dict[str, Any]] = {}
_every_field: dict[type[BaseModel], set[str]] = {}


def blank_fields(cls: type[BaseModel]) -> dict[str, Any]:
    """A new instance dict for ``cls``, every field ``None``, its keys shared with every other."""
    blank = _blank.get(cls)
    if blank is None:
        model = cls.__new__(cls)
        for name in cls.model_fields:  # set one by one: the dict then shares the class's keys
            _set(model, name, None)
        blank = _blank[cls] = model.__dict__
        _every_field[cls] = set(cls.model_fields)
    return blank.copy()


def from_fields(cls: type[M], fields: dict[str, Any]) -> M:
    """An instance of ``cls`` over ``fields``, a ``blank_fields(cls)`` dict with every field set."""
    model = cls.__new__(cls)
    _set(model, "__dict__", fields)
    _set(model, "__pydantic_fields_set__", _every_field[cls])
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


def unchecked(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of ``cls`` holding ``values``, which name every field of ``cls``."""
    fields = blank_fields(cls)
    fields.update(values)
    return from_fields(cls, fields)
