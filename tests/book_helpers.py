"""What the book's table of contents (``_toc.yml``) holds, for the tests of the built book."""

from __future__ import annotations

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
