"""Instrumentor packages turned on by name: ``configure(instrument=["openai", "langgraph"])``.

An instrumentor is found by its name in the entry-point group ``opentelemetry_instrumentor``, the
one ``opentelemetry-instrument`` loads, so contrib's instrumentors can be named too. Where several
distributions register the same name, ours (``agenteval-instrumentation-<name>``) is taken.
Nothing here imports an instrumentation package; a name we know whose package is not installed is
skipped with one log line; a name nobody registered is a ``ConfigError``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Final

__all__ = ["ENTRY_POINT_GROUP", "KNOWN_INSTRUMENTORS", "Found", "apply_instrumentors", "check_names", "find_instrumentors"]

_logger = logging.getLogger(__name__)
_logger.addHandler(logging.NullHandler())

ENTRY_POINT_GROUP: Final = "opentelemetry_instrumentor"
KNOWN_INSTRUMENTORS: Final[dict[str, str]] = {
    "openai": "agenteval-instrumentation-openai",
    "langgraph": "agenteval-instrumentation-langgraph",
}
"""Our instrumentor names and the distributions (extras of agenteval-otel) that provide them."""


def check_names(names: object) -> tuple[str, ...]:
    """``names`` as a tuple of str; ``TypeError`` for anything else (a lone str included)."""
    if isinstance(names, str) or not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"instrument must be a list of instrumentor names, not {names!r}")
    return tuple(names)


def _entry_point(name: str) -> EntryPoint | None:
    points = list(entry_points(group=ENTRY_POINT_GROUP, name=name))
    ours = KNOWN_INSTRUMENTORS.get(name)
    for point in points:
        dist = getattr(point, "dist", None)
        if ours is not None and dist is not None and dist.name == ours:
            return point
    return points[0] if points else None


Found = tuple[tuple[str, EntryPoint | None], ...]
"""Each name with its entry point (``None``: a name of ours whose package is not installed)."""


def find_instrumentors(names: object) -> Found:
    """The entry point of each name; ``TypeError`` for a names list of the wrong type,
    ``ConfigError`` for names nobody registered. Nothing is loaded yet."""
    checked = check_names(names)
    found = tuple((name, _entry_point(name)) for name in checked)
    unknown = [name for name, point in found if point is None and name not in KNOWN_INSTRUMENTORS]
    if unknown:
        from agenteval_otel.errors import ConfigError  # loaded only to raise: capture stays light

        installed = sorted({point.name for point in entry_points(group=ENTRY_POINT_GROUP)})
        raise ConfigError(
            f"instrument: no instrumentor named {', '.join(map(repr, unknown))}; ours are "
            f"{', '.join(KNOWN_INSTRUMENTORS)}; installed: {', '.join(installed) or 'none'}"
        )
    return found


def apply_instrumentors(found: Found, *, capture_content: bool | None) -> tuple[Any, ...]:
    """Load and apply each instrumentor found; the ones applied. A missing package, or one that
    fails to load or apply, is logged (one line) and skipped. ``capture_content`` is passed on
    only when given, as ``instrument(capture_content=...)``. No ``tracer_provider`` is passed:
    ours start their spans where our steps go (the configured provider, or the one a run routes
    to), others on the global provider."""
    options: dict[str, Any] = {}
    if capture_content is not None:
        options["capture_content"] = capture_content
    applied = []
    for name, point in found:
        if point is None:
            _logger.warning(
                "instrument: %r is not installed (pip install %s); not instrumented", name, KNOWN_INSTRUMENTORS[name]
            )
            continue
        try:
            instrumentor = point.load()()
            instrumentor.instrument(**options)
        except Exception:
            _logger.warning(
                "instrument: %r (%s) failed to load or apply; not instrumented", name, point.value, exc_info=True
            )
            continue
        applied.append(instrumentor)
    return tuple(applied)
