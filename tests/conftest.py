"""Shared test fixtures: where the real third-party material lives, and real SDK spans."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

pytest_plugins = ["pytester"]

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real third-party traces and eval sets (``../shared/data``)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"shared test data not found at {SHARED_DATA}; it must sit beside the repository")
    return SHARED_DATA


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
