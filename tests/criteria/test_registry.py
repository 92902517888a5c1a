"""Criteria of one's own, found by name: ``agenteval.criteria`` entry points of installed
distributions, and modules or files imported with ``load_criteria_module``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenteval_otel import EvalConfig
from agenteval_otel.criteria._registry import get_criterion, load_criteria_module
from agenteval_otel.errors import ConfigError

PACKAGE = '''
from agenteval_otel import criterion

@criterion("ep_no_shouting", default_threshold=1.0)
def no_shouting(ctx):
    return not (ctx.actual.final_response or "").isupper()

def polite(ctx):
    return "please" in (ctx.actual.final_response or "")
'''


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A distribution installed into a folder on ``sys.path``: its package and the
    ``.dist-info`` (``METADATA``, ``entry_points.txt``) that ``importlib.metadata`` reads."""
    (tmp_path / "agenteval_ep_demo").mkdir()
    (tmp_path / "agenteval_ep_demo" / "__init__.py").write_text(PACKAGE)
    (tmp_path / "agenteval_ep_broken.py").write_text("raise RuntimeError('needs a licence key')\n")
    info = tmp_path / "agenteval_ep_demo-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: agenteval-ep-demo\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text(
        "[agenteval.criteria]\n"
        "ep_no_shouting = agenteval_ep_demo\n"
        "ep_polite = agenteval_ep_demo:polite\n"
        "ep_broken = agenteval_ep_broken\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("agenteval_ep_demo", "agenteval_ep_broken"):
        sys.modules.pop(name, None)


def test_a_config_names_criteria_of_an_installed_distribution(installed: Path) -> None:
    config = EvalConfig(criteria={"ep_no_shouting": {}, "ep_polite": {"threshold": 0.5}})
    assert config.criteria["ep_no_shouting"].threshold == 1.0  # its own default, from the decorator
    assert get_criterion("ep_polite").fn.__module__ == "agenteval_ep_demo"


def _config_file(folder: Path, criteria: str) -> Path:
    path = folder / "config.json"
    path.write_text(f'{{"criteria": {criteria}}}')
    return path


def test_an_entry_point_that_fails_to_load_is_named(installed: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        EvalConfig.load(_config_file(installed, '{"ep_broken": {}}'))
    message = str(raised.value)
    assert "config.json: criteria: criterion 'ep_broken': entry point ep_broken = agenteval_ep_broken (from agenteval-ep-demo 1.2) " \
           "failed to load: RuntimeError: needs a licence key" in message


def test_an_unknown_name_says_how_to_add_criteria(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown criterion 'nowhere_to_be_found'.*--criteria-module"):
        EvalConfig.load(_config_file(tmp_path, '{"nowhere_to_be_found": {}}'))


def test_load_criteria_module_from_a_file_or_a_module_name(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "json.py"  # named like a standard module: loaded under a private name
    file.write_text(PACKAGE.replace("ep_no_shouting", "file_no_shouting"))
    load_criteria_module(str(file))
    load_criteria_module(str(file))  # twice is once
    assert get_criterion("file_no_shouting").default_threshold == 1.0
    assert sys.modules["json"].__name__ == "json" and hasattr(sys.modules["json"], "dumps")

    (tmp_path / "agenteval_named_criteria.py").write_text(PACKAGE.replace("ep_no_shouting", "named_no_shouting"))
    monkeypatch.syspath_prepend(str(tmp_path))
    load_criteria_module("agenteval_named_criteria")
    assert get_criterion("named_no_shouting").name == "named_no_shouting"
    sys.modules.pop("agenteval_named_criteria", None)

    with pytest.raises(ConfigError, match="criteria module 'no_such_criteria_module' failed to import: "
                                          "ModuleNotFoundError"):
        load_criteria_module("no_such_criteria_module")
    with pytest.raises(ConfigError, match="no such file"):
        load_criteria_module(str(tmp_path / "missing.py"))
    (tmp_path / "broken_criteria.py").write_text("1 / 0\n")
    with pytest.raises(ConfigError, match="broken_criteria.py' failed to import: ZeroDivisionError"):
        load_criteria_module(str(tmp_path / "broken_criteria.py"))
