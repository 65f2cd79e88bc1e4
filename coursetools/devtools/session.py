"""One kernel, many tries: run a notebook's setup once, then try answer after answer in it.

Tools that judge many answers to the same exercise (the wrong answers of ``tests/wrong_answers/``,
the mutants of ``coursetools/devtools/mutate.py``) would pay for a kernel, ``import torch`` and the setup
cells once per answer in an nbgrader round trip. A :class:`KernelSession` pays once: it runs the
notebook's cells up to the exercises in one ``python3`` kernel, then each try is an answer cell
run again with another source, the test cells after it, and the correct answer run again to
restore the state. A cell *fails* as nbgrader scores it: it raised, or it wrote to stderr. As in
grading, a test cell's hidden block runs in a :class:`~coursetools.checker.Checker`, not in the
kernel (its calls are messages to the bridge, :mod:`coursetools.checker.kernel_link`), and locked cells
(``run(code, locked=True)``) give the checker their definitions, and their hidden blocks' setups
(:func:`~coursetools.common.hidden.split_setup`) are defined in it whether or not the cell passed.

:func:`notebook_plan` says which cells a try runs: the context (setup) cells, and for each answer
cell the test cells that grade it (those after it, before the next answer cell).
"""

from __future__ import annotations

import queue
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.manager import start_new_kernel
from nbformat import NotebookNode

from coursetools.checker import BRIDGE_IMPORT, Checker, CheckTimeout
from coursetools.checker.clock import wall_clock
from coursetools.checker.kernel_link import KernelLink
from coursetools.checker.term import term_seeds
from coursetools.common.cells import is_autograded_test, nbgrader_meta
from coursetools.common.hidden import split_hidden_block, split_setup

# Seconds a kernel may take to start and import the bridge, or to answer again after an interrupt, whatever a
# cell's limit: on a busy machine both take far longer than a small cell (CI's kernels once took more than 20 s).
SLACK_SECONDS = 120.0


@dataclass
class Outcome:
    """What running one cell did: whether it passed, and if not why (the error's last line) and whether
    its hidden block (or hidden setup) failed it, its visible part having passed."""

    passed: bool
    reason: str = ""
    hidden: bool = False


@dataclass
class AnswerCell:
    """An answer cell, the code cells to run before it (in order, from the previous answer on),
    and the test cells that grade it (until the next answer cell)."""

    grade_id: str
    source: str
    before: list[str] = field(default_factory=list)
    tests: list[tuple[str, str]] = field(default_factory=list)  # (grade_id, source)


def notebook_plan(nb: NotebookNode) -> list[AnswerCell]:
    """The answer cells of ``nb`` in order, each with the locked cells before it and its test cells.

    Locked context cells (imports, given code) are run in order; cells without nbgrader metadata
    (demos and sweeps, which can be slow) and hand-graded cells are skipped.
    """
    plan: list[AnswerCell] = []
    pending: list[str] = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        meta = nbgrader_meta(cell)
        if meta.get("solution"):
            plan.append(AnswerCell(meta["grade_id"], cell.source, before=pending))
            pending = []
        elif is_autograded_test(cell):
            if plan:
                plan[-1].tests.append((meta["grade_id"], cell.source))
        elif meta.get("locked"):
            pending.append(cell.source)
    return plan


class KernelSession:
    """A ``python3`` kernel started in ``cwd``; :meth:`run` executes one cell and returns its
    :class:`Outcome`. A cell that runs past ``timeout`` seconds is interrupted and fails (starting the kernel and
    coming back after an interrupt may take :data:`SLACK_SECONDS`). Hidden blocks draw their seeds from
    ``term_seed`` (:mod:`coursetools.checker.term`; 0: as written)."""

    def __init__(self, cwd: Path, timeout: float = 30.0, term_seed: int = 0):
        self.timeout = timeout
        self.manager, self.client = start_new_kernel(kernel_name="python3", cwd=str(cwd))
        self.client.execute_interactive(BRIDGE_IMPORT, store_history=False,
                                        timeout=max(timeout, SLACK_SECONDS))
        self.link = KernelLink(self.client, self.manager)
        self.checker = Checker(self.link, term_seeds(term_seed))
        self.setups: list[str] = []  # the hidden setups defined so far, in order

    def use_term(self, term_seed: int) -> None:
        """The hidden blocks run from now on draw their seeds from the term ``term_seed``, and so do the
        hidden setups defined so far, defined again (what a checker of that term would hold here)."""
        self.checker.use_term(term_seeds(term_seed))
        for setup in self.setups:
            self.checker.add_setup(setup)

    def run(self, code: str, locked: bool = False) -> Outcome:
        """Run a cell; ``locked``: a cell of the instructor's (setup, given code, a test), whose
        definitions the checker takes and whose hidden block, if any, the checker runs."""
        visible, hidden = split_hidden_block(code)
        clock = wall_clock(self.timeout)  # the visible part's time and the hidden block's, together
        outcome = self._run_visible(visible if locked else code)
        if not locked:
            return outcome
        self.checker.add_locked(visible)
        setup, checks = split_setup(hidden)
        try:
            self.checker.add_setup(setup)
            if setup.strip() and setup not in self.setups:
                self.setups.append(setup)
        except Exception as error:  # noqa: BLE001 - the instructor's setup failed: the cell fails
            return Outcome(False, f"{type(error).__name__}: {error}".strip(), hidden=outcome.passed)
        if not (outcome.passed and checks.strip()):
            return outcome
        self.checker.clock = clock
        try:
            self.checker.run_hidden(checks)
        except CheckTimeout:
            return Outcome(False, f"timed out after {self.timeout:g} s", hidden=True)
        except Exception as error:  # noqa: BLE001 - a failed hidden check, reported as nbgrader shows it
            return Outcome(False, f"{type(error).__name__}: {error}".strip(), hidden=True)
        finally:
            self.checker.clock = None
        return Outcome(True)

    def reach(self, answer: AnswerCell, source: str | None = None) -> None:
        """Run the locked cells before ``answer``, then the answer (its model answer, or ``source``);
        a RuntimeError names the cell that failed."""
        for code in answer.before:
            if not (outcome := self.run(code, locked=True)).passed:
                raise RuntimeError(f"a cell before {answer.grade_id} failed: {outcome.reason}")
        if not (outcome := self.run(answer.source if source is None else source)).passed:
            raise RuntimeError(f"the answer {answer.grade_id} failed: {outcome.reason}")

    def failures(self, answer: AnswerCell) -> list[tuple[str, str]]:
        """``(test grade_id, why)`` for each test cell of ``answer`` that fails as the kernel stands."""
        return [(test_id, outcome.reason) for test_id, test in answer.tests
                if not (outcome := self.run(test, locked=True)).passed]

    def failing_tests(self, answer: AnswerCell) -> list[str]:
        """``"<test grade_id>: <why>"`` for each test cell of ``answer`` that fails as the kernel stands."""
        return [f"{test_id}: {why}" for test_id, why in self.failures(answer)]

    def _run_visible(self, code: str) -> Outcome:
        stderr: list[str] = []

        def collect(message: dict) -> None:
            if message["msg_type"] == "stream" and message["content"]["name"] == "stderr":
                stderr.append(message["content"]["text"])

        try:
            reply = self.client.execute_interactive(code, timeout=self.timeout, output_hook=collect)
        except (TimeoutError, queue.Empty):
            self.manager.interrupt_kernel()
            self._drain()
            return Outcome(False, f"timed out after {self.timeout:g} s")
        content = reply["content"]
        if content["status"] != "ok":
            return Outcome(False, f"{content.get('ename', 'error')}: {content.get('evalue', '')}".strip())
        if stderr:
            return Outcome(False, "wrote to stderr: " + "".join(stderr).strip().splitlines()[-1][:200])
        return Outcome(True)

    def _drain(self) -> None:
        """Wait for the interrupted cell's reply so that the next cell's reply is its own."""
        try:
            self.client.execute_interactive("pass", timeout=max(self.timeout, SLACK_SECONDS))
        except (TimeoutError, queue.Empty):
            self.manager.restart_kernel(now=True)
            raise RuntimeError("the kernel did not come back after an interrupt: it was restarted, its state is lost")

    def close(self) -> None:
        self.link.close()
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)

    def __enter__(self) -> "KernelSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
