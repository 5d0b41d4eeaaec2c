"""Debian's chromium driven by Playwright, for the tests that open our HTML in a real browser.

No browser is downloaded: Playwright starts the system's ``chromium`` (``apt-get install
chromium``; ``.ci/run`` installs it). Where Playwright or chromium is missing the test is
skipped, unless ``HLOIDX_BROWSER_TESTS=required`` (set by ``.ci/run``): then it fails.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

#: chromium as a quiet, headless, offline test browser (root in a container needs no sandbox)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _missing(why: str) -> None:
    if os.environ.get("HLOIDX_BROWSER_TESTS") == "required":
        pytest.fail(f"browser tests are required here, but {why}")
    pytest.skip(why)


def sync_api() -> Any:
    """Playwright's sync API (skips, or fails where required, without it)."""
    try:
        from playwright import sync_api as api
    except ImportError:
        _missing("playwright is not installed (pip install -e '.[browser]')")
    return api


def launch(playwright: Any) -> Any:
    """The system's chromium, started by ``playwright`` (skips, or fails where required,
    without it)."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        _missing("no chromium browser found (apt-get install chromium)")
    return playwright.chromium.launch(executable_path=path, headless=True, args=FLAGS)
