"""nbgrader's ``Execute`` preprocessor with the hidden tests run outside the student's kernel.

Set as nbgrader's autograde ``Execute`` step in ``nbgrader_config.py``. Before the notebook's first
cell the kernel imports :mod:`coursetools.checks.bridge`. Each graded cell's *visible* part (its source
without the ``### BEGIN HIDDEN TESTS`` block) runs in the kernel; if it passed, the hidden block
runs in a :class:`~coursetools.checker.Checker` in this process, whose calls into the kernel are
messages to the kernel's bridge (:mod:`coursetools.checker.kernel_link`: no cell, no history; the cell's
time limit is shared by the visible part and every call of the hidden one, and a call
past it is interrupted; a dead kernel is a dead kernel, ``DeadKernelError``). A failed hidden
check becomes an ``error`` output of the cell (the check's message, never the
hidden source), so nbgrader's scores, gradebook and feedback work unchanged. The autograded
notebook, which only the instructor sees, keeps each cell's full source.
"""

from __future__ import annotations

import math
import time

import nbformat
from nbclient.exceptions import DeadKernelError
from nbgrader.preprocessors import Execute
from traitlets import Bool, Int

from coursetools.checker import BRIDGE_IMPORT, Checker, CheckTimeout
from coursetools.checker.kernel_link import KernelLink
from coursetools.checker.term import term_seeds
from coursetools.common.cells import nbgrader_meta
from coursetools.common.hidden import split_hidden_block


def error_output(error: BaseException, timeout: float | None = None) -> nbformat.NotebookNode:
    """A cell's ``error`` output for a failed hidden check: the exception's class and message only.
    A check stopped at the time limit reads as a cell nbgrader interrupted (``KeyboardInterrupt``)."""
    if isinstance(error, CheckTimeout):
        name, message = "KeyboardInterrupt", f"{error} ({timeout:g} s)" if timeout else str(error)
    else:
        name, message = type(error).__name__, str(error)
    return nbformat.v4.new_output("error", ename=name, evalue=message,
                                  traceback=[f"{name}: {message}" if message else name])


class CheckedExecute(Execute):
    """``Execute``, with each graded cell's hidden block run in a checker (module docstring)."""

    term_seed = Int(0, help="this term's seed for the hidden tests' inputs (coursetools/checker/term.py); "
                            "set a new one each term, 0 keeps the seeds as written").tag(config=True)
    seed_per_student = Bool(False, help="draw each student's hidden inputs from their own seeds").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._checker = self._link = None
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
        meta = nbgrader_meta(cell)
        locked = meta.get("locked") and not meta.get("solution")
        visible, hidden = split_hidden_block(cell.source)
        if not (hidden.strip() and meta.get("grade")):
            cell, resources = super().preprocess_cell(cell, resources, index)
            if locked:
                self._checker.add_locked(cell.source)
            return cell, resources
        full = cell.source
        self._deadline = time.monotonic() + (self.timeout or math.inf)
        cell.source = visible
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        finally:
            cell.source = full
        if locked:
            self._checker.add_locked(visible)
        if not any(output.output_type == "error" for output in cell.outputs):
            self._run_hidden(cell, hidden)
        self._deadline = None
        return cell, resources

    def _run_hidden(self, cell, hidden: str) -> None:
        self._checker.deadline = self._deadline
        try:
            self._checker.run_hidden(hidden)
        except Exception as error:  # noqa: BLE001 - every failed check is the cell's error
            if self._link.died:  # whatever the hidden block made of it
                raise DeadKernelError("Kernel died") from error
            if isinstance(error, MemoryError):  # the grader passed its limit: this student fails, flagged
                raise
            cell.outputs.append(error_output(error, self.timeout))
        finally:
            self._checker.deadline = None

    def _import_bridge(self, index: int) -> None:
        """Import the bridge in the kernel, as a throwaway cell (no history); the notebook's cell
        at ``index`` is left as it was."""
        kept = self.nb.cells[index]
        try:
            self.execute_cell(nbformat.v4.new_code_cell(BRIDGE_IMPORT), index, store_history=False)
        finally:
            self.nb.cells[index] = kept
