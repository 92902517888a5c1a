"""Trace documents with one field at a time replaced by a value of another JSON type."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

WRONG_VALUES: tuple[Any, ...] = ([1, "x"], "text", 7, None, {"a": 1}, [], True)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*path, index)
            yield from _paths(item, (*path, index))


def wrong_type_variants(doc: Any) -> Iterator[tuple[str, Any]]:
    """``(JSON path, document)`` for every field of ``doc`` replaced by each wrong value in turn."""
    for path in _paths(doc):
        for wrong in WRONG_VALUES:
            variant = copy.deepcopy(doc)
            target = variant
            for key in path[:-1]:
                target = target[key]
            if type(target[path[-1]]) is type(wrong) and target[path[-1]] == wrong:
                continue
            target[path[-1]] = copy.deepcopy(wrong)
            yield "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) + f" = {wrong!r}", variant
