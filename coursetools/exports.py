"""The class table of an assignment and its CSV export.

nbgrader's own ``nbgrader export`` CSV shows 0 for a student it could not grade; the course's CSV
(``<assignment>_grades.csv``) has one row per student with a column per graded cell, the status
of :mod:`coursetools.outcomes`, and an empty total for a student whose notebook was not graded.
The rows are computed by pure functions (:func:`class_row`, :func:`csv_rows`); :func:`class_table`
reads them from the state file and the gradebook.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import nbformat

from coursetools.cells import GradedCell, graded_cells
from coursetools.gradebook import gradebook_scores
from coursetools.files import write_atomically
from coursetools.layout import Course
from coursetools.outcomes import GRADED
from coursetools.release import run_nbgrader
from coursetools.state import load_state, student_records


@dataclass
class Row:
    """One student's line of the class table: a score per graded cell (None: no score)."""

    student: str
    status: str
    scores: dict[str, float | None]
    total: float | None
    details: list[str]


class ClassTable(NamedTuple):
    """Every recorded student's row, and the assignment's graded cells in notebook order."""

    rows: list[Row]
    cells: list[GradedCell]


def class_row(student: str, record: dict, found: dict[str, float | None], cells: list[GradedCell]) -> Row:
    """A student's row from their recorded outcome and the scores the gradebook holds (``found``).

    A student whose notebook was not graded (kernel died, timed out, missing) has no scores: their
    total is None, never a silent 0. A graded student's cells without a score count 0 in the total.
    """
    graded = record["status"] in GRADED
    scores = {cell.grade_id: found.get(cell.grade_id) if graded else None for cell in cells}
    total = sum(score or 0.0 for score in scores.values()) if graded else None
    return Row(student, record["status"], scores, total, record["details"])


def csv_rows(table: ClassTable) -> list[list[str]]:
    """The course's CSV as rows of strings, header first.

    Columns: student, status, one per graded cell, total, max_total, manual_to_grade (answers
    still to score by hand), details. A missing score or total is an empty string.
    """
    rows, cells = table
    max_total = sum(cell.points for cell in cells)
    lines = [["student", "status", *[cell.grade_id for cell in cells], "total", "max_total", "manual_to_grade",
              "details"]]
    for row in rows:
        manual_left = "" if row.total is None else \
            str(sum(1 for cell in cells if not cell.automatic and row.scores[cell.grade_id] is None))
        lines.append([row.student, row.status, *[_number(row.scores[cell.grade_id]) for cell in cells],
                      _number(row.total), _number(max_total), manual_left, "; ".join(row.details)])
    return lines


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def write_csv(path: Path, rows: list[list[str]]) -> None:
    """Write ``rows`` as a CSV file, atomically."""
    text = io.StringIO()
    csv.writer(text).writerows(rows)
    write_atomically(path, text.getvalue())


def class_table(course: Course, assignment: str) -> ClassTable:
    """The class table from the state file and the gradebook (graded cells from the staged release)."""
    cells = graded_cells(nbformat.read(course.staged_release(assignment), as_version=4))
    rows = [class_row(student, record, gradebook_scores(course, assignment, student)
                      if record["status"] in GRADED else {}, cells)
            for student, record in sorted(student_records(load_state(course, assignment)).items())]
    return ClassTable(rows, cells)


def export(course: Course, assignment: str, table: ClassTable | None = None) -> list[Path]:
    """Write nbgrader's CSV and the course's into ``course.exports()``; return both paths.

    ``table``: what :func:`class_table` returns, when the caller has it already.
    """
    nbgrader_csv = course.exports() / f"{assignment}_nbgrader.csv"
    nbgrader_csv.parent.mkdir(parents=True, exist_ok=True)
    run_nbgrader(["export", f"--to={nbgrader_csv}", f"--assignment={assignment}"], course.root)
    course_csv = course.exports() / f"{assignment}_grades.csv"
    write_csv(course_csv, csv_rows(table or class_table(course, assignment)))
    return [nbgrader_csv, course_csv]
