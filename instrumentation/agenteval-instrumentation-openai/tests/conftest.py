"""Fixtures: the scripted OpenAI-compatible server of ``examples/openai_server.py`` on 127.0.0.1,
the real ``openai`` client pointed at it, and an SDK tracer provider whose spans are kept in memory."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import openai
import pytest
from agenteval_instrumentation_openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agenteval_otel.tracing import ContentPolicy, active_policy, content, set_active_policy
from agenteval_otel.trajectory import SpanRecord, Trajectory, build_trajectories

REPO_ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = REPO_ROOT / "examples"

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Today's weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
RESPONSES_WEATHER_TOOL = {"type": "function", "name": "get_weather", **{
    k: v for k, v in WEATHER_TOOL["function"].items() if k != "name"}}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "promise(n): the test proves reliability promise n of RELIABILITY.md (one or more numbers)"
    )


def load_example(name: str, *, fresh: bool = False) -> ModuleType:
    """A module of ``examples/``, loaded by file path (once, unless ``fresh``)."""
    module_name = f"examples_{name}"
    if module_name in sys.modules and not fresh:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def model_server() -> ModuleType:
    """The ``openai_server`` example module: ``serve(script)``, ``Turn``, ``weather_model``."""
    return load_example("openai_server")


@pytest.fixture(name="load_example")
def load_example_fixture() -> Callable[..., ModuleType]:
    """``load_example(name, fresh=False)``: a module of ``examples/``."""
    return load_example


@pytest.fixture
def server(model_server: ModuleType) -> Iterator[Any]:
    with model_server.serve() as running:
        yield running


@pytest.fixture
def client(server: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0, timeout=5)


@pytest.fixture
def async_client(server: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.base_url, api_key="test-key", max_retries=0, timeout=5)


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


@pytest.fixture
def policy() -> Iterator[None]:
    """Put the content policy, and the secrets remembered from failures, back after the test."""
    saved, known = active_policy(), content._known_secrets
    set_active_policy(ContentPolicy(capture=True))
    yield
    set_active_policy(saved)
    content._known_secrets = known


@pytest.fixture
def instrument(provider: TracerProvider, policy: None) -> Iterator[Any]:
    """``instrument(**options)`` instruments with the in-memory provider; uninstrumented afterwards."""
    instrumentor = OpenAIInstrumentor()

    def apply(**options: Any) -> OpenAIInstrumentor:
        options.setdefault("tracer_provider", provider)
        instrumentor.instrument(**options)
        return instrumentor

    yield apply
    instrumentor.uninstrument()


@pytest.fixture
def instrumented(instrument: Any) -> OpenAIInstrumentor:
    """Instrumented with content captured."""
    return instrument(capture_content=True)


@pytest.fixture
def only_span(exporter: InMemorySpanExporter) -> Callable[[], ReadableSpan]:
    """The one span ended so far (fails if there are more or none)."""

    def get() -> ReadableSpan:
        spans = exporter.get_finished_spans()
        assert len(spans) == 1, [s.name for s in spans]
        return spans[0]

    return get


@pytest.fixture
def trajectory_of() -> Callable[[Any], Trajectory]:
    """The one trajectory our converter reads from SDK spans."""

    def convert(spans: Any) -> Trajectory:
        records = [SpanRecord.from_readable_span(span) for span in spans]
        (trajectory,) = build_trajectories(records, group="trace")
        return trajectory

    return convert


@pytest.fixture
def tools() -> dict[str, Any]:
    """The get_weather tool in each API's shape."""
    return {"chat": [WEATHER_TOOL], "responses": [RESPONSES_WEATHER_TOOL]}
