"""A notebook's cells as nbgrader sees them: their metadata, read the same way by every course tool.

nbgrader keeps what it knows about a cell under ``cell.metadata["nbgrader"]``: ``grade_id``,
``grade`` (the cell earns points), ``solution`` (the student writes it), ``locked`` and
``points``. The course's words for the combinations:

* an *autograded test* is a graded code cell that is not a solution (it runs and scores itself);
* a *hand-graded answer* is a graded solution cell (free response, scored by an instructor).
"""

from __future__ import annotations

from typing import NamedTuple

from nbformat import NotebookNode


def nbgrader_meta(cell: NotebookNode) -> dict:
    """The cell's nbgrader metadata (empty for a cell nbgrader does not manage)."""
    return cell.metadata.get("nbgrader", {})


def grade_id(cell: NotebookNode) -> str | None:
    """The cell's ``grade_id``, or None for a cell nbgrader does not manage."""
    return nbgrader_meta(cell).get("grade_id")


def is_autograded_test(cell: NotebookNode) -> bool:
    """A graded code cell the student does not write: its points come from running it."""
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


class GradedCell(NamedTuple):
    """A cell that earns points: its ``grade_id``, whether it is graded automatically, its points."""

    grade_id: str
    automatic: bool
    points: float


def graded_cells(nb: NotebookNode) -> list[GradedCell]:
    """Every graded cell of ``nb``, in notebook order."""
    return [GradedCell(meta["grade_id"], is_autograded_test(cell), float(meta["points"]))
            for cell in nb.cells if (meta := nbgrader_meta(cell)).get("grade")]


def answer_texts(nb: NotebookNode) -> dict[str, str]:
    """The hand-graded answers of ``nb`` (graded cells the student writes): grade_id -> text."""
    return {meta["grade_id"]: cell.source for cell in nb.cells
            if (meta := nbgrader_meta(cell)).get("grade") and meta.get("solution")}
