"""Fixtures for live evaluation: our spans routed to a provider that keeps them in memory."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel.tracing import configure, release_provider


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    """Every span our decorators and the evaluator make during the test."""
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handle = configure(tracer_provider=provider, set_global=False)
    yield exporter
    release_provider(provider)
    handle.shutdown(timeout=5)
