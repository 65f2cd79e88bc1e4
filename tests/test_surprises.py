"""No surprise: every wrong answer that passes the visible tests of its exercise passes the hidden ones
too, unless the hidden block allow-lists it with a reason (``# hidden only: <name> -- <why>``;
``coursetools/devtools/surprises.py``); and every right answer earns every point. The wrong answers
tried are the files of tests/wrong_answers and every mutant of every model answer
(``coursetools/devtools/mutate.py``, minus those listed as equivalent); the right ones are the files of
tests/alternative_answers. The whole search takes 10-50 s per assignment on an idle core, one unit
per assignment in ``make test``'s parallel run (tests/conftest.py)."""

from __future__ import annotations

import pytest

from coursetools.authoring.sources import assignments
from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.surprises import candidate_files, find_surprises

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("assignment", assignments(REPO_ROOT))
def test_no_answer_passes_the_visible_tests_and_fails_a_hidden_one(assignment: str):
    report = find_surprises(assignment, with_mutants=True)
    assert report.tried > len(candidate_files(assignment)), "the files and the mutants were tried"
    unexpected = [surprise.describe() for surprise in report.unexpected()]
    assert not unexpected, f"{assignment}: answers that pass every visible test and fail a hidden one:\n" + \
        "\n".join(unexpected)
    assert not report.rejected, f"{assignment}: right answers the tests refuse:\n" + \
        "\n".join(rejection.describe() for rejection in report.rejected)
