"""Real trace backends for the tests, each run from a virtual environment of its own.

``python tests/backends/install.py NAME`` installs backend ``NAME`` from its pins,
``tests/backends/NAME.txt``, into ``.venvs/NAME`` at the repository's root (or under
``$AGENTEVAL_BACKEND_VENVS``). A test gets a running server from a fixture built on the helper of
its backend (:func:`phoenix_server`, :func:`mlflow_server`), which starts it on free 127.0.0.1 ports in a working
directory of its own, waits until it answers, and stops it when the fixture ends, failed or not.
Without the virtual environment every test that needs it is skipped, for one reason that names
the install command; with ``AGENTEVAL_REQUIRE_BACKENDS=1`` (as CI sets it) it fails instead.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.backends.install import VENVS_ENV, venvs_dir
from tests.shared_data import skip_or_fail

__all__ = ["REQUIRE_ENV", "VENVS_ENV", "MlflowServer", "PhoenixServer", "free_ports", "mlflow_server",
           "phoenix_server", "program", "serve", "venvs_dir"]

REQUIRE_ENV = "AGENTEVAL_REQUIRE_BACKENDS"
"""Set to 1 (as CI does): a backend that is not installed fails the tests that need it."""


def program(backend: str, name: str) -> Path:
    """The executable ``name`` in ``backend``'s virtual environment; when it is missing the
    calling test is skipped, naming the install command (failed when backends are required)."""
    path = venvs_dir() / backend / "bin" / name
    if not path.is_file():
        skip_or_fail(f"the {backend} server is not installed ({path} not found); install it with: "
                     f"python tests/backends/install.py {backend}", REQUIRE_ENV)
    return path


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports free on 127.0.0.1 just now."""
    with ExitStack() as held:
        sockets = [held.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


@contextmanager
def serve(
    command: Sequence[str | os.PathLike[str]],
    *,
    env: Mapping[str, str],
    ready_url: str,
    log: Path,
    timeout: float = 90.0,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``command`` (in a process group of its own, output to ``log``) until ``ready_url``
    answers 200, yield the process, then stop it: SIGTERM to the group, SIGKILL after 10 s.
    A server that exits or is not ready within ``timeout`` fails the test with its log's tail."""
    with log.open("wb") as output:
        process = subprocess.Popen(list(command), env=dict(env), stdout=output, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait_ready(process, ready_url, log, timeout)
        yield process
    finally:
        _stop(process)


def _wait_ready(process: subprocess.Popen[bytes], url: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{process.args[0]} exited with {process.returncode} before {url} answered; "
                        f"its log ends:\n{_tail(log)}", pytrace=False)
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.2)
    pytest.fail(f"{url} did not answer within {timeout:g} s; the server's log ends:\n{_tail(log)}", pytrace=False)


def _stop(process: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _clean_environ(prefix: str) -> dict[str, str]:
    """This process's environment without the variables that start with ``prefix``."""
    return {key: value for key, value in os.environ.items() if not key.startswith(prefix)}


# --- Arize Phoenix ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PhoenixServer:
    """A running Phoenix: its ``url``, its OTLP/gRPC port, and ``api_key``, a key it accepts
    (its admin secret) when it was started with authentication, else ``""``."""

    url: str
    grpc_port: int
    api_key: str

    @property
    def otlp_traces_url(self) -> str:
        """Where spans go over OTLP/HTTP (protobuf)."""
        return f"{self.url}/v1/traces"


@contextmanager
def phoenix_server(workdir: Path, *, auth: bool = True) -> Iterator[PhoenixServer]:
    """``phoenix serve`` from ``.venvs/phoenix`` on free 127.0.0.1 ports, its SQLite database in
    ``workdir`` (``PHOENIX_WORKING_DIR``); with ``auth``, API keys are required and its admin
    secret is one."""
    phoenix = program("phoenix", "phoenix")
    http_port, grpc_port = free_ports(2)
    env = {**_clean_environ("PHOENIX_"), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(http_port),
           "PHOENIX_GRPC_PORT": str(grpc_port), "PHOENIX_WORKING_DIR": str(workdir),
           "PHOENIX_TELEMETRY_ENABLED": "false"}
    env.pop("PYTHONPATH", None)  # the server runs on its own packages, not ours
    api_key = ""
    if auth:
        api_key = secrets.token_hex(24)
        env.update(PHOENIX_ENABLE_AUTH="true", PHOENIX_SECRET=secrets.token_hex(24), PHOENIX_ADMIN_SECRET=api_key)
    url = f"http://127.0.0.1:{http_port}"
    with serve([phoenix, "serve"], env=env, ready_url=f"{url}/healthz", log=workdir / "phoenix.log"):
        yield PhoenixServer(url, grpc_port, api_key)


# --- MLflow -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MlflowServer:
    """A running MLflow tracking server: its ``url`` and ``experiment_id``, an experiment made
    for the test."""

    url: str
    experiment_id: str

    @property
    def otlp_traces_url(self) -> str:
        """Where spans go over OTLP/HTTP (protobuf), with the header :attr:`otlp_headers`."""
        return f"{self.url}/v1/traces"

    @property
    def otlp_headers(self) -> dict[str, str]:
        """The header that names the experiment spans sent over OTLP go to."""
        return {"x-mlflow-experiment-id": self.experiment_id}


@contextmanager
def mlflow_server(workdir: Path, *, experiment: str = "agenteval") -> Iterator[MlflowServer]:
    """``mlflow server`` from ``.venvs/mlflow`` on a free 127.0.0.1 port (one worker, no job
    runner), its SQLite database and artifacts in ``workdir``, with an experiment named
    ``experiment`` made for the test."""
    mlflow = program("mlflow", "mlflow")
    (port,) = free_ports(1)
    env = {**_clean_environ("MLFLOW_"), "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true",
           "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    env.pop("PYTHONPATH", None)  # the server runs on its own packages, not ours
    url = f"http://127.0.0.1:{port}"
    command = [mlflow, "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
               "--backend-store-uri", f"sqlite:///{workdir / 'mlflow.db'}",
               "--default-artifact-root", str(workdir / "artifacts")]
    with serve(command, env=env, ready_url=f"{url}/health", log=workdir / "mlflow.log"):
        request = urllib.request.Request(f"{url}/api/2.0/mlflow/experiments/create", method="POST",
                                         data=json.dumps({"name": experiment}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            yield MlflowServer(url, json.load(answer)["experiment_id"])
