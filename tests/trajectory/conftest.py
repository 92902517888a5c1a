"""Fixtures for the trajectory tests: a factory of span records and the generated runs."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from agenteval_otel.trajectory.spans import SpanEvent, SpanRecord, SpanStatus

SpanFactory = Callable[..., SpanRecord]


@pytest.fixture
def make_span() -> SpanFactory:
    """Build ``SpanRecord``s tersely: ids are generated, times count up by default."""
    ids = itertools.count(1)

    def make(
        name: str,
        attributes: dict[str, Any] | None = None,
        *,
        parent: SpanRecord | None = None,
        trace_id: str = "0af7651916cd43dd8448eb211c80319c",
        start: int | None = None,
        end: int | None = None,
        status: str = "unset",
        events: tuple[SpanEvent, ...] = (),
        span_id: str | None = None,
        parent_id: str | None = None,
    ) -> SpanRecord:
        number = next(ids)
        begin = number * 1000 if start is None else start
        return SpanRecord(
            trace_id=trace_id,
            span_id=span_id or format(number, "016x"),
            parent_id=parent.span_id if parent is not None else parent_id,
            name=name,
            start_ns=begin,
            end_ns=begin + 500 if end is None else end,
            attributes=dict(attributes or {}),
            events=events,
            status=SpanStatus(status),
        )

    return make
