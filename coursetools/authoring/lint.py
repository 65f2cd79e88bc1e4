"""Check an assignment's source without running it: the rules nbgrader does not check itself.

``python -m coursetools.authoring.lint [assignment ...]`` (also run by ``make release`` before releasing)
prints one line per problem and exits 1 when there is any. Rules, for every source notebook:

* every nbgrader cell has ``schema_version: 3`` and a ``grade_id``, unique in the notebook;
* every solution code cell has balanced ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers;
* every autograded test cell is locked, has points, and exactly one hidden block, whose first
  line (after its ``# checks:`` line, see below) is the instructor notes
  (``# Instructor notes: ...``: the mistakes the block catches);
* every hand-graded answer has points;
* the points table in the ``grading`` cell adds up: its rows sum to its total, which equals the
  sum of the graded cells' points; each ``## Exercise N: ... (k points)`` heading gives the sum
  of the points of the graded cells up to the next heading that announces points, so that an
  exercise with parts has one graded test cell per part (partial credit: one bug costs its part);
* the ``grading`` cell includes the shared text on how grading works;
* every dotted name ``transformer_lib.<module>[.<name>...]`` the source writes, and every name a
  code cell imports from ``transformer_lib``, exists (it is imported to be sure);
* every name the text writes in backticks (`` `name` `` or `` `name()` ``) is one a student can
  find: a Python builtin, a name of ``torch``, ``torch.nn``, ``torch.nn.functional`` or ``Tensor``,
  a name the library's code uses, or a name in the code of the chapter page or of the notebook
  (a class renamed or removed from the library is caught where the text still names it);
* every name the source declares absent, in a comment ``<!-- absent: name, other_name -->`` in a
  markdown cell (what the text says neither the chapter page nor the library holds), is absent:
  no module of ``transformer_lib`` defines it and no code cell of ``book/<id>.md`` defines it
  (``def``, ``class`` or an assignment);
* an ``assert`` that compares a difference with a tolerance (``abs(a - b) < tol``,
  ``(a - b).abs().max() <= tol``) does not round the numbers in its message (``{x:.6f}``): two
  values that differ beyond the tolerance would look equal; ``{x!r}`` shows every digit;
* what hidden blocks may do in the checker (:mod:`coursetools.authoring.hidden_rules`): no locked cell
  binds an answer's name; no hidden block writes the checker's namespace for the kernel
  (``globals()[...] = ...``, binding an answer's name: ``substitute`` does that); no expected value
  comes from another exercise's answer; some call of the notebook's code in each hidden block takes an input
  drawn through ``term_seed`` unless the block says why not (``# fixed inputs: <why>``: printed, not counted);
* every exercise is fair (:mod:`coursetools.authoring.fairness`): each hidden block declares the kinds it
  checks (``# checks: value; edge <detail>; ...``) and a visible test of the same exercise shows
  each of them; what a hidden block refuses or forbids, a visible test refuses too; the errors it
  expects, a visible test expects and the instructions name; what the hidden code does, read from it
  (:mod:`coursetools.authoring.hidden_reads`), a visible test shows too. The reasons hidden blocks give
  for the answers only they reject (``# hidden only: <answer> -- <why>``) are printed, not counted;
* a rule stated is a rule enforced (:mod:`coursetools.authoring.stated_rules`): every sentence of an
  exercise's instructions that restricts the means ("you may not use", "do not fit", "no tensor of",
  "without autograd"...) is enforced by a check of its test cells, a ``refuse``/``forbid``/
  ``no_autograd``/``size_limit`` of what it names or a check marked ``# enforces: <words of it>``. Every
  rule sentence read is printed with the check that enforces it.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import pkgutil
import re
import sys
from functools import cache
from pathlib import Path

import jupytext
from nbformat.notebooknode import NotebookNode

from coursetools.authoring import sources
from coursetools.authoring.fairness import DECLARATION, check_fairness, hidden_only_reasons, lookup
from coursetools.authoring.grading_rules import INCLUDE_RULES
from coursetools.authoring.hidden_rules import (
    borrowed_expectations,
    borrowed_hidden_names,
    fixed_input_reasons,
    fixed_inputs,
    hidden_writes,
    shadowed_answers,
)
from coursetools.authoring.stated_rules import stated_rules, unenforced_rules
from coursetools.common.allowlist import may_use_problems, parse_may_use
from coursetools.common.cells import is_autograded_test, nbgrader_meta
from coursetools.common.hidden import (
    BEGIN_SOLUTION,
    END_SOLUTION,
    HIDDEN_MARKERS,
    SOLUTION_MARKERS,
    parse_blocks,
)
from coursetools.common.layout import REPO_ROOT

NOTES = "# Instructor notes:"
_TABLE_ROW = re.compile(r"^\|\s*(?P<name>[^|]+?)\s*\|\s*(?P<points>[\d.*]+)\s*\|\s*$")
_HEADING_POINTS = re.compile(r"^#+ .*\((?P<points>\d+(?:\.\d+)?) points?\b", re.MULTILINE)
_LIBRARY_NAME = re.compile(r"\btransformer_lib(?:\.[A-Za-z_]\w*)+")
_BACKTICKED = re.compile(r"`(?P<name>[A-Za-z_]\w*)(?:\(\))?`")
_ABSENT = re.compile(r"<!--\s*absent:\s*(?P<names>[\w\s,.]+?)\s*-->")
LIBRARY = "transformer_lib"


def _markers(source: str, markers: tuple[str, str]) -> list[str]:
    """The roles of the marker lines of ``source``, in order: ``begin``, ``end``, ..."""
    return [role for role, _ in parse_blocks(source, markers) if role in ("begin", "end")]


def _paired(roles: list[str]) -> bool:
    """At least one block, and markers alternating begin, end, begin, end, ..."""
    return len(roles) >= 2 and roles == ["begin", "end"] * (len(roles) // 2)


def _hidden_notes(source: str) -> str:
    """The first non-blank line inside the hidden block, after its ``# checks:`` line if it opens with one."""
    return next((line.strip() for role, line in parse_blocks(source) if role == "inside" and line.strip()
                 and not line.strip().startswith(DECLARATION)), "")


def _points_table(source: str) -> tuple[list[float], float | None]:
    """(points of each row, the total row's points) of the markdown table in ``source``."""
    rows, total = [], None
    for line in source.splitlines():
        match = _TABLE_ROW.match(line.strip())
        if not match or set(match["points"]) <= {"*", "."}:
            continue
        points = float(match["points"].strip("*"))
        if match["name"].strip("* ").lower() == "total":
            total = points
        else:
            rows.append(points)
    return rows, total


def lint_notebook(nb: NotebookNode) -> list[str]:
    """Every rule the notebook breaks, as readable sentences (empty when it is clean)."""
    problems: list[str] = []
    ids: dict[str, int] = {}
    graded_points = 0.0
    for index, cell in enumerate(nb.cells):
        meta = nbgrader_meta(cell)
        if not meta:
            continue
        name = meta.get("grade_id") or f"cell {index}"
        if not meta.get("grade_id"):
            problems.append(f"cell {index}: nbgrader cell without a grade_id")
        ids[name] = ids.get(name, 0) + 1
        if meta.get("schema_version") != 3:
            problems.append(f"{name}: schema_version is {meta.get('schema_version')!r}, expected 3")
        if meta.get("grade"):
            if not meta.get("points"):
                problems.append(f"{name}: a graded cell needs points > 0")
            graded_points += float(meta.get("points") or 0)
        if cell.cell_type == "code" and meta.get("solution"):
            if not _paired(_markers(cell.source, SOLUTION_MARKERS)):
                problems.append(f"{name}: a solution cell needs '{BEGIN_SOLUTION}' ... '{END_SOLUTION}' pairs")
        if is_autograded_test(cell):
            if not meta.get("locked"):
                problems.append(f"{name}: a test cell must be locked")
            hidden = _markers(cell.source, HIDDEN_MARKERS)
            if hidden != ["begin", "end"]:
                problems.append(f"{name}: a test cell needs exactly one hidden block, found markers "
                                f"{', '.join(hidden) or 'none'}")
            elif not _hidden_notes(cell.source).startswith(NOTES):
                problems.append(f"{name}: the hidden block must start with '{NOTES} <the mistakes it catches>'")
        elif cell.cell_type == "code" and _markers(cell.source, HIDDEN_MARKERS):
            problems.append(f"{name}: hidden tests in a cell that is not an autograded test")
    problems += [f"grade_id {name!r} is used by {count} cells" for name, count in ids.items() if count > 1]
    problems += _check_points(nb, graded_points)
    return problems


def _check_points(nb: NotebookNode, graded_points: float) -> list[str]:
    problems = []
    grading = [c for c in nb.cells if nbgrader_meta(c).get("grade_id") == "grading"]
    if not grading:
        return ["no 'grading' cell: the instructions with the points table"]
    if INCLUDE_RULES not in grading[0].source:
        problems.append(f"the 'grading' cell must include the shared rules with the line {INCLUDE_RULES}")
    rows, total = _points_table(grading[0].source)
    if total is None:
        problems.append("the points table in 'grading' has no total row")
    elif sum(rows) != total or total != graded_points:
        problems.append(f"points do not add up: the table's rows sum to {sum(rows):g}, its total says {total:g}, "
                        f"the graded cells carry {graded_points:g}")
    headings = [(index, match) for index, cell in enumerate(nb.cells)
                if cell.cell_type == "markdown" and not nbgrader_meta(cell).get("grade")
                and (match := _HEADING_POINTS.search(cell.source))]
    ends = [index for index, _ in headings[1:]] + [len(nb.cells)]
    for (start, match), end in zip(headings, ends):
        parts = [float(nbgrader_meta(c)["points"]) for c in nb.cells[start + 1:end]
                 if nbgrader_meta(c).get("grade") and nbgrader_meta(c).get("points")]
        if sum(parts) != float(match["points"]):
            found = " + ".join(f"{p:g}" for p in parts) or "no graded cell"
            problems.append(f"the heading '{match.group(0).strip()}' announces {match['points']} points, "
                            f"the graded cells up to the next exercise carry {found}")
    return problems


def library_names(nb: NotebookNode) -> list[str]:
    """Every ``transformer_lib`` name ``nb`` mentions: dotted names in any cell, and the names
    code cells import from it (``from transformer_lib.x import a, b``)."""
    names = []
    for cell in nb.cells:
        names += _LIBRARY_NAME.findall(cell.source)
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        names += [f"{node.module}.{alias.name}" for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == LIBRARY
                  for alias in node.names]
    return list(dict.fromkeys(names))


def resolves(dotted: str) -> bool:
    """Whether ``a.b.c`` names something: the longest importable module prefix, then attributes."""
    return lookup(dotted, _UNRESOLVED) is not _UNRESOLVED


_UNRESOLVED = object()


def _module_names() -> list[str]:
    package = importlib.import_module(LIBRARY)
    return [info.name for info in pkgutil.walk_packages(package.__path__, f"{LIBRARY}.")]


@cache
def _library_definitions() -> frozenset[str]:
    """Every name defined at the top of a module of ``transformer_lib`` (and its modules' names)."""
    names = set(vars(importlib.import_module(LIBRARY)))
    for module in _module_names():
        names.add(module.rsplit(".", 1)[-1])
        names.update(vars(importlib.import_module(module)))
    return frozenset(names)


def _code_names(code: str, *, defined_only: bool = False) -> set[str]:
    """The names a piece of Python defines (functions, classes, assigned names), or with
    ``defined_only=False`` every name it uses (also arguments, attributes, keywords, imports, string keys).
    IPython lines (``%``, ``!``) are skipped; code that does not parse gives nothing."""
    try:
        tree = ast.parse("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and (isinstance(node.ctx, ast.Store) or not defined_only):
            names.add(node.id)
        elif defined_only:
            continue
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[-1])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)  # a key: weights["wq"]
    return names


def _page_code(page: Path) -> list[str]:
    """The code cells of a book page (none when there is no such page)."""
    if not page.is_file():
        return []
    return [cell.source for cell in jupytext.read(page, fmt="md:myst").cells if cell.cell_type == "code"]


@cache
def _findable_names() -> frozenset[str]:
    """Names a student can look up without the chapter: builtins, torch's, the library's code."""
    import builtins

    import torch

    names = set(dir(builtins)) | set(dir(torch)) | set(dir(torch.nn)) | set(dir(torch.nn.functional))
    names |= set(dir(torch.Tensor)) | _library_definitions() | {LIBRARY}
    for module in _module_names():
        path = importlib.import_module(module).__file__
        names |= _code_names(Path(path).read_text(encoding="utf-8"))
    return frozenset(names)


def declared_absent(nb: NotebookNode) -> list[str]:
    """The names a source declares that neither its chapter page nor the library holds."""
    return [name.strip() for cell in nb.cells if cell.cell_type == "markdown"
            for match in _ABSENT.finditer(cell.source) for name in match["names"].split(",") if name.strip()]


def check_names(nb: NotebookNode, page: Path) -> list[str]:
    """The library names ``nb`` mentions that do not exist, the backticked names of its text that
    nothing defines, and the names it declares absent that the library or the chapter page
    ``page`` defines."""
    problems = [f"'{name}' does not exist (it is named in the source)" for name in library_names(nb)
                if not resolves(name)]
    page_code = _page_code(page)
    own = set().union(*(_code_names(c.source) for c in nb.cells if c.cell_type == "code"))
    known = _findable_names() | own | set().union(*map(_code_names, page_code)) | set(sys.stdlib_module_names)
    known |= {part for c in nb.cells if c.cell_type == "markdown" and (allowed := parse_may_use(c.source))
              for name in allowed.refused for part in name.split(".")}  # what a May-use line refuses (`peft`)
    written = {m["name"] for c in nb.cells if c.cell_type == "markdown" for m in _BACKTICKED.finditer(c.source)}
    problems += [f"the text names `{name}`, which neither the library, torch, {page.name} nor the notebook's "
                 "code defines" for name in sorted(written - known)]
    on_page = set().union(*(_code_names(code, defined_only=True) for code in page_code))
    for name in declared_absent(nb):
        if name in _library_definitions():
            problems.append(f"'{name}' is declared absent, but transformer_lib defines it")
        if name in on_page:
            problems.append(f"'{name}' is declared absent, but {page.name} defines it")
    return problems


_FIXED = re.compile(r"\.(?P<decimals>\d+)f$")
_ROUNDED = re.compile(r"\.\d+[eEgG%]?$")


def rounded_tolerance_messages(nb: NotebookNode) -> list[str]:
    """The asserts of the code cells that compare a difference with a tolerance and round a number
    in their message too coarsely (see the module's rules), as "<cell>: line <n>: ..."."""
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # IPython syntax; not a test
            continue
        for node in ast.walk(tree):
            tolerance = _tolerance(node.test) if isinstance(node, ast.Assert) and node.msg is not None else None
            if tolerance is not None and any(_too_coarse(spec, tolerance) for spec in _format_specs(node.msg)):
                name = nbgrader_meta(cell).get("grade_id") or f"cell {index}"
                problems.append(f"{name}: line {node.lineno}: the message rounds a number the assert compares "
                                "within a tolerance, so different values can look equal; show it with !r (or two "
                                "decimals finer than the tolerance) and say the tolerance")
    return problems


def _tolerance(test: ast.expr) -> float | None:
    """The bound an assert compares an absolute difference (``abs(...)``, ``.abs()``) with: a
    number, 0.0 when it is computed (every rounding then counts), None when there is no such compare."""
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.Lt, ast.LtE)) and any(
                isinstance(call, ast.Call) and "abs" in {getattr(call.func, "id", ""), getattr(call.func, "attr", "")}
                for call in ast.walk(node.left)):
            try:
                return float(ast.literal_eval(node.comparators[0]))
            except ValueError:
                return 0.0
    return None


def _format_specs(message: ast.expr) -> list[str]:
    return [ast.unparse(part.format_spec)[2:-1] for part in ast.walk(message)
            if isinstance(part, ast.FormattedValue) and part.format_spec is not None]


def _too_coarse(spec: str, tolerance: float) -> bool:
    """Whether a number written with ``spec`` may hide a difference that the tolerance ``tolerance``
    counts: fixed decimals must be at least 100 times finer; significant digits always may."""
    fixed = _FIXED.search(spec)
    if fixed:
        return 10.0 ** -int(fixed["decimals"]) > tolerance / 100
    return bool(_ROUNDED.search(spec))


def lint(assignment: str, course_root: Path = REPO_ROOT) -> list[str]:
    """:func:`lint_notebook` of an assignment's text source, each problem prefixed by its id."""
    nb = sources.read_text_source(sources.text_source(course_root, assignment))
    problems = (lint_notebook(nb) + check_names(nb, course_root / "book" / f"{assignment}.md")
                + rounded_tolerance_messages(nb) + check_fairness(nb) + shadowed_answers(nb)
                + hidden_writes(nb) + borrowed_expectations(nb) + borrowed_hidden_names(nb) + fixed_inputs(nb)
                + may_use_problems(nb) + unenforced_rules(nb))
    return [f"{assignment}: {problem}" for problem in problems]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="assignment ids (default: all in solutions/)")
    args = parser.parse_args(argv)
    chosen = args.assignments or sources.assignments(REPO_ROOT)
    problems = [p for a in chosen for p in lint(a)]
    for assignment in chosen:  # the surprises allowed on purpose, and why (coursetools.devtools.surprises)
        nb = sources.read_text_source(sources.text_source(REPO_ROOT, assignment))
        print("".join(f"{assignment}: {line}\n" for line in hidden_only_reasons(nb) + fixed_input_reasons(nb)), end="")
        print("".join(f"{assignment}: exercise '{rule.exercise}' states \"{rule.sentence}\", enforced by "
                      f"{rule.enforced_by or 'NO CHECK'}\n" for rule in stated_rules(nb)), end="")
    print("\n".join(problems) if problems else "no problems found")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
