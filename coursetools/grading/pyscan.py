"""A submission's code read as Python: every name and attribute resolved, each finding with its line.

Two kinds of finding, both made on the file, before anything runs, where the student cannot reach them:

* **Always**, rules or not (:func:`machinery_findings`): code that reaches the kernel's machinery
  (frames, ``comm_manager``, ``zmq``, ``ipykernel``, the checker's modules, ``gc.get_objects``,
  ``ctypes``...), code the scan cannot read (``eval``, ``exec``, a module named at run time), and
  writes to modules the notebook did not create (``torch.allclose = ...``, ``contextlib.ExitStack = ...``,
  ``sys.modules[...] = ...``), in every cell the student wrote.
* **Outside an exercise's allow-list** (:func:`rule_findings`): what the answer of an exercise with
  rules uses (its cells' definitions and every name they reach, across the student's cells) that
  its :class:`Allowed` does not allow: a refused function by any route (an alias, ``getattr`` with a
  constant, the Tensor method of the same name, ``torch.ops``), torch's private names, and the modules
  and builtins no answer with rules needs. An expression the scan cannot resolve (``getattr`` with a
  computed name) counts as outside.

Names are resolved through imports (``import torch.nn.functional as F``, ``from torch import nn``),
assignments (``fn = torch.autograd.grad``), ``getattr`` with a constant string, ``sys.modules[...]``
and ``vars(module)[...]``. A method is not a builtin (``model.eval()``, ``re.compile``), a string
is not an attribute (messages, docstrings, ``hasattr(x, "__len__")``), and code the answer does not
reach (an autograd self-check in a cell of its own) is not the answer.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from nbformat import NotebookNode
from nbgrader.utils import is_locked

from coursetools.common.allowlist import Allowed
from coursetools.common.cells import grade_id
from coursetools.grading.scan import parse_cell

# Reaching any of these (a module, or a name under it) is reaching the kernel's or the checker's machinery.
MACHINERY = frozenset({
    "ctypes", "_ctypes", "zmq", "ipykernel", "jupyter_client", "comm", "coursetools", "linecache",
    "IPython.core", "IPython.get_ipython", "IPython.kernel", "builtins.get_ipython", "builtins.breakpoint",
    "sys._getframe", "sys._current_frames", "sys._current_exceptions", "sys.modules", "sys.settrace",
    "sys.setprofile", "sys.meta_path", "sys.path_hooks", "sys.addaudithook",
    "inspect.currentframe", "inspect.stack", "inspect.trace", "inspect.getouterframes", "inspect.getinnerframes",
    "inspect.getclosurevars", "gc.get_objects", "gc.get_referents", "gc.get_referrers", "threading.settrace",
    "types.FrameType", "types.CodeType", "types.FunctionType"})
# Attributes that are the interpreter's insides, whatever object they are read from.
MACHINERY_ATTRIBUTES = frozenset({
    "f_back", "f_globals", "f_locals", "f_builtins", "tb_frame", "tb_next", "gi_frame", "cr_frame", "ag_frame",
    "comm_manager", "__globals__", "__code__", "__closure__", "__builtins__", "__subclasses__", "__defaults__",
    "__kwdefaults__"})
# Settings a notebook may write, though they live in a module (``plt.rcParams["figure.figsize"] = ...``).
SETTINGS = frozenset({"matplotlib.rcParams", "matplotlib.pyplot.rcParams"})
# Names IPython's kernel adds to the builtins.
KERNEL_BUILTINS = frozenset({"get_ipython", "display"})
# Builtins whose code the scan cannot read, or that reach the namespace by strings.
UNREADABLE = frozenset({"builtins.eval", "builtins.exec", "builtins.compile", "builtins.__import__"})
NAMESPACES = frozenset({"builtins.globals", "builtins.vars", "builtins.locals"})
REFLECTIVE = frozenset({"builtins.getattr", "builtins.setattr", "builtins.delattr", "builtins.hasattr"})
IMPORTERS = frozenset({"importlib.import_module", "builtins.__import__"})
# Modules whose public names a computed getattr may reach outside a rule (``getattr(torch, f"complex{bits}")``).
PUBLIC_MODULES = frozenset({"torch", "numpy", "math", "transformer_lib", "operator", "string", "itertools", "random"})

# Dunder attributes every style of Python reads; every other one is outside an allow-list.
ORDINARY_DUNDERS = frozenset({"__init__", "__class__", "__name__", "__qualname__", "__doc__", "__module__"})


@dataclass(frozen=True, order=True)
class Finding:
    """One thing a cell does that it should not, with its line in that cell (1-based); ``exercise``: the
    answer cell whose allow-list it is outside (empty for what no cell may do)."""

    cell: str
    line: int
    what: str
    exercise: str = ""

    def __str__(self) -> str:
        return f"{self.cell}, line {self.line}: {self.what}"


@dataclass
class Cell:
    """A code cell as the scan reads it: its label (the grade_id, or ``cell <n>``), its code, and whether the
    student wrote it (given cells bind names, e.g. the setup's imports, and are not scanned)."""

    label: str
    tree: ast.Module
    student: bool


@dataclass
class _Binding:
    """A global name bound by a statement of a cell: ``value`` is what to resolve it through (an
    expression, or a module path for an import), ``node`` what an answer reaching the name runs."""

    cell: Cell
    node: ast.AST
    value: ast.expr | str | None


@dataclass
class Notebook:
    """The cells in order and the global names they bind."""

    cells: list[Cell]
    bindings: dict[str, list[_Binding]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for cell in self.cells:
            for statement in cell.tree.body:
                for name, node, value in _bound_by(statement):
                    self.bindings.setdefault(name, []).append(_Binding(cell, node, value))


def _bound_by(statement: ast.stmt) -> Iterator[tuple[str, ast.AST, ast.expr | str | None]]:
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
            for name in _stored_names(target):
                yield name, statement, statement.value if single else None
    else:
        if isinstance(statement, (ast.For, ast.AsyncFor)):
            for name in _stored_names(statement.target):
                yield name, statement.iter, None
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                for name in _stored_names(item.optional_vars) if item.optional_vars else ():
                    yield name, item.context_expr, None
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.stmt):
                yield from _bound_by(child)
            elif isinstance(child, ast.ExceptHandler):
                for inner in child.body:
                    yield from _bound_by(inner)
            elif isinstance(child, ast.expr):  # a walrus at the top level
                for node in ast.walk(child):
                    if isinstance(node, ast.NamedExpr):
                        yield node.target.id, node, node.value


def _stored_names(target: ast.AST) -> Iterator[str]:
    """The names an assignment's target binds (``a, *b = ...``); ``x.y = ...`` and ``x[0] = ...`` bind none."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Starred):
        yield from _stored_names(target.value)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for item in target.elts:
            yield from _stored_names(item)


def _function_locals(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> dict[str, list]:
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
        for node in _walk_scope(statement):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                found.setdefault(node.targets[0].id, []).append(node.value)
            elif isinstance(node, ast.NamedExpr):
                found.setdefault(node.target.id, []).append(node.value)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                found.setdefault(node.id, []).append(None)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):  # resolved as the module-level imports are
                for name, _, module in _bound_by(node):
                    found.setdefault(name, []).append(module)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not statement:
                found.setdefault(node.name, []).append(None)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                found.setdefault(node.name, []).append(None)
    return {name: values for name, values in found.items() if name not in declared}


def _walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one scope: nested functions, lambdas and classes are yielded but not entered."""
    yield node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
        return
    for child in ast.iter_child_nodes(node):
        yield from _walk_scope(child)


class _Resolver:
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
            constant = _constant_string(node.args[1]) if len(node.args) > 1 else None
            if called == "builtins.getattr" and constant is not None:
                base = self.path(node.args[0], depth + 1)
                return f"{base}.{constant}" if base else None
            if called in IMPORTERS and node.args and _constant_string(node.args[0]):
                return _constant_string(node.args[0])
            if called == "builtins.vars" and node.args:
                base = self.path(node.args[0], depth + 1)
                return f"{base}.__dict__" if base else None
            return None
        if isinstance(node, ast.Subscript):
            base, key = self.path(node.value, depth + 1), _constant_string(node.slice)
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


def _constant_string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _under(path: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` that ``path`` is or is under (``torch.autograd.grad`` is under ``torch.autograd``)."""
    return next((name for name in names if path == name or path.startswith(name + ".")), None)


class _Reader(ast.NodeVisitor):
    """Visits code with its scopes, resolving what each name and attribute is; subclasses say what to report."""

    def __init__(self, notebook: Notebook, cell: Cell, exercise: str = "") -> None:
        self.resolver = _Resolver(notebook)
        self.cell, self.exercise = cell, exercise
        self.found: set[Finding] = set()

    def report(self, node: ast.AST, what: str) -> None:
        self.found.add(Finding(self.cell.label, getattr(node, "lineno", 0), what, self.exercise))

    def check_path(self, node: ast.AST, path: str) -> None:
        """Report what the resolved ``path`` of ``node`` is, if it is one the reader looks for."""

    def chain(self, node: ast.AST) -> bool:
        """Check a name read through attributes as a whole (``torch.autograd.grad``, not its parts): True when
        it resolved and nothing under it is left to read."""
        path = self.resolver.path(node)
        if path is None:
            return False
        self.check_path(node, path)
        if isinstance(node, ast.Call) and (called := self.resolver.path(node.func)):  # getattr, import_module, vars
            self.check_path(node.func, called)
        return True

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        for child in [*getattr(node, "decorator_list", []), *node.args.defaults,
                      *filter(None, node.args.kw_defaults)]:
            self.visit(child)
        self.resolver.scopes.append(_function_locals(node))
        for statement in ([node.body] if isinstance(node, ast.Lambda) else node.body):
            self.visit(statement)
        self.resolver.scopes.pop()

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef


class _Machinery(_Reader):
    """What every student cell may never do (:func:`machinery_findings`)."""

    def __init__(self, notebook: Notebook, cell: Cell, given_names: set[str]) -> None:
        super().__init__(notebook, cell)
        self.given_names = given_names

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [f"{node.module}.{a.name}" for a in node.names] if node.level == 0 else []
        for module in modules:
            if _under(module, MACHINERY):
                self.report(node, f"imports {module}, the kernel's or the checker's machinery")

    visit_ImportFrom = visit_Import

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in MACHINERY_ATTRIBUTES:
            self.report(node, f"reads .{node.attr}, the interpreter's insides")
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._check_write(node)
        if not self.chain(node):
            self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.chain(node)
        elif self.resolver.local(node.id) is None and node.id in self.given_names:
            self.report(node, f"rebinds {node.id}, which the given cells import from the course's checks")

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._check_write(node)
        self.chain(node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        called = self.resolver.path(node.func)
        target = node.args[0] if node.args else None
        if called in {"builtins.setattr", "builtins.delattr"} and target is not None:
            root = self._module_root(target)
            if root:
                self.report(node, f"{called.split('.')[1]} on {root}, a module the notebook did not create")
        if called in REFLECTIVE and target is not None and len(node.args) > 1 \
                and _constant_string(node.args[1]) is None:
            base = self.resolver.path(target)
            if base and not (base.split(".")[0] in PUBLIC_MODULES and "._" not in f".{base}"):
                self.report(node, f"{called.split('.')[1]} on {base} with a name computed at run time")
        if called in IMPORTERS and target is not None and _constant_string(target) is None:
            self.report(node, "imports a module named at run time")
        if isinstance(node.func, ast.Attribute) and node.func.attr in {"update", "setdefault", "__setitem__"} \
                and self._namespace(node.func.value):
            self.report(node, "rebinds names through the namespace's dictionary")
        if not self.chain(node):
            self.generic_visit(node)

    def _namespace(self, node: ast.AST) -> bool:
        """``globals()``, ``vars()``, ``locals()``: the notebook's names as a dictionary."""
        return isinstance(node, ast.Call) and not node.args and self.resolver.path(node.func) in NAMESPACES

    def check_path(self, node: ast.AST, path: str) -> None:
        if (machinery := _under(path, MACHINERY)) is not None:
            self.report(node, f"uses {path}" + ("" if machinery == path else f" ({machinery})")
                        + ", the kernel's or the checker's machinery")
        elif path in UNREADABLE:
            self.report(node, f"uses {path.split('.')[1]}, whose code the scan cannot read")

    def _module_root(self, node: ast.AST) -> str | None:
        """The module a written expression belongs to (``torch`` for ``torch.Tensor.__eq__``), if any."""
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            path = self.resolver.path(node)
            if path and not path.startswith("builtins."):
                return path.split(".")[0]
            node = node.value
        if isinstance(node, ast.Call) and self.resolver.path(node.func) in NAMESPACES and node.args:
            return self._module_root(node.args[0])
        path = self.resolver.path(node) if isinstance(node, (ast.Name, ast.Call)) else None
        return path.split(".")[0] if path and (not path.startswith("builtins.") or path == "builtins.__dict__") \
            else None

    def _check_write(self, node: ast.Attribute | ast.Subscript) -> None:
        if self._namespace(node.value):
            self.report(node, "rebinds a name through the namespace's dictionary")
            return
        root = self._module_root(node.value)
        if root and _under(self.resolver.path(node.value) or "", SETTINGS) is None:
            self.report(node, f"writes to {ast.unparse(node)}, in {root}, a module the notebook did not create")


class _Rules(_Reader):
    """What an exercise's answer reaches that its allow-list does not allow (:func:`rule_findings`)."""

    def __init__(self, notebook: Notebook, cell: Cell, allowed: Allowed, reached: set[str], exercise: str) -> None:
        super().__init__(notebook, cell, exercise)
        self.allowed, self.refusals, self.reached = allowed, allowed.refusals(), reached
        # a refused function named where it is defined (``torch.nn.modules.rnn.RNNCell`` for ``torch.nn.RNNCell``)
        self.by_last_name = {(name.split(".")[0], name.rsplit(".", 1)[1]): name for name in allowed.refused
                             if "." in name}
        # a Tensor method of a refused torch function (``x.multinomial`` for ``torch.multinomial``)
        self.methods = {name.rsplit(".", 1)[1]: name for name in self.refusals
                        if name.startswith("torch.") and name.count(".") == 1 or name.startswith("torch.Tensor.")}

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        paths = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [f"{node.module}.{a.name}" for a in node.names]
        for path in paths:
            self.check_path(node, path)

    visit_ImportFrom = visit_Import

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            if self.resolver.local(node.id) is None and node.id in self.resolver.notebook.bindings:
                self.reached.add(node.id)
            self.chain(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self.chain(node):
            return
        if node.attr.startswith("__") and node.attr.endswith("__") and node.attr not in ORDINARY_DUNDERS:
            self.report(node, f"reads .{node.attr}: dunder attributes are outside the allow-list")
        elif node.attr in self.methods and self.resolver.path(node.value) is None:
            self.report(node, f"calls .{node.attr}, the Tensor method of {self.methods[node.attr]}, "
                              "which this exercise refuses")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        called = self.resolver.path(node.func)
        if called in REFLECTIVE | {"operator.attrgetter", "operator.methodcaller"}:
            names = node.args[1:2] if called in REFLECTIVE else node.args
            if any(_constant_string(name) is None for name in names):
                self.report(node, f"{called.split('.')[1]} with a name computed at run time: the scan cannot "
                                  "tell what it reaches")
            elif called in REFLECTIVE and node.args:
                base, name = self.resolver.path(node.args[0]), _constant_string(node.args[1])
                if base is None and name in self.methods:
                    self.report(node, f"reaches .{name}, the Tensor method of {self.methods[name]}, "
                                      "which this exercise refuses")
        elif called == "builtins.vars" and node.args:
            self.report(node, "vars() of an object: a name read from a dictionary is outside the allow-list")
        if not self.chain(node):
            self.generic_visit(node)

    def check_path(self, node: ast.AST, path: str) -> None:
        refused = _under(path, self.refusals) or _under(_tensor_function(path), self.refusals) \
            or self.by_last_name.get((path.split(".")[0], path.rsplit(".", 1)[-1]))
        if refused is not None:
            self.report(node, f"uses {path}" + ("" if refused == path else f" (under {refused})")
                        + ", which this exercise's allow-list refuses")
        elif any(part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
                 for part in path.split(".")[1:]) and not path.startswith("builtins."):
            self.report(node, f"uses {path}: private names are outside the allow-list")
        elif any(part.startswith("__") and part.endswith("__") and part not in ORDINARY_DUNDERS
                 for part in path.split(".")[1:]):
            self.report(node, f"uses {path}: dunder attributes are outside the allow-list")


def _tensor_function(path: str) -> str:
    """``torch.rnn_tanh_cell`` for the same kernel named under ``torch.ops.aten`` or ``torch._C._VariableFunctions``
    (compared with the refused names as well as the path itself)."""
    for prefix in ("torch.ops.aten.", "torch._C._VariableFunctions.", "torch._VF.", "torch._C._nn.",
                   "torch._C.TensorBase.", "torch._C._TensorBase."):
        if path.startswith(prefix):
            return "torch." + path.removeprefix(prefix).split(".")[0]
    return path


def read_cells(cells: Iterable[tuple[str, str, bool]]) -> Notebook:
    """The notebook of (label, code, written by the student) cells; a cell that does not parse is left
    out (it fails in the kernel too, and scores nothing)."""
    return Notebook([Cell(label, tree, student) for label, code, student in cells
                     if (tree := parse_cell(code)) is not None])


def machinery_findings(notebook: Notebook) -> list[Finding]:
    """What the student's cells do that no cell may: reach the machinery, hide code, write to modules."""
    given_names = {name for name, bindings in notebook.bindings.items()
                   if any(not b.cell.student and isinstance(b.value, str) and _under(b.value, {"coursetools"})
                          for b in bindings)}
    found: set[Finding] = set()
    for cell in notebook.cells:
        if cell.student:
            reader = _Machinery(notebook, cell, given_names)
            reader.visit(cell.tree)
            found |= reader.found
    return sorted(found)


def _read_names(tree: ast.AST) -> set[str]:
    """The names a cell reads that it does not bind itself (a test cell reads the answer's name)."""
    loaded = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    stored = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)}
    return loaded - stored


def rule_findings(notebook: Notebook, allowed: dict[str, Allowed]) -> list[Finding]:
    """What the answer cells named in ``allowed`` (grade_id -> its exercise's list), and whatever of the
    student's code they reach, use outside the list. The answer is what those cells define (functions,
    classes) and the names they bind that the given cells (the tests) read; a self-check beside it
    (``loss.backward()`` to compare with a gradient written by hand) is not the answer. Given cells are the
    instructor's and are not read."""
    found: set[Finding] = set()
    read_by_given = set().union(*(_read_names(cell.tree) for cell in notebook.cells if not cell.student))
    for label, rules in allowed.items():
        answers = [cell for cell in notebook.cells if cell.label == label and cell.student]
        todo = {name for cell in answers for statement in cell.tree.body for name, node, _ in _bound_by(statement)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or name in read_by_given}
        done: set[str] = set()
        while todo - done:
            name = (todo - done).pop()
            done.add(name)
            for binding in notebook.bindings.get(name, []):
                if binding.cell.student:
                    reached: set[str] = set()
                    reader = _Rules(notebook, binding.cell, rules, reached, label)
                    reader.visit(binding.node)
                    found |= reader.found
                    todo |= reached
    return sorted(found)


def scan(cells: Iterable[tuple[str, str, bool]], allowed: dict[str, Allowed] | None = None) -> list[Finding]:
    """Every finding in a notebook's cells (label, code, written by the student), in order."""
    notebook = read_cells(cells)
    return sorted(set(machinery_findings(notebook)) | set(rule_findings(notebook, allowed or {})))


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
