"""Headless Chromium (Debian's package) driven by Playwright, for the tests that open pages offline.

Skipped, with the reason shown, where no Chromium is installed, except when
``COURSE_REQUIRE_BROWSER=1`` (CI installs Chromium and sets it), where that is a failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")
# A page typesets with MathJax 3: every formula becomes an mjx-container.
UNRENDERED_MATHS = "() => [...document.querySelectorAll('.math')].filter(m => !m.querySelector('mjx-container')).length"


@contextlib.contextmanager
def chromium() -> Iterator:
    """A launched headless Chromium (skips or fails the test where there is none, see above)."""
    if CHROMIUM is None:
        if os.environ.get("COURSE_REQUIRE_BROWSER") == "1":
            pytest.fail("COURSE_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install chromium)")
        pytest.skip("no headless Chromium installed (Debian package `chromium`); .ci/run installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        )
        yield browser
        browser.close()


def offline_page(browser, **context_options) -> tuple:
    """(a page whose http and https requests are refused, the list of every URL it requests,
    the list of those refused); close the page's context when done. ``context_options`` go to
    Playwright's ``new_context`` (``viewport=...``)."""
    context = browser.new_context(**context_options)
    refused: list[str] = []

    def refuse(route):
        refused.append(route.request.url)
        route.abort()

    context.route("http://**/*", refuse)
    context.route("https://**/*", refuse)
    page = context.new_page()
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    return page, requested, refused


def remote(requested: list[str], refused: list[str]) -> list[str]:
    """The requests that would have left the machine."""
    return [url for url in requested if not url.startswith(LOCAL_SCHEMES)] + refused
