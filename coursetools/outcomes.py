"""How grading one student's notebook went: the statuses and the rules that choose one.

Everything here is a pure function of what grading observed (nbgrader's exit code and log, the
scan's findings, the scores left empty), so each rule is tested without running nbgrader.

=====================  ====================================================================
status                 when
=====================  ====================================================================
``ok``                 autograde finished; every test cell has a score
``needs manual grade`` autograde finished but left a test cell without a score, or failed for
                       a reason the log does not name
``tampered``           the scan or the tests found locked cells changed or the environment
                       of the tests altered (scores are kept; an instructor reviews them)
``kernel died``        the kernel was lost (nbgrader exits 1 and keeps no scores)
``timed out``          killed at the notebook time limit, or nbgrader gave up on a cell
``missing notebook``   no readable notebook of the expected name was submitted
=====================  ====================================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nbformat import NotebookNode

OK = "ok"
KERNEL_DIED = "kernel died"
TIMED_OUT = "timed out"
TAMPERED = "tampered"
MISSING = "missing notebook"
MANUAL = "needs manual grade"
# Written first in the details of every student graded with ``--unsafe-no-sandbox``.
UNCONFINED = "graded unconfined: the notebook could read and change the course and the machine"
STATUSES = (OK, KERNEL_DIED, TIMED_OUT, TAMPERED, MISSING, MANUAL)
GRADED = (OK, TAMPERED, MANUAL)  # the statuses whose autograded notebook holds scores
KERNEL_DIED_LOG = re.compile("DeadKernelError|Kernel died")  # how nbgrader's log says so
TIMED_OUT_LOG = re.compile("CellTimeoutError|Timeout waiting")
ANY_ERROR_LOG = re.compile("Error|error")


@dataclass
class Outcome:
    """How grading one student's notebook went, as recorded in the state file."""

    status: str
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0
    submission_sha: str = ""


def autograde_status(returncode: int | None, log: str, flags: list[str], ungraded: list[str],
                     notebook_timeout: float) -> tuple[str, list[str]]:
    """The status and its details, once ``nbgrader autograde`` ran on a readable notebook.

    Args:
        returncode: nbgrader's exit code; None when it was killed at ``notebook_timeout`` seconds.
        log: what nbgrader printed.
        flags: the tampering found by the scan and by the tests.
        ungraded: the test cells the gradebook holds no score for.
    """
    if returncode is None:
        return TIMED_OUT, [f"stopped after {notebook_timeout:g} s", *flags]
    if returncode != 0:
        return failed_autograde_status(log), [last_error_line(log), *flags]
    if flags:
        return TAMPERED, flags
    if ungraded:
        return MANUAL, [f"no automatic score for {', '.join(ungraded)}"]
    return OK, []


def tampering_seen_by_tests(autograded: NotebookNode) -> list[str]:
    """The messages of the tampering errors the tests raised (``coursetools.checks.TamperingError``),
    read from the outputs of the autograded notebook."""
    return sorted({f"tests saw: {output.evalue}"[:400] for cell in autograded.cells if cell.cell_type == "code"
                   for output in cell.get("outputs", [])
                   if output.output_type == "error" and output.ename == "TamperingError"})


def failed_autograde_status(log: str) -> str:
    """Why ``nbgrader autograde`` exited with an error, from its log.

    A kernel busy in a loop that ignores SIGINT makes nbgrader give up with a timeout error.
    """
    if KERNEL_DIED_LOG.search(log):
        return KERNEL_DIED
    if TIMED_OUT_LOG.search(log):
        return TIMED_OUT
    return MANUAL


def last_error_line(log: str) -> str:
    """The most telling line of a failed autograde's log (at most 300 characters)."""
    lines = [line.strip() for line in log.splitlines()]
    for pattern in (KERNEL_DIED_LOG, TIMED_OUT_LOG, ANY_ERROR_LOG):
        found = [line for line in lines if pattern.search(line)]
        if found:
            return found[-1][:300]
    return "nbgrader autograde failed (see the log)"


def already_graded(record: dict | None, submission_sha: str, has_autograded_notebook: bool) -> bool:
    """Whether a student's recorded outcome still stands: it was taken from the same submitted
    file (``submission_sha``, empty when there is none) and, for a status with scores, its
    autograded notebook is still there."""
    if not record or record["submission_sha"] != submission_sha:
        return False
    return record["status"] not in GRADED or has_autograded_notebook
