"""An instructor's second term (issue 34), without a kernel: hand grades after a regrade, the LMS
uploads, submission times, the report's names and links, reviews of flagged students.

The end-to-end proof (a test changed, released, committed and regraded) is the second term of
``test_class_end_to_end.py``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_markdown_cell, new_notebook

from coursetools.gradebook import gradebook_scores, keep_hand_grades
from coursetools.layout import REPO_ROOT, Course

A = "tiny"


@pytest.fixture()
def course(tmp_path, monkeypatch) -> Course:
    # creating a gradebook runs the environment's `alembic` (coursetools/README.md)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    shutil.copy(REPO_ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    (tmp_path / "grading").mkdir()
    return Course(tmp_path)


def written_answer(text: str) -> nbformat.NotebookNode:
    meta = {"grade": True, "grade_id": "why", "locked": False, "points": 3, "schema_version": 3, "solution": True}
    return new_notebook(cells=[new_markdown_cell(text, metadata={"nbgrader": meta})])


def regraded_gradebook(course: Course, students: dict[str, str]) -> None:
    """A gradebook as nbgrader's autograde leaves it when it grades again students whose written
    answer ``why`` was scored 2 by hand: ``manual_score`` kept, ``needs_manual_grade`` set again;
    each student's autograded notebook holds the text in ``students``."""
    from nbgrader.api import Gradebook

    with Gradebook(course.nbgrader.db_url) as gradebook:
        gradebook.update_or_create_assignment(A)
        gradebook.add_notebook(A, A)
        gradebook.add_grade_cell("why", A, A, max_score=3, cell_type="markdown")
        gradebook.add_solution_cell("why", A, A)
        for student, text in students.items():
            gradebook.add_student(student)
            gradebook.add_submission(A, student)
            grade = gradebook.find_grade("why", A, A, student)
            grade.manual_score, grade.auto_score, grade.needs_manual_grade = 2, None, True
            nbformat.write(written_answer(text), course.notebook("autograded", A, student))
        gradebook.db.commit()


def needs_manual_grade(course: Course, student: str) -> bool:
    from nbgrader.api import Gradebook

    with Gradebook(course.nbgrader.db_url) as gradebook:
        return gradebook.find_grade("why", A, A, student).needs_manual_grade


def test_a_hand_grade_stands_after_a_regrade_while_its_answer_is_unchanged(course):
    """Issue 34: after a regrade formgrader listed every hand-graded student as needing a manual
    grade (nbgrader marks a grade holding a manual score for review) while the CSV said 0 left."""
    for student in ("ann", "bob"):
        course.folder("autograded", A, student).mkdir(parents=True)
    regraded_gradebook(course, {"ann": "Because addition commutes.", "bob": "I rewrote my answer."})
    assert gradebook_scores(course, A, "ann") == {"why": None}  # as formgrader shows it: to grade
    assert keep_hand_grades(course, A, "ann", {"why": "Because addition commutes."}) == []
    assert keep_hand_grades(course, A, "bob", {"why": "My first answer."}) == ["why"]
    assert (needs_manual_grade(course, "ann"), gradebook_scores(course, A, "ann")) == (False, {"why": 2})
    assert (needs_manual_grade(course, "bob"), gradebook_scores(course, A, "bob")) == (True, {"why": None})
