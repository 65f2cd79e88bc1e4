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

import hashlib
from pathlib import Path

import nbformat
import pytest

from coursetools.authoring import sources
from coursetools.authoring.sources import assignments
from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.session import KernelSession, notebook_plan

from course_helpers import copy_submission_files

WRONG_ANSWERS = REPO_ROOT / "tests" / "wrong_answers"
pytestmark = pytest.mark.slow


def wrong_answer_files(assignment: str) -> dict[str, list[Path]]:
    """answer grade_id -> its wrong-answer files."""
    found: dict[str, list[Path]] = {}
    for path in sorted((WRONG_ANSWERS / assignment).glob("*.py")):
        found.setdefault(path.stem.split("__")[0], []).append(path)
    return found


def graded_outcomes(assignment: str, notebook: nbformat.NotebookNode,
                  tries: dict[str, list[Path]], term_seed: int = 0) -> dict[str, list[bool]]:
    """file name -> whether each test cell grading its answer cell passed (an answer that raises
    fails them all). Runs ``notebook``'s cells with the source's model answers, hidden blocks drawing
    their seeds from ``term_seed``; raises when a model answer fails a test of ``notebook``, or a file
    names no answer cell."""
    model = {answer.grade_id: answer.source
             for answer in notebook_plan(sources.read_text_source(sources.text_source(REPO_ROOT, assignment)))}
    left = dict(tries)
    outcomes: dict[str, list[bool]] = {}
    with KernelSession(REPO_ROOT, term_seed=term_seed) as kernel:
        for answer in notebook_plan(notebook):
            kernel.reach(answer, model[answer.grade_id])
            failing = kernel.failing_tests(answer)
            assert not failing, f"{assignment}: the model answer {answer.grade_id} fails {failing}"
            for path in left.pop(answer.grade_id, []):
                ran = kernel.run(path.read_text(encoding="utf-8")).passed
                outcomes[path.name] = [ran and kernel.run(test, locked=True).passed for _, test in answer.tests]
                kernel.run(model[answer.grade_id])
    assert not left, f"{assignment}: files that name no answer cell: {sorted(left)}"
    return outcomes


@pytest.mark.parametrize("assignment", [a for a in assignments(REPO_ROOT) if wrong_answer_files(a)])
def test_every_wrong_answer_fails_a_visible_test(assignment: str):
    files = wrong_answer_files(assignment)
    unnamed = [p.name for paths in files.values() for p in paths
               if not p.read_text(encoding="utf-8").startswith("#")]
    assert not unnamed, f"the first line must be a comment naming the mistake: {unnamed}"
    release = nbformat.read(REPO_ROOT / "notebooks" / assignment / f"{assignment}.ipynb", as_version=4)
    passed = [name for name, tests in graded_outcomes(assignment, release, files).items() if all(tests)]
    assert not passed, f"{assignment}: wrong answers that pass every visible test: {passed}"


@pytest.mark.parametrize("assignment", [a for a in assignments(REPO_ROOT) if copy_submission_files(a)])
def test_every_copy_earns_nothing(assignment: str):
    source = sources.read_text_source(sources.text_source(REPO_ROOT, assignment))
    # a term seed of each assignment's own (not 0): the model answers must earn every point whatever the
    # term (an integer seed passed to a hidden helper as written once broke ch03 under every other term)
    term = int(hashlib.sha256(assignment.encode()).hexdigest()[:6], 16) + 1
    outcomes = graded_outcomes(assignment, source, copy_submission_files(assignment), term)
    earning = {name: tests for name, tests in outcomes.items()
               if any(tests)}
    assert not earning, f"{assignment}: copies that pass a graded test cell (True = passed): {earning}"
