"""Fixtures: a real SDK provider whose spans go to memory and, through our converter's
``TrajectoryProcessor``, back as trajectories; the instrumentor on it, undone after each test."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agenteval_instrumentation_langgraph import LangGraphInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel.trajectory import Trajectory, TrajectoryProcessor

sys.path.insert(0, str(Path(__file__).parent))  # the sample graphs, also when run from the repository root


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "promise(n): the test proves reliability promise n of RELIABILITY.md (one or more numbers)"
    )


class Captured:
    """The spans and trajectories of the graphs run in one test."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.received: list[Trajectory] = []
        self.processor = TrajectoryProcessor(self.received.append)
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.provider.add_span_processor(self.processor)

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def span(self, name: str) -> ReadableSpan:
        (found,) = [span for span in self.spans() if span.name == name]
        return found

    def trajectories(self) -> list[Trajectory]:
        assert self.processor.force_flush(5_000)
        return sorted(self.received, key=lambda t: t.start_ns or 0)

    def trajectory(self) -> Trajectory:
        (only,) = self.trajectories()
        return only


@pytest.fixture
def instrumented() -> Iterator[Callable[..., Captured]]:
    """``instrumented(**options)``: the instrumentor on with ``options`` (and the captured spans'
    provider) for the test, off after; content follows ``options`` and the environment."""
    found = Captured()
    instrumentor = LangGraphInstrumentor()

    def instrument(**options: Any) -> Captured:
        instrumentor.instrument(tracer_provider=found.provider, **options)
        return found

    yield instrument
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()
    found.provider.shutdown()


@pytest.fixture
def captured() -> Iterator[Captured]:
    """Spans of instrumented LangGraph runs, content captured (the instrumentor is on for the test, off after)."""
    found = Captured()
    instrumentor = LangGraphInstrumentor()
    instrumentor.instrument(tracer_provider=found.provider, capture_content=True)
    try:
        yield found
    finally:
        instrumentor.uninstrument()
        found.provider.shutdown()


@pytest.fixture
def uninstrumented() -> Iterator[Callable[[], None]]:
    """Makes sure the instrumentor is off after the test, whatever the test did."""
    yield lambda: None
    instrumentor = LangGraphInstrumentor()
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()
