"""Fixtures: one headless Chromium per module, and a fresh loopback-only context per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from offline_browser import CHROMIUM, FLAGS, Offline
from playwright.sync_api import Browser, Playwright, expect, sync_playwright

# A loaded two-core machine may take seconds to parse Swagger UI's 1.5 MB bundle.
expect.set_options(timeout=15_000)


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def chromium(playwright: Playwright) -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (`make test` does)")
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def offline(chromium: Browser) -> Iterator[Offline]:
    """A fresh browser context (no cookies, no storage) with the loopback-only rule."""
    context = chromium.new_context()
    context.set_default_timeout(15_000)
    try:
        yield Offline(context)
    finally:
        context.close()
