"""A feedback page handed back on its own works offline: nothing loaded from the network, maths
typeset by the MathJax inlined in it (the book's copy), in headless Chromium.

Grades a tiny assignment with maths in its text (``grading.grade`` then ``grading.feedback``, as
``make grade`` and ``make feedback`` do), copies one student's page alone into an empty folder,
as it is handed back, and opens it there.
"""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser

import pytest

from coursetools.grading import autograde
from coursetools.grading.nbgrader_plugins import mathjax_script

from browser_helpers import UNRENDERED_MATHS, chromium, offline_page, remote
from course_helpers import TINY_SOURCE, CourseCopy, require_sandbox

pytestmark = pytest.mark.slow
MATHS = r"""
+++

The weights are $\operatorname{softmax}(q K^\top / \sqrt{d_k})$, and each row sums to one:

$$\sum_j \boldsymbol{a}_{ij} = 1.$$
"""
LOADING_TAGS = {"script": "src", "link": "href", "img": "src", "iframe": "src", "source": "src", "embed": "src",
                "object": "data", "audio": "src", "video": "src"}
REMOTE = re.compile(r"^\s*(?:https?:)?//", re.IGNORECASE)


class Loads(HTMLParser):
    """The addresses a page's tags load (a script's src, a stylesheet's href, an image...) and the
    ``url(...)`` of its style sheets; a link a reader may click (``<a href>``) loads nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.addresses: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        self._in_style = tag == "style"
        self.addresses += [value for name, value in attrs if value and name == LOADING_TAGS.get(tag)]

    def handle_data(self, data):
        if self._in_style:
            self.addresses += re.findall(r"url\(\s*['\"]?([^'\")]+)", data)


def remote_loads(html: str) -> list[str]:
    parser = Loads()
    parser.feed(html)
    return [address for address in parser.addresses if REMOTE.match(address)]


@pytest.fixture(scope="module")
def page_alone(tmp_path_factory):
    """One student's feedback page, copied alone into an empty folder."""
    require_sandbox()
    copy_ = CourseCopy.create(tmp_path_factory.mktemp("feedback"), "tiny", source_text=TINY_SOURCE + MATHS)
    release = autograde.prepare(copy_.course, "tiny")
    copy_.submit("jdoe", release)
    autograde.grade(copy_.course, "tiny", progress=lambda _: None)
    pages, withheld = autograde.feedback(copy_.course, "tiny")
    assert len(pages) == 1 and not withheld, (pages, withheld)
    alone = tmp_path_factory.mktemp("handed_back") / pages[0].name
    shutil.copy(pages[0], alone)
    return alone


def test_the_page_references_nothing_on_the_network(page_alone):
    html = page_alone.read_text(encoding="utf-8")
    assert not remote_loads(html), remote_loads(html)
    assert remote_loads('<script src="https://cdn.example/x.js"></script><a href="https://ok.example">a</a>'
                        '<style>@import url(//fonts.example/f.css);</style>') == ["https://cdn.example/x.js",
                                                                                   "//fonts.example/f.css"]
    assert "cdnjs" not in html and "MathJax.Hub" not in html, "nbconvert's MathJax 2 from a CDN is still there"
    assert mathjax_script()[:2000] in html, "the page carries the book's MathJax itself"


def test_the_maths_typesets_offline_in_a_browser(page_alone):
    with chromium() as browser:
        page, requested, refused = offline_page(browser)
        page.goto(page_alone.as_uri(), wait_until="load")
        page.wait_for_function("() => document.querySelectorAll('mjx-container').length >= 2", timeout=30_000)
        typeset = page.evaluate("() => [...document.querySelectorAll('mjx-container')].map(m => m.textContent)")
        errors = page.evaluate("() => document.querySelectorAll('mjx-merror, [data-mjx-error]').length")
        unrendered = page.evaluate(UNRENDERED_MATHS)
        page.context.close()
    assert len(typeset) >= 2 and errors == 0 and unrendered == 0, (typeset, errors, unrendered)
    assert not remote(requested, refused), f"requests left the machine: {remote(requested, refused)}"
