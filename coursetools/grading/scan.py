"""Checks of a submitted notebook made before it runs, on the file, where the student cannot reach them.

nbgrader is not a sandbox: a student's code runs in the kernel that runs the tests. This scan
reports what a submission does to the tests or their environment; it does not grade (nbgrader
restores locked cells itself, and an instructor reviews every submission marked ``tampered``):

* :func:`locked_cell_changes`: locked cells (setup, tests, instructions) edited or deleted (read
  back from an outcome's details by :func:`locked_changes_in`);
* :func:`suspicious_code`: the student's own cells assigning to attributes of imported modules
  (``torch.allclose = ...``), naming what a solution has no reason to touch
  (:data:`SUSPICIOUS_NAMES`), reaching for names built at run time (``getattr`` with a computed
  name, a string holding a piece of a dunder such as ``"__glob"``), or naming, in an exercise's
  answer cells, a function the tests of that exercise forbid or refuse (:func:`rule_targets`:
  ``F.cross_entropy`` in an exercise that asks for the loss written out).

A rule enforced in the student's kernel (``forbid``, ``refuse``, the tamper guard) can be undone
there; the point of this scan is that every way round them shows.
"""

from __future__ import annotations

import ast
import re

from IPython.core.inputtransformer2 import TransformerManager
from nbformat import NotebookNode
from nbgrader.utils import compute_checksum, is_locked

from coursetools.checks.names import NO_AUTOGRAD
from coursetools.common.cells import grade_id, nbgrader_meta

# Names a solution has no reason to touch: the tests, the interpreter's insides, IPython's hooks.
SUSPICIOUS_NAMES = frozenset({
    "coursetools", "verify_untampered", "__code__", "__defaults__", "__kwdefaults__", "__closure__",
    "__globals__", "__builtins__", "builtins", "__class__", "__dict__", "gc", "ctypes", "importlib",
    "get_ipython", "input_transformers_cleanup", "input_transformers_post", "ast_transformers",
    "set_custom_exc", "showtraceback", "exec", "eval", "compile", "setattr", "globals", "vars",
    "FunctionType", "CodeType", "__import__",
    # reflection that reaches the grading machinery (the bridge through IPython's comms, frames, classes)
    "comm_manager", "_getframe", "f_globals", "f_locals", "f_back", "tb_frame", "gi_frame", "__getattribute__",
    "__subclasses__", "__mro__", "__bases__", "__self__", "__func__", "__wrapped__", "__reduce__", "__reduce_ex__",
    "__setattr__", "__delattr__", "attrgetter", "methodcaller", "getattr_static", "ipykernel", "zmq",
    # what switches off torch's function modes, through which refused functions are caught
    "DisableTorchFunction", "DisableTorchFunctionSubclass", "TorchFunctionMode", "_pop_mode", "_push_mode",
    "overrides"})
# Calls whose second argument names an attribute: a name built at run time hides what it reaches.
REFLECTIVE_CALLS = frozenset({"getattr", "setattr", "delattr", "hasattr"})
# A string holding a piece of a dunder name ("__glob" + "als__"), not a line of underscores.
DUNDER_PIECE = re.compile(r"__[A-Za-z]|[A-Za-z]__")
RULES = ("forbid", "refuse", "no_autograd")  # the rules of the tests whose targets an answer must not name
# what an answer under the "no autograd" rule must not name: the rule's routes and the modules they are in
AUTOGRAD_NAMES = frozenset({"autograd", "func", *(name for _, names in NO_AUTOGRAD for name in names)})
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


def suspicious_code(release: NotebookNode, submission: NotebookNode,
                    rules: dict[str, set[str]] | None = None) -> list[str]:
    """What the student's own code cells (those not locked in ``release``) do to the environment
    the tests run in, as sorted readable phrases (``assigns to torch.allclose``, ``uses __code__``).

    ``rules``: answer cell grade_id -> the names the tests of its exercise forbid or refuse
    (:func:`rule_targets` of the instructor's source); naming one in that cell is reported."""
    locked = {grade_id(cell) for cell in release.cells if is_locked(cell)}
    student_cells = [(grade_id(cell), parse_cell(cell.source)) for cell in submission.cells
                     if cell.cell_type == "code" and grade_id(cell) not in locked]
    release_trees = [parse_cell(cell.source) for cell in release.cells if cell.cell_type == "code"]
    imported = {name for tree in release_trees + [tree for _, tree in student_cells] for name in imported_names(tree)}
    found = {phrase for _, tree in student_cells for phrase in suspicious_in(tree, imported)}
    for name, tree in student_cells:
        found |= {f"names {target} in {name}, which the tests of that exercise forbid"
                  for target in rule_mentions(tree, (rules or {}).get(name, set()))}
    return sorted(found)


def rule_targets(source: NotebookNode) -> dict[str, set[str]]:
    """Answer cell grade_id -> the names that the ``forbid``/``refuse`` calls of its exercise's test
    cells (visible and hidden) name: ``refuse(torch, "rnn_tanh_cell", ...)`` names ``rnn_tanh_cell``,
    ``forbid(F.cross_entropy)`` ``cross_entropy``, ``forbid(*_forbidden)`` what the tuple
    ``_forbidden`` holds. The answers' own names (a later part may forbid an earlier one), dunders and
    private aliases are left out. An exercise's answer cells are those before its test cells."""
    trees = [(cell, parse_cell(cell.source)) for cell in source.cells if cell.cell_type == "code"]
    answers = {node.name for cell, tree in trees if nbgrader_meta(cell).get("solution") and tree
               for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    targets: dict[str, set[str]] = {}
    exercise: list[str] = []  # the answer cells since the last test cell's exercise
    after_tests = False
    tuples: dict[str, list[ast.expr]] = {}  # name -> the items of the tuple it was last given, in cell order
    for cell, tree in trees:
        tuples.update({target.id: node.value.elts for node in ast.walk(tree or ast.Module(body=[]))
                       if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List))
                       for target in node.targets if isinstance(target, ast.Name)})
        meta = nbgrader_meta(cell)
        if meta.get("solution") and grade_id(cell):
            exercise, after_tests = ([] if after_tests else exercise) + [grade_id(cell)], False
        elif meta.get("grade") and tree is not None:
            after_tests = True
            named = {name for node in ast.walk(tree) if isinstance(node, ast.Call) and _called(node) in RULES
                     for name in _rule_names(node, tuples)}
            for answer in exercise:
                targets.setdefault(answer, set()).update(n for n in named if not n.startswith("_") and n not in answers)
    return {answer: names for answer, names in targets.items() if names}


def _called(node: ast.Call) -> str | None:
    function = node.func
    return function.id if isinstance(function, ast.Name) else function.attr if isinstance(function, ast.Attribute) \
        else None


def _rule_names(call: ast.Call, tuples: dict[str, list[ast.expr]]) -> set[str]:
    """The names a ``forbid(...)``, ``refuse(owner, names, message)`` or ``no_autograd()`` call names."""
    if _called(call) == "no_autograd":
        return set(AUTOGRAD_NAMES)
    if _called(call) == "refuse":
        names = call.args[1] if len(call.args) > 1 else None
        values = names.elts if isinstance(names, (ast.Tuple, ast.List)) else [names]
        return {v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
    found = set()
    for argument in call.args:
        items = [argument]
        if isinstance(argument, ast.Starred) and isinstance(argument.value, ast.Name):
            items = tuples.get(argument.value.id, [])
        elif isinstance(argument, ast.Name) and argument.id in tuples:
            items = tuples[argument.id]
        found |= {item.attr if isinstance(item, ast.Attribute) else item.id for item in items
                  if isinstance(item, (ast.Attribute, ast.Name))}
    return found


def rule_mentions(tree: ast.AST | None, targets: set[str]) -> set[str]:
    """Those of ``targets`` that ``tree`` names: as an attribute (``F.cross_entropy``), an imported
    name or a string (``getattr(torch, "rnn_tanh_cell")``)."""
    if tree is None or not targets:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in targets:
            found.add(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {alias.name.split(".")[-1] for alias in node.names} & targets
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in targets:
            found.add(node.value)
    return found


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
    statements = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # docstrings and the like
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [f"imports {alias.name}" for alias in node.names
                      if alias.name.split(".")[0] in SUSPICIOUS_NAMES or alias.name in SUSPICIOUS_NAMES]
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in SUSPICIOUS_NAMES:
                found.append(f"imports from {node.module}")
        elif name in SUSPICIOUS_NAMES:
            found.append(f"uses {name}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in REFLECTIVE_CALLS \
                and len(node.args) > 1 and not (isinstance(node.args[1], ast.Constant)
                                                and isinstance(node.args[1].value, str)):
            found.append(f"uses {node.func.id} with a name computed at run time")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and DUNDER_PIECE.search(node.value) \
                and id(node) not in statements:
            found.append(f"builds a dunder name from the string {node.value[:40]!r}")
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
