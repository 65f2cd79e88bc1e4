"""nbgrader's gradebook, as grading reads it: the scores of a submission, hand grades that still stand
after a regrade, the cells of a notebook that did not finish, flags for formgrader, and a backup first.

A score is read exactly as formgrader shows it: a grade that nbgrader marks ``needs_manual_grade``
has no score yet, whatever it holds, so that the course's CSV and formgrader agree on what is left
to grade by hand. A hand score outside a cell's points (formgrader accepts 2 on a 1-point cell) is
no score either: it is refused wherever the course writes scores (:func:`keep_hand_grades`,
:func:`restore_overrides`) and reported where formgrader wrote it (:attr:`Scores.refused`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import nbformat

from coursetools.common.cells import answer_texts
from coursetools.common.layout import Course


@dataclass
class Scores:
    """A submission's scores as formgrader shows them (grade_id -> score; None: still to grade), and the
    hand scores not counted because they are outside their cell's points (grade_id -> why)."""

    scores: dict[str, float | None] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)


def out_of_range(score: float | None, points: float) -> str | None:
    """Why a hand score cannot stand (None when it can, or there is none)."""
    if score is None or 0 <= score <= points:
        return None
    return f"a hand score of {score:g} outside its 0 to {points:g} points (written in formgrader): not counted"


def class_scores(course: Course, assignment: str, students: list[str]) -> dict[str, Scores]:
    """Each student's :class:`Scores` (empty when the gradebook holds no submission of theirs), read in
    one session of the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry  # SQLAlchemy: imported only when read

    found = {}
    with Gradebook(course.nbgrader.db_url) as gradebook:
        for student in students:
            try:
                grades = gradebook.find_submission_notebook(assignment, assignment, student).grades
            except MissingEntry:
                found[student] = Scores()
                continue
            refused = {grade.name: why for grade in grades
                       if (why := out_of_range(grade.manual_score, grade.max_score))}
            found[student] = Scores({grade.name: None if grade.needs_manual_grade or grade.name in refused
                                     else grade.score for grade in grades}, refused)
    return found


def gradebook_scores(course: Course, assignment: str, student: str) -> dict[str, float | None]:
    """grade_id -> score of ``student``'s submission (None: still to grade by hand); empty when the
    gradebook holds no such submission."""
    return class_scores(course, assignment, [student])[student].scores


def keep_hand_grades(course: Course, assignment: str, student: str, graded_before: dict[str, str]) -> list[str]:
    """After ``student`` was autograded again, let each hand grade stand whose answer is unchanged;
    return the hand-graded answers whose text changed since they were scored (they wait for a new
    hand grade, the old score still shown in formgrader).

    nbgrader's autograde marks every grade that holds a ``manual_score`` as needing a manual grade
    again (``SaveAutoGrades``: "if there was previously a manual grade ... mark this as needing
    review"), so after a regrade formgrader listed every hand-graded student as still to grade.
    ``graded_before``: the hand-graded answers (grade_id -> text) of the autograded notebook the
    hand grades were given on, read before the regrade (:func:`coursetools.common.cells.answer_texts`).
    A hand grade outside its cell's points is refused: it stays marked (:func:`out_of_range`). A test
    cell whose score an instructor overrode stays marked: its test or the code it grades may
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
            if grade.name not in graded_now or grade.manual_score is None:
                continue
            unchanged = graded_before.get(grade.name) == graded_now[grade.name]
            grade.needs_manual_grade = not unchanged or out_of_range(grade.manual_score, grade.max_score) is not None
            if not unchanged:
                changed.append(grade.name)
        gradebook.db.commit()
    return changed


def close_unfinished(course: Course, assignment: str, student: str, automatic: set[str],
                     stubs: dict[str, str], answers: dict[str, str]) -> dict[str, float]:
    """After a run that did not finish (timed out, died, out of memory): no autograded test cell of
    ``student``'s submission has a score, or waits for one in formgrader (nbgrader left them marked
    ``needs_manual_grade``, or holding the last run's scores). Returns the instructor's overrides of
    those cells, taken off (:func:`restore_overrides` puts them back when a regrade finishes).

    ``automatic``: the autograded test cells' grade_ids. The hand-graded answers without a hand score
    are scored as autograde would: 0 for the release's text (``stubs``), else waiting for a hand grade
    (``answers``: the submission's answers, grade_id -> text).
    """
    from nbgrader.api import Gradebook, MissingEntry

    overrides = {}
    with Gradebook(course.nbgrader.db_url) as gradebook:
        try:
            grades = gradebook.find_submission_notebook(assignment, assignment, student).grades
        except MissingEntry:
            return {}
        for grade in grades:
            if grade.name in automatic:
                if grade.manual_score is not None:
                    overrides[grade.name] = grade.manual_score
                grade.auto_score = grade.manual_score = grade.extra_credit = None
                grade.needs_manual_grade = False
            elif grade.manual_score is None:
                untouched = answers.get(grade.name) == stubs.get(grade.name)
                grade.auto_score = 0.0 if untouched else None
                grade.needs_manual_grade = not untouched
        gradebook.db.commit()
    return overrides


def restore_overrides(course: Course, assignment: str, student: str, automatic: set[str],
                      overrides: dict[str, float]) -> None:
    """Once a regrade of a notebook that had not finished has finished: the autograded test cells keep
    the scores the tests gave, and only the instructor's ``overrides`` from before (marked to look at
    again, as after any regrade); a hand score written on them meanwhile is replaced."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.nbgrader.db_url) as gradebook:
        try:
            grades = gradebook.find_submission_notebook(assignment, assignment, student).grades
        except MissingEntry:
            return
        for grade in grades:
            if grade.name in automatic:
                kept = overrides.get(grade.name)
                grade.manual_score = None if out_of_range(kept, grade.max_score) else kept
                grade.needs_manual_grade = grade.manual_score is not None
        gradebook.db.commit()


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
