"""The book: builds with warnings as errors, holds every page of the table of contents, loads
nothing from the network, shows no instructor-only content, numbers its sections as the section
references assume, and captions every figure."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from coursetools.authoring.sources import assignments
from coursetools.common.layout import REPO_ROOT, nbgrader_env

from book_helpers import chapter_pages, section_numbers, toc_files
from course_helpers import leaked_lines, public_lines, secret_lines, source_notebook

pytestmark = pytest.mark.slow
HTML = REPO_ROOT / "_build" / "html"
TEXT_SUFFIXES = {".html", ".js", ".json", ".txt", ".ipynb", ".md", ".py", ".css"}


@pytest.fixture(scope="module")
def built_book() -> Path:
    """The book, built with warnings as errors.

    ``make test`` builds it (``make book``, which stops on a warning) just before the tests and
    says so with ``COURSE_BOOK_BUILT=1``: that build is read as it is (a second, incremental build
    would find nothing to do). Run without it, the tests build the book here (incrementally).
    """
    if os.environ.get("COURSE_BOOK_BUILT") == "1":
        assert (HTML / "index.html").is_file(), "COURSE_BOOK_BUILT=1, but there is no built book in _build/html"
        return HTML
    command = [str(Path(sys.executable).parent / "jupyter-book"), "build", "--warningiserror", "--keep-going", "."]
    env = nbgrader_env()
    env.pop("MPLBACKEND", None)  # executed pages use the inline backend, so figures are kept
    result = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"the book build failed:\n{result.stdout[-5000:]}\n{result.stderr[-5000:]}"
    return HTML


def built_text_files(html: Path) -> list[Path]:
    return [p for p in html.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES
            and "mathjax" not in p.parts]


def test_every_toc_page_is_built(built_book: Path):
    missing = [f for f in toc_files() if not (built_book / f"{f}.html").is_file()]
    assert not missing, f"pages in _toc.yml without HTML: {missing}"
    assert (built_book / "index.html").is_file()


def test_every_assignment_has_a_part_in_the_book():
    files = toc_files()
    for assignment in assignments(REPO_ROOT):
        assert f"book/{assignment}" in files, f"{assignment}: no chapter page in _toc.yml"
        assert f"notebooks/{assignment}/{assignment}" in files, f"{assignment}: released notebook not in _toc.yml"


def test_no_solution_or_hidden_test_in_the_built_book(built_book: Path):
    """No built file shows a line of a solution, a hidden test or a model answer.

    A chapter's own pages are held to every such line of its notebook; any other page to the
    distinctive ones (four words or more): ``def __init__(self):`` or ``return ids`` on another
    chapter's page is a coincidence, not a leak.
    """
    public = public_lines()
    own = {a: secret_lines(source_notebook(a), public) for a in assignments(REPO_ROOT)}
    distinctive = {line for lines in own.values() for line in lines if len(re.findall(r"\w+", line)) >= 4}
    for path in built_text_files(built_book):
        secrets = distinctive | own.get(path.name.split(".")[0], set())
        leaked = leaked_lines(path.read_text(encoding="utf-8", errors="replace"), secrets,
                              is_html=path.suffix == ".html")
        assert not leaked, f"{path.relative_to(built_book)} shows instructor-only lines: {leaked[:5]}"
    assert not (built_book / "solutions").exists()


EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["'](?:https?:)?//""", re.IGNORECASE)


def test_no_page_loads_anything_from_the_network(built_book: Path):
    """Scripts, styles and images are local; outbound hyperlinks (<a href>) are allowed."""
    for page in built_book.rglob("*.html"):
        text = page.read_text(encoding="utf-8", errors="replace")
        for tag in re.findall(r"<(?:script|link|img|iframe)\b[^>]*>", text, re.IGNORECASE):
            assert not EXTERNAL.search(tag), f"{page.relative_to(built_book)} loads from the network: {tag}"


#: The rule under a Markdown table's header, ``|---|:--:|``, as it reads when a page shows the table as
#: text (Sphinx's smart quotes turn ``---`` into an em dash); a rendered table leaves no such line.
RAW_TABLE_RULE = re.compile(r"^\s*(?:<p>)?\|(?:\s*:?[-\u2013\u2014]+:?\s*\|)+\s*(?:</p>)?$", re.MULTILINE)


def raw_markdown_tables(html: str) -> list[str]:
    """The header rules of Markdown tables that ``html`` shows as text, outside code blocks."""
    return RAW_TABLE_RULE.findall(re.sub(r"<pre\b.*?</pre>", "", html, flags=re.DOTALL))


def test_no_page_shows_a_raw_markdown_table(built_book: Path):
    """A table printed as Markdown by a cell is rendered (myst-nb renders Markdown outputs as
    CommonMark, which has no tables, unless the page sets ``render_markdown_format: myst``)."""
    shown = {str(page.relative_to(built_book)): rules for page in built_book.rglob("*.html")
             if (rules := raw_markdown_tables(page.read_text(encoding="utf-8", errors="replace")))}
    assert not shown, f"pages showing a Markdown table as raw text: {shown}"


def test_the_raw_table_check_tells_text_from_tables():
    raw = '<div class="cell_output"><p>| a | b |\n|\u2014|:\u2014:|\n| 1 | 2 |</p></div>'
    assert raw_markdown_tables(raw) == ["|\u2014|:\u2014:|"]
    rendered = "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>"
    code = '<pre>print("|---|---|")\n|---|---|\n</pre>'
    assert raw_markdown_tables(rendered + code) == []


def test_maths_is_served_locally(built_book: Path):
    page = (built_book / "book" / "notation.html").read_text(encoding="utf-8")
    scripts = re.findall(r"<script[^>]*src=\"([^\"]*mathjax[^\"]*)\"", page, re.IGNORECASE)
    assert scripts, "no MathJax script on a page with maths"
    for src in scripts:
        target = (built_book / "book" / src.split("?")[0]).resolve()
        assert target.is_file(), f"MathJax script {src} is not in the built book"


def test_chapter_figures_are_embedded(built_book: Path):
    for assignment in assignments(REPO_ROOT):
        page = (built_book / "book" / f"{assignment}.html").read_text(encoding="utf-8")
        images = re.findall(r"<img[^>]*src=\"([^\"]+)\"", page)
        assert images, f"{assignment}: the chapter page shows no figure"
        for src in images:
            assert not src.startswith("data:") or len(src) > 100
            if not src.startswith("data:"):
                assert (built_book / "book" / src).resolve().is_file(), f"{assignment}: missing image {src}"


def test_released_notebooks_are_shown_not_executed(built_book: Path):
    for assignment in assignments(REPO_ROOT):
        page = (built_book / "notebooks" / assignment / f"{assignment}.html").read_text(encoding="utf-8")
        assert "NotImplementedError" in page, "the released stub should be shown as it is"
        assert "Traceback" not in page, "released notebooks must not be executed in the book"


def test_no_heading_numbers_itself():
    """The table of contents numbers the chapters and their sections (``9.10.3``): a heading that
    also carries a number of its own would show two."""
    numbered = []
    for page in chapter_pages():
        in_code = False
        for line in (REPO_ROOT / f"{page}.md").read_text(encoding="utf-8").splitlines():
            in_code ^= line.startswith("```")  # a code cell's comments are not headings
            if not in_code and re.match(r"#{1,6} \d+(\.\d+)*\.? ", line):
                numbered.append(f"{page}.md: {line}")
    assert not numbered, f"headings with a number of their own: {numbered}"


def built_section_numbers(html: Path, pages: set[str]) -> dict[str, tuple[str, str]]:
    """Each section number the built ``pages`` show in a heading -> (page, the heading's text)."""
    numbers = {}
    for page in pages:
        article = BeautifulSoup((html / f"{page}.html").read_text(encoding="utf-8"), "html.parser").find("article")
        for span in article.find_all("span", class_="section-number"):
            if re.fullmatch(r"h[1-6]", span.parent.name):
                title = span.parent.get_text().replace(span.get_text(), "", 1).rstrip("#")
                numbers[span.get_text().strip().rstrip(".")] = (page, title)
    return numbers


def test_the_section_numbers_of_the_references_check_are_those_of_the_built_book(built_book: Path):
    """``tests/test_section_references.py`` checks every "section N.M" against numbers it works out
    from ``_toc.yml`` and the pages' headings; they must be the ones Sphinx printed."""
    expected = section_numbers()
    built = built_section_numbers(built_book, {page for page, _ in expected.values()})

    def words(title: str) -> list[str]:  # "`torch.nn.X`" in the source is "torch.nn.X" in the page
        return re.findall(r"[a-z]+", title.lower())

    differ = [f"{number}: built {built.get(number)}, expected {expected.get(number)}"
              for number in sorted(set(built) | set(expected))
              if number not in built or number not in expected or built[number][0] != expected[number][0]
              or words(built[number][1]) != words(expected[number][1])]
    assert not differ, f"section numbers that the references check gets wrong: {differ}"


def uncaptioned_images(page_html: str) -> list[str]:
    """The ``src`` of each image on a page that is not inside a ``<figure>`` with a ``<figcaption>``."""
    article = BeautifulSoup(page_html, "html.parser").find("article")
    return [image.get("src", "") for image in article.find_all("img")
            if (figure := image.find_parent("figure")) is None or figure.find("figcaption") is None]


@pytest.mark.parametrize("page", chapter_pages())
def test_every_figure_has_a_caption(built_book: Path, page: str):
    """A figure that a cell draws is numbered, and can be referenced, only with ``mystnb: figure:``
    (a name and a caption) in its cell's metadata."""
    missing = uncaptioned_images((built_book / f"{page}.html").read_text(encoding="utf-8"))
    assert not missing, f"{page}: {len(missing)} figures without a caption: {missing}"


def test_the_caption_check_finds_an_image_outside_a_captioned_figure():
    captioned = '<figure><div><img src="a.png"/></div><figcaption><p>Fig. 3.1 A store</p></figcaption></figure>'
    assert uncaptioned_images(f"<article>{captioned}</article>") == []
    assert uncaptioned_images('<article><div class="cell_output"><img src="b.png"/></div></article>') == ["b.png"]
    assert uncaptioned_images('<article><figure><img src="c.png"/></figure></article>') == ["c.png"]
