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

The grader scans the submitted file (:func:`coursetools.grading.scan.submission_findings`); the visible
tests scan the code run in the student's kernel (:func:`history_findings`, called by
:func:`coursetools.checks.may_use.assert_may_use`) with the same :func:`rule_findings`.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from coursetools.common.allowlist import Allowed
from coursetools.common.pynames import (
    IMPORTERS,
    Cell,
    Notebook,
    Resolver,
    bound_by,
    constant_string,
    function_locals,
    parse_cell,
    read_cells,
    under,
)

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
UNREADABLE = frozenset({"builtins.eval", "builtins.exec", "builtins.compile", "builtins.__import__"})
NAMESPACES = frozenset({"builtins.globals", "builtins.vars", "builtins.locals"})
REFLECTIVE = frozenset({"builtins.getattr", "builtins.setattr", "builtins.delattr", "builtins.hasattr"})
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


class _Reader(ast.NodeVisitor):
    """Visits code with its scopes, resolving what each name and attribute is; subclasses say what to report."""

    def __init__(self, notebook: Notebook, cell: Cell, exercise: str = "") -> None:
        self.resolver = Resolver(notebook)
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
        self.resolver.scopes.append(function_locals(node))
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
            if under(module, MACHINERY):
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
                and constant_string(node.args[1]) is None:
            base = self.resolver.path(target)
            if base and not (base.split(".")[0] in PUBLIC_MODULES and "._" not in f".{base}"):
                self.report(node, f"{called.split('.')[1]} on {base} with a name computed at run time")
        if called in IMPORTERS and target is not None and constant_string(target) is None:
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
        if (machinery := under(path, MACHINERY)) is not None:
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
        if root and under(self.resolver.path(node.value) or "", SETTINGS) is None:
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
            if any(constant_string(name) is None for name in names):
                self.report(node, f"{called.split('.')[1]} with a name computed at run time: the scan cannot "
                                  "tell what it reaches")
            elif called in REFLECTIVE and node.args:
                base, name = self.resolver.path(node.args[0]), constant_string(node.args[1])
                if base is None and name in self.methods:
                    self.report(node, f"reaches .{name}, the Tensor method of {self.methods[name]}, "
                                      "which this exercise refuses")
        elif called == "builtins.vars" and node.args:
            self.report(node, "vars() of an object: a name read from a dictionary is outside the allow-list")
        if not self.chain(node):
            self.generic_visit(node)

    def check_path(self, node: ast.AST, path: str) -> None:
        refused = under(path, self.refusals) or under(_tensor_function(path), self.refusals) \
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


def machinery_findings(notebook: Notebook) -> list[Finding]:
    """What the student's cells do that no cell may: reach the machinery, hide code, write to modules."""
    given_names = {name for name, bindings in notebook.bindings.items()
                   if any(not b.cell.student and isinstance(b.value, str) and under(b.value, {"coursetools"})
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


def _binding_alone(node: ast.AST, name: str) -> ast.AST:
    """What binds ``name`` in ``node``: of an import, only the alias that binds it (``from transformer_lib.attention
    import AdditiveAttention, masked_softmax`` reached through ``masked_softmax`` does not use
    ``AdditiveAttention``)."""
    if not isinstance(node, (ast.Import, ast.ImportFrom)):
        return node
    aliases = [alias for alias in node.names
               if (alias.asname or (alias.name.split(".")[0] if isinstance(node, ast.Import) else alias.name)) == name]
    alone = ast.Import(aliases) if isinstance(node, ast.Import) else ast.ImportFrom(node.module, aliases, node.level)
    return ast.copy_location(alone, node)


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
        todo = {name for cell in answers for statement in cell.tree.body for name, node, _ in bound_by(statement)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or name in read_by_given}
        done: set[str] = set()
        while todo - done:
            name = (todo - done).pop()
            done.add(name)
            for binding in notebook.bindings.get(name, []):
                if binding.cell.student:
                    reached: set[str] = set()
                    reader = _Rules(notebook, binding.cell, rules, reached, label)
                    reader.visit(_binding_alone(binding.node, name))
                    found |= reader.found
                    todo |= reached
    return sorted(found)


def scan(cells: Iterable[tuple[str, str, bool]], allowed: dict[str, Allowed] | None = None) -> list[Finding]:
    """Every finding in a notebook's cells (label, code, written by the student), in order."""
    notebook = read_cells(cells)
    return sorted(set(machinery_findings(notebook)) | set(rule_findings(notebook, allowed or {})))


def history_findings(history: Sequence[tuple[str, str]], test: str, names: Iterable[str],
                     allowed: Allowed) -> list[Finding]:
    """What the answer that binds ``names`` uses outside ``allowed``, read from a kernel's history:
    ``history`` is (label, code) of each cell run before the test cell ``test``, in order. Only the latest
    cell that binds a name counts for it (a fixed answer run again replaces the flagged one); the answer
    is the latest cell that binds each of ``names``; the test cell is given code, not scanned. A long
    session costs little more than a short one: each cell's code is parsed once, and only the cells that
    are still the latest to bind some name are read."""
    cells = [Cell(label, tree, True) for label, code in _latest_binders(history) if (tree := _parsed(code))]
    notebook = Notebook([*cells, *read_cells([("the test cell", test, False)]).cells])
    notebook.bindings = {name: [b for b in bindings if b.cell is bindings[-1].cell]
                         for name, bindings in notebook.bindings.items()}
    answers = {bindings[-1].cell.label for name in names
               if (bindings := [b for b in notebook.bindings.get(name, []) if b.cell.student])}
    return rule_findings(notebook, dict.fromkeys(answers, allowed))


@functools.lru_cache(maxsize=2048)
def _parsed(code: str) -> ast.Module | None:
    """A history cell parsed once per kernel (the visible checks read the same history again and again;
    nothing changes the trees)."""
    return parse_cell(code)


@functools.lru_cache(maxsize=2048)
def _bound_names(code: str) -> frozenset[str]:
    tree = _parsed(code)
    return frozenset(name for statement in tree.body for name, _, _ in bound_by(statement)) if tree else frozenset()


def _latest_binders(history: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The cells of ``history``, in order, that are the latest to bind at least one name."""
    seen: set[str] = set()
    kept = []
    for label, code in reversed(history):
        if _bound_names(code) - seen:
            kept.append((label, code))
            seen |= _bound_names(code)
    return kept[::-1]
