"""The grades as an LMS's grade import takes them: one CSV for Canvas, one for Moodle.

Each holds only the students whose grading is complete (a total, no answer still to grade by
hand), each with its final total (less a late penalty, :mod:`coursetools.grading.penalty`; a student late
by a time nobody gave is left out while a penalty is set): a student left out keeps whatever the
LMS holds, never a provisional number. Students are
matched on the LMS's own number for them, which the download's file names carry
(:mod:`coursetools.grading.submission_names`) or the roster gives (:data:`coursetools.reports.exports.LMS_FIELDS`).

* **Canvas** (Grades > Import): the columns of Canvas's own gradebook export, ``Student``, ``ID``
  (Canvas's user ID), ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per assignment
  headed ``<assignment name> (<assignment id>)`` as that export heads it (a header Canvas does not
  know creates a new assignment), after a ``Points Possible`` row. Canvas matches a row on its ID
  or SIS ids.
* **Moodle**: the columns of an assignment's offline grading worksheet (Assignment > Download
  grading worksheet / Upload grading worksheet): ``Identifier`` (``Participant <n>``, the number in
  the download's ``Jane Doe_<n>_assignsubmission_file_`` names), ``Full name``, ``Email address``,
  ``Grade``, ``Maximum Grade`` and ``Last modified (grade)`` (the upload skips a grade changed in
  Moodle after that time); the gradebook's CSV import takes the same file, matching ``Email
  address`` to the users' email.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from coursetools.common.layout import Course
from coursetools.reports.exports import ClassTable, Row, write_csv

CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_COLUMNS = ["Identifier", "Full name", "Email address", "Grade", "Maximum Grade", "Last modified (grade)"]


class Upload(NamedTuple):
    """An LMS's CSV as rows (header first) and the students left out of it, with why."""

    rows: list[list[str]]
    left_out: dict[str, str]


def _final(row: Row) -> str:
    """Why ``row`` has no final grade to upload (empty when it has one)."""
    if row.total is None:
        return f"no total ({row.status})"
    if row.to_grade_by_hand:
        return "answers still to grade by hand"
    return "" if row.penalty is not None else (f"late by a time nobody gave ({row.late}): give its submission time "
                                               "(--times) to apply the late penalty")


def _points(value: float) -> str:
    return f"{value:g}"


def canvas_rows(table: ClassTable, column: str) -> Upload:
    """The Canvas import of ``table``'s totals under the assignment column header ``column``."""
    max_total = sum(cell.points for cell in table.cells)
    rows = [[*CANVAS_COLUMNS, column], ["    Points Possible", "", "", "", "", _points(max_total)]]
    left_out = {}
    for row in table.rows:
        ids = row.ids if row.ids.get("lms", "Canvas") == "Canvas" else {k: v for k, v in row.ids.items()
                                                                         if k != "lms_id"}
        why = _final(row) or ("" if ids.get("lms_id") or ids.get("sis_user_id") or ids.get("sis_login_id")
                              else "no Canvas ID or SIS id (collect a Canvas download, or add lms_id to the roster)")
        if why:
            left_out[row.student] = why
            continue
        rows.append([row.name or row.student, ids.get("lms_id", ""), ids.get("sis_user_id", ""),
                     ids.get("sis_login_id", ""), ids.get("section", ""), _points(row.final)])
    return Upload(rows, left_out)


def moodle_rows(table: ClassTable, modified: datetime) -> Upload:
    """The Moodle grading worksheet of ``table``'s totals, graded at ``modified``."""
    max_total = _points(sum(cell.points for cell in table.cells))
    rows, left_out = [list(MOODLE_COLUMNS)], {}
    for row in table.rows:
        participant = row.ids.get("lms_id", "") if row.ids.get("lms") == "Moodle" else ""
        why = _final(row) or ("" if participant or row.email
                              else "no Moodle participant number or email (collect a Moodle download, or add email "
                                   "to the roster)")
        if why:
            left_out[row.student] = why
            continue
        rows.append([f"Participant {participant}" if participant else "", row.name or row.student, row.email,
                     _points(row.final), max_total, f"{modified:%Y-%m-%d %H:%M}"])
    return Upload(rows, left_out)


def write_uploads(course: Course, assignment: str, table: ClassTable, canvas_column: str | None = None,
                  now: datetime | None = None) -> dict[Path, Upload]:
    """Write ``<assignment>_canvas.csv`` and ``<assignment>_moodle.csv`` into ``course.exports()``,
    each only when some student can be matched in that LMS; return what was written.

    Canvas matches by its ids; Moodle by participant number, or by email in a class that Canvas
    matches nobody of (a roster's emails alone do not make a Canvas class a Moodle one)."""
    written = {}
    canvas, moodle = canvas_rows(table, canvas_column or assignment), moodle_rows(table, now or datetime.now())
    in_canvas = len(canvas.rows) > 2 or any(row.ids.get("lms") == "Canvas" for row in table.rows)
    in_moodle = any(row.ids.get("lms") == "Moodle" for row in table.rows) or (not in_canvas and len(moodle.rows) > 1)
    for name, upload, matched in (("canvas", canvas, in_canvas), ("moodle", moodle, in_moodle)):
        if matched:
            path = course.exports() / f"{assignment}_{name}.csv"
            write_csv(path, upload.rows)
            written[path] = upload
    return written
