"""A notebook's cells as nbgrader sees them: their metadata, read the same way by every course tool.

nbgrader keeps what it knows about a cell under ``cell.metadata["nbgrader"]``: ``grade_id``,
``grade`` (the cell earns points), ``solution`` (the student writes it), ``locked`` and
``points``. The course's words for the combinations:

* an *autograded test* is a graded code cell that is not a solution (it runs and scores itself);
* a *hand-graded answer* is a graded solution cell (free response, scored by an instructor).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # not imported at run time: the visible tests' check runs in the kernel
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


POINTS_SUFFIX = re.compile(r"\s*\(\d+(?:\.\d+)? points?[^)]*\)\s*$")  # (3 points), (3 points, graded by hand)


def cell_headings(nb: NotebookNode) -> dict[str, str]:
    """grade_id -> the last heading above each cell nbgrader manages, without its points (empty when
    none is above it). Headings in the cells a student writes do not count."""
    heading, found = "", {}
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "markdown" and not meta.get("solution"):
            lines = [line.lstrip("#").strip() for line in cell.source.splitlines() if re.match(r"#{1,6} ", line)]
            heading = POINTS_SUFFIX.sub("", lines[-1]) if lines else heading
        if meta.get("grade_id"):
            found[meta["grade_id"]] = heading
    return found


def cell_titles(nb: NotebookNode) -> dict[str, str]:
    """grade_id -> the name the notebook gives the graded cell: the heading above it
    (:func:`cell_headings`, e.g. ``Exercise 1: left padding for generation``), and ``part k of n``
    when n graded cells share a heading. A graded cell with no heading above it is named by its grade_id."""
    headings, under = cell_headings(nb), {}
    for cell in nb.cells:
        if (meta := nbgrader_meta(cell)).get("grade"):
            under.setdefault(headings[meta["grade_id"]], []).append(meta["grade_id"])
    return {grade_id: (name or grade_id) + (f", part {k} of {len(ids)}" if len(ids) > 1 and name else "")
            for name, ids in under.items() for k, grade_id in enumerate(ids, start=1)}


def short_title(title: str, grade_id: str) -> str:
    """``Ex. 4.2`` for ``Exercise 4: ..., part 2 of 3``, ``Ex. 1`` for ``Exercise 1: ...``, ``Ex. 3 cont.``
    for ``Exercise 3, continued: ...`` (a later part of exercise 3 under its own heading, often graded by
    hand: not the whole exercise); else the grade_id."""
    number = re.match(r"Exercise (\d+)(, continued)?", title)
    part = re.search(r", part (\d+) of \d+$", title)
    if not number:
        return grade_id
    return f"Ex. {number[1]}" + (" cont." if number[2] else "") + (f".{part[1]}" if part else "")
