"""The course's nbgrader settings, proven on a tiny assignment graded by the real pipeline.

* stderr output (a torch ``UserWarning``) does not zero a correct answer;
* a deleted test cell comes back and is graded;
* a custom kernel name in a submission cannot break grading;
* feedback shows the failing hidden test's message, never its code or traceback.
"""

from __future__ import annotations

import copy

import nbformat
import pytest

from course_helpers import HIDDEN_LINE, TINY_SOURCE, CourseCopy, leaked_lines, secret_lines

# make test-deep: the hostile submissions (make test) grade stderr warnings, a deleted test cell and the feedback
# without hidden lines on a real assignment; this module adds a custom kernel name, in about 45 s.
pytestmark = [pytest.mark.slow, pytest.mark.deep]


def answer(nb_: nbformat.NotebookNode, body: str) -> nbformat.NotebookNode:
    """A submission whose ``add`` cell is replaced by ``body``."""
    submission = copy.deepcopy(nb_)
    for cell in submission.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "add":
            cell.source = body
    return submission


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> CourseCopy:
    course = CourseCopy.create(tmp_path_factory.mktemp("tiny"), "tiny", source_text=TINY_SOURCE)
    release = nbformat.read(course.generate(), as_version=4)

    warns = answer(release, "import warnings, sys\n"
                            "def add(a, b):\n"
                            "    warnings.warn('a UserWarning on stderr')\n"
                            "    print('debug', file=sys.stderr)\n"
                            "    return a + b")
    course.submit("warns", warns)

    only_small = answer(release, "def add(a, b):\n    return 2 if (a, b) == (1, 1) else 0")
    course.submit("hidden_fail", only_small)

    deleted = answer(release, "def add(a, b):\n    return a + b")
    deleted.cells = [c for c in deleted.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "test_add"]
    course.submit("deleted_test", deleted)

    kernel = answer(release, "def add(a, b):\n    return a + b")
    kernel.metadata["kernelspec"] = {"name": "no-such-kernel", "display_name": "X", "language": "python"}
    course.submit("odd_kernel", kernel)

    result = course.autograde()
    assert result.returncode == 0, result.stderr
    course.feedback()
    return course


def test_stderr_warning_keeps_the_points(graded: CourseCopy):
    assert graded.scores("warns")["test_add"] == (2.0, 2.0)


def test_hidden_failure_scores_zero(graded: CourseCopy):
    assert graded.scores("hidden_fail")["test_add"] == (0.0, 2.0)


def test_deleted_test_cell_is_restored_and_graded(graded: CourseCopy):
    assert graded.scores("deleted_test")["test_add"] == (2.0, 2.0)


def test_custom_kernel_name_cannot_break_grading(graded: CourseCopy):
    assert graded.scores("odd_kernel")["test_add"] == (2.0, 2.0)


def test_feedback_gives_the_message_not_the_hidden_code(graded: CourseCopy):
    html = graded.feedback_html("hidden_fail")
    assert "add is wrong for larger numbers" in html, "the failing test's message should reach the student"
    assert "hidden tests: graded, not shown" in html
    assert not leaked_lines(html, secret_lines(graded.source), is_html=True)
    assert "secret_operand" not in html and "add(40, 2)" not in html


def test_autograded_notebook_still_holds_hidden_tests(graded: CourseCopy):
    """The instructor's copy keeps them: only feedback is cleaned (so never hand back autograded/)."""
    text = "\n".join(c.source for c in graded.autograded("hidden_fail").cells)
    assert HIDDEN_LINE in text
