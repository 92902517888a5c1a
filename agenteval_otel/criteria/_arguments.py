"""How expected tool arguments are compared with actual ones.

The default rule is equality after JSON normalisation: ``1 == 1.0`` but ``1 != "1"`` and
``True != 1``; a JSON string of an object compares equal to the object. ``ArgMatch`` changes the
mode (``exact``, ``subset``, ``ignore``), adds rules per key (ignore, regex, numeric tolerance,
case-insensitive) and overrides all of that per tool.

>>> args_match({"city": "Tokyo"}, {"city": "Tokyo", "units": "C"}, ArgMatch(mode="subset"))
True
>>> args_match({"n": 1}, {"n": "1"})
False
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agenteval_otel.trajectory.messages import json_equal, parse_args

__all__ = ["ArgMatch", "ArgRule", "args_diff", "args_match", "parse_args"]

ArgMatchMode = Literal["exact", "subset", "ignore"]


class ArgRule(BaseModel):
    """How one argument key is compared."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ignore: bool = False
    """Leave this key out of the comparison."""
    regex: str | None = None
    """The actual value, as text, must fully match this pattern (the expected value is unused)."""
    tolerance: float | None = Field(default=None, ge=0)
    """Numbers within this absolute difference are equal."""
    case_insensitive: bool = False
    """Strings compare without regard to case."""

    @field_validator("regex")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
        return pattern


class ArgMatch(BaseModel):
    """The argument rule of a criterion: a mode, rules per key, and overrides per tool.

    A bare string is accepted as the mode: ``"subset"`` is ``ArgMatch(mode="subset")``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: ArgMatchMode = "exact"
    keys: dict[str, ArgRule] = Field(default_factory=dict)
    tools: dict[str, ArgMatch] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_mode(cls, value: Any) -> Any:
        return {"mode": value} if isinstance(value, str) else value

    def for_tool(self, tool_name: str) -> ArgMatch:
        """The rule that applies to calls of ``tool_name``."""
        return self.tools.get(tool_name, self)

    def arguments_match(self, expected: Mapping[str, Any], actual: Mapping[str, Any], tool_name: str) -> bool:
        """Whether ``actual`` satisfies ``expected`` for a call of ``tool_name`` (``ToolCall.matches``)."""
        return not args_diff(expected, actual, self, tool_name)


def _rule_verdict(rule: ArgRule) -> Callable[[Any, Any], bool | None]:
    """The per-value check of a key rule, for ``json_equal``: a bool when the rule decides."""

    def verdict(expected: Any, actual: Any) -> bool | None:
        if rule.ignore:
            return True
        if rule.regex is not None:
            text = actual if isinstance(actual, str) else json.dumps(actual, sort_keys=True)
            return re.fullmatch(rule.regex, text) is not None
        if rule.tolerance is not None and _is_number(expected) and _is_number(actual):
            return math.isclose(expected, actual, rel_tol=0.0, abs_tol=rule.tolerance)
        if rule.case_insensitive and isinstance(expected, str) and isinstance(actual, str):
            return expected.casefold() == actual.casefold()
        return None

    return verdict


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def values_equal(expected: Any, actual: Any, rule: ArgRule | None = None) -> bool:
    """JSON-normalised equality of two values, under an optional key rule."""
    return json_equal(expected, actual, None if rule is None else _rule_verdict(rule))


_PLAIN = (str, int, float)


def _as_args(value: Any) -> dict[str, Any]:
    """``parse_args(value)``, without copying a dict (only read here)."""
    return value if type(value) is dict else parse_args(value)


def args_diff(
    expected: Any, actual: Any, match: ArgMatch | None = None, tool_name: str | None = None
) -> list[str]:
    """What differs between two argument sets under ``match``; empty when they match."""
    rule = (match or ArgMatch()).for_tool(tool_name) if tool_name else (match or ArgMatch())
    if rule.mode == "ignore":
        return []
    want, got = _as_args(expected), _as_args(actual)
    if not rule.keys and want == got and all(type(value) in _PLAIN and type(got[key]) in _PLAIN
                                             for key, value in want.items()):
        return []  # equal strings and numbers (never booleans): what the rules below would find
    problems: list[str] = []
    for key, value in want.items():
        key_rule = rule.keys.get(key)
        if key_rule is not None and key_rule.ignore:
            continue
        if key not in got:
            problems.append(f"missing argument {key!r} (expected {value!r})")
        elif not values_equal(value, got[key], key_rule):
            problems.append(f"argument {key!r}: expected {value!r}, got {got[key]!r}")
    if rule.mode == "exact":
        for key in got.keys() - want.keys():
            key_rule = rule.keys.get(key)
            if key_rule is None or not key_rule.ignore:
                problems.append(f"unexpected argument {key!r} = {got[key]!r}")
    return problems


def args_match(
    expected: Any, actual: Any, match: ArgMatch | None = None, tool_name: str | None = None
) -> bool:
    """Whether actual arguments satisfy the expected ones under ``match``."""
    return not args_diff(expected, actual, match, tool_name)
