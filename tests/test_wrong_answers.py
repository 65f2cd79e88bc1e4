"""Answers tried in one kernel: wrong answers fail a visible test, lazy copies earn nothing.

* ``tests/wrong_answers/<assignment>/<answer grade_id>__<short name>.py`` is a plausible wrong
  answer for that answer cell (the whole cell, as a student writes it; its first line, a comment,
  says what the mistake is). It must fail a **visible** test: an honest student learns of the
  mistake before grading. It is tried in what the student has: the *released* notebook.
* ``tests/copy_submissions/<assignment>/<answer grade_id>[__<name>].py`` is what a lazy student
  pastes (see the README there). It must earn nothing: every test cell that grades its answer
  cell, hidden tests included, fails. (``test_notebooks.py`` also grades one copy per answer cell
  through nbgrader.)

One kernel per assignment and kind (``coursetools/devtools/session.py``): the locked cells run with the
model answers typed in, then for each file its source replaces the answer, the test cells after
that answer run, and the model answer runs again. The model answers must pass every test; where
the hidden tests run (the copies), under a term seed of each assignment's own, not 0.
"""

from __future__ import annotations

import nbformat
import pytest

from coursetools.authoring import sources
from coursetools.authoring.sources import assignments
from coursetools.common.layout import REPO_ROOT

from course_helpers import answer_files, assignment_term, copy_submission_files, graded_outcomes

WRONG_ANSWERS = REPO_ROOT / "tests" / "wrong_answers"
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("assignment", [a for a in assignments(REPO_ROOT) if answer_files(WRONG_ANSWERS, a)])
def test_every_wrong_answer_fails_a_visible_test(assignment: str):
    files = answer_files(WRONG_ANSWERS, assignment)
    unnamed = [p.name for paths in files.values() for p in paths
               if not p.read_text(encoding="utf-8").startswith("#")]
    assert not unnamed, f"the first line must be a comment naming the mistake: {unnamed}"
    release = nbformat.read(REPO_ROOT / "notebooks" / assignment / f"{assignment}.ipynb", as_version=4)
    passed = [name for name, tests in graded_outcomes(assignment, release, files).items() if all(tests.values())]
    assert not passed, f"{assignment}: wrong answers that pass every visible test: {passed}"


@pytest.mark.parametrize("assignment", [a for a in assignments(REPO_ROOT) if copy_submission_files(a)])
def test_every_copy_earns_nothing(assignment: str):
    source = sources.read_text_source(sources.text_source(REPO_ROOT, assignment))
    outcomes = graded_outcomes(assignment, source, copy_submission_files(assignment), assignment_term(assignment))
    earning = {name: tests for name, tests in outcomes.items() if any(tests.values())}
    assert not earning, f"{assignment}: copies that pass a graded test cell (True = passed): {earning}"
