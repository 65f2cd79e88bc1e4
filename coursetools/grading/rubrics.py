"""The model answer and rubric beside each answer graded by hand, for the instructor in formgrader.

A question graded by hand has, in the source, an answer cell holding its model answer and rubric
(``**Model answer and rubric ...**``); the release and the student's notebook hold the student's
answer in its place. After autograding, :func:`add_rubrics` puts a copy of the source's cell right
after the student's answer in the autograded notebook, the one formgrader shows, so that the grader
reads the rubric beside the answer (as Gradescope shows it). The copy is a plain markdown cell with
no nbgrader metadata (nothing graded, nothing to score), marked :data:`RUBRIC`; feedback drops it
(:func:`without_rubrics`, in :class:`coursetools.grading.nbgrader_plugins.HideHiddenTests`), so it
never reaches a student.
"""

from __future__ import annotations

import copy

from nbformat import NotebookNode
from nbformat.v4 import new_markdown_cell

from coursetools.common.cells import nbgrader_meta

RUBRIC = "rubric"  # cell.metadata["course"][RUBRIC] is True on a rubric copy
HEADING = "**For the grader (formgrader only; never in the student's feedback): the source's model answer and rubric.**"


def is_rubric(cell: NotebookNode) -> bool:
    return bool(cell.get("metadata", {}).get("course", {}).get(RUBRIC))


def hand_graded_answers(source: NotebookNode) -> dict[str, NotebookNode]:
    """grade_id -> the source's cell of every answer graded by hand (graded, written by the student,
    not a test)."""
    return {meta["grade_id"]: cell for cell in source.cells
            if (meta := nbgrader_meta(cell)).get("grade") and meta.get("solution")}


def rubric_cell(answer: NotebookNode) -> NotebookNode:
    """A markdown copy of the source's answer cell (code in a fence), headed :data:`HEADING`."""
    text = answer.source if answer.cell_type == "markdown" else f"```python\n{answer.source}\n```"
    return new_markdown_cell(f"{HEADING}\n\n{text}", metadata={"course": {RUBRIC: True}, "editable": False,
                                                                "deletable": False})


def add_rubrics(notebook: NotebookNode, answers: dict[str, NotebookNode]) -> NotebookNode:
    """``notebook`` with a rubric cell after each answer of ``answers`` (:func:`hand_graded_answers`);
    rubric cells it had already are replaced, so that grading again does not stack them."""
    notebook = copy.deepcopy(notebook)
    cells = []
    for cell in without_rubrics(notebook).cells:
        cells.append(cell)
        grade_id = nbgrader_meta(cell).get("grade_id")
        if grade_id in answers and nbgrader_meta(cell).get("grade"):
            cells.append(rubric_cell(answers[grade_id]))
    notebook.cells = cells
    return notebook


def without_rubrics(notebook: NotebookNode) -> NotebookNode:
    """``notebook`` with its rubric cells removed (in place; returned for chaining)."""
    notebook.cells = [cell for cell in notebook.cells if not is_rubric(cell)]
    return notebook
