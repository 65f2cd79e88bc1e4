"""Checks of a submitted notebook made before it runs, on the file, where the student cannot reach them.

nbgrader is not a sandbox: a student's code runs in the kernel that runs the tests. This scan
reports what a submission does to the tests or their environment; it does not grade (nbgrader
restores locked cells itself, and an instructor reviews every submission marked ``tampered``):

* :func:`locked_cell_changes`: locked cells (setup, tests, instructions) edited or deleted (read
  back from an outcome's details by :func:`locked_changes_in`);
* :func:`suspicious_code`: the student's own cells assigning to attributes of imported modules
  (``torch.allclose = ...``) or naming what a solution has no reason to touch
  (:data:`SUSPICIOUS_NAMES`).
"""

from __future__ import annotations

import ast
import re

from IPython.core.inputtransformer2 import TransformerManager
from nbformat import NotebookNode
from nbgrader.utils import compute_checksum, is_locked

from coursetools.common.cells import grade_id, nbgrader_meta

# Names a solution has no reason to touch: the tests, the interpreter's insides, IPython's hooks.
SUSPICIOUS_NAMES = frozenset({
    "coursetools", "verify_untampered", "__code__", "__defaults__", "__kwdefaults__", "__closure__",
    "__globals__", "__builtins__", "builtins", "__class__", "__dict__", "gc", "ctypes", "importlib",
    "get_ipython", "input_transformers_cleanup", "input_transformers_post", "ast_transformers",
    "set_custom_exc", "showtraceback", "exec", "eval", "compile", "setattr", "globals", "vars",
    "FunctionType", "CodeType", "__import__"})
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


def suspicious_code(release: NotebookNode, submission: NotebookNode) -> list[str]:
    """What the student's own code cells (those not locked in ``release``) do to the environment
    the tests run in, as sorted readable phrases (``assigns to torch.allclose``, ``uses __code__``)."""
    locked = {grade_id(cell) for cell in release.cells if is_locked(cell)}
    student_trees = [parse_cell(cell.source) for cell in submission.cells
                     if cell.cell_type == "code" and grade_id(cell) not in locked]
    release_trees = [parse_cell(cell.source) for cell in release.cells if cell.cell_type == "code"]
    imported = {name for tree in release_trees + student_trees for name in imported_names(tree)}
    return sorted({found for tree in student_trees for found in suspicious_in(tree, imported)})


def parse_cell(source: str) -> ast.AST | None:
    """A code cell as Python (IPython magics transformed), or None if it does not parse: such a
    cell fails in the kernel too, and scores nothing."""
    try:
        return ast.parse(ALLOWED_MAGICS.sub("pass  #", TransformerManager().transform_cell(source)))
    except SyntaxError:
        return None


def imported_names(tree: ast.AST | None) -> set[str]:
    """The top-level names the imports of ``tree`` bind (``import torch.nn as nn`` binds ``nn``)."""
    if tree is None:
        return set()
    return {(alias.asname or alias.name).split(".")[0] for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}


def suspicious_in(tree: ast.AST | None, imported: set[str]) -> list[str]:
    """The suspicious things ``tree`` does, given the names bound to modules (``imported``)."""
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [f"imports {alias.name}" for alias in node.names
                      if alias.name.split(".")[0] in SUSPICIOUS_NAMES or alias.name in SUSPICIOUS_NAMES]
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in SUSPICIOUS_NAMES:
                found.append(f"imports from {node.module}")
        elif name in SUSPICIOUS_NAMES:
            found.append(f"uses {name}")
        elif name == "modules" and _root_name(node) == "sys":
            found.append("uses sys.modules")
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            found += [f"assigns to {ast.unparse(target)}" for target in targets
                      if isinstance(target, (ast.Attribute, ast.Subscript)) and _root_name(target) in imported]
    return found


def _root_name(node: ast.AST) -> str | None:
    """``torch`` for ``torch.testing.assert_close`` or ``torch.x[0]``; None when not a name."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
