"""The third-party data folder: tests that need it skip for one stated reason without it, fail
instead when it is required (as CI requires it), and run from wherever ``AGENTEVAL_TEST_DATA``
points."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.shared_data import DATA_ENV, REQUIRE_ENV, skip_or_fail

TINY_SUITE = '''
import pytest

from tests.shared_data import SHARED_DATA, shared_params


def test_reads_the_data(shared_data):
    assert (shared_data / "marker.txt").read_text() == "here"


@pytest.mark.needs_shared_data
def test_marked():
    assert (SHARED_DATA / "marker.txt").is_file()


@pytest.mark.parametrize("name", shared_params(pytest.param(p.name, id=p.name) for p in SHARED_DATA.glob("*.txt")))
def test_over_the_files(shared_data, name):
    assert (shared_data / name).is_file()


def test_needs_nothing():
    pass
'''


@pytest.fixture
def tiny_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["tests.conftest"]')
    pytester.makepyfile(test_tiny=TINY_SUITE)
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    return pytester


def _run(suite: pytest.Pytester) -> pytest.RunResult:
    return suite.runpytest_subprocess("-rs", "-p", "no:cacheprovider", "-p", "no:agenteval", timeout=60)


@pytest.mark.promise(21)
def test_missing_data_skips_every_test_that_needs_it_for_one_reason(
    tiny_suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere"
    monkeypatch.setenv(DATA_ENV, str(missing))
    result = _run(tiny_suite)
    result.assert_outcomes(passed=1, skipped=3)
    assert result.ret == 0
    reason = f"third-party test data not found at {missing} (set {DATA_ENV}=DIR to point at it)"
    skips = [re.fullmatch(r"SKIPPED \[(\d+)\] [^ ]+: (.*)", line) for line in result.outlines
             if line.startswith("SKIPPED")]
    assert sum(int(m[1]) for m in skips if m) == 3 and {m[2] for m in skips if m} == {reason}
    assert f"3 skipped: {reason}" in result.outlines


@pytest.mark.promise(21)
def test_required_data_that_is_missing_fails(
    tiny_suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "nowhere"))
    monkeypatch.setenv(REQUIRE_ENV, "1")
    result = _run(tiny_suite)
    result.assert_outcomes(passed=1, errors=3)
    assert result.ret == 1
    assert len(re.findall(f"{REQUIRE_ENV} is set, so this is a failure", result.stdout.str())) >= 3


def test_data_found_where_the_variable_points_runs_the_tests(
    tiny_suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    data = tmp_path / "elsewhere"
    data.mkdir()
    (data / "marker.txt").write_text("here")
    monkeypatch.setenv(DATA_ENV, str(data))
    monkeypatch.setenv(REQUIRE_ENV, "1")
    result = _run(tiny_suite)
    result.assert_outcomes(passed=4)
    assert f"third-party test data: {data}" in result.outlines


@pytest.mark.promise(21)
def test_a_required_optional_part_fails_instead_of_skipping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTEVAL_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="^needs a browser$"):
        skip_or_fail("needs a browser", "AGENTEVAL_REQUIRE_BROWSER")
    monkeypatch.setenv("AGENTEVAL_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="needs a browser; AGENTEVAL_REQUIRE_BROWSER is set"):
        skip_or_fail("needs a browser", "AGENTEVAL_REQUIRE_BROWSER")
