"""A notebook's code as names: the cells read with ``ast``, the global names they bind, and what each
expression names (``torch.nn.functional.cross_entropy`` for ``F.cross_entropy`` after
``import torch.nn.functional as F``), in the scopes of the functions it is in. The scan
(:mod:`coursetools.common.pyscan`) reads a submission through it.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from IPython.core.inputtransformer2 import TransformerManager

# Names IPython's kernel adds to the builtins.
KERNEL_BUILTINS = frozenset({"get_ipython", "display"})
# The magics a notebook may use (``%matplotlib inline``, ``%time``): not reported as get_ipython.
ALLOWED_MAGICS = re.compile(r"get_ipython\(\)\.run_line_magic\('(matplotlib|time|timeit)'")
# Calls that import a module named by their first argument.
IMPORTERS = frozenset({"importlib.import_module", "builtins.__import__"})


@dataclass
class Cell:
    """A code cell as the scan reads it: its label (the grade_id, or ``cell <n>``), its code, and whether the
    student wrote it (given cells bind names, e.g. the setup's imports, and are not scanned)."""

    label: str
    tree: ast.Module
    student: bool


@dataclass
class Binding:
    """A global name bound by a statement of a cell: ``value`` is what to resolve it through (an
    expression, or a module path for an import), ``node`` what an answer reaching the name runs."""

    cell: Cell
    node: ast.AST
    value: ast.expr | str | None


@dataclass
class Notebook:
    """The cells in order and the global names they bind."""

    cells: list[Cell]
    bindings: dict[str, list[Binding]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for cell in self.cells:
            for statement in cell.tree.body:
                for name, node, value in bound_by(statement):
                    self.bindings.setdefault(name, []).append(Binding(cell, node, value))


def bound_by(statement: ast.stmt) -> Iterator[tuple[str, ast.AST, ast.expr | str | None]]:
    """(name, node, value) for each global name a top-level statement binds (into ``if``/``for``/``try``/``with``)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield statement.name, statement, None
    elif isinstance(statement, ast.Import):
        for alias in statement.names:
            yield (alias.asname or alias.name.split(".")[0]), statement, \
                alias.name if alias.asname else alias.name.split(".")[0]
    elif isinstance(statement, ast.ImportFrom):
        for alias in statement.names:
            yield alias.asname or alias.name, statement, f"{statement.module}.{alias.name}" if statement.level == 0 \
                else None
    elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            single = isinstance(target, ast.Name) and not isinstance(statement, ast.AugAssign)
            for name in stored_names(target):
                yield name, statement, statement.value if single else None
    else:
        if isinstance(statement, (ast.For, ast.AsyncFor)):
            for name in stored_names(statement.target):
                yield name, statement.iter, None
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                for name in stored_names(item.optional_vars) if item.optional_vars else ():
                    yield name, item.context_expr, None
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.stmt):
                yield from bound_by(child)
            elif isinstance(child, ast.ExceptHandler):
                for inner in child.body:
                    yield from bound_by(inner)
            elif isinstance(child, ast.expr):  # a walrus at the top level
                for node in ast.walk(child):
                    if isinstance(node, ast.NamedExpr):
                        yield node.target.id, node, node.value


def stored_names(target: ast.AST) -> Iterator[str]:
    """The names an assignment's target binds (``a, *b = ...``); ``x.y = ...`` and ``x[0] = ...`` bind none."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Starred):
        yield from stored_names(target.value)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for item in target.elts:
            yield from stored_names(item)


def function_locals(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> dict[str, list]:
    """A function's local names -> the values assigned to them (an expression, a module path for an import,
    None for a parameter, a loop variable...)."""
    arguments = function.args
    found: dict[str, list] = {
        a.arg: [None] for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                *filter(None, [arguments.vararg, arguments.kwarg])]}
    body = [function.body] if isinstance(function, ast.Lambda) else function.body
    declared = {name for statement in body for node in ast.walk(statement)
                if isinstance(node, (ast.Global, ast.Nonlocal)) for name in node.names}
    for statement in body:
        for node in walk_scope(statement):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                found.setdefault(node.targets[0].id, []).append(node.value)
            elif isinstance(node, ast.NamedExpr):
                found.setdefault(node.target.id, []).append(node.value)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                found.setdefault(node.id, []).append(None)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):  # resolved as the module-level imports are
                for name, _, module in bound_by(node):
                    found.setdefault(name, []).append(module)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not statement:
                found.setdefault(node.name, []).append(None)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                found.setdefault(node.name, []).append(None)
    return {name: values for name, values in found.items() if name not in declared}


def walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one scope: nested functions, lambdas and classes are yielded but not entered."""
    yield node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        return
    for child in ast.iter_child_nodes(node):
        yield from walk_scope(child)


class Resolver:
    """Dotted names of expressions, in the scopes of one notebook (globals, then each function's locals)."""

    def __init__(self, notebook: Notebook) -> None:
        self.notebook = notebook
        self.scopes: list[dict[str, list]] = []

    def local(self, name: str) -> list | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def path(self, node: ast.AST, depth: int = 0) -> str | None:
        """``torch.nn.functional.cross_entropy`` for ``F.cross_entropy`` after ``import torch.nn.functional as F``;
        None for what is not a name of a module (a tensor, a call's result, a student's own object)."""
        if depth > 20:
            return None
        if isinstance(node, ast.Name):
            return self.name_path(node.id, depth)
        if isinstance(node, ast.Attribute):
            base = self.path(node.value, depth + 1)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            called = self.path(node.func, depth + 1)
            constant = constant_string(node.args[1]) if len(node.args) > 1 else None
            if called == "builtins.getattr" and constant is not None:
                base = self.path(node.args[0], depth + 1)
                return f"{base}.{constant}" if base else None
            if called in IMPORTERS and node.args and constant_string(node.args[0]):
                return constant_string(node.args[0])
            if called == "builtins.vars" and node.args:
                base = self.path(node.args[0], depth + 1)
                return f"{base}.__dict__" if base else None
            return None
        if isinstance(node, ast.Subscript):
            base, key = self.path(node.value, depth + 1), constant_string(node.slice)
            if base == "sys.modules" and key:
                return key
            if base and base.endswith(".__dict__") and key:
                return f"{base.removesuffix('.__dict__')}.{key}"
        return None

    def name_path(self, name: str, depth: int = 0) -> str | None:
        values = self.local(name)
        if values is None:
            bindings = self.notebook.bindings.get(name)
            if bindings is None:
                return f"builtins.{name}" if hasattr(builtins, name) or name in KERNEL_BUILTINS else None
            mine = [b for b in bindings if b.cell.student]  # the student's own binding shadows a given cell's
            values = [b.value for b in mine or bindings]
        paths = {value if isinstance(value, str) else self.path(value, depth + 1) if value is not None else None
                 for value in values}
        return paths.pop() if len(paths) == 1 else None


def constant_string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def under(path: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` that ``path`` is or is under (``torch.autograd.grad`` is under ``torch.autograd``)."""
    return next((name for name in names if path == name or path.startswith(name + ".")), None)


def read_cells(cells: Iterable[tuple[str, str, bool]]) -> Notebook:
    """The notebook of (label, code, written by the student) cells; a cell that does not parse is left
    out (it fails in the kernel too, and scores nothing)."""
    return Notebook([Cell(label, tree, student) for label, code, student in cells
                     if (tree := parse_cell(code)) is not None])


def parse_cell(source: str) -> ast.AST | None:
    """A code cell as Python (IPython magics transformed), or None if it does not parse: such a
    cell fails in the kernel too, and scores nothing."""
    try:
        return ast.parse(ALLOWED_MAGICS.sub("pass  #", TransformerManager().transform_cell(source)))
    except SyntaxError:
        return None
