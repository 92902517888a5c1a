"""Fixtures for the trace I/O tests: the shared trace files (real SDK spans: ``sdk_spans``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def traces_dir(shared_data: Path) -> Path:
    """``shared/data/traces``."""
    return shared_data / "traces"
