"""Evaluate agents in your own pytest suite: the ``agenteval`` fixture and marker.

Installed with agenteval-otel, pytest loads this plugin by itself (entry point ``agenteval``).

* The ``agenteval`` fixture: ``agenteval.run(eval_set, agent, config=None, **options)`` (``await
  agenteval.arun(...)`` in async tests) evaluates ``agent`` and returns the ``EvalReport``.
  ``eval_set`` is an ``EvalSet``, an ``EvalCase`` or the path of an eval-set file (JSON or YAML);
  ``config`` an ``EvalConfig`` or the path of a config file; ``options`` are those of
  ``evaluate`` (``concurrency``, ``num_runs``, ``timeout_s``, ``tags``). For the length of the
  test our decorators' spans go to an in-memory tracer provider of the test's own
  (``agenteval.spans``); afterwards tracing is as it was.
* The ``agenteval`` marker: ``@pytest.mark.agenteval(evalset=PATH, config=PATH, tags=[...])`` on a
  test that takes an ``eval_case`` argument runs the test once per case of the eval set, with
  the case's ``eval_id`` as its test id; ``agenteval.run(eval_case, agent)`` then scores that case
  with the marker's config. A missing or invalid file is a collection error naming the file.
* ``--agenteval-report DIR``: every report a test produced is also saved as JSON in ``DIR``.

Relative paths are relative to the folder of the test file. ::

    import pytest
    from my_project.agents import weather_agent

    @pytest.mark.agenteval(evalset="evals/weather.evalset.json", config="evals/config.json")
    def test_weather(agenteval, eval_case):
        agenteval.run(eval_case, weather_agent).assert_passed()

A failing ``assert_passed()`` shows every failing case, criterion, score, threshold and reason.

pytest loads the plugin in every session; it imports the evaluation code only when a test uses
the fixture or the marker, so loading it costs no more than importing the ``agenteval_otel``
package.

PYTEST_DONT_REWRITE: this module has no ``assert`` for pytest to rewrite, and pytest need not
warn when it was imported before a test session (as in ``pytester`` runs).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Union, cast

import pytest

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agenteval_otel.criteria import EvalConfig
    from agenteval_otel.evalsets import EvalCase, EvalSet
    from agenteval_otel.evaluation import Agent
    from agenteval_otel.results import EvalReport
    from agenteval_otel.tracing.configure import TracingHandle

__all__ = ["AgentEvalFixture"]

PathLike = Union[str, "os.PathLike[str]"]
_T = TypeVar("_T")

MARKER = "agenteval"
MARKER_HELP = (
    "agenteval(evalset=PATH, config=PATH, tags=[...]): run the test once per case of the eval "
    "set (its `eval_case` argument, the case's eval_id as test id); `agenteval.run(eval_case, "
    "agent)` scores it with the config. Paths are relative to the test file."
)
REPORT_OPTION = "--agenteval-report"
_MARKER_ARGS = ("evalset", "config", "tags")

_loaded_key = pytest.StashKey[dict[tuple[str, Path], Any]]()
_report_dir_key = pytest.StashKey[Union[Path, None]]()


# --- hooks ------------------------------------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agenteval", "agent evaluation (agenteval-otel)")
    group.addoption(
        REPORT_OPTION, metavar="DIR", default=None,
        help="save every evaluation report of the run as JSON in DIR",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    config.stash[_loaded_key] = {}
    report_dir = config.getoption(REPORT_OPTION)
    config.stash[_report_dir_key] = (
        Path(config.invocation_params.dir, report_dir).resolve() if report_dir else None
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    mark = metafunc.definition.get_closest_marker(MARKER)
    if mark is None:
        return
    where = f"{metafunc.definition.nodeid}: @pytest.mark.{MARKER}"
    problem = ""
    try:
        marker = _EvalMarker.read(mark, metafunc.definition.path.parent, metafunc.config)
    except ValueError as exc:  # EvalSetLoadError, ConfigError and bad marker arguments
        problem = str(exc) or type(exc).__name__
    if problem:  # failed outside the except block, so pytest shows no chained traceback
        pytest.fail(f"{where}: {problem}", pytrace=False)
    if "eval_case" not in metafunc.fixturenames:
        return
    if marker.eval_set is None:
        pytest.fail(f"{where}: the test takes 'eval_case', so the marker needs evalset=PATH",
                    pytrace=False)
    cases = marker.cases()
    metafunc.parametrize("eval_case", cases, ids=[case.eval_id for case in cases])


# --- the marker -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _EvalMarker:
    """What ``@pytest.mark.agenteval(...)`` asked for, with its files loaded."""

    eval_set: EvalSet | None = None
    config: EvalConfig | None = None
    tags: tuple[str, ...] = ()

    @classmethod
    def read(cls, mark: pytest.Mark, base_dir: Path, config: pytest.Config) -> _EvalMarker:
        """Read ``mark``; ``ValueError`` (``EvalSetLoadError``, ``ConfigError``) if it is wrong."""
        if mark.args:
            raise ValueError(f"takes keyword arguments only ({', '.join(_MARKER_ARGS)})")
        unknown = sorted(set(mark.kwargs) - set(_MARKER_ARGS))
        if unknown:
            raise ValueError(
                f"unknown argument {', '.join(map(repr, unknown))}; expected {', '.join(_MARKER_ARGS)}"
            )
        tags = mark.kwargs.get("tags") or ()
        tags = (tags,) if isinstance(tags, str) else tags
        if not isinstance(tags, (list, tuple, set)) or not all(isinstance(t, str) for t in tags):
            raise ValueError(f"tags must be a list of strings, not {tags!r}")
        evalset = mark.kwargs.get("evalset")
        chosen = mark.kwargs.get("config")
        return cls(
            eval_set=None if evalset is None else _eval_set(evalset, base_dir, config),
            config=None if chosen is None else _eval_config(chosen, base_dir, config),
            tags=tuple(tags),
        )

    def cases(self) -> list[EvalCase]:
        """The eval set's cases, only those carrying one of ``tags`` when there are tags."""
        cases = list(self.eval_set.eval_cases) if self.eval_set is not None else []
        if not self.tags:
            return cases
        return [case for case in cases if set(self.tags) & set(case.tags)]


def _resolve(path: PathLike, base_dir: Path) -> Path:
    return (base_dir / Path(path).expanduser()).resolve()


def _loaded(kind: str, file: Path, config: pytest.Config | None, load: Callable[[Path], _T]) -> _T:
    """``load(file)``, once per file and test session."""
    cache = config.stash.get(_loaded_key, None) if config is not None else None
    if cache is None:
        return load(file)
    if (kind, file) not in cache:
        cache[kind, file] = load(file)
    return cast(_T, cache[kind, file])  # what ``load`` gave for this kind of file


def _eval_set(value: Any, base_dir: Path, config: pytest.Config | None = None) -> EvalSet:
    from agenteval_otel.evalsets import EvalSet

    if isinstance(value, EvalSet):
        return value
    if not isinstance(value, (str, os.PathLike)):
        raise ValueError(f"expected an eval-set path or an EvalSet, not {type(value).__name__}")
    return _loaded("evalset", _resolve(value, base_dir), config, EvalSet.load)


def _eval_config(value: Any, base_dir: Path, config: pytest.Config | None = None) -> EvalConfig:
    from agenteval_otel.criteria import EvalConfig

    if isinstance(value, EvalConfig):
        return value
    if not isinstance(value, (str, os.PathLike)):
        raise ValueError(f"expected a config path or an EvalConfig, not {type(value).__name__}")
    return _loaded("config", _resolve(value, base_dir), config, EvalConfig.load)


# --- tracing for one test ---------------------------------------------------------------------
class _TestTracing:
    """Our spans routed to an in-memory provider for one test, and the routing put back after.

    The content policy in force is kept; whatever provider our decorators used before the test
    (routed by ``configure`` or the global one) is theirs again afterwards.
    """

    def __init__(self) -> None:
        from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from agenteval_otel.tracing import active_policy, configure, routed_to

        self.exporter: InMemorySpanExporter = InMemorySpanExporter()
        self.provider: SdkTracerProvider = SdkTracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self._routing: AbstractContextManager[None] = routed_to(self.provider)
        self._routing.__enter__()  # remembers the routing to put back
        self._handle: TracingHandle = configure(
            tracer_provider=self.provider, content_policy=active_policy(), set_global=False
        )

    def close(self) -> None:
        self._routing.__exit__(None, None, None)
        self._handle.shutdown(timeout=5.0)
        self.exporter.clear()


# --- the fixture ------------------------------------------------------------------------------
class AgentEvalFixture:
    """The ``agenteval`` fixture: evaluates agents inside a test (see the module docs)."""

    def __init__(
        self,
        request: pytest.FixtureRequest,
        tracing: _TestTracing,
        report_dir: Path | None = None,
    ) -> None:
        self._request = request
        self._base_dir = request.path.parent
        mark = request.node.get_closest_marker(MARKER)
        self._marker = _EvalMarker.read(mark, self._base_dir, request.config) if mark else None
        self._tracing = tracing
        self._report_dir = report_dir
        self.reports: list[EvalReport] = []
        """Every report this test produced, in order."""

    def __repr__(self) -> str:
        return f"<agenteval fixture of {self._request.node.nodeid}: {len(self.reports)} report(s)>"

    @property
    def eval_set(self) -> EvalSet | None:
        """The eval set named by the test's ``agenteval`` marker, if any."""
        return self._marker.eval_set if self._marker else None

    @property
    def spans(self) -> tuple[ReadableSpan, ...]:
        """Every span our decorators and the evaluator finished during this test so far."""
        return tuple(self._tracing.exporter.get_finished_spans())

    def run(
        self, eval_set: EvalSet | EvalCase | PathLike, agent: Agent,
        config: EvalConfig | PathLike | None = None, **options: Any,
    ) -> EvalReport:
        """Evaluate ``agent`` on ``eval_set`` (options as for ``evaluate``); the report."""
        __tracebackhide__ = True
        from agenteval_otel.evaluation import evaluate

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("agenteval.run() inside a running event loop: in async tests, "
                               "use 'await agenteval.arun(...)'")
        chosen_set, chosen_config, options = self._prepare(eval_set, config, options)
        return self._keep(evaluate(chosen_set, agent, chosen_config, **options))

    async def arun(
        self, eval_set: EvalSet | EvalCase | PathLike, agent: Agent,
        config: EvalConfig | PathLike | None = None, **options: Any,
    ) -> EvalReport:
        """:meth:`run` for async tests."""
        __tracebackhide__ = True
        from agenteval_otel.evaluation import aevaluate

        chosen_set, chosen_config, options = self._prepare(eval_set, config, options)
        return self._keep(await aevaluate(chosen_set, agent, chosen_config, **options))

    def _prepare(
        self, eval_set: Any, config: Any, options: dict[str, Any]
    ) -> tuple[EvalSet, EvalConfig | None, dict[str, Any]]:
        __tracebackhide__ = True
        from agenteval_otel.errors import AgentEvalError

        chosen_config: EvalConfig | None
        try:
            chosen_set = self._eval_set_of(eval_set)
            if config is not None:
                chosen_config = _eval_config(config, self._base_dir)
            else:
                chosen_config = self._marker.config if self._marker else None
        except AgentEvalError as exc:  # the message says it all: no traceback into our code
            raise type(exc)(str(exc)) from None
        return chosen_set, chosen_config, {"tracer_provider": self._tracing.provider, **options}

    def _eval_set_of(self, value: Any) -> EvalSet:
        """An eval set for ``value``; a lone case keeps the id of the marker's set it came from."""
        from agenteval_otel.evalsets import EvalCase, EvalSet

        if not isinstance(value, EvalCase):
            return _eval_set(value, self._base_dir)
        home = self.eval_set
        if home is not None and any(case is value for case in home.eval_cases):
            return home.model_copy(update={"eval_cases": [value]})
        return EvalSet(eval_set_id=self._request.node.name, eval_cases=[value])

    def _keep(self, report: EvalReport) -> EvalReport:
        self.reports.append(report)
        if self._report_dir is not None:
            slug = re.sub(r"[^\w.\[\]-]+", "_", self._request.node.nodeid).strip("_")
            suffix = f"-{len(self.reports)}" if len(self.reports) > 1 else ""
            report.save(self._report_dir / f"{slug}{suffix}.json")
        return report


@pytest.fixture
def agenteval(request: pytest.FixtureRequest) -> Iterator[AgentEvalFixture]:
    """Evaluate agents in this test: ``agenteval.run(eval_set, agent, config)`` → ``EvalReport``.

    Tracing goes to an in-memory provider of this test's own (``agenteval.spans``) and is put
    back as it was when the test ends.
    """
    tracing = _TestTracing()
    try:
        yield AgentEvalFixture(request, tracing, request.config.stash.get(_report_dir_key, None))
    finally:
        tracing.close()
