"""Argument rules: modes, per-key rules, per-tool overrides."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agenteval_otel import ToolCall
from agenteval_otel.criteria import ArgMatch, ArgRule
from agenteval_otel.criteria._arguments import args_diff, args_match, parse_args


@pytest.mark.parametrize(
    ("expected", "actual", "equal"),
    [
        ({"n": 1}, {"n": 1.0}, True),
        ({"n": 1}, {"n": "1"}, False),
        ({"b": True}, {"b": 1}, False),
        ({"x": None}, {"x": None}, True),
        ({"l": [1, 2]}, {"l": [1, 2]}, True),
        ({"l": [1, 2]}, {"l": [2, 1]}, False),
        ({"d": {"a": 1}}, {"d": '{"a": 1}'}, True),
        ({"d": {"a": 1}}, {"d": {"a": 1, "b": 2}}, False),
    ],
)
def test_default_is_json_equality(expected: dict, actual: dict, equal: bool) -> None:
    assert args_match(expected, actual) is equal


def test_exact_mode_reports_missing_unexpected_and_mismatched() -> None:
    problems = args_diff({"a": 1, "b": 2}, {"b": 3, "c": 4})
    assert "missing argument 'a' (expected 1)" in problems
    assert "argument 'b': expected 2, got 3" in problems
    assert "unexpected argument 'c' = 4" in problems


def test_subset_and_ignore_modes() -> None:
    assert args_match({"a": 1}, {"a": 1, "extra": True}, ArgMatch(mode="subset"))
    assert not args_match({"a": 1}, {"a": 2}, ArgMatch(mode="subset"))
    assert args_match({"a": 1}, {"z": 0}, ArgMatch.model_validate("ignore"))


def test_per_key_rules() -> None:
    match = ArgMatch(keys={
        "ts": ArgRule(ignore=True),
        "id": ArgRule(regex=r"ord-\d+"),
        "temp": ArgRule(tolerance=0.5),
        "city": ArgRule(case_insensitive=True),
    })
    expected = {"ts": 1, "id": "ord-1", "temp": 20.0, "city": "Paris"}
    assert args_match(expected, {"ts": 99, "id": "ord-42", "temp": 20.4, "city": "PARIS"}, match)
    assert not args_match(expected, {"ts": 99, "id": "ord-x", "temp": 20.4, "city": "paris"}, match)
    assert not args_match(expected, {"ts": 99, "id": "ord-1", "temp": 21.0, "city": "paris"}, match)
    assert args_match(expected, {"id": "ord-1", "temp": 20, "city": "paris"}, match)


def test_per_tool_override() -> None:
    match = ArgMatch(tools={"search": ArgMatch(mode="subset")})
    assert args_match({"q": "x"}, {"q": "x", "page": 2}, match, tool_name="search")
    assert not args_match({"q": "x"}, {"q": "x", "page": 2}, match, tool_name="other")
    assert ToolCall(name="search", args={"q": "x"}).matches(
        ToolCall(name="search", args={"q": "x", "page": 2}), arg_match=match
    )


def test_bad_rules_fail_at_construction() -> None:
    with pytest.raises(ValidationError, match="invalid regular expression"):
        ArgRule(regex="(")
    with pytest.raises(ValidationError):
        ArgMatch(mode="fuzzy")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [(None, {}), ("", {}), ('{"a": 1}', {"a": 1}), ("42", {"value": 42}), (7, {"value": 7}),
     ("not json", {"value": "not json"})],
)
def test_parse_args_accepts_strings_maps_and_bare_values(raw: object, parsed: dict) -> None:
    assert parse_args(raw) == parsed


@pytest.mark.parametrize(("expected", "actual", "equal"), [
    ({"n": 1}, {"n": True}, False),
    ({"n": True}, {"n": 1}, False),
    ({"n": 1}, {"n": 1.0}, True),
    ({"s": "a", "n": 2}, {"n": 2, "s": "a"}, True),
    ({"n": 0}, {"n": False}, False),
    ({"l": [1]}, {"l": [True]}, False),
])
def test_equal_looking_arguments_still_compare_as_json(expected: dict, actual: dict, equal: bool) -> None:
    assert expected == actual  # Python's equality would say yes to each of these
    assert args_match(expected, actual) is equal
    assert args_match(expected, actual, ArgMatch(mode="subset")) is equal
