"""Where the third-party test material lives, and what a test that needs it does when it is absent.

The material (real traces and eval sets written by other projects) sits in ``../shared/data``
beside the repository, or wherever ``AGENTEVAL_TEST_DATA`` points. Without it, every test that
needs it is skipped for one reason, stated once; with ``AGENTEVAL_REQUIRE_TEST_DATA=1`` (set by
CI) a missing folder fails those tests instead, so they can never be skipped silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NoReturn

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_ENV = "AGENTEVAL_TEST_DATA"
REQUIRE_ENV = "AGENTEVAL_REQUIRE_TEST_DATA"

needs_shared_data = pytest.mark.needs_shared_data


def shared_data_dir() -> Path:
    """``$AGENTEVAL_TEST_DATA`` when set, else ``../shared/data`` beside the repository."""
    configured = os.environ.get(DATA_ENV)
    return Path(configured).expanduser().resolve() if configured else REPO_ROOT.parent / "shared" / "data"


SHARED_DATA = shared_data_dir()
MISSING_REASON = f"third-party test data not found at {SHARED_DATA} (set {DATA_ENV}=DIR to point at it)"


def shared_data_present() -> bool:
    return SHARED_DATA.is_dir()


def required(require_env: str = REQUIRE_ENV) -> bool:
    """Whether ``require_env`` (e.g. ``AGENTEVAL_REQUIRE_TEST_DATA=1``) turns a skip into a failure."""
    return os.environ.get(require_env, "").strip().lower() in {"1", "true", "yes"}


def skip_or_fail(reason: str, require_env: str) -> NoReturn:
    """Skip the calling test for ``reason``; fail it instead when ``require_env`` is set (as in CI)."""
    if required(require_env):
        pytest.fail(f"{reason}; {require_env} is set, so this is a failure", pytrace=False)
    pytest.skip(reason)


def require_shared_data() -> Path:
    """The data folder; else skip the calling test (fail it when the data is required)."""
    if shared_data_present():
        return SHARED_DATA
    skip_or_fail(MISSING_REASON, REQUIRE_ENV)


def shared_params(params: Iterable[Any], width: int = 1) -> list[Any]:
    """``pytest.param``s built from the data folder at collection time, each marked ``needs_shared_data``.

    Without the folder there are none; one placeholder stands in for them, so the test is still
    collected, then skipped (or failed) like every other test that needs the data. With the folder
    but no files found, the placeholder's ``None`` values make the test fail.
    """
    marked = [pytest.param(*p.values, id=p.id, marks=[*p.marks, needs_shared_data]) for p in params]
    return marked or [pytest.param(*([None] * width), id="shared-data-missing", marks=needs_shared_data)]
