"""Fixtures for the capture tests: a real SDK pipeline into memory, real OTLP receivers on 127.0.0.1."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel.tracing import TracingHandle, configure, content, providers
from agenteval_otel.tracing.content import active_policy, set_active_policy
from tests.otlp_receiver import Received, closed_port, grpc_receiver, http_receiver

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class Spans:
    """The spans our steps produced in one test, finished ones only."""

    def __init__(self, exporter: InMemorySpanExporter, handle: TracingHandle) -> None:
        self.exporter = exporter
        self.handle = handle

    def all(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> ReadableSpan:
        matches = [s for s in self.all() if s.name == name]
        assert len(matches) == 1, f"expected one span {name!r}, got {[s.name for s in self.all()]}"
        return matches[0]

    def attributes(self, name: str) -> dict[str, Any]:
        return dict(self.named(name).attributes or {})


@pytest.fixture(autouse=True)
def _restore_tracing_state() -> Iterator[None]:
    """Every test leaves the content policy, the secrets remembered and the provider our steps use
    as it found them."""
    policy = active_policy()
    routed = providers._routed
    known = content._known_secrets
    yield
    set_active_policy(policy)
    providers._routed = routed
    content._known_secrets = known


@pytest.fixture
def provider() -> TracerProvider:
    return TracerProvider()


@pytest.fixture
def spans(provider: TracerProvider) -> Iterator[Spans]:
    """Our steps export into memory through a real SDK provider (not the global one)."""
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handle = configure(tracer_provider=provider, set_global=False)
    yield Spans(exporter, handle)
    handle.shutdown(timeout=5)


@pytest.fixture(scope="session")
def traced_agent() -> ModuleType:
    """``examples/traced_agent.py``, imported as a module."""
    spec = importlib.util.spec_from_file_location("traced_agent_example", EXAMPLES / "traced_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(name="closed_port")
def closed_port_fixture() -> int:
    """A port on 127.0.0.1 that nothing listens on (just released)."""
    return closed_port()


@pytest.fixture(name="http_receiver")
def http_receiver_fixture() -> Iterator[Received]:
    """An OTLP/HTTP (protobuf) receiver on 127.0.0.1."""
    with http_receiver() as received:
        yield received


@pytest.fixture(name="grpc_receiver")
def grpc_receiver_fixture() -> Iterator[Received]:
    """An OTLP/gRPC receiver on 127.0.0.1 (``endpoint`` as the exporter's ``http://host:port``)."""
    with grpc_receiver() as received:
        received.endpoint = f"http://{received.endpoint}"
        yield received
