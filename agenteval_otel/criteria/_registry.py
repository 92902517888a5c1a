"""The criterion registry: every criterion, built-in or yours, under one name with its aliases,
its default threshold and, if it has one, its settings model.

A criterion is a function of one :class:`~agenteval_otel.criteria._context.CriterionContext`
that returns a score in [0, 1] (``float``), an assertion (``bool``), a :class:`Score` with a reason,
or ``None`` when it does not apply to that turn. It may be ``async``. It is called once per
invocation; the case's score is the mean over the invocations it applied to.

>>> @criterion("mentions_city", default_threshold=1.0)
... def mentions_city(ctx):
...     return Score(1.0 if "Paris" in (ctx.actual.final_response or "") else 0.0, "looked for Paris")
>>> get_criterion("mentions_city").default_threshold
1.0

Criteria of your own reach a config file (and the command line) in two ways: an installed
distribution declares them in the entry-point group ``agenteval.criteria`` (the entry point's name
is the criterion's name; its value a module whose ``@criterion`` functions register when it is
imported, or the function itself), loaded the first time a config names an unknown criterion;
or :func:`load_criteria_module` imports a module or a ``.py`` file (``--criteria-module``).

Functions written for the older three-argument form ``(expected, actual, config)`` still register
(with a ``DeprecationWarning``) and are called with ``ctx.expected, ctx.actual, ctx.config``; they
do not apply to reference-free turns (``ctx.expected is None``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import threading
import warnings
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Union

from pydantic import BaseModel

from agenteval_otel.errors import ConfigError
from agenteval_otel.loading import import_file
from agenteval_otel.results import EvidenceRow, Semantics, describe_error

if TYPE_CHECKING:
    from agenteval_otel.criteria._context import CriterionContext

__all__ = [
    "CriterionFn",
    "Outcome",
    "RegisteredCriterion",
    "Score",
    "Semantics",
    "canonical_criterion_name",
    "criterion",
    "criterion_names",
    "get_criterion",
    "load_criteria_module",
    "registered_criteria",
]

ENTRY_POINT_GROUP = "agenteval.criteria"


@dataclass(frozen=True)
class Score:
    """A criterion's verdict on one invocation: a value in [0, 1], why, free-form ``details``,
    and the ``evidence`` reports show (rows aligning what was expected with what happened)."""

    value: float
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    evidence: Sequence[EvidenceRow] = ()


Outcome = Union[float, bool, Score, None]
CriterionFn = Callable[["CriterionContext"], Union[Outcome, Awaitable[Outcome]]]
F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_THRESHOLD = 0.8


@dataclass(frozen=True)
class RegisteredCriterion:
    """A criterion function under its name, with its aliases, default threshold, the settings
    model its ``CriterionConfig.params`` are validated with (``None``: free-form), whose
    rules it follows (``semantics``: ``"agenteval"``, or the tool whose vocabulary its name is
    from, such as ``"adk"``), and whether it scores an invocation with no expected one
    (``reference_free``: policies, judged qualities)."""

    name: str
    fn: CriterionFn
    default_threshold: float
    aliases: tuple[str, ...] = ()
    settings: type[BaseModel] | None = None
    semantics: Semantics = "agenteval"
    reference_free: bool = False

    def parse_settings(self, params: dict[str, Any]) -> BaseModel | None:
        """``params`` validated by the settings model (``None`` without one)."""
        return None if self.settings is None else self.settings.model_validate(params)


_REGISTRY: dict[str, RegisteredCriterion] = {}
_ALIASES: dict[str, str] = {}
_LOCK = threading.RLock()
_BUILTINS = "agenteval_otel.criteria._builtin"
_builtins_state = "absent"  # absent -> loading -> loaded


def _load_builtins() -> None:
    """Register the built-in criteria once, before any lookup or user registration."""
    global _builtins_state
    if _builtins_state == "loaded":
        return
    with _LOCK:
        if _builtins_state != "absent":
            return
        _builtins_state = "loading"
        try:
            importlib.import_module(_BUILTINS)
        finally:
            _builtins_state = "loaded"


def _legacy(fn: Callable[..., Any], name: str) -> CriterionFn | None:
    """An adapter for a three-argument ``(expected, actual, config)`` function, else ``None``."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < 3:
        return None
    warnings.warn(
        f"criterion {name!r} takes (expected, actual, config); take one CriterionContext instead "
        "(ctx.expected, ctx.actual, ctx.config). The three-argument form is deprecated.",
        DeprecationWarning,
        stacklevel=3,
    )

    if inspect.iscoroutinefunction(fn):

        async def adapted_async(ctx: CriterionContext) -> Outcome:
            if ctx.expected is None:
                return None
            return await fn(ctx.expected, ctx.actual, ctx.config)  # type: ignore[no-any-return]

        return adapted_async

    def adapted(ctx: CriterionContext) -> Outcome:
        if ctx.expected is None:
            return None
        return fn(ctx.expected, ctx.actual, ctx.config)  # type: ignore[no-any-return]

    return adapted


def criterion(
    name: str | None = None,
    *,
    default_threshold: float | None = None,
    aliases: Sequence[str] = (),
    settings: type[BaseModel] | None = None,
    semantics: Semantics = "agenteval",
    reference_free: bool = False,
) -> Callable[[F], F]:
    """Register a criterion function under ``name`` (default: the function's name).

    ``default_threshold`` applies when a config names the criterion without a threshold (0.8,
    or the replaced criterion's); ``aliases`` are other names configs may use for it;
    ``settings`` a pydantic model that validates ``CriterionConfig.params`` (the validated object
    is ``ctx.settings``); ``semantics`` whose rules it follows (reported on every result);
    ``reference_free`` that it scores invocations with no expected one (``ctx.expected is None``:
    traces with no eval set, invocations no case matched), so configs without an eval set may use it.
    Registering a name (or an alias of a built-in) again replaces the earlier
    function, so a user can override a built-in criterion.
    """
    if default_threshold is not None and not 0.0 <= default_threshold <= 1.0:
        raise ValueError(f"default_threshold must be in [0, 1], got {default_threshold!r}")

    def register(fn: F) -> F:
        key = name or getattr(fn, "__name__", "")
        if not key:
            raise ValueError("a criterion needs a name")
        _load_builtins()
        with _LOCK:
            key = _ALIASES.get(key, key)
            previous = _REGISTRY.get(key)
            for alias in aliases:
                owner = _ALIASES.get(alias, alias if alias in _REGISTRY else None)
                if owner is not None and owner != key:
                    raise ValueError(f"{alias!r} already names criterion {owner!r}")
            kept_aliases = tuple(dict.fromkeys([*(previous.aliases if previous else ()), *aliases]))
            _REGISTRY[key] = RegisteredCriterion(
                name=key,
                fn=_legacy(fn, key) or fn,
                default_threshold=(
                    default_threshold if default_threshold is not None
                    else previous.default_threshold if previous is not None else DEFAULT_THRESHOLD
                ),
                aliases=kept_aliases,
                settings=settings,
                semantics=semantics,
                reference_free=reference_free,
            )
            for alias in kept_aliases:
                _ALIASES[alias] = key
        return fn

    return register


def _describe(error: BaseException) -> str:

    return describe_error(error)


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def _load_entry_points(name: str) -> None:
    """Load the entry points named ``name`` in ``agenteval.criteria``; a function they give that
    did not register itself is registered under ``name``. ``ConfigError`` if one fails."""
    for entry_point in _entry_points():
        if entry_point.name != name:
            continue
        source = f"entry point {entry_point.name} = {entry_point.value}"
        if entry_point.dist is not None:
            source += f" (from {entry_point.dist.name} {entry_point.dist.version})"
        try:
            loaded = entry_point.load()
        except Exception as exc:
            raise ConfigError(f"criterion {name!r}: {source} failed to load: {_describe(exc)}") from None
        with _LOCK:
            known = _ALIASES.get(name, name) in _REGISTRY
        if not known and callable(loaded) and not inspect.isclass(loaded):
            criterion(name)(loaded)


def canonical_criterion_name(name: str) -> str:
    """Our name for a criterion name or alias; ``ConfigError`` for an unknown name (after looking
    for an ``agenteval.criteria`` entry point of that name)."""
    _load_builtins()
    canonical = _ALIASES.get(name, name)
    if canonical not in _REGISTRY:
        _load_entry_points(name)
        canonical = _ALIASES.get(name, name)
    if canonical not in _REGISTRY:
        raise ConfigError(f"unknown criterion {name!r}; expected one of: {', '.join(criterion_names())} "
                          "(criteria of your own: --criteria-module, or an agenteval.criteria entry point)")
    return canonical


def load_criteria_module(module: str) -> None:
    """Import ``module`` (a dotted module name, or a path to a ``.py`` file) so that its
    ``@criterion`` functions register; ``ConfigError`` naming it if that fails."""
    path = Path(module)
    try:
        if path.suffix == ".py" or path.is_file():
            if not path.is_file():
                raise ConfigError(f"criteria module {module!r}: no such file")
            import_file(path, "agenteval_criteria_")
        else:
            importlib.import_module(module)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"criteria module {module!r} failed to import: {_describe(exc)}") from None


def get_criterion(name: str) -> RegisteredCriterion:
    """The criterion registered under ``name`` or an alias of it (``ConfigError`` if none is)."""
    return _REGISTRY[canonical_criterion_name(name)]


def criterion_names() -> list[str]:
    """Every registered criterion name (without aliases)."""
    _load_builtins()
    return sorted(_REGISTRY)


registered_criteria = criterion_names
