"""Fixtures for the trace I/O tests: our own trace files, and the shared third-party ones."""

from __future__ import annotations

from pathlib import Path

import pytest

OWN_TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"


@pytest.fixture(scope="session")
def own_traces() -> Path:
    """``tests/data/traces``: small Jaeger and OTLP files written for these tests."""
    return OWN_TRACES


@pytest.fixture(scope="session")
def traces_dir(shared_data: Path) -> Path:
    """``shared/data/traces`` (the test is skipped without the shared data)."""
    return shared_data / "traces"
