"""Every example in the package's docstrings runs as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["agenteval_instrumentation_langgraph", "agenteval_instrumentation_langgraph.graph_values",
           "agenteval_instrumentation_langgraph.patch"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    failures, _ = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, verbose=False)
    assert failures == 0
