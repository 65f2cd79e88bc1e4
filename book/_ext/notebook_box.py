"""A "get the exercise notebook" box on every exercise page and in every chapter's summary.

The exercise pages are the released notebooks ``notebooks/<id>/<id>.ipynb`` themselves, so the box is
added while Sphinx reads them (the ``source-read`` event), not written into the files: the
notebook a student downloads is exactly the released one. The box offers a download link (Sphinx
copies the file into the built book: no network) and, only when the book is published with a
repository in ``_config.yml`` (``repository: url:`` and ``launch_buttons: colab_url:``), a link
that opens the notebook on Colab. Nothing is fetched while building.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

CHAPTER = re.compile(r"^book/(ch\d\d_\w+)$")
EXERCISES = re.compile(r"^notebooks/(ch\d\d_\w+)/\1$")


def _launch_line(app, notebook: str) -> str:
    """A Colab link for ``notebook`` (a path in the repository), or "" when none is configured."""
    options = app.config.html_theme_options or {}
    repository = (options.get("repository_url") or "").rstrip("/")
    colab = ((options.get("launch_buttons") or {}).get("colab_url") or "").rstrip("/")
    if not repository.startswith("https://github.com/") or not colab:
        return ""
    branch = options.get("repository_branch") or "main"
    owner_repo = repository.removeprefix("https://github.com/")
    return f"Or [open it on Colab]({colab}/github/{owner_repo}/blob/{branch}/{notebook}).\n"


def _box(link: str, chapter_line: str, launch: str) -> str:
    return (":::{admonition} Get the exercise notebook\n:class: tip\n"
            f"{chapter_line}Download {link}, open it in Jupyter, replace each "
            "`raise NotImplementedError()` and run the test cell below it.\n"
            f"{launch}:::\n\n")


def add_box(app, docname: str, source: list[str]) -> None:
    if match := CHAPTER.match(docname):
        name = match.group(1)
        notebook = f"notebooks/{name}/{name}.ipynb"
        if not (Path(app.srcdir) / notebook).is_file() or "\n## Summary\n" not in source[0]:
            return
        box = _box(f"{{download}}`the exercise notebook <../{notebook}>`", "", _launch_line(app, notebook))
        source[0] = source[0].replace("\n## Summary\n", "\n## Summary\n\n" + box, 1)
    elif match := EXERCISES.match(docname):
        name = match.group(1)
        notebook = json.loads(source[0])
        first = notebook["cells"][0]
        text = "".join(first["source"])
        if first["cell_type"] != "markdown" or not text.startswith("# "):
            return
        title, _, rest = text.partition("\n")
        chapter_line = f"These are the exercises of {{doc}}`the chapter page </book/{name}>`. "
        box = _box(f"{{download}}`{name}.ipynb <{name}.ipynb>`", chapter_line,
                   _launch_line(app, f"notebooks/{name}/{name}.ipynb"))
        first["source"] = title + "\n\n" + box + rest.lstrip("\n")
        source[0] = json.dumps(notebook)


def setup(app):
    app.connect("source-read", add_box)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
