"""Fair exercises: every check a hidden test makes is of a kind the student was shown.

A hidden test may try other inputs, but it must not surprise: a rule or an edge case that
neither the instructions nor a visible test shows costs an honest student points they could not
know about. :func:`check_fairness` holds each exercise (a ``## Exercise ...`` heading and the
cells up to the next ``## `` heading) to these rules, read from its source without running it:

* every hidden block declares what it checks, in a line ``# checks: <kind> [detail]; ...``
  among its first comment lines. The kinds are ``value`` (results compared with a reference on
  other inputs: a visible test of the exercise compares a result too), ``property <detail>``,
  ``edge <detail>`` (an input at the edge of what is allowed: an empty list, one row, a 1-D
  tensor, a zero count) and ``bound <detail>`` (a time or memory bound); the ``detail`` of the
  last three must be written in the code of a visible test of the same exercise (in an
  assertion's message or a call, not in a comment) or in the exercise's instructions, so that
  the student was shown it or told of it;
* every target a hidden block passes to ``refuse`` or ``forbid`` (``torch.autograd.grad``,
  ``transformer_lib.attention.AdditiveAttention``...) is also refused or forbidden by a visible
  test of the same exercise;
* every exception class a hidden ``expect_raises`` expects is also expected by a visible
  ``expect_raises`` of the same exercise, and named in the exercise's instructions.

Refused and raised kinds are read from the code (``refuse(owner, names, ...)``,
``forbid(*references)``, ``expect_raises(Error, ...)``), so they need no declaration; targets
are compared by what they are (``nn.Module.__init__`` and ``torch.nn.Module.__init__`` are one).
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Any

from nbformat.notebooknode import NotebookNode

from coursetools.common.cells import is_autograded_test, nbgrader_meta
from coursetools.common.hidden import split_hidden_block

DECLARATION = "# checks:"
SHOWN_KINDS = ("property", "edge", "bound")  # their detail must be written in a visible test
KINDS = ("value", *SHOWN_KINDS)
_EXERCISE = re.compile(r"^## Exercise\b.*$", re.MULTILINE)
_SECTION = re.compile(r"^## ", re.MULTILINE)
_MISSING = object()


@dataclass
class Exercise:
    """One exercise of a source: its heading, instructions, visible test code and hidden blocks."""

    title: str
    instructions: list[str] = field(default_factory=list)
    visible: list[str] = field(default_factory=list)
    hidden: list[tuple[str, str]] = field(default_factory=list)  # (test grade_id, hidden code)


def exercises(nb: NotebookNode) -> list[Exercise]:
    """The exercises of ``nb`` in order, each with the cells up to the next ``## `` heading."""
    found: list[Exercise] = []
    current: Exercise | None = None
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "markdown" and not meta.get("solution"):
            if heading := _EXERCISE.search(cell.source):
                current = Exercise(heading.group(0)[3:].strip())
                found.append(current)
            elif _SECTION.match(cell.source):
                current = None
            if current is not None:
                current.instructions.append(cell.source)
        elif current is not None and is_autograded_test(cell):
            visible, hidden = split_hidden_block(cell.source)
            current.visible.append(visible)
            current.hidden.append((meta["grade_id"], hidden))
    return found


def _parse(code: str) -> ast.Module:
    """``code`` parsed, IPython lines (``%``, ``!``) left out; an empty module when it does not parse."""
    try:
        return ast.parse("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


def _aliases(trees: list[ast.Module]) -> dict[str, str]:
    """Local name -> dotted name, from the imports (``import torch.nn as nn``, ``from x import y
    as _y``) and plain aliases (``_F = torch.nn.functional``) of ``trees``."""
    aliases: dict[str, str] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                        alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """``a.b.c`` with its first name replaced by what it aliases, or None for another expression."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([aliases.get(node.id, node.id), *reversed(parts)])


def lookup(dotted: str, default: Any = None) -> Any:
    """The object a dotted name ``a.b.c`` names: its longest importable module prefix, then
    attributes; ``default`` when no prefix imports or an attribute is missing."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute, _MISSING)
            if found is _MISSING:
                return default
        return found
    return default


def _canonical(dotted: str) -> str:
    """One name per object: ``module.qualname`` of what ``dotted`` names when it is a function or
    class found by import (``transformer_lib.X`` and ``transformer_lib.attention.X`` are one),
    else ``dotted`` itself (a name the notebook defines, an attribute of a module)."""
    found = lookup(dotted)
    module, qualname = getattr(found, "__module__", None), getattr(found, "__qualname__", None)
    if callable(found) and isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        return f"{module}.{qualname}"
    return dotted


def _sequences(trees: list[ast.Module]) -> dict[str, list[ast.expr]]:
    """Names assigned a tuple or list literal at the top of ``trees``: ``_forbidden = (a, b)``; the
    first tree that assigns a name wins (a block's own tuple before another cell's of the same name)."""
    found: dict[str, list[ast.expr]] = {}
    for tree in trees:
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List)):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found.setdefault(target.id, list(node.value.elts))
    return found


def _called(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def guarded_targets(code: str, context: list[str]) -> set[str]:
    """What ``code`` refuses or forbids: ``owner.name`` for each ``refuse(owner, names, ...)``,
    each reference of ``forbid(...)`` (a ``*name`` of a tuple assigned in ``code`` or ``context``
    is expanded), as canonical dotted names. ``context`` is the other code of the notebook, for
    the imports and tuples it defines."""
    tree = _parse(code)
    trees = [tree, *map(_parse, context)]
    aliases, sequences = _aliases(trees), _sequences(trees)
    targets: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if _called(node) == "refuse" and len(node.args) >= 2:
            owner = _dotted(node.args[0], aliases) or ast.unparse(node.args[0])
            names = node.args[1]
            if isinstance(names, ast.Name) and names.id in sequences:
                names = ast.Tuple(elts=sequences[names.id])
            constants = names.elts if isinstance(names, (ast.Tuple, ast.List)) else [names]
            targets |= {f"{_canonical(owner)}.{n.value}" if isinstance(n, ast.Constant) else
                        f"{owner}.{ast.unparse(n)}" for n in constants}
        elif _called(node) == "forbid":
            for argument in node.args:
                if isinstance(argument, ast.Starred) and isinstance(argument.value, ast.Name) \
                        and argument.value.id in sequences:
                    references = sequences[argument.value.id]
                else:
                    references = [argument]
                for reference in references:
                    dotted = _dotted(reference, aliases)
                    targets.add(_canonical(dotted) if dotted else ast.unparse(reference))
    return targets


def expected_errors(code: str) -> set[str]:
    """The exception classes ``code``'s ``expect_raises(Error, ...)`` calls expect, by name."""
    return {ast.unparse(node.args[0]).rsplit(".", 1)[-1] for node in ast.walk(_parse(code))
            if isinstance(node, ast.Call) and _called(node) == "expect_raises" and node.args}


def without_comments(code: str) -> str:
    """``code`` with its comments taken out (what runs: names, calls, strings)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return code
    return " ".join(token.string for token in tokens if token.type != tokenize.COMMENT)


def declared_kinds(hidden: str) -> list[tuple[str, str]] | None:
    """The ``(kind, detail)`` pairs of a hidden block's ``# checks:`` line, None without one."""
    for line in hidden.splitlines():
        stripped = line.strip()
        if stripped.startswith(DECLARATION):
            items = [item.strip() for item in stripped[len(DECLARATION):].split(";") if item.strip()]
            return [(item.split(None, 1)[0], (item.split(None, 1)[1:] or [""])[0]) for item in items]
        if stripped and not stripped.startswith("#"):
            return None
    return None


def _normal(text: str) -> str:
    """``text`` compared loosely: lower case, blanks collapsed, Markdown's backticks and stars removed."""
    return " ".join(text.lower().replace("`", "").replace("*", "").split())


def check_exercise(exercise: Exercise, context: list[str]) -> list[str]:
    """Every rule of this module that ``exercise`` breaks, as sentences naming it and the kind."""
    problems: list[str] = []
    where = f"exercise '{exercise.title}'"
    visible = "\n".join(exercise.visible)
    instructions = "\n".join(exercise.instructions)
    shown = _normal(" ".join([*(without_comments(code) for code in exercise.visible), instructions]))
    refused_visibly = set().union(*(guarded_targets(code, context) for code in exercise.visible))
    raised_visibly = expected_errors(visible)
    for test, hidden in exercise.hidden:
        kinds = declared_kinds(hidden)
        if kinds is None:
            problems.append(f"{where}, {test}: the hidden block declares no kinds: add a line "
                            f"'{DECLARATION} value; property <detail>; edge <detail>; bound <detail>' "
                            "naming what it checks")
            kinds = []
        for kind, detail in kinds:
            if kind not in KINDS:
                problems.append(f"{where}, {test}: unknown kind '{kind}' in '{DECLARATION}' (known: "
                                f"{', '.join(KINDS)}; refused calls and raised errors are read from the code)")
            elif kind in SHOWN_KINDS and not detail:
                problems.append(f"{where}, {test}: the kind '{kind}' needs a detail (what it checks)")
            elif kind in SHOWN_KINDS and _normal(detail) not in shown:
                problems.append(f"{where}, {test}: the hidden block checks {kind} '{detail}', which neither a "
                                "visible test of the exercise shows nor its instructions name (write it in a visible "
                                "check's code or message, or in the instructions)")
            elif kind == "value" and not re.search(r"\bassert", visible):
                problems.append(f"{where}, {test}: the hidden block checks values, and no visible test of the "
                                "exercise checks one")
        for target in sorted(guarded_targets(hidden, context) - refused_visibly):
            problems.append(f"{where}, {test}: the hidden block refuses {target}, which no visible test of the "
                            "exercise refuses (refuse or forbid it there too, with the same target)")
        for error in sorted(expected_errors(hidden)):
            if error not in raised_visibly:
                problems.append(f"{where}, {test}: the hidden block expects {error} (raises), which no visible "
                                "expect_raises of the exercise expects")
            if error not in instructions:
                problems.append(f"{where}, {test}: the hidden block expects {error} (raises), which the "
                                "exercise's instructions do not name")
    return problems


def check_fairness(nb: NotebookNode) -> list[str]:
    """Every fairness rule (see the module's docstring) that the exercises of ``nb`` break."""
    context = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    return [problem for exercise in exercises(nb) for problem in check_exercise(exercise, context)]
