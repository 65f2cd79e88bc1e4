"""Build nbgrader source notebooks from Python, so that a chapter's exercises are reviewable.

Each chapter's instructor notebook ``solutions/<id>/<id>.ipynb`` is written by a small script
under ``coursetools/chapters/`` made of the cell constructors below; ``python -m
coursetools.chapters.<id>`` rewrites the notebook, and a test checks the committed notebook is
what its script writes. The metadata follows the table in the course's nbgrader notes: every
nbgrader cell carries ``schema_version: 3`` and a unique ``grade_id``.
"""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import nbformat
from nbformat.notebooknode import NotebookNode

SCHEMA_VERSION = 3
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def _clean(source: str) -> str:
    return dedent(source).strip("\n")


def _nbgrader(grade_id: str, *, grade: bool, solution: bool, locked: bool,
              points: float | None = None, task: bool = False) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": SCHEMA_VERSION,
            "solution": solution, "task": task}
    if points is not None:
        meta["points"] = points
    return meta


def markdown(source: str) -> NotebookNode:
    """Plain prose, not part of grading (students may edit it)."""
    return nbformat.v4.new_markdown_cell(_clean(source))


def instructions(grade_id: str, source: str) -> NotebookNode:
    """Read-only prose: an exercise statement students cannot change."""
    cell = nbformat.v4.new_markdown_cell(_clean(source))
    cell.metadata["nbgrader"] = _nbgrader(grade_id, grade=False, solution=False, locked=True)
    return cell


def setup(grade_id: str, source: str) -> NotebookNode:
    """Read-only code (imports, data): restored from the source at grading time."""
    cell = nbformat.v4.new_code_cell(_clean(source))
    cell.metadata["nbgrader"] = _nbgrader(grade_id, grade=False, solution=False, locked=True)
    return cell


def code(source: str) -> NotebookNode:
    """Ordinary code (a demo, a plot) that students may run and change."""
    return nbformat.v4.new_code_cell(_clean(source))


def solution(grade_id: str, source: str) -> NotebookNode:
    """An answer cell: the body between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` is
    replaced by the stub in the release; what surrounds it (a signature, a docstring) stays."""
    cell = nbformat.v4.new_code_cell(_clean(source))
    if "### BEGIN SOLUTION" not in cell.source or "### END SOLUTION" not in cell.source:
        raise ValueError(f"solution cell {grade_id!r} needs ### BEGIN SOLUTION / ### END SOLUTION markers")
    cell.metadata["nbgrader"] = _nbgrader(grade_id, grade=False, solution=True, locked=False)
    return cell


def tests(grade_id: str, points: float, source: str) -> NotebookNode:
    """A locked, autograded test cell: visible asserts, then an optional hidden block."""
    cell = nbformat.v4.new_code_cell(_clean(source))
    cell.metadata["nbgrader"] = _nbgrader(grade_id, grade=True, solution=False, locked=True, points=points)
    return cell


def free_response(grade_id: str, points: float, model_answer: str) -> NotebookNode:
    """A manually graded markdown answer; the model answer is replaced by a stub in the release."""
    cell = nbformat.v4.new_markdown_cell(_clean(model_answer))
    cell.metadata["nbgrader"] = _nbgrader(grade_id, grade=True, solution=True, locked=False, points=points)
    return cell


def notebook(cells: list[NotebookNode]) -> NotebookNode:
    """Assemble cells into a notebook; ``grade_id`` values must be unique."""
    ids = [c.metadata["nbgrader"]["grade_id"] for c in cells if "nbgrader" in c.metadata]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"grade_id values must be unique, repeated: {duplicated}")
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    for index, cell in enumerate(nb.cells):  # stable ids keep diffs small
        cell["id"] = f"cell-{index:03d}"
    return nb


def write_chapter(assignment: str, cells: list[NotebookNode]) -> Path:
    """Write a chapter script's cells to ``solutions/<assignment>/<assignment>.ipynb``."""
    solutions = Path(__file__).resolve().parent.parent / "solutions"
    return write(notebook(cells), solutions / assignment / f"{assignment}.ipynb")


def write(nb: NotebookNode, path: str | Path) -> Path:
    """Validate and write a notebook (no outputs), returning the path."""
    nbformat.validate(nb)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    return path
