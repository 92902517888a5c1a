"""Binding a call's arguments to parameter names, cheaply, with a plan made once per function.

``inspect.Signature.bind`` costs microseconds per call; a decorated function's parameters do not
change, so the plan (positional names, ``*args`` and ``**kwargs`` names, whether the first
parameter is ``self``/``cls``) is made at decoration time and a call only zips and updates.
Defaults are not filled in: the arguments are the ones the caller passed. Extra keyword
arguments (``**kwargs``) appear under their own names.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping
from typing import Any

__all__ = ["ArgumentBinder"]

_RECEIVERS = frozenset({"self", "cls"})


class ArgumentBinder:
    """Maps ``(args, kwargs)`` of calls to one function to ``{parameter name: value}``."""

    __slots__ = ("_accepted", "_excluded", "_index", "_names", "_plain", "_skip", "_var_positional")

    def __init__(self, fn: Callable[..., Any], exclude: Collection[str] = ()) -> None:
        try:
            parameters = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):  # no signature (some builtins): positional values as "args"
            parameters = [inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)]
        positional = [
            p.name
            for p in parameters
            if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
        self._skip = 1 if positional and positional[0] in _RECEIVERS else 0
        self._names: tuple[str, ...] = tuple(positional[self._skip :])
        self._var_positional: str | None = next(
            (p.name for p in parameters if p.kind is inspect.Parameter.VAR_POSITIONAL), None
        )
        self._index = {name: i + self._skip for i, name in enumerate(positional[self._skip :])}
        self._excluded = tuple(exclude)
        # the common case: no receiver to drop, nothing to exclude, no *args to collect
        self._plain = not self._skip and not self._excluded and self._var_positional is None
        var_keyword = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
        self._accepted: frozenset[str] | None = None if var_keyword else frozenset(p.name for p in parameters)

    def bind(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments by name, without ``self``/``cls`` and the excluded names."""
        if self._plain:
            bound = dict(zip(self._names, args, strict=False))
            if kwargs:
                bound.update(kwargs)
            return bound
        if self._skip:
            args = args[1:]
        bound = dict(zip(self._names, args, strict=False))
        if len(args) > len(self._names) and self._var_positional is not None:
            bound[self._var_positional] = list(args[len(self._names) :])
        if kwargs:
            bound.update(kwargs)
        for name in self._excluded:
            bound.pop(name, None)
        return bound

    def value(self, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        """One argument by parameter name (``None`` when the caller did not pass it)."""
        if name in kwargs:
            return kwargs[name]
        index = self._index.get(name)
        if index is not None and index < len(args):
            return args[index]
        return None

    def accepts(self, name: str) -> bool:
        """Whether a call can pass an argument called ``name``."""
        return self._accepted is None or name in self._accepted
