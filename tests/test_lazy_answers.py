"""The lazy audit as a test: answers that skip an exercise's work earn only what its text allows.

``tests/lazy_answers/<assignment>/<answer grade_id>__<name>.py`` is a whole answer cell that gets
its result without doing the exercise: a library one-liner, the visible test's own helper, a
hard-coded worked example, a fit to a table. Its first line, a comment, says which route it takes;
its second line declares what it earns, ``# earns <points>: <why>``. The points are 0 unless the
exercise's text allows the route (the reason says where). Where a rule that closes the route is
stated but not enforced yet, the line says what it earns now and once the rule lands:
``# earns <points>, then <points> once <rule> lands: <why>``.

Each file is graded as the copies of ``tests/test_wrong_answers.py`` are (one kernel per
assignment, model answers in the other cells, hidden blocks in the checker under the
assignment's own term seed), then scanned as ``make grade`` scans a submission (a use outside its
exercise's allow-list withholds that exercise's test cells, :mod:`coursetools.common.pyscan`), and
must earn what it declares (either number, for a rule still to
land; once it earns the second, a note says to drop the first): more is a lazy route the tests let
through. ``pytest -s`` prints each assignment's lazy points: per answer cell the most any of its lazy
answers earns, summed, out of the assignment's autograded points.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from coursetools.authoring import sources
from coursetools.authoring.sources import assignments
from coursetools.common.allowlist import allow_lists, answer_test_cells
from coursetools.common.cells import graded_cells
from coursetools.common.layout import REPO_ROOT
from coursetools.grading.scan import submission_findings

from course_helpers import answer_files, assignment_term, graded_outcomes, with_cells

LAZY_ANSWERS = REPO_ROOT / "tests" / "lazy_answers"
DECLARATION = re.compile(r"# earns (?P<now>\d+(?:\.\d+)?)(?:, then (?P<then>\d+(?:\.\d+)?) once \S.* lands)?: \S.*")
pytestmark = pytest.mark.slow


def declared_points(path: Path) -> tuple[float, float]:
    """What a lazy answer says it earns (its second line): now, and once the rule it names lands
    (the same number when it names none)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) < 2 or not lines[0].startswith("#") or not (match := DECLARATION.fullmatch(lines[1])):
        raise ValueError(f"{path.name}: the first line must be a comment naming the route, the second "
                         f"'# earns <points>: <why>' or '# earns <points>, then <points> once <rule> lands: <why>'; "
                         f"got {lines[:2]}")
    return float(match["now"]), float(match["then"] or match["now"])


def withheld_tests(assignment: str, source: nbformat.NotebookNode, answer: str, path: Path) -> set[str]:
    """The test cells that the file's uses outside its exercise's allow-list withhold when it is handed
    in as ``answer`` (what ``make grade`` withholds until a review clears it)."""
    release = nbformat.read(REPO_ROOT / "notebooks" / assignment / f"{assignment}.ipynb", as_version=4)
    submission = with_cells(release, {answer: path.read_text(encoding="utf-8")})
    tests = answer_test_cells(source)
    return {test for finding in submission_findings(release, submission, allow_lists(source)) if finding.exercise
            for test in tests[finding.exercise]}


@pytest.mark.parametrize("assignment", [a for a in assignments(REPO_ROOT) if answer_files(LAZY_ANSWERS, a)])
def test_lazy_answers_earn_what_they_declare(assignment: str):
    files = answer_files(LAZY_ANSWERS, assignment)
    declared = {path.name: declared_points(path) for paths in files.values() for path in paths}
    source = sources.read_text_source(sources.text_source(REPO_ROOT, assignment))
    points = {cell.grade_id: cell.points for cell in graded_cells(source) if cell.automatic}
    outcomes = graded_outcomes(assignment, source, files, assignment_term(assignment))
    withheld = {path.name: withheld_tests(assignment, source, answer, path) for answer, paths in files.items()
                for path in paths}
    earned = {name: sum(points[test] for test, passed in tests.items() if passed and test not in withheld[name])
              for name, tests in outcomes.items()}
    by_cell = {cell: max(earned[path.name] for path in paths) for cell, paths in files.items()}
    print(f"\n{assignment}: lazy answers earn {sum(by_cell.values()):g} of {sum(points.values()):g} autograded points "
          f"({', '.join(f'{name} {got:g}' for name, got in sorted(earned.items()))})")
    landed = [name for name, (now, then) in declared.items() if now != then and earned[name] == then]
    if landed:
        print(f"{assignment}: the rule each of these names has landed; declare only what it earns now: {landed}")
    wrong = {name: f"earns {earned[name]:g}, declares {' or '.join(f'{n:g}' for n in sorted(set(declared[name])))}"
             for name in declared if earned[name] not in declared[name]}
    assert not wrong, (f"{assignment}: lazy answers that do not earn what they declare (more: a lazy route the "
                       f"tests let through): {wrong}")
