"""Checks of a submitted notebook made before it runs, on the file, where the student cannot reach them.

nbgrader is not a sandbox: a student's code runs in the kernel that runs the tests. This module
finds the locked cells (setup, tests, instructions) a submission edited or deleted
(:func:`locked_cell_changes`, read back from an outcome's details by :func:`locked_changes_in`),
and reads a cell as Python (:func:`parse_cell`); what the student's code does is read by
:mod:`coursetools.grading.pyscan`.
"""

from __future__ import annotations

import ast
import re

from IPython.core.inputtransformer2 import TransformerManager
from nbformat import NotebookNode
from nbgrader.utils import compute_checksum, is_locked

from coursetools.common.cells import grade_id, nbgrader_meta

# How an outcome's details name a locked cell the student changed (read back by the feedback).
LOCKED_CHANGE = re.compile(r"^(edited|deleted) locked cell (\S+)$")
# The magics a notebook may use (``%matplotlib inline``, ``%time``): not reported as get_ipython.
ALLOWED_MAGICS = re.compile(r"get_ipython\(\)\.run_line_magic\('(matplotlib|time|timeit)'")


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


def parse_cell(source: str) -> ast.AST | None:
    """A code cell as Python (IPython magics transformed), or None if it does not parse: such a
    cell fails in the kernel too, and scores nothing."""
    try:
        return ast.parse(ALLOWED_MAGICS.sub("pass  #", TransformerManager().transform_cell(source)))
    except SyntaxError:
        return None
