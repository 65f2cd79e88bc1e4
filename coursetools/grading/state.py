"""The grading state of an assignment: each student's outcome, written as soon as it is known.

``grading/state/<assignment>.json`` maps each student to their :class:`~coursetools.grading.outcomes.Outcome`
(as a dict), so that an interrupted ``course grade`` resumes where it stopped. The course's own
keys start with ``_`` (never a student id): the files of an LMS download that name no student
(:data:`UNMATCHED`), the duplicates left out per student (:data:`LEFT_OUT`), the file collected
for each student and when the LMS says it was submitted (:data:`SUBMITTED`), the due date
(:data:`DUE`, ISO 8601), the LMS's own number for each student as the download named it
(:data:`LMS_IDS`: what its grade import matches on), submission times given by the instructor
(:data:`TIMES`), the instructor's reviews of flagged students (:data:`REVIEWS`) and the late
penalty (:data:`LATE_PENALTY`, :mod:`coursetools.grading.penalty`).
"""

from __future__ import annotations

import json

from coursetools.common.files import write_atomically
from coursetools.common.layout import Course

UNMATCHED = "_unmatched"
LEFT_OUT = "_left_out"
SUBMITTED = "_submitted"
DUE = "_due"
LMS_IDS = "_lms_ids"  # student -> {"lms": "Canvas", "lms_id": "123456"}; kept across collections
TIMES = "_times"  # student -> ISO time of submission, from a times file (``course grade --times``)
REVIEWS = "_reviews"  # student -> {"decision", "note", "submission_sha", "status"} (``course review``)
LATE_PENALTY = "_late_penalty"  # the late penalty, as written (``10%/day, max 50%``); None: none


def load_state(course: Course, assignment: str) -> dict:
    """The recorded outcome per student (and :data:`UNMATCHED`); empty before the first run."""
    path = course.state_file(assignment)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def update_state(course: Course, assignment: str, changes: dict) -> None:
    """Merge ``changes`` into the state file, atomically (an interrupted run leaves it whole)."""
    state = load_state(course, assignment)
    state.update(changes)
    write_atomically(course.state_file(assignment), json.dumps(state, indent=1, sort_keys=True))


def student_records(state: dict) -> dict[str, dict]:
    """The students' records of a state, without the course's own keys."""
    return {student: record for student, record in state.items() if not student.startswith("_")}


def merge_state(course: Course, assignment: str, key: str, entries: dict) -> None:
    """Merge ``entries`` into the course's own mapping ``key`` of the state (what is not named stays)."""
    update_state(course, assignment, {key: {**load_state(course, assignment).get(key, {}), **entries}})
