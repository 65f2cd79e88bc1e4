"""nbgrader's gradebook, as grading reads it: the scores of a submission, hand grades that still stand
after a regrade, flags for formgrader, and a backup first.

A score is read exactly as formgrader shows it: a grade that nbgrader marks ``needs_manual_grade``
has no score yet, whatever it holds, so that the course's CSV and formgrader agree on what is left
to grade by hand.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

import nbformat

from coursetools.common.cells import answer_texts
from coursetools.common.layout import Course


def gradebook_scores(course: Course, assignment: str, student: str) -> dict[str, float | None]:
    """grade_id -> score of ``student``'s submission (None: still to grade by hand); empty when the
    gradebook holds no such submission."""
    from nbgrader.api import Gradebook, MissingEntry  # SQLAlchemy: imported only when read

    with Gradebook(course.nbgrader.db_url) as gradebook:
        try:
            notebook = gradebook.find_submission_notebook(assignment, assignment, student)
        except MissingEntry:
            return {}
        return {grade.name: None if grade.needs_manual_grade else grade.score for grade in notebook.grades}


def keep_hand_grades(course: Course, assignment: str, student: str, graded_before: dict[str, str]) -> list[str]:
    """After ``student`` was autograded again, let each hand grade stand whose answer is unchanged;
    return the hand-graded answers whose text changed since they were scored (they wait for a new
    hand grade, the old score still shown in formgrader).

    nbgrader's autograde marks every grade that holds a ``manual_score`` as needing a manual grade
    again (``SaveAutoGrades``: "if there was previously a manual grade ... mark this as needing
    review"), so after a regrade formgrader listed every hand-graded student as still to grade.
    ``graded_before``: the hand-graded answers (grade_id -> text) of the autograded notebook the
    hand grades were given on, read before the regrade (:func:`coursetools.common.cells.answer_texts`).
    A test cell whose score an instructor overrode stays marked: its test or the code it grades may
    have changed, so formgrader and the CSV both ask for it to be looked at again.
    """
    from nbgrader.api import Gradebook, MissingEntry

    autograded = course.notebook("autograded", assignment, student)
    if not autograded.is_file():
        return []
    graded_now = answer_texts(nbformat.read(autograded, as_version=4))
    changed = []
    with Gradebook(course.nbgrader.db_url) as gradebook:
        try:
            notebook = gradebook.find_submission_notebook(assignment, assignment, student)
        except MissingEntry:
            return []
        for grade in notebook.grades:
            if grade.name not in graded_now or grade.manual_score is None or not grade.needs_manual_grade:
                continue
            if graded_before.get(grade.name) == graded_now[grade.name]:
                grade.needs_manual_grade = False
            else:
                changed.append(grade.name)
        gradebook.db.commit()
    return changed


def unflag_submission(course: Course, assignment: str, student: str) -> None:
    """Take the flag off ``student``'s submission (an instructor cleared it on review)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.nbgrader.db_url) as gradebook:
        try:
            gradebook.find_submission_notebook(assignment, assignment, student).flagged = False
        except MissingEntry:
            return
        gradebook.db.commit()


def flag_submissions(course: Course, assignment: str, students: list[str]) -> None:
    """Flag ``students``' submissions as a grader can in formgrader, whose submission lists show
    the flag: formgrader knows nothing of the course's statuses, so the course flags each student
    graded with one other than ``ok`` (the reason is in the class report). Flags are only added,
    never removed: a grader's own flag stays."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.nbgrader.db_url) as gradebook:
        for student in students:
            try:
                gradebook.find_submission_notebook(assignment, assignment, student).flagged = True
            except MissingEntry:  # not graded (kernel died, missing notebook): nothing to flag
                continue
        gradebook.db.commit()


def backup_gradebook(course: Course) -> Path | None:
    """A consistent copy of the gradebook in ``course.backups()``, named by the time (None when there
    is no gradebook yet)."""
    if not course.gradebook.exists():
        return None
    course.backups().mkdir(parents=True, exist_ok=True)
    target = course.backups() / f"gradebook-{datetime.now():%Y%m%dT%H%M%S-%f}.db"
    with sqlite3.connect(course.gradebook) as source, sqlite3.connect(target) as copy:
        source.backup(copy)
    return target
