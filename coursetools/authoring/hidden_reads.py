"""What a test block does, read from its code: the facts the fairness lint compares, hidden with visible.

The ``# checks:`` line of a hidden block is its author's word; these functions read the code
itself (its ``ast``, nothing runs), so that a rule the declaration forgets still has to be shown by
a visible test (:mod:`coursetools.authoring.fairness`):

* :func:`patched_targets`: what the block patches in torch directly (``torch.x = ...``,
  ``setattr(torch.nn.functional, "x", ...)``, ``unittest.mock.patch("torch.x")``): a hidden block
  runs in the checker, so such a patch changes the checker's torch, not the student's;
* :func:`expected_exceptions`: the exceptions it expects, with the reason each one gives
  (``expect_raises(E, message)``, ``pytest.raises(E, match=...)``, ``try: ... except E:``);
* :func:`checks_dtype`: whether it compares a dtype (``assert_equal(x.dtype, ...)``, ``x.dtype == ...``),
  :func:`checked_dtypes` which dtypes, and :func:`expects_error_for_negative` whether it expects an error
  from a negative argument (a sign rule);
* :func:`input_shapes`: the ranks of the tensors it passes to the exercise's answers, and whether one
  is empty (a size of 0, ``[]``, ``""``), where the code builds them in the call or just before;
* :func:`times_code`: whether it measures time (``time.perf_counter()``, ``timeit``...);
* :func:`aliases`: local names of what the code imports or binds to a name (``r = refuse``), for the
  lint's reading of refused and forbidden targets.
"""

from __future__ import annotations

import ast
import re

_TENSOR_MAKERS = {"randn", "rand", "zeros", "ones", "empty", "full", "randint", "rand_like", "arange"}
_TIMERS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns", "timeit",
           "process_time", "repeat"}
_GENERIC_ERRORS = {"Exception", "BaseException", "AssertionError"}
_DTYPES = {"float16", "bfloat16", "float32", "float64", "half", "float", "double", "int8", "int16", "int32", "int64",
           "int", "long", "uint8", "bool", "complex64", "complex128"}


def parse(code: str) -> ast.Module:
    """``code`` parsed, IPython lines (``%``, ``!``) left out; an empty module when it does not parse."""
    try:
        return ast.parse("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


def dotted(node: ast.AST, names: dict[str, str]) -> str | None:
    """``a.b.c`` with its first name replaced by what it aliases, or None for another expression."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([names.get(node.id, node.id), *reversed(parts)])


def aliases(trees: list[ast.Module]) -> dict[str, str]:
    """Local name -> dotted name, from the imports (``import torch.nn as nn``, ``from x import y as
    _y``) and the plain aliases (``_F = torch.nn.functional``, ``r = refuse``) of ``trees``."""
    found: dict[str, str] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                        alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for tree in trees:  # then names bound to a name or an attribute: r = refuse, _F = torch.nn.functional
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute)):
                target = dotted(node.value, found)
                for name in (t.id for t in node.targets if isinstance(t, ast.Name)):
                    if target and target.split(".")[0] != name:
                        found.setdefault(name, target)
    return found


def called(node: ast.Call, names: dict[str, str]) -> str:
    """The last part of what a call calls, through ``names`` (``no(...)`` for ``refuse as no`` is ``refuse``)."""
    target = dotted(node.func, names)
    return target.rsplit(".", 1)[-1] if target else ""


def patched_targets(code: str, context: list[str] = ()) -> set[str]:
    """The torch names ``code`` patches directly: assigned (``torch.x = f``, ``F.x = f``), set with
    ``setattr(owner, "x", f)``, or patched with ``unittest.mock.patch("torch.x")`` / ``patch.object(owner, "x")``."""
    tree = parse(code)
    names = aliases([tree, *map(parse, context)])
    found: set[str] = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            if isinstance(target, ast.Attribute) and (name := dotted(target, names)) and name.startswith("torch."):
                found.add(name)
        if not isinstance(node, ast.Call):
            continue
        function = dotted(node.func, names) or ""
        owner = dotted(node.args[0], names) if node.args else None
        attribute = node.args[1].value if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else "?"
        if function.endswith("setattr") and owner and owner.startswith("torch"):
            found.add(f"{owner}.{attribute}")
        elif function.endswith("patch.object") and owner and owner.startswith("torch"):
            found.add(f"{owner}.{attribute}")
        elif function.split(".")[-1] == "patch" and "mock" in function and node.args \
                and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("torch"):
            found.add(str(node.args[0].value))
    return found


def _text(node: ast.AST | None) -> str:
    """A message's words: a string as written, an f-string without its placeholders, else ``""``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return " ".join(part.value for part in node.values if isinstance(part, ast.Constant))
    return ""


def exception_reason(message: str, error: str) -> str:
    """The reason a message gives for expecting ``error``: the text after "should raise a(n) <error>"
    or "raises <error>", without the brackets around it (``"f(x) should raise a ValueError (no heads)"``
    gives ``"no heads"``); the whole message when it has no such phrase (a ``match`` pattern)."""
    found = re.search(rf"\b(?:raises?|raising)\s+(?:an?\s+)?{re.escape(error)}\b(.*)$", message, re.DOTALL)
    reason = found.group(1) if found else message
    return " ".join(reason.strip(" :;,.-").strip("()").split())


def expected_exceptions(code: str) -> set[tuple[str, str]]:
    """``(exception class name, reason)`` for each exception ``code`` expects: ``expect_raises(E, message)``,
    ``pytest.raises(E, match=pattern)`` and ``except E`` (no reason); ``Exception`` and the like are left out."""
    tree = parse(code)
    names = aliases([tree])
    found: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and called(node, names) in ("expect_raises", "raises") and node.args:
            error = ast.unparse(node.args[0]).rsplit(".", 1)[-1]
            match = next((k.value for k in node.keywords if k.arg == "match"), None)
            message = _text(match) if called(node, names) == "raises" else _text(node.args[1]) if len(node.args) > 1 \
                else ""
            found.add((error, exception_reason(message, error) if called(node, names) == "expect_raises" else message))
        elif isinstance(node, ast.ExceptHandler) and node.type is not None:
            kinds = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            found |= {(ast.unparse(kind).rsplit(".", 1)[-1], "") for kind in kinds}
    return {(error, reason) for error, reason in found if error not in _GENERIC_ERRORS}


def _dtype_checks(code: str) -> list[ast.AST]:
    """The comparisons, ``assert``\\ s and calls of ``code`` that read a ``.dtype`` or ``is_floating_point``."""
    found = []
    for node in ast.walk(parse(code)):
        parts = [*node.args, *(k.value for k in node.keywords)] if isinstance(node, ast.Call) else \
            [node] if isinstance(node, (ast.Compare, ast.Assert)) else []
        if any(isinstance(n, ast.Attribute) and n.attr in ("dtype", "is_floating_point")
               for part in parts for n in ast.walk(part)):
            found.append(node)
    return found


def checks_dtype(code: str) -> bool:
    """Whether ``code`` checks a dtype: ``.dtype`` in a comparison, an ``assert`` or a call's arguments
    (``assert_equal(x.dtype, torch.float64)``), or an ``is_floating_point()`` test."""
    return bool(_dtype_checks(code))


def checked_dtypes(code: str) -> set[str]:
    """The dtypes ``code``'s dtype checks name (``torch.float32`` in ``assert_equal(y.dtype, torch.float32)``):
    a rule for float32 inputs is not shown by a visible test of float64 ones (ch09 before issue 50)."""
    return {n.attr for check in _dtype_checks(code) for n in ast.walk(check)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "torch"
            and n.attr in _DTYPES}


def _negative(node: ast.AST) -> bool:
    return any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Constant)
               and isinstance(n.operand.value, int) and n.operand.value > 0 for n in ast.walk(node))


def expects_error_for_negative(code: str) -> bool:
    """Whether ``code`` expects an error (``with expect_raises(...)``) from a call given a negative integer,
    written in the call or in the list a loop around it runs over (ch11's ``num_heads=-2``)."""

    def visit(node: ast.AST, loop_negative: bool) -> bool:
        if isinstance(node, ast.For):
            loop_negative = loop_negative or _negative(node.iter)
        if isinstance(node, ast.With) and any(isinstance(item.context_expr, ast.Call)
                                              and ast.unparse(item.context_expr.func).endswith("expect_raises")
                                              for item in node.items):
            if loop_negative or any(_negative(call) for statement in node.body for call in ast.walk(statement)
                                    if isinstance(call, ast.Call)):
                return True
        return any(visit(child, loop_negative) for child in ast.iter_child_nodes(node))

    return visit(parse(code), False)


_SAME_RANK_METHODS = {"clone", "double", "float", "half", "to", "requires_grad_", "detach", "contiguous", "abs",
                      "softmax", "log_softmax", "exp", "tanh", "sigmoid"}
_NEW_SHAPE_METHODS = {"expand", "reshape", "view", "repeat"}


def _rank(node: ast.AST, names: dict[str, str], built: dict | None = None) -> tuple[int | None, bool]:
    """(the rank of the tensor an expression builds, whether it is empty); (None, False) when unknown. A
    shape-keeping call (``x.clone()``, ``torch.softmax(x, -1)``) has its input's rank, ``x.expand(4, 3)`` its sizes'."""
    if isinstance(node, (ast.List, ast.Tuple)) and not node.elts or isinstance(node, ast.Constant) and node.value == "":
        return None, True
    if isinstance(node, ast.Name) and built and built.get(node.id):
        return built[node.id][-1]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _NEW_SHAPE_METHODS:
        sizes = node.args[0].elts if len(node.args) == 1 and isinstance(node.args[0], ast.Tuple) else node.args
        return (None, False) if any(isinstance(size, ast.Starred) for size in sizes) else (len(sizes), False)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SAME_RANK_METHODS:
        inner = node.args[0] if (dotted(node.func, names) or "").startswith("torch.") and node.args else node.func.value
        return _rank(inner, names, built)
    if not isinstance(node, ast.Call) or not (target := dotted(node.func, names) or "").startswith("torch."):
        return None, False
    function = target.rsplit(".", 1)[-1]
    if function == "tensor" and node.args:
        depth, value, empty = 0, node.args[0], False
        while isinstance(value, (ast.List, ast.Tuple)):
            depth, empty = depth + 1, not value.elts
            value = value.elts[0] if value.elts else None
        return (None if depth == 0 or isinstance(value, (ast.ListComp, ast.GeneratorExp, ast.Starred)) else depth,
                empty)
    if function == "arange":
        return 1, False
    if function not in _TENSOR_MAKERS or function == "rand_like":
        return None, False
    size = next((k.value for k in node.keywords if k.arg == "size"), None)
    sizes = [size] if size is not None else node.args[:1] if function == "full" else \
        node.args[-1:] if function == "randint" else node.args
    if len(sizes) == 1 and isinstance(sizes[0], (ast.Tuple, ast.List)):
        sizes = sizes[0].elts
    elif function in ("full", "randint") or size is not None:
        return None, False
    if any(isinstance(size, ast.Starred) for size in sizes):
        return None, False
    return len(sizes), any(isinstance(size, ast.Constant) and size.value == 0 for size in sizes)


def input_shapes(code: str, answers: set[str], context: list[str] = ()) -> tuple[set[int], bool]:
    """(the ranks of the tensors ``code`` builds and passes to a function or class of ``answers``, whether one
    of its arguments is empty): a tensor built in the call, or assigned to a name the call passes."""
    tree = parse(code)
    names = aliases([tree, *map(parse, context)])
    built: dict[str, list[tuple[int | None, bool]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    built.setdefault(target.id, []).append(_rank(node.value, names, built))
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for name, value in zip(target.elts, node.value.elts):
                        if isinstance(name, ast.Name):
                            built.setdefault(name.id, []).append(_rank(value, names, built))
    ranks, empty = set(), False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in answers:
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                found = built.get(argument.id, []) if isinstance(argument, ast.Name) else \
                    [_rank(argument, names, built)]
                ranks |= {rank for rank, _ in found if rank is not None}
                empty |= any(is_empty for _, is_empty in found)
    return ranks, empty


def times_code(code: str) -> bool:
    """Whether ``code`` measures time: calls ``time.perf_counter()`` and the like, or ``timeit``."""
    tree = parse(code)
    names = aliases([tree])
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (target := dotted(node.func, names) or ""):
            module, _, function = target.rpartition(".")
            if function in _TIMERS and module.split(".")[0] in ("time", "timeit"):
                return True
    return False
