"""Every part graded on its own (issue 50, item 1): a test cell keeps its points when the part before it fails.

A hidden block's checks run only when its cell's visible part passed, so a name that one hidden block's
checks define and a later one reads cost the later part a NameError whenever the earlier answer was wrong
(ch06: a `rope` with one bug got 0 of 5 instead of 3 of 5). The lint refuses such names
(``coursetools.authoring.hidden_rules.borrowed_hidden_names``); this test runs the notebooks to prove it.

Each assignment runs twice in one kernel with the model answers: once with the visible part of every
even-numbered test cell failing (an ``AssertionError`` raised at its end, after the definitions a later
cell may use, as a wrong answer's failed test leaves them), once with every odd-numbered one failing.
Every other test cell, whose previous part has just failed, must still pass, hidden checks included.
Slow: a kernel and two runs of each notebook, 184 s for the 12 assignments on 2 busy cores (24 runs).
"""

from __future__ import annotations

import pytest

from coursetools.authoring import sources
from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.session import KernelSession, notebook_plan

pytestmark = pytest.mark.slow

BROKEN = '\nraise AssertionError("the previous part, failed on purpose")\n'


def parts_failing_after_a_failed_part(assignment: str, broken_parity: int) -> list[str]:
    """The test cells (``"<grade_id>: <why>"``) that fail, model answers everywhere, when every test cell
    whose index has ``broken_parity`` fails its visible part; each checked cell follows a failed one."""
    plan = notebook_plan(sources.read_text_source(sources.text_source(REPO_ROOT, assignment)))
    failing, index, broken = [], 0, None
    with KernelSession(REPO_ROOT, timeout=120) as kernel:
        for answer in plan:
            kernel.reach(answer)
            for test_id, test in answer.tests:
                if index % 2 == broken_parity:
                    outcome = kernel.run(test + BROKEN, locked=True)
                    assert not outcome.passed, f"{test_id} should have failed on purpose"
                    broken = test_id
                elif broken is not None and not (outcome := kernel.run(test, locked=True)).passed:
                    failing.append(f"{test_id} (after {broken} failed): {outcome.reason}")
                index += 1
    return failing


@pytest.mark.parametrize("broken_parity", [0, 1])
@pytest.mark.parametrize("assignment", sources.assignments(REPO_ROOT))
def test_a_failed_part_costs_no_other_part(assignment: str, broken_parity: int):
    assert parts_failing_after_a_failed_part(assignment, broken_parity) == []
