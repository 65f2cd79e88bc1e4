"""nbgrader's ``Execute`` preprocessor with the hidden tests run outside the student's kernel.

Set as nbgrader's autograde ``Execute`` step in ``nbgrader_config.py``. Before the notebook's first
cell the kernel imports :mod:`coursetools.checks.bridge` and installs the cap on each cell's output
(:mod:`coursetools.checks.output_cap`, at ``CapOutputBytes.max_bytes``). Each graded cell's *visible*
part (its source without the ``### BEGIN HIDDEN TESTS`` block) runs in the kernel; the hidden block's
setup (:func:`~coursetools.common.hidden.split_setup`) is defined in the checker whatever it did, so a
later cell's hidden block can use its helpers; if it passed, the rest of the hidden block runs in a
:class:`~coursetools.checker.Checker` in this process, whose calls into
the kernel are messages to the kernel's bridge (:mod:`coursetools.checker.kernel_link`: no cell, no
history; a dead kernel is a dead kernel, ``DeadKernelError``). A failed hidden check becomes an
``error`` output of the cell (the check's message, never the hidden source), so nbgrader's
scores, gradebook and feedback work unchanged. The autograded notebook, which only the instructor
sees, keeps each cell's full source.

**Time.** Each code cell has a :class:`~coursetools.checker.clock.Clock`: ``ExecutePreprocessor.timeout``
seconds of CPU time of this grading process and its children (the kernel, what it starts, and the
checker running the hidden block here), which a busy machine does not change, and
:data:`~coursetools.checker.clock.WALL_FACTOR` times as many wall-clock seconds (more on a loaded
machine), the guard against a kernel that waits without computing. The visible part and every call
of the hidden block share it;
the visible part is stopped as nbclient stops a cell at its timeout (the clocked shell channel of
:mod:`coursetools.grading.kernel_client`), a call of the hidden block is interrupted.
"""

from __future__ import annotations

import os

import nbformat
from nbclient.exceptions import DeadKernelError
from nbgrader.preprocessors import Execute
from traitlets import Bool, Int

from coursetools.checker import BRIDGE_IMPORT, Checker, CheckTimeout
from coursetools.checker.clock import WALL, WALL_FACTOR, Clock
from coursetools.checker.kernel_link import KernelLink
from coursetools.checker.term import term_seeds
from coursetools.common.cells import nbgrader_meta
from coursetools.common.hidden import split_hidden_block, split_setup
from coursetools.grading.nbgrader_plugins import TIMEOUT_ERROR, WALL_STOP
from coursetools.grading.output_cap import CapOutputBytes

OUTPUT_CAP = '__import__("coursetools.checks.output_cap").checks.output_cap.install({max_bytes}) and None'


def error_output(error: BaseException) -> nbformat.NotebookNode:
    """A cell's ``error`` output for a failed hidden check: the exception's class and message only.
    A check stopped at the time limit reads as a cell nbgrader interrupted (``KeyboardInterrupt``)."""
    name = "KeyboardInterrupt" if isinstance(error, CheckTimeout) else type(error).__name__
    message = str(error)
    return nbformat.v4.new_output("error", ename=name, evalue=message,
                                  traceback=[f"{name}: {message}" if message else name])


class CheckedExecute(Execute):
    """``Execute``, with each graded cell's hidden block run in a checker (module docstring)."""

    term_seed = Int(0, help="this term's seed for the hidden tests' inputs (coursetools/checker/term.py); "
                            "set a new one each term, 0 keeps the seeds as written").tag(config=True)
    seed_per_student = Bool(False, help="draw each student's hidden inputs from their own seeds").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._checker = self._link = self._clock = None
        self.timeout_func = self._wall_limit  # nbclient's own wait: the wall-clock guard
        try:
            return super().preprocess(nb, resources, km)
        finally:
            if self._link is not None:
                self._link.close()

    def preprocess_cell(self, cell, resources, index):
        if self._checker is None:  # before any cell of the notebook, so before any student code
            self._import_bridge(index)
            self._link = KernelLink(self.kc, self.km)
            student = (self.resources or {}).get("nbgrader", {}).get("student", "") if self.seed_per_student else ""
            self._checker = Checker(self._link, term_seeds(self.term_seed, student or ""))
        if cell.cell_type != "code":
            return super().preprocess_cell(cell, resources, index)
        if self.timeout:
            self._clock = self.kc.shell_channel.clock = Clock(self.timeout, self._wall_limit(), os.getpid())
        try:
            return self._run_code_cell(cell, resources, index)
        finally:
            self._clock = self.kc.shell_channel.clock = None

    def _run_code_cell(self, cell, resources, index):
        meta = nbgrader_meta(cell)
        locked = meta.get("locked") and not meta.get("solution")
        visible, hidden = split_hidden_block(cell.source)
        if not (hidden.strip() and meta.get("grade")):
            cell, resources = self._run_visible(cell, resources, index)
            if locked:
                self._checker.add_locked(cell.source)
            return cell, resources
        full = cell.source
        cell.source = visible
        try:
            cell, resources = self._run_visible(cell, resources, index)
        finally:
            cell.source = full
        if locked:
            self._checker.add_locked(visible)
        setup, checks = split_setup(hidden)
        try:
            self._checker.add_setup(setup)
        except Exception as error:  # noqa: BLE001 - the instructor's setup failed: the cell's error
            cell.outputs.append(error_output(error))
            return cell, resources
        if not any(output.output_type == "error" for output in cell.outputs):
            self._run_hidden(cell, checks)
        return cell, resources

    def _run_visible(self, cell, resources, index):
        """nbgrader's execution of the cell; a cell stopped at the wall-clock guard says so (:data:`WALL_STOP`)."""
        cell, resources = super().preprocess_cell(cell, resources, index)
        if self._clock is not None and self._clock.passed() == WALL:
            for output in cell.outputs:
                if output.output_type == "error" and output.ename == TIMEOUT_ERROR:
                    output.evalue = WALL_STOP
        return cell, resources

    def _wall_limit(self, cell=None) -> float | None:
        """The wall-clock seconds a cell may take: the guard against a kernel that waits without computing."""
        return self.timeout * WALL_FACTOR if self.timeout else None

    def _run_hidden(self, cell, hidden: str) -> None:
        self._checker.clock = self._clock
        try:
            self._checker.run_hidden(hidden)
        except Exception as error:  # noqa: BLE001 - every failed check is the cell's error
            if self._link.died:  # whatever the hidden block made of it
                raise DeadKernelError("Kernel died") from error
            if isinstance(error, MemoryError):  # the grader passed its limit: this student fails, flagged
                raise
            cell.outputs.append(error_output(error))
        finally:
            self._checker.clock = None

    def _import_bridge(self, index: int) -> None:
        """Import the bridge and install the output cap in the kernel, as a throwaway cell (no history);
        the notebook's cell at ``index`` is left as it was."""
        kept = self.nb.cells[index]
        setup = f"{BRIDGE_IMPORT}\n{OUTPUT_CAP.format(max_bytes=CapOutputBytes(config=self.config).max_bytes)}"
        try:
            self.execute_cell(nbformat.v4.new_code_cell(setup), index, store_history=False)
        finally:
            self.nb.cells[index] = kept
