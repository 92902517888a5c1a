"""Every reliability promise of docs/reliability.md is proven by a test marked ``promise(N)``.

The markers are read from the test modules' syntax rather than by collecting the suite (which
imports every test module and takes seconds): decorators of test functions, methods and
classes, ``pytestmark`` of a module or a test class, and the ``marks`` of a ``pytest.param`` in
a test's decorators. A marker anywhere else (on a helper, in a module-level list of params) is
refused, since pytest would not apply it to a test, and so is a number the table does not have.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

import pytest

from tests.conftest import REPO_ROOT

RELIABILITY = REPO_ROOT / "docs" / "reliability.md"
SHARED_RELIABILITY = REPO_ROOT.parent / "shared" / "RELIABILITY.md"
TEST_ROOTS = (REPO_ROOT / "tests", *sorted((REPO_ROOT / "instrumentation").glob("*/tests")))
ROW = re.compile(r"^\|\s*(\d+)\s*\|([^|]*)\|", re.MULTILINE)


def read_promises(path: Path) -> dict[int, str]:
    """The numbered rows of the table in ``path``: each number and the text of its next column."""
    return {int(number): text.strip() for number, text in ROW.findall(path.read_text(encoding="utf-8"))}


@dataclass(frozen=True)
class Marker:
    """One ``promise(...)`` marker: where it is written, the test it marks (``None`` when pytest
    collects nothing there) and its arguments (numbers, or the source of what is not one)."""

    where: str
    test: str | None
    numbers: tuple[int | str, ...]


def _is_promise(node: ast.AST) -> TypeGuard[ast.Call]:
    """``pytest.mark.promise(...)`` or ``mark.promise(...)``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "promise"):
        return False
    owner = node.func.value
    return (isinstance(owner, ast.Attribute) and owner.attr == "mark") or (
        isinstance(owner, ast.Name) and owner.id == "mark"
    )


def _argument(node: ast.expr) -> int | str:
    try:
        value = ast.literal_eval(node)
    except (TypeError, ValueError):
        return ast.unparse(node)
    return value if type(value) is int else ast.unparse(node)


def scan(source: str, name: str) -> list[Marker]:
    """The ``promise`` markers in the test module ``source`` (named ``name`` in the results)."""
    tree = ast.parse(source, filename=name)
    marks: dict[int, str] = {}

    def claim(expression: ast.AST, test: str) -> None:
        marks.update((id(node), test) for node in ast.walk(expression) if _is_promise(node))

    def visit(body: list[ast.stmt], owner: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                for decorator in node.decorator_list:
                    claim(decorator, f"{owner}::{node.name}")
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                for decorator in node.decorator_list:
                    claim(decorator, f"{owner}::{node.name}")
                visit(node.body, f"{owner}::{node.name}")
            elif isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
            ):
                claim(node.value, owner)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and (
                node.target.id == "pytestmark" and node.value is not None
            ):
                claim(node.value, owner)

    visit(tree.body, name)
    calls = sorted((node for node in ast.walk(tree) if _is_promise(node)), key=lambda n: (n.lineno, n.col_offset))
    return [
        Marker(f"{name}:{node.lineno}", marks.get(id(node)), tuple(_argument(arg) for arg in node.args))
        for node in calls
    ]


def _test_modules() -> Iterator[Path]:
    for root in TEST_ROOTS:
        yield from sorted(root.rglob("test_*.py"))
        yield from sorted(root.rglob("*_test.py"))


def suite_markers() -> list[Marker]:
    """Every ``promise`` marker in the test modules of the repository."""
    return [
        marker
        for path in _test_modules()
        for marker in scan(path.read_text(encoding="utf-8"), path.relative_to(REPO_ROOT).as_posix())
    ]


def unproven(promises: dict[int, str], markers: list[Marker]) -> str:
    """The promises no marked test proves, each with its title ('' when every one is proven)."""
    proven = {number for marker in markers if marker.test is not None for number in marker.numbers}
    return "; ".join(f"{number} ({title})" for number, title in promises.items() if number not in proven)


def misplaced(promises: dict[int, str], markers: list[Marker]) -> list[str]:
    """A line per marker pytest would not apply to a test, or naming no promise of the table."""
    problems = []
    for marker in markers:
        if marker.test is None:
            problems.append(f"{marker.where}: the marker is not on a test pytest collects")
        elif not marker.numbers:
            problems.append(f"{marker.where}: promise() names no promise")
        problems.extend(
            f"{marker.where}: promise({number}) is not a promise number of {RELIABILITY.name} (1 to {len(promises)})"
            for number in marker.numbers
            if number not in promises
        )
    return problems


@pytest.fixture(scope="module")
def promises() -> dict[int, str]:
    return read_promises(RELIABILITY)


@pytest.fixture(scope="module")
def markers() -> list[Marker]:
    return suite_markers()


def test_the_promises_are_numbered_from_1_and_titled(promises: dict[int, str]) -> None:
    assert promises, f"{RELIABILITY}: no promise table"
    assert list(promises) == list(range(1, len(promises) + 1)), f"{RELIABILITY}: numbers out of order or missing"
    assert all(promises.values()), f"{RELIABILITY}: a promise without a short title"


def test_every_promise_has_a_marked_test(promises: dict[int, str], markers: list[Marker]) -> None:
    missing = unproven(promises, markers)
    assert not missing, f"reliability promises with no test marked promise(N) ({RELIABILITY.name}): {missing}"


def test_every_marker_is_on_a_test_and_names_a_promise(promises: dict[int, str], markers: list[Marker]) -> None:
    problems = misplaced(promises, markers)
    assert not problems, "\n".join(problems)


def test_the_repository_lists_the_promises_of_the_shared_document(promises: dict[int, str]) -> None:
    if not SHARED_RELIABILITY.is_file():
        pytest.skip(f"no {SHARED_RELIABILITY} beside the checkout to compare {RELIABILITY.name} with")
    assert list(read_promises(SHARED_RELIABILITY)) == list(promises)


# --- the check itself, on modules written here ---------------------------------------------------
MARKED = '''
import pytest
from pytest import mark

pytestmark = [pytest.mark.promise(1), pytest.mark.slow]


@pytest.mark.promise(2, 3)
def test_two(): ...


@mark.promise(4)
@pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.promise(5))])
async def test_async(x): ...


@pytest.mark.promise(6)
class TestGroup:
    pytestmark = pytest.mark.promise(7)

    @pytest.mark.promise(8)
    def test_method(self): ...


@pytest.mark.promise(9)
def helper(): ...


PARAMS = [pytest.param(1, marks=pytest.mark.promise(10))]


@pytest.mark.promise(11)
class Helper: ...


@pytest.mark.promise("12", 99, SOME_NUMBER)
def test_wrong_numbers(): ...


@pytest.mark.promise()
def test_nothing(): ...
'''
TABLE = {number: f"title {number}" for number in range(1, 13)}


def test_markers_on_tests_count_wherever_pytest_applies_them() -> None:
    found = {marker.numbers: marker.test for marker in scan(MARKED, "test_x.py")}
    assert found[(1,)] == "test_x.py"
    assert found[(2, 3)] == "test_x.py::test_two"
    assert found[(4,)] == found[(5,)] == "test_x.py::test_async"
    assert found[(6,)] == found[(7,)] == "test_x.py::TestGroup"
    assert found[(8,)] == "test_x.py::TestGroup::test_method"
    assert found[(9,)] is found[(10,)] is found[(11,)] is None


def test_the_promises_without_a_test_are_named_with_their_titles() -> None:
    markers = scan(MARKED, "test_x.py")
    assert unproven(TABLE, markers) == "9 (title 9); 10 (title 10); 11 (title 11); 12 (title 12)"
    assert unproven({1: "a", 2: "b"}, markers) == ""


def test_markers_off_a_test_or_naming_no_promise_are_refused() -> None:
    assert misplaced(TABLE, scan(MARKED, "test_x.py")) == [
        "test_x.py:25: the marker is not on a test pytest collects",
        "test_x.py:29: the marker is not on a test pytest collects",
        "test_x.py:32: the marker is not on a test pytest collects",
        "test_x.py:36: promise('12') is not a promise number of reliability.md (1 to 12)",
        "test_x.py:36: promise(99) is not a promise number of reliability.md (1 to 12)",
        "test_x.py:36: promise(SOME_NUMBER) is not a promise number of reliability.md (1 to 12)",
        "test_x.py:40: promise() names no promise",
    ]


def test_the_table_is_read_by_its_numbered_rows(tmp_path: Path) -> None:
    table = tmp_path / "reliability.md"
    table.write_text("# Promises\n\n| # | Short title | Promise |\n|---|---|---|\n"
                     "| 1 | First | Text. |\n|  2 |  Second  | More \\| text. |\nA line | 3 | not a row\n")
    assert read_promises(table) == {1: "First", 2: "Second"}
