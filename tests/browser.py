"""Headless Chromium through Playwright for the report tests; skipped (failed, when
``AGENTEVAL_REQUIRE_BROWSER`` is set) where either is missing."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.shared_data import skip_or_fail

REQUIRE_BROWSER_ENV = "AGENTEVAL_REQUIRE_BROWSER"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@contextmanager
def chromium() -> Iterator[Any]:
    """A launched headless Chromium (a Playwright ``Browser``), closed afterwards."""
    if importlib.util.find_spec("playwright") is None:
        skip_or_fail("browser check needs playwright: pip install -e '.[browser]'", REQUIRE_BROWSER_ENV)
    if not CHROMIUM.exists():
        skip_or_fail("browser check needs /usr/bin/chromium: apt-get install chromium", REQUIRE_BROWSER_ENV)
    sync_api = importlib.import_module("playwright.sync_api")
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
