"""A notebook that did not finish (timed out, kernel died, grader out of memory), as formgrader shows it.

nbgrader removes the autograded notebook of a run that failed, and leaves the submission's test cells
in the gradebook marked ``needs_manual_grade`` (a first run) or holding the last run's scores (a
killed one): formgrader offered them for hand scores, accepted any (2 on a 1-point cell), and those
scores outlived the next regrade, so a right notebook could end at 0 or above its maximum. For such
a notebook :func:`record_unfinished` writes, where formgrader reads the autograded notebook,
:func:`not_graded_notebook`: the release's cells with the student's answers in theirs, every
autograded test cell shown "not graded: <status>" and no longer graded (formgrader draws no score
box for it), the model answers beside the answers graded by hand; and it empties the gradebook's
autograded cells (:func:`~coursetools.grading.gradebook.close_unfinished`). The answers graded by
hand can be scored as usual: their scores stand after the regrade that finishes, when the answer is
the same. The notebook holds no hidden test (the release has none); feedback is not written from it.
"""

from __future__ import annotations

import copy

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_output

from coursetools.common.cells import answer_texts, grade_id, graded_cells, is_autograded_test, nbgrader_meta
from coursetools.common.files import write_atomically
from coursetools.common.layout import Course
from coursetools.grading.gradebook import close_unfinished
from coursetools.grading.rubrics import add_rubrics

NOT_GRADED = "not graded"


def not_graded_text(status: str, details: list[str]) -> str:
    """What each test cell of a notebook that did not finish says."""
    why = f" ({'; '.join(details)})" if details else ""
    return (f"{NOT_GRADED}: {status}{why}. No test of this notebook has a score: grade the student again "
            "(make grade ... ARGS=\"--force --student <id>\") once the cause is fixed.")


def not_graded_notebook(release: NotebookNode, submission: NotebookNode, status: str,
                        details: list[str]) -> NotebookNode:
    """The release's cells, each answer as the student wrote it (outputs cleared), each autograded test
    cell not graded and saying why (:func:`not_graded_text`)."""
    answers = {grade_id(cell): cell for cell in submission.cells if nbgrader_meta(cell).get("solution")}
    notebook = copy.deepcopy(release)
    cells = []
    for cell in notebook.cells:
        meta = nbgrader_meta(cell)
        if meta.get("solution") and meta.get("grade_id") in answers:
            cell = copy.deepcopy(answers[meta["grade_id"]])
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        elif is_autograded_test(cell):
            cell.metadata["nbgrader"] = {**{key: meta[key] for key in meta if key != "points"}, "grade": False}
            cell.metadata["course"] = {NOT_GRADED: status}
            cell.outputs = [new_output("stream", name="stdout", text=not_graded_text(status, details) + "\n")]
        cells.append(cell)
    notebook.cells = cells
    notebook.metadata["course"] = {NOT_GRADED: status}
    return notebook


def record_unfinished(course: Course, assignment: str, student: str, release: NotebookNode,
                      submission: NotebookNode | None, status: str, details: list[str],
                      rubrics: dict[str, NotebookNode]) -> dict[str, float]:
    """Empty the gradebook's autograded cells of ``student``'s notebook that did not finish and, when there
    is a readable ``submission``, write :func:`not_graded_notebook` (with the ``rubrics``) for formgrader.
    Returns the instructor's overrides of test cells that were taken off."""
    automatic = {cell.grade_id for cell in graded_cells(release) if cell.automatic}
    answers = answer_texts(submission) if submission is not None else {}
    overrides = close_unfinished(course, assignment, student, automatic, answer_texts(release), answers)
    if submission is not None:
        path = course.notebook("autograded", assignment, student)
        path.parent.mkdir(parents=True, exist_ok=True)
        notebook = add_rubrics(not_graded_notebook(release, submission, status, details), rubrics)
        write_atomically(path, nbformat.writes(notebook))
    return overrides
