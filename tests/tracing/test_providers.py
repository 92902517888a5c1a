"""Provider routing: which provider our steps' spans go to."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel.tracing import (
    current_provider,
    current_tracer,
    release_provider,
    route_to_provider,
    routed_to,
    start_step,
)


def _recording_provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def test_without_routing_the_global_provider_is_used() -> None:
    release_provider(current_provider())
    assert current_provider() is trace.get_tracer_provider()


def test_routed_to_sends_steps_there_and_puts_the_routing_back() -> None:
    outer, _ = _recording_provider()
    inner, exporter = _recording_provider()
    route_to_provider(outer)
    with pytest.raises(KeyError), routed_to(inner):
        assert current_provider() is inner
        start_step("tool", "routed").end()
        raise KeyError("leaves the block")
    assert current_provider() is outer
    assert [s.name for s in exporter.get_finished_spans()] == ["execute_tool routed"]


def test_release_only_stops_routing_to_that_provider() -> None:
    first, _ = _recording_provider()
    second, _ = _recording_provider()
    route_to_provider(first)
    release_provider(second)
    assert current_provider() is first
    release_provider(first)
    assert current_provider() is trace.get_tracer_provider()


def test_the_tracer_follows_the_provider() -> None:
    first, _ = _recording_provider()
    second, _ = _recording_provider()
    route_to_provider(first)
    tracer = current_tracer()
    assert current_tracer() is tracer
    route_to_provider(second)
    assert current_tracer() is not tracer
    assert current_tracer()._instrumentation_scope.name == "agenteval_otel"  # type: ignore[attr-defined]
