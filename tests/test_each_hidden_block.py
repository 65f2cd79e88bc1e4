"""Each hidden block on its own, run with the model answers in one kernel per assignment
(coursetools/devtools/session.py).

* **Every part graded on its own** (issue 50, item 1): a test cell keeps its points when the part before it
  fails. A hidden block's checks run only when its cell's visible part passed, so a name that one hidden block
  defines and a later one reads cost the later part a NameError whenever the earlier answer was wrong (ch06: a
  `rope` with one bug got 0 of 5 instead of 3 of 5). The lint refuses such names
  (``coursetools.authoring.hidden_rules.borrowed_hidden_names``); this test runs the notebooks to prove it.
* **Every hidden input drawn from the term** (issue 49, item 5; coursetools/checker/term.py): the calls each
  hidden block makes of the notebook's code (what it calls, with which arguments) differ between two terms, and
  the model answers pass under both. A block with a ``# fixed inputs: <why>`` line is left out (the lint,
  coursetools/authoring/hidden_rules.py, asks for the reason).

Both come from the same two runs of each notebook: once with the visible part of every even-numbered test cell
failing (an ``AssertionError`` raised at its end, after the definitions a later cell may use, as a wrong answer's
failed test leaves them), once with every odd-numbered one failing. Every other test cell runs twice, under
term 1 and then term 2: it must pass both times, its previous part having just failed, and its hidden block's
calls are recorded. The twelve assignments take about 2 minutes of CPU. The round trip through nbgrader under
two terms is tests/test_term_seed.py.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch

from coursetools.authoring import sources
from coursetools.authoring.hidden_rules import FIXED_INPUTS
from coursetools.checks import wire
from coursetools.common.hidden import split_hidden
from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.session import KernelSession, notebook_plan

pytestmark = pytest.mark.slow

BROKEN = '\nraise AssertionError("the previous part, failed on purpose")\n'
TERMS = (1, 2)


@dataclass
class BlockRuns:
    """What the two runs of an assignment found: the test cells that failed (``"<grade_id>: <why>"``), and
    per test cell, per term, a digest of the calls its hidden block made of the notebook's code (``"fixed"``
    for a block that says why its inputs stay as written)."""

    failing: list[str] = field(default_factory=list)
    calls: dict[str, dict[int, str]] = field(default_factory=dict)


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


def _run_half(assignment: str, broken_parity: int, found: BlockRuns) -> None:
    """One run of ``assignment``'s notebook in which every test cell whose index has ``broken_parity`` fails
    its visible part and every other one runs under each of :data:`TERMS`; adds what it found to ``found``."""
    calls: list[tuple] = []
    with KernelSession(REPO_ROOT, timeout=120) as kernel:
        ask = kernel.link.ask

        def recording(text: str, clock):
            request = wire.from_text(text)
            if request.get("op") == "call":
                calls.append(_canonical((request["target"], request["args"], request["kwargs"])))
            return ask(text, clock)

        kernel.link.ask = recording
        index, broken = 0, None
        for answer in notebook_plan(sources.read_text_source(sources.text_source(REPO_ROOT, assignment))):
            kernel.reach(answer)
            for test_id, test in answer.tests:
                if index % 2 == broken_parity:
                    outcome = kernel.run(test + BROKEN, locked=True)
                    assert not outcome.passed, f"{test_id} should have failed on purpose"
                    broken = test_id
                else:
                    fixed = FIXED_INPUTS.search("\n".join(split_hidden(test)[1]))
                    for term in TERMS:
                        kernel.use_term(term)
                        calls.clear()
                        if not (outcome := kernel.run(test, locked=True)).passed:
                            after = f" after {broken} failed" if broken else ""
                            found.failing.append(f"{test_id} (term {term}{after}): {outcome.reason}")
                        digest = hashlib.sha256(repr(calls).encode()).hexdigest()
                        found.calls.setdefault(test_id, {})[term] = "fixed" if fixed else f"{len(calls)} {digest}"
                index += 1


@functools.cache
def block_runs(assignment: str) -> BlockRuns:
    """Both runs of ``assignment`` (:func:`_run_half`), made once for the tests below."""
    found = BlockRuns()
    for broken_parity in (0, 1):
        _run_half(assignment, broken_parity, found)
    return found


@pytest.mark.parametrize("assignment", sources.assignments(REPO_ROOT))
def test_a_failed_part_costs_no_other_part(assignment: str):
    assert block_runs(assignment).failing == []


@pytest.mark.parametrize("assignment", sources.assignments(REPO_ROOT))
def test_every_hidden_block_calls_with_other_inputs_in_another_term(assignment: str):
    calls = block_runs(assignment).calls
    first, second = ({test_id: terms[term] for test_id, terms in calls.items()} for term in TERMS)
    silent = sorted(test_id for test_id, digest in first.items() if digest.startswith("0 "))
    same = sorted(test_id for test_id, digest in first.items()
                  if digest == second[test_id] and digest != "fixed" and test_id not in silent)
    assert not silent and not same, f"{assignment}: hidden blocks that call nothing of the notebook: {silent}; " \
        f"that call it with the same inputs in two terms: {same}"
