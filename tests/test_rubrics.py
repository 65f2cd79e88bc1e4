"""The model answer and rubric beside each answer graded by hand (formgrader), never in feedback."""

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from coursetools.grading.nbgrader_plugins import HideHiddenTests
from coursetools.grading.rubrics import HEADING, add_rubrics, hand_graded_answers, is_rubric


def graded(cell, grade_id, **meta):
    cell.metadata["nbgrader"] = {"grade_id": grade_id, "schema_version": 3, **meta}
    return cell


def notebooks():
    """(source, autograded): one question graded by hand and one autograded test."""
    source = new_notebook(cells=[
        new_markdown_cell("## Exercise 1"),
        graded(new_code_cell("assert True"), "test_one", grade=True, solution=False, locked=True, points=1),
        graded(new_markdown_cell("**Model answer and rubric.** 2 points if ..."), "why", grade=True, solution=True,
               locked=False, points=2),
    ])
    autograded = nbformat.from_dict(source)
    autograded.cells[2].source = "the student's answer"
    return source, autograded


def test_the_rubric_follows_the_answer_once_however_often_it_is_graded():
    source, autograded = notebooks()
    answers = hand_graded_answers(source)
    assert list(answers) == ["why"]
    once = add_rubrics(autograded, answers)
    twice = add_rubrics(once, answers)
    for notebook in (once, twice):
        assert [is_rubric(cell) for cell in notebook.cells] == [False, False, False, True]
        assert notebook.cells[2].source == "the student's answer"
        assert notebook.cells[3].source == f"{HEADING}\n\n**Model answer and rubric.** 2 points if ..."
        assert "nbgrader" not in notebook.cells[3].metadata  # nothing to grade, nothing nbgrader checks
    assert len(autograded.cells) == 3  # the notebook given is left as it was


def test_feedback_drops_the_rubric():
    source, autograded = notebooks()
    shown, _ = HideHiddenTests().preprocess(add_rubrics(autograded, hand_graded_answers(source)), {})
    assert not any(is_rubric(cell) or HEADING in cell.source for cell in shown.cells)
    assert len(shown.cells) == 3
