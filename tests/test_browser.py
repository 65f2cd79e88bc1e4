"""The built book in a real browser: headless Chromium (Debian's package) driven by Playwright.

Loads every page of the table of contents from ``_build/html`` over ``file://`` and checks that
the maths is typeset by the local MathJax, that every image loads, that no request leaves the
machine, that nothing (code, outputs, equations, figures) runs past the text column at 1280 px on
any chapter's page (narrative, sections, exercises), and that every chapter page and section has
a numbered, captioned figure. Skipped, with the reason shown, where no Chromium is installed, except
when ``COURSE_REQUIRE_BROWSER=1`` (CI installs Chromium and sets it), where that is a failure.
"""

from __future__ import annotations

import os
import shutil

import pytest

from coursetools.layout import REPO_ROOT

from book_helpers import chapter_pages, toc_files

pytestmark = pytest.mark.slow
HTML = REPO_ROOT / "_build" / "html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        if os.environ.get("COURSE_REQUIRE_BROWSER") == "1":
            pytest.fail("COURSE_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install chromium)")
        pytest.skip("no headless Chromium installed (Debian package `chromium`); .ci/run installs it")
    if not (HTML / "index.html").is_file():
        pytest.fail("no built book: run `make book` first")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        )
        yield browser
        browser.close()


def open_page(page, path: str) -> None:
    """Load ``path`` (a toc file) and wait for MathJax where the page has maths."""
    page.goto((HTML / f"{path}.html").as_uri(), wait_until="load")
    if page.evaluate("() => document.querySelectorAll('.math').length") > 0:
        page.wait_for_function("() => document.querySelectorAll('mjx-container').length > 0", timeout=20_000)
        page.wait_for_timeout(300)  # let MathJax finish laying out the last formulas


@pytest.mark.parametrize("path", toc_files())
def test_page_renders_offline(browser, path: str):
    context = browser.new_context()
    outbound: list[str] = []

    def refuse(route):
        outbound.append(route.request.url)
        route.abort()

    context.route("http://**/*", refuse)
    context.route("https://**/*", refuse)
    page = context.new_page()
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    open_page(page, path)

    unrendered = page.evaluate(
        "() => [...document.querySelectorAll('.math')].filter(m => !m.querySelector('mjx-container')).length")
    assert unrendered == 0, f"{path}: {unrendered} formulas were not typeset"

    broken_images = page.evaluate(
        "() => [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
    assert not broken_images, f"{path}: images that did not load: {broken_images}"

    remote = [url for url in requested if not url.startswith(LOCAL_SCHEMES)]
    assert not remote and not outbound, f"{path}: requests left the machine: {remote + outbound}"
    context.close()


OVERFLOWING = """() => [...document.querySelectorAll(
    'div.cell div.highlight pre, div.cell_output pre, div.math, mjx-container[display="true"], table, '
    + 'div.cell_output img, figure img')]
  .filter(el => el.scrollWidth > el.clientWidth + 1
          || el.getBoundingClientRect().right > document.querySelector('main').getBoundingClientRect().right + 1)
  .map(el => el.tagName + ' ' + el.scrollWidth + ' > ' + el.clientWidth + ': '
             + (el.textContent || el.src).slice(0, 60))"""

NUMBERED_FIGURES = """() => [...document.querySelectorAll('figure')]
  .filter(f => f.querySelector('img') && f.querySelector('img').naturalWidth > 0)
  .map(f => (f.querySelector('figcaption .caption-number') || {}).textContent || '')
  .filter(number => /^Fig\\. \\d+\\.\\d+/.test(number.trim()))"""


def test_nothing_runs_past_the_column_at_1280_px(browser):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    wide = {}
    for path in toc_files(numbered_only=True):
        open_page(page, path)
        wide[path] = page.evaluate(OVERFLOWING)
    page.close()
    wide = {path: elements for path, elements in wide.items() if elements}
    assert not wide, f"pages that need sideways scrolling at 1280 px: {wide}"


def test_every_chapter_page_has_a_numbered_captioned_figure(browser):
    page = browser.new_page()
    for path in chapter_pages():
        open_page(page, path)
        numbers = page.evaluate(NUMBERED_FIGURES)
        assert numbers, f"{path}: no figure with a numbered caption (Fig. N.k)"
        chapters = {n.strip().split(".")[1] for n in numbers}  # "Fig. 4.2" -> " 4"
        assert len(chapters) == 1, f"{path}: figures numbered in several chapters: {numbers}"
    page.close()
