"""Which provider our steps' spans go to: the one routed to (by ``configure``), else the global one.

Looked up on every step (one comparison when nothing changed), so a provider configured or set
globally after a function was decorated is still the one used. An instrumentor starting steps
through :func:`~agenteval_otel.tracing.start_step` gets the same routing for free; code that
runs something under another provider for a while (an evaluation run, one test) routes there:

>>> from opentelemetry.sdk.trace import TracerProvider
>>> test_provider = TracerProvider()
>>> with routed_to(test_provider):
...     current_provider() is test_provider
True
>>> current_provider() is test_provider
False
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from opentelemetry import trace
from opentelemetry.trace import Tracer, TracerProvider

__all__ = ["current_provider", "current_tracer", "release_provider", "route_to_provider", "routed_to"]

INSTRUMENTATION_NAME = "agenteval_otel"

_routed: TracerProvider | None = None
_cache: tuple[TracerProvider | None, Tracer | None] = (None, None)


def current_tracer() -> Tracer:
    """Our tracer on the routed provider, or on the global one when none is routed."""
    global _cache
    provider = _routed if _routed is not None else trace.get_tracer_provider()
    cached_provider, tracer = _cache
    if provider is cached_provider and tracer is not None:
        return tracer
    tracer = tracer_of(provider)
    _cache = (provider, tracer)
    return tracer


def tracer_of(provider: TracerProvider) -> Tracer:
    """Our tracer (our instrumentation name and version) on ``provider``."""
    return provider.get_tracer(INSTRUMENTATION_NAME, _version())


@cache
def _version() -> str | None:
    """The installed distribution's version, looked up with the first tracer: importing
    ``importlib.metadata`` would make every decorated app start slower."""
    from importlib import metadata

    try:
        return metadata.version("agenteval-otel")
    except metadata.PackageNotFoundError:
        return None


def route_to_provider(provider: TracerProvider) -> None:
    """Send our steps' spans to ``provider`` whatever the global provider is."""
    global _routed
    _routed = provider


def release_provider(provider: TracerProvider) -> None:
    """Stop routing to ``provider`` (if it is still the routed one): back to the global provider."""
    global _routed
    if _routed is provider:
        _routed = None


def current_provider() -> TracerProvider:
    """The provider our steps' spans go to: the routed one, else the global one."""
    return _routed if _routed is not None else trace.get_tracer_provider()


@contextmanager
def routed_to(provider: TracerProvider) -> Iterator[None]:
    """Send our steps' spans to ``provider`` inside the block, then route as before."""
    global _routed
    previous = _routed
    _routed = provider
    try:
        yield
    finally:
        _routed = previous
