"""Checks of a submitted notebook made before it runs, on the file, where the student cannot reach them.

nbgrader is not a sandbox: a student's code runs in the kernel that runs the tests. This module
finds the locked cells (setup, tests, instructions) a submission edited or deleted
(:func:`locked_cell_changes`, read back from an outcome's details by :func:`locked_changes_in`),
and what the student's own cells do that they may not (:func:`submission_findings`: the scan of
:mod:`coursetools.common.pyscan` on the submission, the release's locked cells around it).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from nbformat import NotebookNode
from nbgrader.utils import compute_checksum, is_locked

from coursetools.common.allowlist import Allowed
from coursetools.common.cells import grade_id, nbgrader_meta
from coursetools.common.pyscan import Finding, scan


class Rules(NamedTuple):
    """What the scan checks answers against: answer cell grade_id -> its exercise's allow-list
    (:func:`~coursetools.common.allowlist.allow_lists`), and -> its exercise's test cells (the points a use
    outside the list withholds, :func:`~coursetools.common.allowlist.answer_test_cells`)."""

    allowed: dict[str, Allowed]
    tests: dict[str, list[str]]


# How an outcome's details name a locked cell the student changed (read back by the feedback).
LOCKED_CHANGE = re.compile(r"^(edited|deleted) locked cell (\S+)$")


def locked_cell_changes(release: NotebookNode, submission: NotebookNode,
                        earlier: list[NotebookNode] = ()) -> list[str]:
    """The locked cells of ``release`` that ``submission`` edited or deleted, by grade_id.

    Compared with the checksums nbgrader stored in the release (``nbgrader.utils.compute_checksum``
    covers the source, the cell type, the flags and the points). A cell as one of the ``earlier``
    releases had it is not an edit: a student who started from that release changed nothing.
    """
    submitted = {grade_id(cell): cell for cell in submission.cells if grade_id(cell)}
    released = {}
    for notebook in (release, *earlier):
        for cell in notebook.cells:
            if is_locked(cell):
                released.setdefault(grade_id(cell), set()).add(nbgrader_meta(cell).get("checksum"))
    changes = []
    for cell in release.cells:
        if not is_locked(cell):
            continue
        name = grade_id(cell)
        mine = submitted.get(name)
        if mine is None:
            changes.append(f"deleted locked cell {name}")
        elif compute_checksum(mine) not in released[name]:
            changes.append(f"edited locked cell {name}")
    return changes


def locked_changes_in(details: list[str]) -> list[tuple[str, str]]:
    """The locked-cell changes among an outcome's details, as (``edited`` or ``deleted``, grade_id),
    in order; the other details are left out."""
    return [(found[1], found[2]) for detail in details if (found := LOCKED_CHANGE.match(detail))]


def submission_findings(release: NotebookNode, submission: NotebookNode,
                        allowed: dict[str, Allowed] | None = None) -> list[Finding]:
    """What a submission's own code cells (those not locked in ``release``) do that they may not; each reads
    ``rnn_step, line 3: uses torch.ops.aten.rnn_tanh_cell (under torch.ops), ...`` as a string.
    The release's locked cells bind the names the student's code reads (the setup's imports).

    ``allowed``: answer cell grade_id -> its exercise's allow-list
    (:func:`~coursetools.common.allowlist.allow_lists` of the instructor's source)."""
    locked = {grade_id(cell) for cell in release.cells if is_locked(cell)} - {None}
    given = [(grade_id(cell) or f"given cell {index + 1}", cell.source, False)
             for index, cell in enumerate(release.cells) if cell.cell_type == "code" and is_locked(cell)]
    mine = [(grade_id(cell) or f"cell {index + 1}", cell.source, True) for index, cell in enumerate(submission.cells)
            if cell.cell_type == "code" and grade_id(cell) not in locked]
    return scan(given + mine, allowed)
