"""The feedback page names what it scores as the notebook does, and says which given cells were put back.

Issue 34 (items 8 and 12): nbgrader's feedback page listed "Test cell" for every entry of its table
of contents, and a student whose edited or deleted test cells were put back before grading was
never told. Grades a small assignment (one exercise in two graded parts, a hand-graded question)
for an honest student and one who edited a test cell and deleted another (``grading.grade`` then
``grading.feedback``, as ``make grade`` and ``make feedback`` do), and reads both pages.
"""

from __future__ import annotations

import copy
import re
from html import unescape

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from coursetools.common.cells import nbgrader_meta
from coursetools.grading import autograde
from coursetools.grading.nbgrader_plugins import put_back_lines
from coursetools.grading.scan import locked_cell_changes, locked_changes_in

from course_helpers import HIDDEN_LINE, CourseCopy, require_sandbox

A = "named"


def code(grade_id: str, body: str, *, points: int = 0, solution: bool = False) -> str:
    """A code cell of a source in the course's format."""
    graded = "true" if points else "false"
    return (f"```{{code-cell}}\n---\nnbgrader:\n  grade: {graded}\n  grade_id: {grade_id}\n"
            f"  locked: {'false' if solution else 'true'}\n" + (f"  points: {points}\n" if points else "")
            + f"  schema_version: 3\n  solution: {'true' if solution else 'false'}\n---\n{body}\n```\n")


SOURCE = ("---\nkernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n"
          + code("setup", "import torch") + "\n+++\n\n## Exercise 1: adding (3 points)\n\n"
          + code("add", "def add(a, b):\n    ### BEGIN SOLUTION\n    return a + b\n    ### END SOLUTION",
                 solution=True)
          + code("test_add_small", 'assert add(1, 1) == 2, "add(1, 1) should be 2"', points=2)
          + code("test_add_large", f"assert add(2, 3) == 5\n### BEGIN HIDDEN TESTS\n{HIDDEN_LINE}\n"
                                   "### END HIDDEN TESTS", points=1)
          + "\n+++\n\n## Question 2: why does it work? (1 point, graded by hand)\n\n"
          + '+++ {"nbgrader": {"grade": true, "grade_id": "why", "locked": false, "points": 1, '
            '"schema_version": 3, "solution": true}}\n\nBecause addition is commutative.\n')
TITLES = ["Exercise 1: adding, part 1 of 2", "Exercise 1: adding, part 2 of 2",
          "Question 2: why does it work? (graded by hand)"]


def answered(release: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The release with a correct answer typed in."""
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") == "add":
            cell.source = "def add(a, b):\n    return a + b"
    return nb


def tampered(release: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The release answered, its first test cell edited to pass and its second deleted."""
    nb = answered(release)
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") == "test_add_small":
            cell.source = "pass"
    nb.cells = [cell for cell in nb.cells if nbgrader_meta(cell).get("grade_id") != "test_add_large"]
    return nb


def toc(html: str) -> list[str]:
    """The entries of a feedback page's table of contents, as text."""
    listing = html.split('<div id="toc">')[1].split("</ol>")[0]
    return [re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", item))).strip()
            for item in re.findall(r"<li[^>]*>(.*?)</li>", listing, flags=re.DOTALL)]


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, str]:
    """Each student's feedback page: ``honest`` (answered, nothing else touched) and ``edits``."""
    require_sandbox()
    copy_ = CourseCopy.create(tmp_path_factory.mktemp("course"), A, source_text=SOURCE)
    release = autograde.prepare(copy_.course, A)
    copy_.submit("honest", answered(release))
    copy_.submit("edits", tampered(release))
    autograde.grade(copy_.course, A, progress=lambda _: None)
    files, withheld = autograde.feedback(copy_.course, A)
    assert len(files) == 2 and not withheld, (files, withheld)
    return {student: copy_.course.feedback_page(A, student).read_text(encoding="utf-8")
            for student in ("honest", "edits")}


@pytest.mark.slow
def test_the_table_of_contents_names_each_exercise_as_the_notebook_does(pages):
    for html in pages.values():
        entries = toc(html)
        assert not any("Test cell" in entry or "Written response" in entry for entry in entries), entries
        scored = [entry for entry in entries if not entry.startswith("Comment on ")]
        assert [entry.split(" (Score")[0] for entry in scored] == TITLES
        assert all(entry.removeprefix("Comment on ") in [t.removesuffix(" (graded by hand)") for t in TITLES]
                   for entry in entries if entry not in scored), entries
        assert entries[0].endswith("(Score: 2.0 / 2.0)"), entries


@pytest.mark.slow
def test_the_feedback_says_which_given_cells_were_put_back(pages):
    assert 'id="put-back"' not in pages["honest"]
    note = unescape(re.sub(r"<[^>]+>", "", pages["edits"].split('id="put-back"')[1].split("</div>")[0]))
    assert "You edited the test cell of “Exercise 1: adding, part 1 of 2”" in note
    assert "You deleted the test cell of “Exercise 1: adding, part 2 of 2”" in note
    assert "put back as released" in note
    assert HIDDEN_LINE not in pages["edits"]


def test_put_back_lines_name_cells_by_exercise_and_given_cells_by_heading():
    release = new_notebook(cells=[
        new_code_cell("import torch", metadata={"nbgrader": {"grade_id": "setup", "locked": True}}),
        new_markdown_cell("## Exercise 1: adding (1 point)"),
        new_code_cell("x = 1", metadata={"nbgrader": {"grade_id": "given", "locked": True}}),
        new_code_cell("assert 1", metadata={"nbgrader": {"grade_id": "t", "grade": True, "locked": True,
                                                          "points": 1}}),
    ])
    changes = locked_changes_in(["tampered with torch.allclose", "edited locked cell t", "deleted locked cell setup",
                                 "deleted locked cell given", "edited locked cell gone_since"])
    assert changes == [("edited", "t"), ("deleted", "setup"), ("deleted", "given"), ("edited", "gone_since")]
    assert put_back_lines(changes, release) == [
        "You edited the test cell of “Exercise 1: adding”.",
        "You deleted a given cell at the start of the notebook.",
        "You deleted a given cell under “Exercise 1: adding”.",
        "You edited a given cell.",
    ]
    assert put_back_lines([], release) == []


def test_the_scan_and_the_feedback_read_the_same_phrases():
    release = new_notebook(cells=[new_code_cell("assert 1", metadata={"nbgrader": {
        "grade_id": "t", "grade": True, "locked": True, "points": 1, "checksum": "x"}})])
    assert locked_changes_in(locked_cell_changes(release, new_notebook(cells=[]))) == [("deleted", "t")]
