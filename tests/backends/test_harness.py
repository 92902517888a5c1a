"""The backends harness: a backend that is not installed skips the tests that need it for one
reason naming the install command (fails them when backends are required), a server is stopped
even when its test fails, and the installer leaves alone what its pins installed already."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.backends import REQUIRE_ENV, VENVS_ENV, free_ports, serve
from tests.backends.install import STAMP, install, main, pins_digest
from tests.shared_data import REPO_ROOT

TINY_SUITE = '''
from tests.backends import phoenix_server


def test_one(tmp_path):
    with phoenix_server(tmp_path):
        pass


def test_two(tmp_path):
    with phoenix_server(tmp_path):
        pass


def test_needs_nothing():
    pass
'''


@pytest.fixture
def tiny_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.Pytester:
    pytester.makeconftest('pytest_plugins = ["tests.conftest"]')
    pytester.makepyfile(test_tiny=TINY_SUITE)
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))
    monkeypatch.setenv(VENVS_ENV, str(tmp_path / "no-venvs"))
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    return pytester


def _run(suite: pytest.Pytester) -> pytest.RunResult:
    return suite.runpytest_subprocess("-rs", "-p", "no:cacheprovider", "-p", "no:agenteval", timeout=60)


@pytest.mark.promise(21)
def test_a_missing_backend_skips_for_one_reason_naming_the_install_command(tiny_suite: pytest.Pytester) -> None:
    result = _run(tiny_suite)
    result.assert_outcomes(passed=1, skipped=2)
    reasons = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert len(reasons) == 1 and reasons[0].startswith("SKIPPED [2] ")
    assert reasons[0].endswith("install it with: python tests/backends/install.py phoenix")


@pytest.mark.promise(21)
def test_a_missing_backend_fails_when_backends_are_required(
    tiny_suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(REQUIRE_ENV, "1")
    result = _run(tiny_suite)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([f"*python tests/backends/install.py phoenix; {REQUIRE_ENV} is set, so this is a failure*"])


def test_a_server_is_stopped_when_its_test_fails(tmp_path: Path) -> None:
    (port,) = free_ports(1)
    command = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(tmp_path)]
    with pytest.raises(ZeroDivisionError):
        with serve(command, env={}, ready_url=f"http://127.0.0.1:{port}/", log=tmp_path / "server.log") as process:
            assert process.poll() is None
            1 / 0  # noqa: B018 - the test's own failure
    assert process.poll() is not None


def test_a_server_that_exits_fails_the_test_with_its_log(tmp_path: Path) -> None:
    command = [sys.executable, "-c", "import sys; print('port already taken'); sys.exit(3)"]
    with pytest.raises(pytest.fail.Exception, match=r"exited with 3 before .*\n.*port already taken"):
        with serve(command, env={}, ready_url="http://127.0.0.1:9/", log=tmp_path / "server.log"):
            pass


def test_the_installer_leaves_what_the_same_pins_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(VENVS_ENV, str(tmp_path))
    (tmp_path / "phoenix").mkdir()
    (tmp_path / "phoenix" / STAMP).write_text(pins_digest("phoenix") + "\n")
    assert install("phoenix") == tmp_path / "phoenix"
    assert "installed from phoenix.txt already" in capsys.readouterr().out
    assert sorted(path.name for path in (tmp_path / "phoenix").iterdir()) == [STAMP]


def test_the_installer_names_the_backends_it_knows() -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["nope"])
    assert exit_.value.code == 2
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "tests" / "backends" / "install.py"), "nope"],
                          capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 2 and proc.stderr.splitlines()[-1].endswith(
        "error: unknown backend nope; expected one of mlflow, phoenix")
