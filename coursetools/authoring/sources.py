"""The assignments' sources: one text notebook per assignment, and the notebook nbgrader reads.

``solutions/<id>/<id>.md`` is the **source of truth**: a MyST Markdown notebook (Jupytext's
``md:myst`` format, the format of the book's pages) holding every cell of the instructor
notebook with its nbgrader metadata: solutions, visible tests, hidden tests, instructor notes and
model answers. It is the only committed form. Edit it as text, or open it in Jupyter (Jupytext
opens ``.md`` files as notebooks) and use nbgrader's *Create Assignment* toolbar.

``solutions/<id>/<id>.ipynb`` is what nbgrader's ``generate_assignment`` reads. It is generated
from the ``.md`` (git-ignored) by :func:`build_notebook`, which ``make release``, grading and the
tests call first. ``solutions/jupytext.toml`` pairs the two, so saving either one in Jupyter
with Jupytext writes both. A notebook edited *without* Jupytext (newer than its ``.md`` and
different from it) is never overwritten: the build stops and says how to bring the edit into
the ``.md``.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat
from nbformat.notebooknode import NotebookNode

from coursetools.common.files import write_atomically
from coursetools.common.layout import assignments, source_dir  # noqa: F401 (sources.assignments)

TEXT_FORMAT = "md:myst"
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def text_source(course_root: Path, assignment: str) -> Path:
    """The committed source, ``solutions/<id>/<id>.md``."""
    return source_dir(course_root) / assignment / f"{assignment}.md"


def notebook_source(course_root: Path, assignment: str) -> Path:
    """The generated notebook nbgrader reads, ``solutions/<id>/<id>.ipynb``."""
    return source_dir(course_root) / assignment / f"{assignment}.ipynb"


def read_text_source(path: Path) -> NotebookNode:
    """Read a ``.md`` source as the instructor notebook: its cells and metadata, a python3
    kernel, stable cell ids (``cell-000``, ...) so that releases diff cleanly."""
    nb = jupytext.read(path, fmt=TEXT_FORMAT)
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:03d}"
        if cell.cell_type == "code":
            cell.setdefault("outputs", [])
            cell.setdefault("execution_count", None)
    nbformat.validate(nb)
    return nb


def cell_contents(nb: NotebookNode) -> list[tuple[str, str, dict]]:
    """What an edit can change: each cell's type, source and metadata (not ids or outputs)."""
    return [(c.cell_type, c.source, dict(c.metadata)) for c in nb.cells]


def canonical_text(text: str) -> str:
    """``text`` as Jupytext writes it when Jupyter saves the pair (metadata keys sorted, as
    nbformat writes them), so that the first save of a source in Jupyter changes no line."""
    nb = nbformat.reads(nbformat.writes(jupytext.reads(text, fmt=TEXT_FORMAT)), as_version=4)
    return jupytext.writes(nb, fmt=TEXT_FORMAT)


def canonicalise(course_root: Path, assignment: str) -> bool:
    """Rewrite a source in :func:`canonical_text` form; return whether it changed."""
    path = text_source(course_root, assignment)
    text = path.read_text(encoding="utf-8")
    canonical = canonical_text(text)
    if canonical != text:
        path.write_text(canonical, encoding="utf-8")
    return canonical != text


class EditedNotebookError(RuntimeError):
    """A generated notebook was edited by hand, without Jupytext, after its source."""


def build_notebook(course_root: Path, assignment: str) -> Path:
    """Write ``solutions/<id>/<id>.ipynb`` from ``<id>.md`` and return its path.

    Raises:
        FileNotFoundError: no ``<id>.md``.
        EditedNotebookError: the ``.ipynb`` is newer than the ``.md`` and holds other cells (an
            edit made without Jupytext's pairing); nothing is overwritten.
    """
    text, target = text_source(course_root, assignment), notebook_source(course_root, assignment)
    if not text.is_file():
        raise FileNotFoundError(f"no source for assignment {assignment!r}: expected {text}")
    nb = read_text_source(text)
    if target.is_file():
        existing = nbformat.read(target, as_version=4)
        if cell_contents(existing) == cell_contents(nb) and nbformat.writes(existing) == nbformat.writes(nb):
            return target  # already current: leave the file (and its time stamp) alone
        if cell_contents(existing) != cell_contents(nb) and target.stat().st_mtime > text.stat().st_mtime:
            raise EditedNotebookError(
                f"{target} was edited after {text.name} and differs from it, so it is not overwritten. "
                f"Keep the edit with `jupytext --sync {target}` (it rewrites {text.name}), "
                f"or drop it by deleting {target.name}.")
    write_atomically(target, nbformat.writes(nb) + "\n")  # tests in parallel read it meanwhile
    return target


def build_all(course_root: Path) -> list[Path]:
    """:func:`build_notebook` for every assignment."""
    return [build_notebook(course_root, a) for a in assignments(course_root)]
