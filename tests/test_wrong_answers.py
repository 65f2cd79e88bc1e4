"""Answers tried in one kernel: lazy copies and stubs earn nothing; wrong answers say their mistake.

* ``tests/wrong_answers/<assignment>/<answer grade_id>__<short name>.py`` is a plausible wrong
  answer for that answer cell (the whole cell, as a student writes it; its first line, a comment,
  says what the mistake is). It must fail a **visible** test: an honest student learns of the
  mistake before grading. tests/test_surprises.py checks that, in the same run that checks that no
  part's hidden block fails it when its visible part passed.
* ``tests/copy_submissions/<assignment>/<answer grade_id>[__<name>].py`` is what a lazy student
  pastes (see the README there). It must earn nothing: every test cell that grades its answer
  cell, hidden tests included, fails. So must each answer cell as released (the stub).
  (``test_notebooks.py`` also grades one copy per answer cell through nbgrader.)

One kernel per assignment (``coursetools/devtools/session.py``): the locked cells run with the
model answers typed in, then for each file its source replaces the answer, the test cells after
that answer run, and the model answer runs again. The model answers must pass every test, the
hidden blocks drawing their inputs under a term seed of each assignment's own, not 0.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from coursetools.authoring import sources
from coursetools.authoring.sources import assignments
from coursetools.common.cells import nbgrader_meta
from coursetools.common.layout import REPO_ROOT

from course_helpers import answer_files, assignment_term, copy_submission_files, graded_outcomes

WRONG_ANSWERS = REPO_ROOT / "tests" / "wrong_answers"
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("assignment", [a for a in assignments(REPO_ROOT) if answer_files(WRONG_ANSWERS, a)])
def test_every_wrong_answer_says_its_mistake(assignment: str):
    """Its first line is a comment naming the mistake. That each fails a visible test is checked where the
    surprise search runs it (tests/test_surprises.py: one kernel for both)."""
    files = answer_files(WRONG_ANSWERS, assignment)
    unnamed = [p.name for paths in files.values() for p in paths
               if not p.read_text(encoding="utf-8").startswith("#")]
    assert not unnamed, f"the first line must be a comment naming the mistake: {unnamed}"


def release_stubs(assignment: str, folder: Path) -> dict[str, list[Path]]:
    """Each answer cell of the committed release as a student receives it (the stub), written to
    ``folder/<grade_id>__release_stub.py``, by answer cell."""
    release = nbformat.read(REPO_ROOT / "notebooks" / assignment / f"{assignment}.ipynb", as_version=4)
    stubs: dict[str, list[Path]] = {}
    for cell in release.cells:
        if cell.cell_type == "code" and nbgrader_meta(cell).get("solution"):
            path = folder / f"{nbgrader_meta(cell)['grade_id']}__release_stub.py"
            path.write_text(cell.source, encoding="utf-8")
            stubs[nbgrader_meta(cell)["grade_id"]] = [path]
    return stubs


@pytest.mark.parametrize("assignment", assignments(REPO_ROOT))
def test_every_copy_and_stub_earns_nothing(assignment: str, tmp_path: Path):
    """The copies, and each answer cell left as released (the stub; tests/test_notebooks.py grades whole stub
    notebooks through nbgrader, for every assignment in make test-deep)."""
    stubs = release_stubs(assignment, tmp_path)
    assert stubs, f"{assignment}: the release has no answer cell"
    tries = copy_submission_files(assignment)
    for cell, paths in stubs.items():
        tries[cell] = tries.get(cell, []) + paths
    source = sources.read_text_source(sources.text_source(REPO_ROOT, assignment))
    outcomes = graded_outcomes(assignment, source, tries, assignment_term(assignment))
    earning = {name: tests for name, tests in outcomes.items() if any(tests.values())}
    assert not earning, f"{assignment}: copies or stubs that pass a graded test cell (True = passed): {earning}"
    assert {name for name in outcomes if name.endswith("__release_stub.py")} == \
        {path.name for paths in stubs.values() for path in paths}, "every stub was tried"
