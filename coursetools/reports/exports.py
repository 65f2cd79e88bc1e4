"""The class table of an assignment and its CSV export.

nbgrader's own ``nbgrader export`` CSV shows 0 for a student it could not grade; the course's CSV
(``<assignment>_grades.csv``) has one row per student with a column per graded cell, the status
of :mod:`coursetools.grading.outcomes`, an empty total for a student whose notebook was not graded, the
hand-graded answers still to score, lateness against the due date, the roster's name and
email (``grading/roster.csv``, optional) and the LMS's number for the student (``lms_id``, from the
download's file names or the roster), which the LMS uploads of :mod:`coursetools.reports.uploads` match on.
With a late penalty (:mod:`coursetools.grading.penalty`) it also shows the points taken off and the final
total, which the uploads carry; the gradebook's scores are never changed.
The rows are computed by pure functions (:func:`class_row`, :func:`csv_rows`); :func:`class_table`
reads them from the state file and the gradebook.
"""

from __future__ import annotations

import csv
import io
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import NamedTuple

import nbformat

from coursetools.common.cells import GradedCell, graded_cells
from coursetools.common.files import write_atomically
from coursetools.common.layout import Course
from coursetools.grading.gradebook import Scores, class_scores
from coursetools.grading.outcomes import GRADED, HAND_GRADE_AGAIN, TAMPERED, reviewed
from coursetools.grading.penalty import LatePenalty, penalty_points, recorded_late_penalty
from coursetools.grading.state import DUE, LMS_IDS, REVIEWS, SUBMITTED, TIMES, load_state, student_records

NO_SUBMISSION = "no submission"  # a roster student without a record
# What an LMS's grade import matches a student on: the LMS and its number for the student (from the
# download's file names, or the roster), Canvas's SIS ids and section (from the roster).
LMS_FIELDS = ("lms", "lms_id", "sis_user_id", "sis_login_id", "section")
ROSTER_FIELDS = ("name", "email", *LMS_FIELDS)


@dataclass
class Row:
    """One student's line of the class table: a score per graded cell (None: no score).

    ``to_grade_by_hand``: the hand-graded answers of a graded notebook that hold no score yet
    (their points are not in ``total`` until an instructor scores them). ``late``: how late the
    submission was (empty when on time or unknown). ``name``, ``email``: from the roster.
    ``ids``: what an LMS matches a student on: ``lms`` and ``lms_id`` (Canvas's user ID, Moodle's
    participant number), ``sis_user_id``, ``sis_login_id``, ``section`` (from the roster).
    ``penalty``: the points a late penalty takes off (None: late by a time nobody knows, so the
    penalty cannot be applied). ``refused``: the cells whose hand score is outside their points
    (grade_id -> why), not counted.
    """

    student: str
    status: str
    scores: dict[str, float | None]
    total: float | None
    details: list[str]
    to_grade_by_hand: list[str] = field(default_factory=list)
    late: str = ""
    name: str = ""
    email: str = ""
    ids: dict[str, str] = field(default_factory=dict)
    penalty: float | None = 0.0
    refused: dict[str, str] = field(default_factory=dict)

    @property
    def final(self) -> float | None:
        """The total less the late penalty, never below 0 (None when either is unknown)."""
        return None if self.total is None or self.penalty is None else max(0.0, self.total - self.penalty)


class ClassTable(NamedTuple):
    """Every recorded student's row (and the roster's students without a submission), the
    assignment's graded cells in notebook order, and its late penalty (None: none)."""

    rows: list[Row]
    cells: list[GradedCell]
    penalty: LatePenalty | None = None


def class_row(student: str, record: dict, found: dict[str, float | None], cells: list[GradedCell],
              late: str = "", person: dict[str, str] | None = None, *, penalty: float | None = 0.0,
              refused: dict[str, str] | None = None) -> Row:
    """A student's row from their recorded outcome and the scores the gradebook holds (``found``).

    A student whose notebook was not graded (kernel died, timed out, missing) has no scores: their
    total is None, never a silent 0. A graded student's test cells without a score count 0 in the
    total; their hand-graded answers without a score are listed in ``to_grade_by_hand``, and so is any
    cell whose hand score is out of its points (``refused``: grade_id -> why; not counted, said in the
    details). A ``tampered`` record's ``withheld`` test cells (an answer that used what its exercise's
    allow-list refuses) count 0; once a review clears the flag the record is ``ok`` and they count.
    """
    graded = record["status"] in GRADED
    refused = (refused or {}) if graded else {}
    scores = {cell.grade_id: found.get(cell.grade_id) if graded and cell.grade_id not in refused else None
              for cell in cells}
    # an answer that used what its exercise's allow-list refuses: its tests count 0 unless a review cleared it
    withheld = [name for name in record.get("withheld", []) if record["status"] == TAMPERED and scores.get(name)]
    scores.update(dict.fromkeys(withheld, 0.0))
    total = sum(score or 0.0 for score in scores.values()) if graded else None
    pending = [cell.grade_id for cell in cells if graded and cell.grade_id in refused
               or graded and not cell.automatic and scores[cell.grade_id] is None]
    person = person or {}
    # "grade it again" stands until the answer has its new hand grade
    details = [d for d in record["details"] if not (d.endswith(HAND_GRADE_AGAIN)
                                                     and scores.get(d[:-len(HAND_GRADE_AGAIN)]) is not None)]
    details += [f"{grade_id}: {why}; score it again in formgrader" for grade_id, why in refused.items()]
    details += [f"{grade_id}: 0, its answer used what the exercise's allow-list refuses (make review CLEAR=... "
                "counts it)" for grade_id in withheld]
    return Row(student, record["status"], scores, total, details, pending, late,
               person.get("name", ""), person.get("email", ""),
               {key: person[key] for key in LMS_FIELDS if person.get(key)}, penalty, refused)


def lateness(submitted_at: datetime | None, due: datetime | None, marked_late: bool = False) -> str:
    """``late by 1 d 2 h 5 min`` when ``submitted_at`` is after ``due``; ``marked late by the LMS``
    when only the LMS said so; empty when on time or when either time is unknown."""
    late = late_by(submitted_at, due)
    if late is not None:
        minutes = int(late.total_seconds() // 60) or 1
        days, hours, minutes = minutes // 1440, minutes // 60 % 24, minutes % 60
        return "late by " + " ".join(f"{n} {unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "min")) if n)
    return "marked late by the LMS" if marked_late and (submitted_at is None or due is None) else ""


def late_by(submitted_at: datetime | None, due: datetime | None) -> timedelta | None:
    """How long after ``due`` the submission came (None: on time, or either time unknown). When one time
    has a UTC offset and the other none (a file's modification time, say), the naive one is the grading
    machine's local time."""
    if submitted_at is None or due is None:
        return None
    if (submitted_at.tzinfo is None) != (due.tzinfo is None):
        submitted_at, due = submitted_at.astimezone(), due.astimezone()
    return submitted_at - due if submitted_at > due else None


def late_fields(submitted_at: datetime | None, due: datetime | None, marked_late: bool,
                policy: LatePenalty | None, max_total: float) -> tuple[str, float | None]:
    """A row's lateness (:func:`lateness`) and the points ``policy`` takes off for it
    (:func:`coursetools.grading.penalty.penalty_points`; None: late by a time nobody knows)."""
    known = submitted_at is not None and due is not None
    return (lateness(submitted_at, due, marked_late),
            penalty_points(policy, late_by(submitted_at, due), marked_late and not known, max_total))


def csv_rows(table: ClassTable) -> list[list[str]]:
    """The course's CSV as rows of strings, header first.

    Columns: student, name, email, lms_id, status, one per graded cell, total (the points scored so
    far: final only when manual_to_grade is 0), with a late penalty late_penalty (the points it takes
    off) and final_total (total less the penalty, at least 0), max_total, manual_to_grade
    (hand-graded answers still without a score), late, details. A missing score, total or penalty
    (late by a time nobody knows) is an empty string.
    """
    rows, cells, policy = table
    max_total = sum(cell.points for cell in cells)
    lines = [["student", "name", "email", "lms_id", "status", *[cell.grade_id for cell in cells], "total",
              *(["late_penalty", "final_total"] if policy else []), "max_total", "manual_to_grade", "late",
              "details"]]
    for row in rows:
        manual_left = "" if row.total is None else str(len(row.to_grade_by_hand))
        penalised = [_number(None if row.total is None else row.penalty), _number(row.final)] if policy else []
        lines.append([row.student, row.name, row.email, row.ids.get("lms_id", ""), row.status,
                      *[_number(row.scores[cell.grade_id]) for cell in cells], _number(row.total), *penalised,
                      _number(max_total), manual_left, row.late, "; ".join(row.details)])
    return lines


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def write_csv(path: Path, rows: list[list[str]]) -> None:
    """Write ``rows`` as a CSV file, atomically."""
    text = io.StringIO()
    csv.writer(text).writerows(rows)
    write_atomically(path, text.getvalue())


def read_roster(path: Path) -> dict[str, dict[str, str]]:
    """student id -> {"name": ..., "email": ..., and any of :data:`LMS_FIELDS`} from a roster CSV
    (empty when there is none).

    The file needs a header with a ``student`` column (the id the submissions carry); ``name``,
    ``email`` and the LMS's identifiers (:data:`LMS_FIELDS`) are optional, other columns are ignored.
    """
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        if "student" not in (reader.fieldnames or []):
            raise ValueError(f"{path}: expected a header with a 'student' column (and optional "
                             f"{', '.join(ROSTER_FIELDS)}), got {reader.fieldnames}")
        return {row["student"].strip(): {key: (row.get(key) or "").strip() for key in ROSTER_FIELDS}
                for row in reader if (row.get("student") or "").strip()}


def submission_time(course: Course, assignment: str, student: str, state: dict) -> datetime | None:
    """When ``student`` submitted: as the instructor's times file said (state), or the LMS file
    name or the folder it was collected from (state: its ``timestamp.txt`` or the file's modification
    time), or nbgrader's ``timestamp.txt``."""
    recorded = state.get(TIMES, {}).get(student) or state.get(SUBMITTED, {}).get(student, {}).get("timestamp")
    if recorded:
        return datetime.fromisoformat(recorded)
    stamp = course.folder("submitted", assignment, student) / "timestamp.txt"
    if stamp.is_file():
        try:
            return datetime.fromisoformat(stamp.read_text(encoding="utf-8").strip().split(".")[0].removesuffix(" UTC"))
        except ValueError:
            return None
    return None


def class_table(course: Course, assignment: str) -> ClassTable:
    """The class table from the state file (the late penalty among it), the gradebook and the roster
    (graded cells from the staged release)."""
    cells = graded_cells(nbformat.read(course.staged_release(assignment), as_version=4))
    state = load_state(course, assignment)
    policy, max_total = recorded_late_penalty(state), sum(cell.points for cell in cells)
    roster = read_roster(course.roster())
    collected = state.get(LMS_IDS, {})
    people = {student: {**collected.get(student, {}), **{k: v for k, v in roster.get(student, {}).items() if v}}
              for student in {*roster, *collected}}
    due = datetime.fromisoformat(state[DUE]) if state.get(DUE) else None
    reviews = state.get(REVIEWS, {})
    records = {student: reviewed(record, reviews.get(student)) for student, record in student_records(state).items()}
    found = class_scores(course, assignment, [student for student, record in records.items()
                                              if record["status"] in GRADED])
    rows = []
    for student, record in sorted(records.items()):
        late, penalty = late_fields(submission_time(course, assignment, student, state), due,
                                    state.get(SUBMITTED, {}).get(student, {}).get("marked_late", False), policy,
                                    max_total)
        scores = found.get(student, Scores())
        rows.append(class_row(student, record, scores.scores, cells, late, people.get(student), penalty=penalty,
                              refused=scores.refused))
    rows += [class_row(student, {"status": NO_SUBMISSION, "details": ["on the roster, nothing collected"]}, {},
                       cells, person=person)
             for student, person in sorted(roster.items()) if student not in records]
    return ClassTable(rows, cells, policy)


def nbgrader_export(course: Course, assignment: str) -> str:
    """What ``nbgrader export --assignment=<assignment>`` writes (its CSV plug-in), as text.

    Run in this process: ``nbgrader export`` in a subprocess spent seconds importing what the
    ``course`` command has imported already (4 of the 14 s a report of 12 students took).
    """
    from nbgrader.api import Gradebook  # SQLAlchemy: imported only when read
    from nbgrader.plugins.export import CsvExportPlugin

    with tempfile.TemporaryDirectory() as folder:
        written = Path(folder) / "export.csv"
        with Gradebook(course.nbgrader.db_url, course.nbgrader.course_id) as gradebook:
            CsvExportPlugin(to=str(written), assignment=[assignment]).export(gradebook)
        return written.read_text(encoding="utf-8")


def export(course: Course, assignment: str, table: ClassTable | None = None) -> list[Path]:
    """Write nbgrader's CSV and the course's into ``course.exports()``; return both paths.

    ``table``: what :func:`class_table` returns, when the caller has it already.
    """
    nbgrader_csv = course.exports() / f"{assignment}_nbgrader.csv"
    write_atomically(nbgrader_csv, nbgrader_export(course, assignment))
    course_csv = course.exports() / f"{assignment}_grades.csv"
    write_csv(course_csv, csv_rows(table or class_table(course, assignment)))
    return [nbgrader_csv, course_csv]
