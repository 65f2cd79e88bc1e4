"""The built book in a real browser: headless Chromium (Debian's package) driven by Playwright.

Loads every page of the table of contents from ``_build/html`` over ``file://``, once, and checks that
the maths is typeset by the local MathJax, that every image loads, that no request leaves the
machine, that nothing (code, outputs, equations, figures) runs past the text column at 1280 px on
any chapter's page (narrative, sections, exercises), and that every chapter page and section has
a numbered, captioned figure. Skipped, with the reason shown, where no Chromium is installed, except
when ``COURSE_REQUIRE_BROWSER=1`` (CI installs Chromium and sets it), where that is a failure.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from coursetools.common.layout import REPO_ROOT

from book_helpers import chapter_pages, toc_files
from browser_helpers import UNRENDERED_MATHS, chromium, offline_page, remote

pytestmark = pytest.mark.slow
HTML = REPO_ROOT / "_build" / "html"


@dataclass
class PageReport:
    """What one visit of a page found."""

    unrendered: int  # formulas MathJax did not typeset
    broken_images: list[str]
    remote: list[str]  # requests that would have left the machine
    overflowing: list[str]  # elements that run past the text column
    figure_numbers: list[str]  # "Fig. N.k" of each figure with an image


@pytest.fixture(scope="module")
def visited() -> dict[str, PageReport]:
    """Every page of the table of contents, visited once, offline, at 1280 x 900 px."""
    if not (HTML / "index.html").is_file():
        pytest.fail("no built book: run `make book` first")
    reports = {}
    with chromium() as browser:
        for path in toc_files():
            page, requested, refused = offline_page(browser, viewport={"width": 1280, "height": 900})
            open_page(page, path)
            reports[path] = PageReport(
                unrendered=page.evaluate(UNRENDERED_MATHS),
                broken_images=page.evaluate(BROKEN_IMAGES),
                remote=remote(requested, refused),
                overflowing=page.evaluate(OVERFLOWING),
                figure_numbers=page.evaluate(NUMBERED_FIGURES))
            page.context.close()
    return reports


def open_page(page, path: str) -> None:
    """Load ``path`` (a toc file) and wait for MathJax where the page has maths."""
    page.goto((HTML / f"{path}.html").as_uri(), wait_until="load")
    if page.evaluate("() => document.querySelectorAll('.math').length") > 0:
        page.wait_for_function("() => document.querySelectorAll('mjx-container').length > 0", timeout=20_000)
        page.wait_for_timeout(300)  # let MathJax finish laying out the last formulas


BROKEN_IMAGES = "() => [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"

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


@pytest.mark.parametrize("path", toc_files())
def test_page_renders_offline(visited, path: str):
    report = visited[path]
    assert report.unrendered == 0, f"{path}: {report.unrendered} formulas were not typeset"
    assert not report.broken_images, f"{path}: images that did not load: {report.broken_images}"
    assert not report.remote, f"{path}: requests left the machine: {report.remote}"


def test_nothing_runs_past_the_column_at_1280_px(visited):
    wide = {path: visited[path].overflowing for path in toc_files(numbered_only=True) if visited[path].overflowing}
    assert not wide, f"pages that need sideways scrolling at 1280 px: {wide}"


def test_every_chapter_page_has_a_numbered_captioned_figure(visited):
    for path in chapter_pages():
        numbers = visited[path].figure_numbers
        assert numbers, f"{path}: no figure with a numbered caption (Fig. N.k)"
        chapters = {n.strip().split(".")[1] for n in numbers}  # "Fig. 4.2" -> " 4"
        assert len(chapters) == 1, f"{path}: figures numbered in several chapters: {numbers}"
