"""Hidden inputs that change each term (coursetools/checker/term.py).

* Per hidden block, every assignment: with the model answers in one kernel (coursetools/devtools/session.py), the
  calls each hidden block makes of the notebook's code (what it calls, with which arguments) differ between two
  terms, and the model answers pass under both; a block with a ``# fixed inputs: <why>`` line is left out (the lint,
  coursetools/authoring/hidden_rules.py, asks for the reason). The twelve took 74 s on 2 cores (75 s of CPU), 181 s
  at a load average of 5.5 (COURSE_TERMS_PER_BLOCK=ch01_tokens,... runs the ones named).
* Through nbgrader: the same submissions graded under two term seeds are called with other inputs (a recorder in
  the kernel) and earn the same points. CI grades ch04 under two terms; COURSE_TERMS=all grades every assignment,
  COURSE_TERMS=ch01_tokens,ch05_multi_head the ones named.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

import nbformat
import pytest
import torch
from test_hidden_attacks import appended, wrap_answers

from coursetools.authoring import sources
from coursetools.authoring.hidden_rules import FIXED_INPUTS
from coursetools.authoring.sources import assignments
from coursetools.checker.term import term_seeds
from coursetools.checks import wire
from coursetools.cli import main
from coursetools.common.hidden import split_hidden
from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.session import KernelSession, notebook_plan

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


# -- per hidden block: the calls it makes of the notebook's code, under two terms ------------------------------------

def _canonical(value: Any) -> Any:
    """``value`` (part of a decoded request) as plain Python to compare: a tensor as its dtype, shape and numbers."""
    if isinstance(value, torch.Tensor):
        return ("tensor", str(value.dtype), tuple(value.shape), value.detach().cpu().tolist())
    if isinstance(value, dict):  # a handle's number is not an input: it counts the handles made before
        skip = "id" if value.get(wire.REF) == "handle" else None
        return tuple(sorted((str(key), _canonical(item)) for key, item in value.items() if key != skip))
    if isinstance(value, (list, tuple)):
        return tuple(_canonical(item) for item in value)
    return repr(value)


def block_requests(assignment: str, term: int) -> dict[str, str]:
    """test grade_id -> a digest of the calls its hidden block made of the notebook's code (target, arguments) with
    the model answers, under ``term`` (one kernel: coursetools/devtools/session.py), or "fixed" for a block that says
    why its inputs stay as written (``# fixed inputs: <why>``); raises when a model answer fails a test."""
    calls: list[tuple] = []
    digests: dict[str, str] = {}
    with KernelSession(REPO_ROOT, term_seed=term) as kernel:
        ask = kernel.link.ask

        def recording(text: str, clock):
            request = wire.from_text(text)
            if request.get("op") == "call":
                calls.append(_canonical((request["target"], request["args"], request["kwargs"])))
            return ask(text, clock)

        kernel.link.ask = recording
        for answer in notebook_plan(sources.read_text_source(sources.text_source(REPO_ROOT, assignment))):
            kernel.reach(answer)
            for test_id, test in answer.tests:
                calls.clear()
                outcome = kernel.run(test, locked=True)
                assert outcome.passed, f"{assignment}, term {term}: the model answer fails {test_id}: {outcome.reason}"
                fixed = FIXED_INPUTS.search("\n".join(split_hidden(test)[1]))
                digest = hashlib.sha256(repr(calls).encode()).hexdigest()
                digests[test_id] = "fixed" if fixed else f"{len(calls)} {digest}"
    return digests


_PER_BLOCK = os.environ.get("COURSE_TERMS_PER_BLOCK", "all")


@pytest.mark.slow
@pytest.mark.parametrize("assignment", [a for a in assignments(REPO_ROOT)
                                        if _PER_BLOCK == "all" or a in _PER_BLOCK.split(",")])
def test_every_hidden_block_calls_with_other_inputs_in_another_term(assignment):
    first, second = block_requests(assignment, 1), block_requests(assignment, 2)
    assert first.keys() == second.keys()
    silent = sorted(test_id for test_id, digest in first.items() if digest.startswith("0 "))
    same = sorted(test_id for test_id, digest in first.items()
                  if digest == second[test_id] and digest != "fixed" and test_id not in silent)
    assert not silent and not same, f"{assignment}: hidden blocks that call nothing of the notebook: {silent}; " \
        f"that call it with the same inputs in two terms: {same}"
