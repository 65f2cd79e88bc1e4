"""The nbgrader round trip for every assignment in ``solutions/``, in a throwaway course copy.

Every assignment's release generates; it leaks no solution, marker, hidden test or model answer; it equals
the committed ``notebooks/`` (so CI fails when they drift apart). Then the round trip (make test grades ch08,
make test-deep all twelve): the solution autograded as a submission runs top to bottom without an
error and earns every autograded point; the untouched release earns none; where a bug hunt hands out buggy code,
that code handed in unchanged earns nothing for its exercise; feedback for both shows no hidden test. Where the
assignment has copy submissions (``tests/copy_submissions/<id>/``): every exercise has one, a copy of the
closest public code earns nothing for its exercise, and costs no other exercise a point (two submissions:
copies in the odd exercises and answers in the even ones, and back).
"""

from __future__ import annotations

import nbformat
import pytest

from coursetools.authoring.sources import assignments
from coursetools.common.cells import nbgrader_meta
from coursetools.common.hidden import HIDDEN_MARKERS, split_hidden
from coursetools.common.layout import REPO_ROOT

from course_helpers import (
    CourseCopy,
    answered,
    autograded_test_ids,
    copy_submission_cells,
    exercises,
    given_code_answers,
    leaked_lines,
    normalised,
    notebook_text,
    secret_lines,
    with_cells,
)

ASSIGNMENTS = assignments(REPO_ROOT)
pytestmark = pytest.mark.slow
# Graded through nbgrader in make test: the GPT's chapter (about 45 s on one core); the first chapter is graded
# end to end by tests/test_class_end_to_end.py and tests/test_hostile_submissions.py.
# make test-deep grades every assignment. For all twelve, make test also generates each release here, and
# tests/test_each_hidden_block.py (every test cell, hidden blocks included, passes with the model answers) and
# tests/test_wrong_answers.py (every stub and copy fails every test cell of its exercise) run the checker's
# side of grading in one kernel each.
GRADED_IN_CI = {"ch08_decoder"}
GRADED = [a if a in GRADED_IN_CI else pytest.param(a, marks=pytest.mark.deep) for a in ASSIGNMENTS]
_released: dict[str, CourseCopy] = {}


def released_course(assignment: str, tmp_path_factory) -> CourseCopy:
    """``assignment`` generated in a throwaway course copy, once per test process."""
    if assignment not in _released:
        course = CourseCopy.create(tmp_path_factory.mktemp(assignment), assignment)
        course.generate()
        _released[assignment] = course
    return _released[assignment]


@pytest.fixture(scope="module", params=ASSIGNMENTS)
def release_copy(request, tmp_path_factory) -> CourseCopy:
    """One assignment generated, as ``make release`` does."""
    return released_course(request.param, tmp_path_factory)


@pytest.fixture(scope="module", params=GRADED)
def graded_course(request, tmp_path_factory) -> CourseCopy:
    """One assignment generated, then graded for the solution, the stub, the given code and two copy students."""
    course = released_course(request.param, tmp_path_factory)
    course.submit("solution", course.source)
    course.submit("stub", course.release)
    correct = answered(nbformat.read(course.release, as_version=4), nbformat.read(course.source, as_version=4))
    given = given_code_answers(nbformat.read(course.source, as_version=4))
    if given:
        course.submit("given_code", with_cells(correct, given))
    copies = copy_submission_cells(course.assignment)
    if copies:
        for parity, (student, _) in enumerate(COPY_STUDENTS):
            copied = {cell: copies[cell] for k, (answers, _) in enumerate(_exercises(course)) if k % 2 == parity
                      for cell in answers if cell in copies}
            course.submit(student, with_cells(correct, copied))
    result = course.autograde()
    assert result.returncode == 0, f"autograde failed:\n{result.stdout}\n{result.stderr}"
    course.feedback()
    return course


def test_there_are_assignments():
    assert ASSIGNMENTS, "solutions/ holds no assignment"


def test_release_leaks_nothing(release_copy: CourseCopy):
    leaked = leaked_lines(notebook_text(release_copy.release), secret_lines(release_copy.source))
    assert not leaked, f"the student release contains instructor-only lines: {leaked}"


def test_committed_release_is_up_to_date(release_copy: CourseCopy):
    committed = REPO_ROOT / "notebooks" / release_copy.assignment / f"{release_copy.assignment}.ipynb"
    assert committed.is_file(), f"{committed} is missing: run `make release`"
    assert normalised(committed) == normalised(release_copy.release), (
        f"{committed.relative_to(REPO_ROOT)} differs from a fresh release of solutions/: run `make release`")


def test_solution_runs_top_to_bottom(graded_course: CourseCopy):
    nb = graded_course.autograded("solution")
    errors = [(i, o.ename, o.evalue) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"]
    assert not errors, f"the solution notebook raised in cells: {errors}"


def test_solution_earns_every_autograded_point(graded_course: CourseCopy):
    earned, possible = graded_course.autograded_points("solution")
    assert possible > 0
    assert earned == possible, f"solution earned {earned} of {possible}: {graded_course.scores('solution')}"


def test_stub_earns_no_autograded_point(graded_course: CourseCopy):
    earned, possible = graded_course.autograded_points("stub")
    assert possible > 0
    assert earned == 0, f"the unedited release earned {earned} of {possible}: {graded_course.scores('stub')}"


def test_notebook_has_tests_and_free_response(release_copy: CourseCopy):
    nb = nbformat.read(release_copy.source, as_version=4)
    meta = [nbgrader_meta(c) for c in nb.cells]
    tests = autograded_test_ids(release_copy.source)
    free = [m for c, m in zip(nb.cells, meta) if c.cell_type == "markdown" and m.get("grade") and m.get("solution")]
    hidden = [c for c in nb.cells if split_hidden(c.source)[1]]
    assert 3 <= len(exercises(nb)) <= 8, f"expected 3-8 graded exercises or parts, found {len(exercises(nb))}"
    assert free, "every chapter has at least one free-response question graded by hand"
    assert len(hidden) == len(tests), "every test cell has a hidden block"


def test_given_code_earns_nothing(graded_course: CourseCopy):
    """Every bug hunt's buggy code, handed in unchanged (model answers elsewhere), scores 0 for its
    exercise and costs no other exercise a point."""
    nb = nbformat.read(graded_course.source, as_version=4)
    given = given_code_answers(nb)
    if not given:
        pytest.skip(f"{graded_course.assignment} hands out no buggy code")
    scores = graded_course.scores("given_code")
    for answers, tests in _exercises(graded_course):
        for test in tests:
            score, max_score = scores[test]
            if set(answers) & set(given):
                assert score == 0, f"{test}: the given buggy code, handed in unchanged, earned {score} of {max_score}"
            else:
                assert score == max_score, (f"{test}: a correct answer earned {score} of {max_score} beside the "
                                            "given code")


COPY_STUDENTS = [("copies_in_odd_exercises", 0), ("copies_in_even_exercises", 1)]


def _exercises(course: CourseCopy) -> list[tuple[list[str], list[str]]]:
    return exercises(nbformat.read(course.source, as_version=4))


def _needs_copies(course: CourseCopy) -> dict[str, str]:
    copies = copy_submission_cells(course.assignment)
    if not copies:
        pytest.skip(f"{course.assignment} has no tests/copy_submissions/ folder yet")
    return copies


def test_every_exercise_has_a_copy_submission(graded_course: CourseCopy):
    copies = _needs_copies(graded_course)
    answer_cells = {cell for answers, _ in _exercises(graded_course) for cell in answers}
    assert set(copies) <= answer_cells, f"copy files that name no answer cell: {sorted(set(copies) - answer_cells)}"
    missing = [tests for answers, tests in _exercises(graded_course) if not set(answers) & set(copies)]
    assert not missing, f"exercises without a copy submission: {missing}"


@pytest.mark.parametrize("student, parity", COPY_STUDENTS)
def test_a_copy_earns_nothing_and_costs_only_its_exercise(graded_course: CourseCopy, student: str, parity: int):
    _needs_copies(graded_course)
    scores = graded_course.scores(student)
    for k, (_, tests) in enumerate(_exercises(graded_course)):
        for test in tests:
            score, max_score = scores[test]
            if k % 2 == parity:
                assert score == 0, f"{test}: a copy of the closest public code earned {score} of {max_score}"
            else:
                assert score == max_score, (f"{test}: a correct answer earned {score} of {max_score} beside copies "
                                            "in other exercises: its grading depends on another exercise")


@pytest.mark.parametrize("student", ["solution", "stub"])
def test_feedback_shows_no_hidden_test(graded_course: CourseCopy, student: str):
    html = graded_course.feedback_html(student)
    leaked = leaked_lines(html, secret_lines(graded_course.source) - _solution_lines(graded_course, student),
                          is_html=True, markers=HIDDEN_MARKERS)
    assert not leaked, f"feedback for {student} shows hidden lines: {leaked}"


def _solution_lines(course: CourseCopy, student: str) -> set[str]:
    """The solution's own code is what that student submitted: it may appear in its feedback."""
    if student != "solution":
        return set()
    return {line.strip() for c in nbformat.read(course.source, as_version=4).cells
            if nbgrader_meta(c).get("solution")
            for line in c.source.splitlines()}
