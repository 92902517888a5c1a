"""The README's benchmark tables sit in regions ``bench/tables.py`` can rewrite, each holding its
table (nothing here runs a bench)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO_ROOT

BENCH = REPO_ROOT / "bench"


@pytest.fixture
def tables(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))  # as when run as a script: bench/ first on the path
    spec = importlib.util.spec_from_file_location("bench_tables", BENCH / "tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_the_readme_holds_every_bench_table_in_a_well_formed_region(tables: ModuleType) -> None:
    found = tables.regions((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    assert sorted(found) == sorted(tables.TABLES)
    assert all((BENCH / f"{name}.py").is_file() for name in found)


def _region(row: str, header: str) -> str:
    return f"<!-- bench:startup -->\n\n{header}\n{row}\n\n<!-- /bench:startup -->\n"


def test_a_region_out_of_shape_is_refused_with_its_line(tables: ModuleType) -> None:
    header = "\n".join(tables.TABLES["startup"].header)
    good = _region("| `x` | 1 s | 1× | 1 | ≤ 1 s |", header)
    assert list(tables.regions(good)) == ["startup"]
    cases = {
        good.replace("<!-- /bench:startup -->", ""): "never closed",
        good + good: "README.md:8: bench:startup appears twice",
        good.replace("bench:startup", "bench:nothing"): "unknown table 'nothing'",
        good.replace("| `x` | 1 s | 1× | 1 | ≤ 1 s |", ""): "at least one row",
        good.replace("| command |", "| what |"): "with the header",
        "<!-- bench:startup -->\n" + good: "README.md:2: bench:startup opens inside",
        "<!-- /bench:startup -->\n": "closes no open",
    }
    for text, message in cases.items():
        with pytest.raises(ValueError, match=message):
            tables.regions(text)


def test_a_rewrite_replaces_the_region_and_nothing_else(tables: ModuleType) -> None:
    header = "\n".join(tables.TABLES["startup"].header)
    before = "intro\n" + _region("| `x` | 1 s | 1× | 1 | ≤ 1 s |", header) + "after\n"
    new = header + "\n| `y` | 2 s | 2× | 2 | ≤ 1 s |"
    assert tables.rewrite(before, {"startup": new}) == "intro\n" + _region("| `y` | 2 s | 2× | 2 | ≤ 1 s |",
                                                                             header) + "after\n"
    with pytest.raises(ValueError, match="no region for convert"):
        tables.rewrite(before, {"convert": new})


def test_check_exits_2_naming_the_file_and_line(tables: ModuleType, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("text\n<!-- bench:convert -->\n", encoding="utf-8")
    assert tables.main(["--check", str(readme)]) == 2
    assert f"{readme}: bench:convert is never closed" in capsys.readouterr().err
