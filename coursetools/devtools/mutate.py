"""Mutation testing of an assignment's graders: how many small wrong answers do its tests reject?

``python -m coursetools.devtools.mutate <assignment> [--only <answer grade_id> ...] [--show-survivors]``

Each solution cell of ``solutions/<id>/<id>.md`` is mutated, one small change at a time, inside its
``### BEGIN SOLUTION`` blocks (:func:`mutants`: an operator swapped, a comparison flipped, a
constant moved by one or set to 0 or 1, a slice bound dropped, a keyword argument such as a mask
or ``dim`` dropped, two arguments swapped, min/max and sum/mean exchanged, a statement deleted).
Every mutant is graded by the exercise's own test cells, visible and hidden, in one kernel
(:mod:`coursetools.devtools.session`): the setup runs once, then per mutant the answer cell runs with the
mutant, then its test cells, then the correct answer again. A mutant is *killed* when the answer
cell or any test cell fails (raises, writes to stderr, or runs past the time limit).

The tool prints the kill rate per answer cell and for the notebook; ``--show-survivors`` lists the
mutants that passed every test, the wrong answers the tests do not catch yet. A survivor that
computes the same thing as the solution (an *equivalent* mutant, e.g. ``x >= 0`` for a tensor of
counts) is listed in ``coursetools/devtools/equivalent_mutants/<id>.txt`` as ``<grade_id> | <mutant>``
(the exact text the tool prints) with a reason after ``#``; those are left out of the rate.

It is a script, not a test: a notebook's mutants take minutes on two cores. It lives in
``coursetools`` because it reads the sources and runs their tests as grading does (it is a check
of the graders, not a benchmark of the library).
"""

from __future__ import annotations

import argparse
import ast
import copy
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from coursetools.authoring import sources
from coursetools.common.hidden import SOLUTION_MARKERS, parse_blocks
from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.session import AnswerCell, KernelSession, notebook_plan

EQUIVALENTS = Path(__file__).resolve().parent / "equivalent_mutants"

_BINARY_SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
                 ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult, ast.MatMult: ast.Mult}
_COMPARE_SWAPS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                  ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
_NAME_SWAPS = {"min": "max", "max": "min", "sum": "mean", "mean": "sum", "argmin": "argmax", "argmax": "argmin",
               "triu": "tril", "tril": "triu", "amax": "amin", "amin": "amax", "cumsum": "cumprod",
               "softmax": "log_softmax", "log_softmax": "softmax", "any": "all", "all": "any",
               "unsqueeze": "squeeze", "ones": "zeros", "zeros": "ones", "ones_like": "zeros_like",
               "zeros_like": "ones_like", "exp": "log", "log": "exp", "sqrt": "rsqrt", "rsqrt": "sqrt"}

# Calls whose first two arguments commute: swapping them is an equivalent mutant.
_SYMMETRIC = {"transpose", "swapaxes", "swapdims", "maximum", "minimum", "add", "mul", "eq", "ne", "max", "min"}


@dataclass(frozen=True)
class Mutant:
    """One changed answer cell: its source and what was changed, ``line: change``."""

    source: str
    label: str


def _solution_lines(source: str) -> set[int]:
    """The 1-based line numbers inside ``### BEGIN SOLUTION`` blocks."""
    return {number for number, (role, _) in enumerate(parse_blocks(source, SOLUTION_MARKERS), start=1)
            if role == "inside"}


def _is_docstring(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    parent = parents.get(node)
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and isinstance(parent, ast.Expr)


def _changes(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> Iterator[tuple[str, callable]]:
    """(label, edit) pairs for one node; an edit changes the node (a deep copy) in place, or
    returns a replacement node."""
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY_SWAPS:
        new = _BINARY_SWAPS[type(node.op)]
        yield f"{_symbol(node.op)} -> {_symbol(new())}", lambda n: setattr(n, "op", new())
        if not isinstance(node.op, (ast.Add, ast.Mult)):
            yield "operands swapped", lambda n: (setattr(n, "left", n.right), setattr(n, "right", n.left))
        yield "right operand dropped", lambda n: n.left
        yield "left operand dropped", lambda n: n.right
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE_SWAPS:
        new = _COMPARE_SWAPS[type(node.ops[0])]
        yield f"{_symbol(node.ops[0])} -> {_symbol(new())}", lambda n: setattr(n, "ops", [new()])
    elif isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield f"{_symbol(node.op)} -> {_symbol(other())}", lambda n: setattr(n, "op", other())
        for k in range(len(node.values)):
            yield f"operand {k + 1} of {_symbol(node.op)} dropped", \
                lambda n, k=k: (ast.BoolOp(n.op, n.values[:k] + n.values[k + 1:]) if len(n.values) > 2
                                else n.values[1 - k])
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub, ast.Invert)):
        yield f"{_symbol(node.op)} dropped", lambda n: n.operand
    elif isinstance(node, ast.Constant) and not _is_docstring(node, parents):
        yield from _constant_changes(node)
    elif isinstance(node, ast.Slice):
        for part in ("lower", "upper", "step"):
            if getattr(node, part) is not None:
                yield f"slice {part} bound dropped", lambda n, part=part: setattr(n, part, None)
    elif isinstance(node, ast.Call):
        for k, keyword in enumerate(node.keywords):
            if keyword.arg is not None:
                yield f"argument {keyword.arg}= dropped", lambda n, k=k: n.keywords.pop(k) and None
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if len(node.args) >= 2 and name not in _SYMMETRIC:
            yield "first two arguments swapped", lambda n: n.args.__setitem__(slice(0, 2), n.args[1::-1])
            yield "last argument dropped", lambda n: n.args.pop() and None
        if name in _NAME_SWAPS:
            swap = _NAME_SWAPS[name]
            yield f"{name} -> {swap}", lambda n: (setattr(n.func, "attr", swap) if isinstance(n.func, ast.Attribute)
                                                 else setattr(n.func, "id", swap))
    elif isinstance(node, ast.AugAssign) and type(node.op) in _BINARY_SWAPS:
        new = _BINARY_SWAPS[type(node.op)]
        yield f"{_symbol(node.op)}= -> {_symbol(new())}=", lambda n: setattr(n, "op", new())
    if _deletable(node):
        yield "statement deleted", lambda n: ast.Pass()


def _deletable(node: ast.AST) -> bool:
    """A statement whose deletion leaves code that runs: a call for its effect (``x.add_(y)``), an
    augmented assignment, or an update of a name it reads (``x = x.masked_fill(...)``)."""
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Call)
    if isinstance(node, ast.AugAssign):
        return True
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        name = node.targets[0].id
        return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.value))
    return False


def _constant_changes(node: ast.Constant) -> Iterator[tuple[str, callable]]:
    value = node.value
    if isinstance(value, bool):
        yield f"{value} -> {not value}", lambda n: setattr(n, "value", not n.value)
    elif isinstance(value, (int, float)):
        targets = [value + 1, value - 1, 0, 1] if isinstance(value, int) else [value * 2, value / 2, 0.0, 1.0]
        for target in dict.fromkeys(t for t in targets if t != value):
            yield f"{value!r} -> {target!r}", lambda n, target=target: setattr(n, "value", target)
    elif value is None:
        return


_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
            ast.Pow: "**", ast.MatMult: "@", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
            ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.And: "and",
            ast.Or: "or", ast.Not: "not", ast.USub: "unary -", ast.Invert: "~"}


def _symbol(op: ast.AST) -> str:
    return _SYMBOLS.get(type(op), type(op).__name__)


def mutants(source: str) -> list[Mutant]:
    """Every single-change mutant of the solution blocks of an answer cell's ``source``, each
    labelled ``<the changed line, without its comment> | <change>`` (stable when lines move). Error messages
    (what a ``raise`` statement says) and annotations are left alone."""
    tree = ast.parse(source)
    lines = source.splitlines()
    original = ast.unparse(tree)
    targets = _targets(tree, _solution_lines(source))
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    found: dict[str, Mutant] = {}
    for index, node in enumerate(targets):
        for label, edit in _changes(node, parents):
            mutant_tree = copy.deepcopy(tree)
            target = _targets(mutant_tree, _solution_lines(source))[index]
            replacement = edit(target)
            if isinstance(replacement, ast.AST) and replacement is not target \
                    and not _replace(mutant_tree, target, replacement):
                continue
            try:
                mutated = ast.unparse(ast.fix_missing_locations(mutant_tree))
                compile(mutated, "<mutant>", "exec")
            except (AttributeError, TypeError, ValueError, SyntaxError):
                continue  # not Python: no student would hand it in
            if mutated == original:
                continue
            key = f"{lines[node.lineno - 1].split('  #')[0].strip()} | {label}"
            while key in found:
                key += "'"
            found[key] = Mutant(mutated, key)
    return list(found.values())


def _targets(tree: ast.AST, inside: set[int]) -> list[ast.AST]:
    """The nodes of ``tree`` on solution lines, outside raise statements and annotations, in a
    fixed order (the same for a deep copy)."""
    excluded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise):
            excluded.update(id(n) for n in ast.walk(node))
        for annotation in (getattr(node, "annotation", None), getattr(node, "returns", None)):
            if isinstance(annotation, ast.AST):
                excluded.update(id(n) for n in ast.walk(annotation))
    return [node for node in ast.walk(tree) if getattr(node, "lineno", None) in inside and id(node) not in excluded]


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> bool:
    """Put ``new`` where ``old`` is in ``tree``; False when ``old`` has no parent."""
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, name, new)
                return True
            if isinstance(value, list) and any(item is old for item in value):
                value[[i for i, item in enumerate(value) if item is old][0]] = new
                return True
    return False


def equivalents(assignment: str) -> set[tuple[str, str]]:
    """(answer grade_id, mutant label) pairs listed as equivalent to the solution."""
    path = EQUIVALENTS / f"{assignment}.txt"
    if not path.is_file():
        return set()
    pairs = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = line.split("  #", 1)[0].strip()
        if entry and not entry.startswith("#"):
            grade_id, label = entry.split(" | ", 1)
            pairs.add((grade_id.strip(), label.strip()))
    return pairs


@dataclass
class CellResult:
    grade_id: str
    killed: int
    total: int
    survivors: list[str]


def run(assignment: str, only: list[str] | None = None, timeout: float = 20.0,
        course_root: Path = REPO_ROOT) -> list[CellResult]:
    """Grade every mutant of every answer cell of ``assignment``; one result per answer cell."""
    nb = sources.read_text_source(sources.text_source(course_root, assignment))
    plan = notebook_plan(nb)
    skip = equivalents(assignment)
    results = []
    with KernelSession(course_root, timeout=timeout) as kernel:
        for answer in plan:
            kernel.reach(answer)
            if only and answer.grade_id not in only or not answer.tests:
                continue
            results.append(_grade_mutants(kernel, answer, skip))
            kernel.run(answer.source)
    return results


def _grade_mutants(kernel: KernelSession, answer: AnswerCell, skip: set[tuple[str, str]]) -> CellResult:
    failing = kernel.failing_tests(answer)
    if failing:
        raise RuntimeError(f"the solution fails {failing}")
    killed, survivors = 0, []
    candidates = [m for m in mutants(answer.source) if (answer.grade_id, m.label) not in skip]
    for mutant in candidates:
        if not kernel.run(mutant.source).passed or not all(kernel.run(test, locked=True).passed
                                                           for _, test in answer.tests):
            killed += 1
        else:
            survivors.append(mutant.label)
        kernel.run(answer.source)
    return CellResult(answer.grade_id, killed, len(candidates), survivors)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="+", help="assignment ids")
    parser.add_argument("--only", nargs="*", help="answer cells (grade_ids) to mutate; default: all")
    parser.add_argument("--show-survivors", action="store_true", help="list the mutants every test passed")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per cell before a mutant is killed")
    args = parser.parse_args(argv)
    for assignment in args.assignments:
        start = time.perf_counter()
        results = run(assignment, args.only, args.timeout)
        killed, total = sum(r.killed for r in results), sum(r.total for r in results)
        for result in results:
            print(f"{assignment} {result.grade_id:<32} {result.killed:>4}/{result.total:<4} killed "
                  f"{result.killed / max(result.total, 1):6.1%}")
            if args.show_survivors:
                print("".join(f"    survived: {result.grade_id} | {label}\n" for label in result.survivors), end="")
        print(f"{assignment} {'NOTEBOOK':<32} {killed:>4}/{total:<4} killed {killed / max(total, 1):6.1%} "
              f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
