"""What an exercise's answer may use, read from the one line its instructions state it in.

An exercise whose instructions restrict the means ("by hand", "without autograd", "you may not use
...") states, in its instructions, one line::

    **May use:** by hand: public torch, `math`; **not:** `torch.autograd`, `torch.func`, `Tensor.backward`

The line is the exercise's allow-list, for students and for the grader alike: everything public in
torch, the ordinary builtins and the standard modules, except each name between backticks after
``**not:**`` (``nn.`` is ``torch.nn.``, ``F.`` ``torch.nn.functional.``, ``Tensor.`` ``torch.Tensor.``),
and, for every exercise with such a line, what no answer with rules needs (:data:`REFUSED_WITH_RULES`:
torch's private names and ``torch._C``, ``torch.ops``, ``runpy``, ``importlib``, ``sys``, ``gc``,
``ctypes``, ``zmq``, ``contextlib``, ``eval``...). "by hand" (or "without autograd") before ``**not:**``
refuses autograd as well (:data:`REFUSED_BY_HAND`). The grader's scan
(:mod:`coursetools.common.pyscan`) reports what an answer uses outside its list.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from coursetools.common.cells import grade_id, is_autograded_test, nbgrader_meta
from coursetools.common.pynames import bound_by

if TYPE_CHECKING:  # not imported at run time: the visible tests' check reads the May-use line in the kernel
    from nbformat import NotebookNode

MAY_USE = re.compile(r"\*\*May use:\*\*(?P<allowed>.*?);\s*\*\*not:\*\*(?P<refused>[^\n]*)")
BY_HAND = re.compile(r"\bby hand\b|\bwithout autograd\b", re.IGNORECASE)
# Instructions that restrict the means ("graded by hand" is about the grading, not the means).
RESTRICTS = re.compile(r"(?<!graded )\bby hand\b|\bwithout autograd\b|\byou may not (use|call)\b|\bdo not (use|call)\b",
                       re.IGNORECASE)
ALIASES = {"nn.": "torch.nn.", "F.": "torch.nn.functional.", "Tensor.": "torch.Tensor."}
RULES = ("forbid", "refuse")  # the in-kernel rules of the tests, whose targets the line must name
# What no answer with rules needs: a name under one of these is outside every allow-list.
REFUSED_WITH_RULES = frozenset({
    "runpy", "importlib", "sys", "gc", "ctypes", "zmq", "contextlib", "inspect", "types", "builtins.eval",
    "builtins.exec", "builtins.compile", "builtins.__import__", "builtins.globals", "builtins.breakpoint",
    "torch._C", "torch.ops", "torch.overrides", "torch.library", "torch.utils._python_dispatch"})
# ...and what an answer written by hand (without autograd) may not use either.
REFUSED_BY_HAND = frozenset({"torch.autograd", "torch.func", "torch.Tensor.backward", "torch.enable_grad",
                             "torch.set_grad_enabled", "torch.vmap"})


@dataclass(frozen=True)
class Allowed:
    """An exercise's allow-list: ``refused`` (dotted names: ``torch.rnn_tanh_cell``, ``torch.nn.RNNCell``,
    ``transformer_lib.data.collate_pairs``) and whether the answer is written ``by_hand``."""

    refused: frozenset[str] = frozenset()
    by_hand: bool = False

    def refusals(self) -> frozenset[str]:
        """Every dotted name this list refuses."""
        return self.refused | REFUSED_WITH_RULES | (REFUSED_BY_HAND if self.by_hand else frozenset())


def parse_may_use(text: str) -> Allowed | None:
    """The allow-list a ``**May use:** ...; **not:** ...`` line in ``text`` states, or None without one."""
    found = MAY_USE.search(text)
    if found is None:
        return None
    names = frozenset(_expanded(name) for name in re.findall(r"`([A-Za-z_][\w.]*)`", found["refused"]))
    return Allowed(names, bool(BY_HAND.search(found["allowed"])))


def _expanded(name: str) -> str:
    for alias, full in ALIASES.items():
        if name.startswith(alias):
            return full + name.removeprefix(alias)
    return name


@dataclass
class Exercise:
    """An exercise as the notebook lays it out: its instructions (the markdown before its answer cells),
    its answer cells' grade_ids, its test cells' code and their grade_ids."""

    instructions: str
    answers: list[str]
    tests: list[str]
    test_ids: list[str]

    @property
    def allowed(self) -> Allowed | None:
        return parse_may_use(self.instructions)

    def rule_targets(self) -> set[str]:
        """What its tests' ``forbid``/``refuse`` calls name, as written: ``refuse(torch, ("a", "b"))``
        names ``torch.a`` and ``torch.b``, ``forbid(nn.RNNCell)`` ``nn.RNNCell`` (private aliases and the
        answers' own names left out)."""
        found: set[str] = set()
        tuples: dict[str, list[ast.expr]] = {}  # forbid(*library): the names the tuple holds
        for code in self.tests:
            try:
                tree = ast.parse(code)
            except SyntaxError:
                continue
            tuples.update({target.id: node.value.elts for node in ast.walk(tree)
                           if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List))
                           for target in node.targets if isinstance(target, ast.Name)})
            for call in ast.walk(tree):
                if isinstance(call, ast.Call) and _called(call) in RULES:
                    found |= _rule_names(call, tuples)
        return {name for name in found if not name.split(".")[0].startswith("_") and name not in self.answers}

    def restricted(self) -> bool:
        """Whether its instructions or its tests restrict the means."""
        return bool(RESTRICTS.search(self.instructions) or self.rule_targets())


def exercises(nb: NotebookNode) -> list[Exercise]:
    """The notebook's exercises with answer cells in code, in order: an exercise starts at the first
    answer cell after the previous one's tests and takes the markdown since those tests as its instructions
    (the previous exercise's when there is none: the parts of one exercise)."""
    found: list[Exercise] = []
    markdown: list[str] = []
    current: Exercise | None = None
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "markdown" and not meta.get("solution"):
            markdown.append(cell.source)
        elif cell.cell_type == "code" and meta.get("solution") and grade_id(cell):
            if current is None or current.tests:
                # parts after the first share the instructions above the first when none of their own come between
                instructions = "\n".join(markdown) or (found[-1].instructions if found else "")
                current = Exercise(instructions, [], [], [])
                found.append(current)
                markdown = []
            current.answers.append(grade_id(cell))
        elif is_autograded_test(cell) and current is not None:
            current.tests.append(cell.source)
            current.test_ids.append(grade_id(cell))
            markdown = []
    return found


def allow_lists(nb: NotebookNode) -> dict[str, Allowed]:
    """Answer cell grade_id -> its exercise's allow-list, for each exercise that states one."""
    return {answer: allowed for exercise in exercises(nb) if (allowed := exercise.allowed) is not None
            for answer in exercise.answers}


def answer_test_cells(nb: NotebookNode) -> dict[str, list[str]]:
    """Answer cell grade_id -> the grade_ids of its exercise's test cells (the points a use outside
    the exercise's allow-list costs)."""
    return {answer: exercise.test_ids for exercise in exercises(nb) for answer in exercise.answers}


def may_use_problems(nb: NotebookNode) -> list[str]:
    """The lint's findings: an exercise that restricts the means without a May-use line, whose line
    leaves out a name its tests forbid or refuse (compared by last name: ``nn.RNNCell``, ``torch.nn.RNNCell``), or
    whose first test cell does not check it (:func:`_visible_check_problems`)."""
    problems = []
    answers = {grade_id(cell): cell.source for cell in nb.cells if nbgrader_meta(cell).get("solution")}
    for exercise in exercises(nb):
        allowed, where = exercise.allowed, ", ".join(exercise.answers)
        if allowed is None:
            if exercise.restricted():
                problems.append(f"{where}: the instructions restrict the means but state no "
                                "'**May use:** ...; **not:** ...' line")
            continue
        stated = {name.rsplit(".", 1)[-1] for name in allowed.refusals()}
        missing = sorted(name for name in exercise.rule_targets() if name.rsplit(".", 1)[-1] not in stated
                         and not _under_any(_expanded(name), allowed.refusals()))
        if missing:
            problems.append(f"{where}: the May-use line does not name {', '.join(missing)}, which the tests refuse")
        problems += _visible_check_problems(exercise, answers)
    return problems


def _visible_check_problems(exercise: Exercise, answers: dict[str, str]) -> list[str]:
    """The exercise's first test cell must start with ``assert_may_use("<names>", "<its May-use line>")``: the
    line exactly the instructions' (text, visible test and grader read one list), each name one its answer binds."""
    where, test = ", ".join(exercise.answers), exercise.test_ids[0] if exercise.test_ids else "(none)"
    call = may_use_call(exercise.tests[0]) if exercise.tests else None
    if call is None:
        return [f"{where}: its first test cell {test} does not start with "
                "assert_may_use(\"<the answer's names>\", \"<the May-use line>\")"]
    names, line = call
    problems = []
    if line != MAY_USE.search(exercise.instructions).group(0):
        problems.append(f"{where}: the line assert_may_use checks in {test} is not the instructions' May-use line")
    bound = {name for answer in exercise.answers for statement in _statements(answers.get(answer, ""))
             for name, _, _ in bound_by(statement)}
    unbound = [name.strip() for name in names.split(",") if name.strip() not in bound]
    if unbound:
        problems.append(f"{where}: assert_may_use in {test} names {', '.join(unbound)}, which the answer does not bind")
    return problems


def _statements(code: str) -> list[ast.stmt]:
    try:
        return ast.parse(code).body
    except SyntaxError:
        return []


def may_use_call(code: str) -> tuple[str, str] | None:
    """(names, line) of the ``assert_may_use("<names>", "<May-use line>")`` call a test cell starts with
    (:func:`coursetools.checks.may_use.assert_may_use`), or None when it starts otherwise."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    call = body[0].value if body and isinstance(body[0], ast.Expr) else None
    if not (isinstance(call, ast.Call) and _called(call) == "assert_may_use" and len(call.args) == 2
            and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args)):
        return None
    return call.args[0].value, call.args[1].value


def _under_any(name: str, refusals: frozenset[str]) -> bool:
    return any(name == r or name.startswith(r + ".") for r in refusals)


def _called(node: ast.Call) -> str | None:
    function = node.func
    return function.id if isinstance(function, ast.Name) else function.attr if isinstance(function, ast.Attribute) \
        else None


def _rule_names(call: ast.Call, tuples: dict[str, list[ast.expr]]) -> set[str]:
    """``refuse(owner, names, message)`` -> owner.name for each name; ``forbid(a, b.c)`` -> ``a``, ``b.c``."""
    if _called(call) == "refuse":
        owner, names = (call.args + [None, None])[:2]
        values = names.elts if isinstance(names, (ast.Tuple, ast.List)) else [names]
        return {f"{ast.unparse(owner)}.{v.value}" for v in values
                if isinstance(v, ast.Constant) and isinstance(v.value, str) and owner is not None}
    items = [item for argument in call.args
             for item in (tuples.get(argument.value.id, []) if isinstance(argument, ast.Starred)
                          and isinstance(argument.value, ast.Name) else [argument])]
    return {ast.unparse(item) for item in items if isinstance(item, (ast.Name, ast.Attribute))}
