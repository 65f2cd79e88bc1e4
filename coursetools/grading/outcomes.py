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
                       of the tests altered (scores are kept; an instructor reviews them), or
                       an answer used what its exercise's allow-list refuses (that exercise's
                       test points withheld, ``Outcome.withheld``, until a review clears it)
``cell timed out``     autograde finished, but a cell was stopped at the per-cell time limit
                       (what it tests scored 0; an instructor looks at why)
``output cut``         autograde finished, but a cell's output passed the bytes a cell keeps
                       (:mod:`coursetools.grading.output_cap`; scores stand, an instructor looks at why)
``kernel died``        the kernel was lost (nbgrader exits 1 and keeps no scores)
``grader out of memory`` the student's grading process passed its memory limit (what the notebook
                       sent the tests was too large); nbgrader keeps no scores
``timed out``          killed at the notebook time limit, or nbgrader gave up on a cell
``missing notebook``   no readable notebook of the expected name was submitted
=====================  ====================================================================
"""

from __future__ import annotations

import hashlib
import json
import re
import signal
from dataclasses import dataclass, field

from nbformat import NotebookNode

OK = "ok"
KERNEL_DIED = "kernel died"
TIMED_OUT = "timed out"
TAMPERED = "tampered"
MISSING = "missing notebook"
MANUAL = "needs manual grade"
CELL_TIMED_OUT = "cell timed out"
OUTPUT_CUT = "output cut"
OUT_OF_MEMORY = "grader out of memory"
# The detail of a hand-graded answer whose text changed since its hand grade (until it is graded again).
HAND_GRADE_AGAIN = ": the answer changed since its hand grade; grade it again"
# Written first in the details of every student graded with ``--unsafe-no-sandbox``.
UNCONFINED = "graded unconfined: the notebook could read and change the course and the machine"
STATUSES = (OK, KERNEL_DIED, OUT_OF_MEMORY, TIMED_OUT, CELL_TIMED_OUT, OUTPUT_CUT, TAMPERED, MISSING, MANUAL)
GRADED = (OK, TAMPERED, MANUAL, CELL_TIMED_OUT, OUTPUT_CUT)  # the statuses whose autograded notebook holds scores
KERNEL_DIED_LOG = re.compile("DeadKernelError|Kernel died")  # how nbgrader's log says so
TIMED_OUT_LOG = re.compile("CellTimeoutError|Timeout waiting")
OUT_OF_MEMORY_LOG = re.compile("MemoryError")
ANY_ERROR_LOG = re.compile("Error|error")
SAYS_WHY = (KERNEL_DIED_LOG, OUT_OF_MEMORY_LOG, TIMED_OUT_LOG, ANY_ERROR_LOG)  # most telling first


@dataclass
class Outcome:
    """How grading one student's notebook went, as recorded in the state file."""

    status: str
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0
    submission_sha: str = ""
    tests_sha: str = ""  # :func:`grading_fingerprint` of the source the scores were taken with
    # the hand-graded answers (grade_id -> text) as last graded: a hand grade given on one stands after a
    # failed run removed the autograded notebook it was read from (gradebook.keep_hand_grades)
    answers: dict[str, str] = field(default_factory=dict)
    # a notebook that did not finish: the instructor's overrides of its test cells (grade_id -> score), taken
    # off the gradebook until a regrade finishes (gradebook.close_unfinished, gradebook.restore_overrides)
    overrides: dict[str, float] = field(default_factory=dict)
    # the test cells whose points are withheld because their exercise's answer used what its allow-list
    # refuses (the scan, coursetools.common.pyscan): they count 0 unless a review clears the flag
    withheld: list[str] = field(default_factory=list)


def autograde_status(returncode: int | None, log: str, flags: list[str], ungraded: list[str],
                     stopped_after: str = "", stopped: list[str] = (), cut: list[str] = ()) -> tuple[str, list[str]]:
    """The status and its details, once ``nbgrader autograde`` ran on a readable notebook.

    Args:
        returncode: nbgrader's exit code; None when it was killed at the notebook's time limit.
        log: what nbgrader printed.
        flags: the tampering found by the scan and by the tests.
        stopped_after: the notebook's limit that killed it, in words ("180 s of CPU time").
        ungraded: the test cells the gradebook holds no score for.
        stopped: the cells stopped at the per-cell time limit (:func:`cells_stopped_at_limit`).
        cut: what was cut of the cells' output (:func:`coursetools.grading.output_cap.output_cut`).
    """
    if returncode is None:
        return TIMED_OUT, [f"stopped after {stopped_after}", *flags]
    if returncode != 0:
        return failed_autograde_status(log), [last_error_line(log, returncode), *flags]
    if flags:
        return TAMPERED, flags + _stopped_details(stopped) + list(cut)
    if stopped:
        return CELL_TIMED_OUT, _stopped_details(stopped) + list(cut)
    if ungraded:
        return MANUAL, [f"no automatic score for {', '.join(ungraded)}", *cut]
    if cut:
        return OUTPUT_CUT, list(cut)
    return OK, []


def tampering_seen_by_tests(autograded: NotebookNode) -> list[str]:
    """The messages of the tampering errors the tests raised (``coursetools.checks.TamperingError``),
    read from the outputs of the autograded notebook."""
    return sorted({f"tests saw: {output.evalue}"[:400] for cell in autograded.cells if cell.cell_type == "code"
                   for output in cell.get("outputs", [])
                   if output.output_type == "error" and output.ename == "TamperingError"})


def cells_stopped_at_limit(autograded: NotebookNode) -> list[str]:
    """The cells of the autograded notebook that nbgrader interrupted at the per-cell time limit
    (their output is the ``KeyboardInterrupt`` the interrupt raises), by grade_id or position."""
    return [cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {index + 1}"
            for index, cell in enumerate(autograded.cells) if cell.cell_type == "code"
            and any(output.output_type == "error" and output.ename == "KeyboardInterrupt"
                    for output in cell.get("outputs", []))]


def _stopped_details(stopped: list[str]) -> list[str]:
    return [f"{name} stopped at the per-cell time limit (an endless or very slow loop?)" for name in stopped]


def grading_fingerprint(source: NotebookNode) -> str:
    """A hash of what decides a score in the instructor's source notebook: every graded cell
    (its source, hidden tests included, and its points) and every locked code cell (setup runs
    before the tests). Prose edits leave it unchanged; a changed test changes it."""
    parts = [json.dumps([cell.cell_type, cell.source, meta.get("points")])
             for cell in source.cells if (meta := cell.metadata.get("nbgrader", {}))
             and (meta.get("grade") or (meta.get("locked") and cell.cell_type == "code"))]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


CHECKSUM_WARNING = re.compile(r"^.*Attribute 'checksum' for cell (?P<cell>\S+) has changed!.*$", re.MULTILINE)


def explained_log(log: str, edited: set[str]) -> str:
    """nbgrader's log with its checksum warnings explained.

    nbgrader compares each locked cell of a submission with the instructor's source, whose test
    cells hold the hidden tests, so it warns "checksum ... has changed!" for every test cell of
    every honest submission. A warning for a cell the scan found unedited (not in ``edited``)
    becomes a line saying what it means; the others are kept as nbgrader wrote them.
    """
    def explain(match: re.Match) -> str:
        if match["cell"] in edited:
            return match[0]
        return (f"[course] {match['cell']}: as released (nbgrader's checksum warning for it only means "
                "that the hidden tests were put back)")
    return CHECKSUM_WARNING.sub(explain, log)


def failed_autograde_status(log: str) -> str:
    """Why ``nbgrader autograde`` exited with an error, from its log.

    A kernel busy in a loop that ignores SIGINT makes nbgrader give up with a timeout error.
    """
    if KERNEL_DIED_LOG.search(log):
        return KERNEL_DIED
    if OUT_OF_MEMORY_LOG.search(log):
        return OUT_OF_MEMORY
    if TIMED_OUT_LOG.search(log):
        return TIMED_OUT
    return MANUAL


def worth_another_run(returncode: int | None, log: str) -> bool:
    """Whether a failed ``nbgrader autograde`` should run once more: two writers locked the gradebook at once,
    or the process ended non-zero with a log that names no error (seen once on a loaded machine, the
    student's notebook graded and written). Not when it was stopped at the notebook's limit (None)."""
    if returncode is None or returncode == 0:
        return False
    if returncode == 1 and "database is locked" in log:
        return True
    return not any(pattern.search(log) for pattern in SAYS_WHY)


def last_error_line(log: str, returncode: int) -> str:
    """The most telling line of a failed autograde's log (at most 300 characters), or, when the log names no
    error, how the grading process ended (its exit code, or the signal that killed it)."""
    lines = [line.strip() for line in log.splitlines()]
    for pattern in SAYS_WHY:
        found = [line for line in lines if pattern.search(line)]
        if found:
            return found[-1][:300]
    if returncode < 0:
        return f"nbgrader autograde was killed by {signal.Signals(-returncode).name} (see the log)"
    return f"nbgrader autograde failed with exit code {returncode} (see the log)"


def already_graded(record: dict | None, submission_sha: str, has_autograded_notebook: bool,
                   tests_sha: str = "") -> bool:
    """Whether a student's recorded outcome still stands: it was taken from the same submitted
    file (``submission_sha``, empty when there is none) with the same tests (``tests_sha``, see
    :func:`grading_fingerprint`; a record without one predates it) and, for a status with scores,
    its autograded notebook is still there."""
    if not record or record["submission_sha"] != submission_sha:
        return False
    if tests_sha and record.get("tests_sha") != tests_sha and record["status"] != MISSING:
        return False
    return record["status"] not in GRADED or has_autograded_notebook


CLEARED, KEPT = "cleared", "kept"  # an instructor's decisions on a flagged student (``course review``)


def reviewed(record: dict, review: dict | None) -> dict:
    """A student's record as the instructor's review leaves it: a flag ``cleared`` on review becomes
    ``ok`` (the flag's details kept after the note), one ``kept`` stays with the note first. A review
    stands only for the submission and status it was made on: a new file, or another status,
    is looked at afresh."""
    if not review or review.get("submission_sha") != record.get("submission_sha") \
            or review.get("status") != record["status"]:
        return record
    if review["decision"] == CLEARED:
        return {**record, "status": OK,
                "details": [f"reviewed, {record['status']} flag cleared: {review['note']}", *record["details"]]}
    return {**record, "details": [f"reviewed, {record['status']} kept: {review['note']}", *record["details"]]}
