"""Every example in the package's docstrings runs as written."""

from __future__ import annotations

import doctest
import importlib

import pytest

from tests.conftest import REPO_ROOT

MODULES = sorted(
    ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts).removesuffix(".__init__")
    for path in (REPO_ROOT / "agenteval_otel").rglob("*.py")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert failures == 0
