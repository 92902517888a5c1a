"""The instrumentor's contract: idempotent and symmetric patching, the dependency check, the entry point."""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path
from typing import Any

import agenteval_instrumentation_langgraph as package
import pytest
from agenteval_instrumentation_langgraph import LangGraphInstrumentor
from agenteval_instrumentation_langgraph.patch import HOOKS
from sample_graphs import router_graph

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _resolve(module: str, attribute: str) -> tuple[Any, str]:
    owner: Any = importlib.import_module(module)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    return owner, name


def _current() -> list[Any]:
    """What each hooked attribute holds now (looked up in the owner's namespace)."""
    return [vars(owner)[name] for owner, name in (_resolve(m, a) for m, a, _ in HOOKS)]


@pytest.mark.promise(8)
def test_instrument_twice_is_once_and_uninstrument_restores_the_very_functions(
    uninstrumented: Any, caplog: pytest.LogCaptureFixture
) -> None:
    originals = _current()
    instrumentor = LangGraphInstrumentor()
    instrumentor.instrument()
    wrapped_once = _current()
    LangGraphInstrumentor().instrument()  # the same instrumentor (one per class): a no-op

    assert _current() == wrapped_once
    assert all(wrapper.__wrapped__ is original for wrapper, original in zip(wrapped_once, originals))
    instrumentor.uninstrument()
    assert all(now is original for now, original in zip(_current(), originals))
    from langgraph.prebuilt.tool_node import ToolNode
    from langgraph.pregel.main import Pregel

    assert Pregel.invoke is originals[0] and ToolNode._run_one is originals[-2]


@pytest.mark.promise(8)
def test_uninstrumented_graphs_make_no_spans(captured: Any) -> None:
    LangGraphInstrumentor().uninstrument()
    router_graph().invoke({"question": "Weather?", "answer": "", "log": []})
    LangGraphInstrumentor().instrument(tracer_provider=captured.provider)  # for the fixture to undo

    assert captured.spans() == []


@pytest.mark.promise(8)
@pytest.mark.parametrize("requirement", ["langgraph >= 99.0", "agenteval-no-such-library >= 1.0"])
def test_a_missing_or_too_old_library_is_skipped_with_one_log_line(
    requirement: str, uninstrumented: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(package, "_instruments", (requirement,))
    originals = _current()
    with caplog.at_level(logging.DEBUG, logger="opentelemetry.instrumentation"):
        LangGraphInstrumentor().instrument()

    assert _current() == originals
    assert not LangGraphInstrumentor().is_instrumented_by_opentelemetry
    records = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(records) == 1 and requirement.split()[0] in records[0].getMessage()


@pytest.mark.promise(8)
def test_a_hook_missing_from_this_langgraph_is_skipped_with_a_log(
    uninstrumented: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from agenteval_instrumentation_langgraph import patch

    monkeypatch.setattr(patch, "HOOKS", (*HOOKS, ("langgraph.pregel.main", "Pregel.no_such_method", patch.node_run)))
    with caplog.at_level(logging.WARNING, logger="agenteval_instrumentation_langgraph"):
        LangGraphInstrumentor().instrument()

    assert [record.getMessage() for record in caplog.records] == [
        "langgraph has no langgraph.pregel.main.Pregel.no_such_method; that part of a graph run is not traced"]
    assert all(hasattr(now, "__wrapped__") for now in _current())


def test_the_dependencies_and_the_entry_point() -> None:
    tomllib = pytest.importorskip("tomllib") if sys.version_info < (3, 11) else importlib.import_module("tomllib")
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    (entry,) = project["entry-points"]["opentelemetry_instrumentor"].items()
    module, _, name = entry[1].partition(":")

    assert entry[0] == "langgraph"
    assert getattr(importlib.import_module(module), name) is LangGraphInstrumentor
    assert list(LangGraphInstrumentor().instrumentation_dependencies()) == ["langgraph >= 1.0.0"]
    assert project["optional-dependencies"]["instruments"] == ["langgraph>=1.0.0"]
    assert not any(dependency.startswith("langgraph") for dependency in project["dependencies"])
