"""Hidden inputs that change each term (coursetools/checker/term.py).

* Per hidden block, every assignment: tests/test_each_hidden_block.py (one kernel, no nbgrader).
* Through nbgrader: the same submissions graded under two term seeds are called with other inputs (a recorder in
  the kernel) and earn the same points. make test-deep grades ch04 under two terms; COURSE_TERMS=all grades every
  assignment, COURSE_TERMS=ch01_tokens,ch05_multi_head the ones named.
"""

from __future__ import annotations

import hashlib
import os
import re

import nbformat
import pytest
from test_hidden_attacks import appended, wrap_answers

from coursetools.authoring.sources import assignments
from coursetools.checker.term import term_seeds
from coursetools.cli import main
from coursetools.common.layout import REPO_ROOT

from course_helpers import CourseCopy, answered, require_sandbox

_CHOSEN = os.environ.get("COURSE_TERMS", "ch04_self_attention")
ASSIGNMENTS = [a for a in assignments(REPO_ROOT) if _CHOSEN == "all" or a in _CHOSEN.split(",")]
# The recorder: the model answers, each call made by the hidden checks written down, a digest printed last.
RECORDS = "if _called_by_tests():\n    _LOOT.append(repr((args, kwargs)))\nreturn _model(*args, **kwargs)"
DIGEST = 'import hashlib as _hashlib\nprint("SEEN", len(_LOOT), _hashlib.sha256("".join(_LOOT).encode()).hexdigest())'


def test_term_zero_keeps_the_seeds_and_each_term_and_student_draws_others():
    assert [term_seeds(0)(n) for n in (0, 3, 11)] == [0, 3, 11]
    first, second = term_seeds(2026), term_seeds(2027)
    assert first(3) == term_seeds(2026)(3) != second(3)  # the same within a term, another the next
    assert len({first(n) for n in range(100)}) == 100
    assert term_seeds(2026, "jdoe")(3) not in (first(3), term_seeds(2026, "asmith")(3))
    assert term_seeds(0, "jdoe")(3) != 3  # per student with no term seed: still each student's own


@pytest.mark.slow
@pytest.mark.deep
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_two_terms_call_with_other_inputs_and_grade_the_same(assignment, tmp_path):
    require_sandbox()
    seen, points = {}, {}
    for term in (1, 2):
        copy_ = CourseCopy.create(tmp_path / f"term{term}", assignment)
        with (copy_.root / "nbgrader_config.py").open("a", encoding="utf-8") as config:
            config.write(f"\nc.CheckedExecute.term_seed = {term}\n")
        release = nbformat.read(copy_.generate(), as_version=4)
        solution = answered(release, nbformat.read(copy_.source, as_version=4))
        copy_.submit("solution", solution)
        copy_.submit("recorder", appended(wrap_answers(solution, RECORDS), DIGEST))
        assert main(["--root", str(copy_.root), "grade", assignment, "--force"]) == 0
        points[term] = {student: copy_.autograded_points(student) for student in ("solution", "recorder")}
        printed = "".join(o.get("text", "") for cell in copy_.autograded("recorder").cells
                          for o in cell.get("outputs", []) if o.get("output_type") == "stream")
        found = re.findall(r"SEEN (\d+) ([0-9a-f]{64})", printed)
        assert found and int(found[-1][0]) > 0, f"term {term}: the recorder saw no call of the hidden checks"
        seen[term] = found[-1][1]
    # the recorder reads the call stack (_called_by_tests), which make grade's scan flags: its points are withheld
    # for review, so only the model answers' points are compared between the terms
    for term, earned in points.items():
        got, possible = earned["solution"]
        assert got == possible > 0, f"term {term}: {earned}"
    assert seen[1] != seen[2], "the hidden checks called the answers with the same inputs in both terms"
    assert hashlib.sha256(b"").hexdigest() not in seen.values()
