"""What the book's table of contents (``_toc.yml``) holds, for the tests of the built book, and the
section numbers the built book gives the headings of its pages."""

from __future__ import annotations

import json
import re

import yaml

from coursetools.common.layout import REPO_ROOT


def toc_files(numbered_only: bool = False) -> list[str]:
    """Every page of ``_toc.yml`` (the root first), as paths without suffix: ``book/ch01_tokens``;
    with ``numbered_only``, just the pages of the numbered parts (the chapters, their sections and
    their exercise pages)."""
    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text())
    files = [] if numbered_only else [toc["root"]]

    def walk(entries: list[dict]) -> None:
        for entry in entries:
            files.append(entry["file"])
            walk(entry.get("sections", []))

    for part in toc.get("parts", []):
        if part.get("numbered") or not numbered_only:
            walk(part["chapters"])
    return files


def chapter_pages() -> list[str]:
    """The chapters' narrative pages and their sections (``book/...``), without the exercise pages."""
    return [f for f in toc_files(numbered_only=True) if f.startswith("book/")]


HEADING = re.compile(r"^(#{1,6}) +(.+?)\s*$")


def page_headings(page: str) -> list[tuple[int, str]]:
    """(level, title) of each Markdown heading of a page of the table of contents, in order: a
    ``book/`` page's own text outside its code cells, or an exercise page's Markdown cells (the
    released notebook, ``notebooks/<id>/<id>.ipynb``, which the book shows)."""
    path = REPO_ROOT / f"{page}.md"
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    else:
        cells = json.loads((REPO_ROOT / f"{page}.ipynb").read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    headings, in_code = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and (match := HEADING.match(line)):
            headings.append((len(match.group(1)), match.group(2)))
    return headings


def section_numbers() -> dict[str, tuple[str, str]]:
    """Each section number of the built book -> (page, heading title), as Sphinx numbers a numbered
    part of ``_toc.yml``: the parts' chapters count on from 1 across parts, chapter N's ``##``
    headings are N.1, N.2, ..., its ``###`` headings N.k.1, ...; the pages under a chapter in the
    table of contents come after its own sections, each numbered as one more section (its title
    N.k, its ``##`` headings N.k.1, ...)."""
    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text())
    numbers: dict[str, tuple[str, str]] = {}

    def number_headings(page: str, prefix: str) -> int:
        """Number the headings below the title of ``page`` under ``prefix``; the count of its top sections."""
        counters: list[int] = []
        for level, title in page_headings(page):
            depth = level - 1  # "##" is the first level below the page's title
            if depth < 1 or depth > len(counters) + 1:
                continue
            counters = [*counters[:depth - 1], (counters[depth - 1] if len(counters) >= depth else 0) + 1]
            numbers[".".join([prefix, *map(str, counters)])] = (page, title)
        return counters[0] if counters else 0

    chapter = 0
    for part in toc.get("parts", []):
        if not part.get("numbered"):
            continue
        for entry in part["chapters"]:
            chapter += 1
            numbers[str(chapter)] = (entry["file"], page_headings(entry["file"])[0][1])
            sections = number_headings(entry["file"], str(chapter))
            for child in entry.get("sections", []):
                sections += 1
                prefix = f"{chapter}.{sections}"
                numbers[prefix] = (child["file"], page_headings(child["file"])[0][1])
                number_headings(child["file"], prefix)
    return numbers
