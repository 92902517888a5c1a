"""Shared test fixtures: the real third-party material (skipped when absent), our own weather runs,
real SDK spans."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from tests.shared_data import (
    MISSING_REASON,
    REPO_ROOT,
    REQUIRE_ENV,
    SHARED_DATA,
    require_shared_data,
    required,
    shared_data_present,
)
from tests.weather_runs import write_weather_runs

pytest_plugins = ["pytester"]

__all__ = ["REPO_ROOT"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "needs_shared_data: the test reads the third-party data folder (skipped without it)"
    )


def pytest_report_header(config: pytest.Config) -> str:
    if shared_data_present():
        return f"third-party test data: {SHARED_DATA}"
    if required():
        return f"{MISSING_REASON}; {REQUIRE_ENV} is set: the tests that need it fail"
    return f"{MISSING_REASON}: the tests that need it are skipped"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_shared_data") is not None:
        require_shared_data()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if MISSING_REASON in str(r.longrepr)]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} skipped: {MISSING_REASON}")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real third-party traces and eval sets; the test is skipped without it."""
    return require_shared_data()


@pytest.fixture(scope="session")
def weather_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Our own weather runs, traced by our decorators: ``*.otlp.json`` beside ``*.ground_truth.json``."""
    return write_weather_runs(tmp_path_factory.mktemp("weather_runs"))


@pytest.fixture
def sdk_spans() -> Iterator[list[ReadableSpan]]:
    """A small finished agent trace from the real SDK: an agent, a tool that failed, a chat."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent-lib", "0.3")
    with tracer.start_as_current_span(
        "invoke_agent weather", kind=SpanKind.SERVER, attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.arguments": '{"city": "Paris"}',
                "retries": 2,
                "ratio": 0.5,
                "flags": (True, False),
            },
        ) as tool:
            tool.add_event("exception", {"exception.type": "ValueError", "exception.message": "no data"})
            tool.set_status(Status(StatusCode.ERROR, "no data"))
        with tracer.start_as_current_span(
            "chat gpt-4o", kind=SpanKind.CLIENT, attributes={"gen_ai.operation.name": "chat"}
        ):
            pass
    yield list(exporter.get_finished_spans())
    provider.shutdown()


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    """Every span our decorators and the evaluator make during the test."""
    from agenteval_otel.tracing import configure, release_provider

    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    handle = configure(tracer_provider=provider, set_global=False)
    yield exporter
    release_provider(provider)
    handle.shutdown(timeout=5)
