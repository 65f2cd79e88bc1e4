"""No surprise: every answer of tests/wrong_answers and tests/alternative_answers that passes the visible
tests of its exercise passes the hidden ones too, unless the hidden block allow-lists it with a reason
(``# hidden only: <name> -- <why>``; ``coursetools/devtools/surprises.py``). Mutants are left out: a
notebook's mutants take minutes (run ``python -m coursetools.devtools.surprises <id> --mutants``)."""

from __future__ import annotations

import pytest

from coursetools.authoring.sources import assignments
from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.surprises import candidate_files, find_surprises

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("assignment", [a for a in assignments(REPO_ROOT) if candidate_files(a)])
def test_no_answer_passes_the_visible_tests_and_fails_a_hidden_one(assignment: str):
    report = find_surprises(assignment)
    assert report.tried == len(candidate_files(assignment)), "every file was tried"
    unexpected = [surprise.describe() for surprise in report.unexpected()]
    assert not unexpected, f"{assignment}: answers that pass every visible test and fail a hidden one:\n" + \
        "\n".join(unexpected)
