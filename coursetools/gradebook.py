"""nbgrader's gradebook, as grading reads it: the scores of a submission, flags for formgrader, and a
backup first."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

from coursetools.layout import Course


def gradebook_scores(course: Course, assignment: str, student: str) -> dict[str, float | None]:
    """grade_id -> score of ``student``'s submission (None: still to grade by hand); empty when the
    gradebook holds no such submission."""
    from nbgrader.api import Gradebook, MissingEntry  # SQLAlchemy: imported only when read

    with Gradebook(course.nbgrader.db_url) as gradebook:
        try:
            notebook = gradebook.find_submission_notebook(assignment, assignment, student)
        except MissingEntry:
            return {}
        return {grade.name: grade.score if not grade.needs_manual_grade or grade.manual_score is not None else None
                for grade in notebook.grades}


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
