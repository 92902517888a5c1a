"""The OTLP/JSON codec reads the common shape (camelCase, lower-case hex ids) exactly as it reads
every other spelling of the same request: the snake_case twin of each request below goes down
the fully checked path, and both must give the same spans, or both be refused."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from agenteval_otel.traces.otlp_json import records_from_request
from tests.shared_data import SHARED_DATA, shared_params

REPO = Path(__file__).resolve().parents[2]
_CAPITAL = re.compile(r"([A-Z])")


def snake_case(value: Any) -> Any:
    """The same request with every field name in snake_case (attribute keys are values: kept)."""
    if isinstance(value, dict):
        return {_CAPITAL.sub(r"_\1", key).lower(): snake_case(item) for key, item in value.items()}
    if isinstance(value, list):
        return [snake_case(item) for item in value]
    return value


def requests_in(path: Path) -> list[Any]:
    data = path.read_bytes()
    try:
        return [orjson.loads(data)]
    except orjson.JSONDecodeError:
        return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def _read(doc: Any) -> Any:
    try:
        return records_from_request(copy.deepcopy(doc))
    except ValueError as exc:
        return type(exc)


def assert_same_either_way(doc: Any) -> None:
    assert _read(doc) == _read(snake_case(doc))


OWN_FILES = sorted(p for p in (REPO / "tests" / "data").rglob("*.json") if b"resourceSpans" in p.read_bytes())


@pytest.mark.parametrize("path", OWN_FILES, ids=lambda p: str(p.relative_to(REPO / "tests" / "data")))
def test_every_recorded_request_reads_the_same_in_either_spelling(path: Path) -> None:
    requests = [doc for doc in requests_in(path) if isinstance(doc, dict) and "resourceSpans" in doc]
    for doc in requests:
        assert_same_either_way(doc)


@pytest.mark.parametrize(
    "path",
    shared_params(pytest.param(p, id=p.name) for p in sorted((SHARED_DATA / "traces").rglob("*.otlp.json"))),
)
def test_every_third_party_request_reads_the_same_in_either_spelling(path: Path) -> None:
    for doc in requests_in(path):
        assert_same_either_way(doc)


def _request(span: dict[str, Any], scope: Any = None) -> dict[str, Any]:
    base = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174", "name": "s",
            "kind": 1, "startTimeUnixNano": "10", "endTimeUnixNano": "20"}
    scoped: dict[str, Any] = {"spans": [{**base, **span}]}
    if scope is not None:
        scoped["scope"] = scope
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [scoped]}]}


@pytest.mark.parametrize(
    "span",
    [
        {"traceId": "5B8EFFF798038103D269B633813FC60C"},
        {"traceId": "W47/95gDgQPSabYzgT/GDA=="},
        {"spanId": "5b8efff798038103d269b633813fc60c"},
        {"parentSpanId": "5b8efff798038103d269b633813fc60c"},
        {"parentSpanId": "0000000000000000"},
        {"parentSpanId": ""},
        {"traceId": "00000000000000000000000000000000"},
        {"spanId": "eee19b7ec3c1b17"},
        {"spanId": "eee19b7ec3c1b17g"},
        {"spanId": " eee19b7ec3c1b17"},
        {"kind": "SPAN_KIND_SERVER"},
        {"kind": None},
        {"kind": 9},
        {"kind": True},
        {"kind": 1.0},
        {"kind": "1"},
        {"name": None},
        {"name": 7},
        {"startTimeUnixNano": 10},
        {"startTimeUnixNano": ""},
        {"startTimeUnixNano": "1_0"},
        {"endTimeUnixNano": "0"},
        {"status": {"code": 2, "message": "boom"}},
        {"status": {"code": "STATUS_CODE_ERROR"}},
        {"status": {}},
        {"attributes": [{"key": "a", "value": {"stringValue": "x", "intValue": None}}]},
        {"attributes": [{"key": "a", "value": {}}]},
        {"attributes": [{"key": "a"}]},
        {"attributes": [{"key": 1, "value": {"stringValue": "x"}}]},
        {"attributes": [{"key": "a", "value": {"stringValue": 5}}]},
        {"attributes": [{"key": "a", "value": {"intValue": "12"}}, {"key": "b", "value": {"intValue": 12}}]},
        {"attributes": [{"key": "a", "value": {"intValue": True}}]},
        {"attributes": [{"key": "a", "value": {"intValue": ""}}]},
        {"attributes": [{"key": "a", "value": {"doubleValue": 1}}, {"key": "b", "value": {"doubleValue": "Infinity"}}]},
        {"attributes": [{"key": "a", "value": {"boolValue": 1}}]},
        {"attributes": [{"key": "a", "value": {"bytesValue": "AQI="}}]},
        {"attributes": [{"key": "a", "value": {"arrayValue": {"values": [{"stringValue": "x"}, {"intValue": "1"}]}}}]},
        {"attributes": [{"key": "a", "value": {"arrayValue": {}}}]},
        {"attributes": [{"key": "a", "value": {"arrayValue": {"values": [{}]}}}]},
        {"attributes": [{"key": "a", "value": {"kvlistValue": {"values": [{"key": "b", "value": {"boolValue": True}}]}}}]},
        {"attributes": [{"key": "a", "value": {"stringValue": "x"}}, {"key": "a", "value": {"stringValue": "y"}}]},
        {"attributes": {"a": "x"}},
        {"attributes": ["a"]},
        {"events": [{"name": "e", "timeUnixNano": "5", "attributes": [{"key": "k", "value": {"stringValue": "v"}}]}]},
        {"events": [{"name": "e"}]},
        {"events": [{"timeUnixNano": "5"}]},
        {"events": {"name": "e"}},
        {"links": [{"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b173"}]},
    ],
)
def test_each_unusual_field_reads_the_same_in_either_spelling(span: dict[str, Any]) -> None:
    assert_same_either_way(_request(span))


@pytest.mark.parametrize("scope", [{}, {"name": ""}, {"name": 0}, {"name": "lib", "version": 2}, [], "lib"])
def test_each_unusual_scope_reads_the_same_in_either_spelling(scope: Any) -> None:
    assert_same_either_way(_request({}, scope))


def test_one_trace_and_span_id_string_is_shared_by_the_spans_that_name_it() -> None:
    child = {"traceId": "5b8efff798038103d269b633813fc60c", "spanId": "1111111111111111",
             "parentSpanId": "eee19b7ec3c1b174", "name": "c", "startTimeUnixNano": "11", "endTimeUnixNano": "12"}
    doc = _request({})
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"].insert(0, child)
    first, second = records_from_request(doc) or []
    assert first.trace_id is second.trace_id and first.parent_id is second.span_id
