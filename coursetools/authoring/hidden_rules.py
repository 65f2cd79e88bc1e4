"""What a hidden block may do, now that it runs in the checker and not in the student's kernel.

The checker runs each hidden block in a namespace of its own, where the notebook's names are
proxies for the kernel's objects (``coursetools/checker/runner.py``). Three mistakes follow from
forgetting it, each found here without running anything:

* :func:`shadowed_answers`: a locked cell that imports or defines an answer's name: the checker
  binds the locked cells' names itself, so a hidden test would call the locked object;
* :func:`hidden_writes`: a hidden block that writes ``globals()`` or binds an answer's name, meant
  to give the student's code the instructor's version: that changes only the checker's namespace
  (``substitute(name, value)`` changes the kernel's, while the calls inside it run);
* :func:`borrowed_expectations`: an expected value computed by another exercise's answer (ch05's
  sweep once took its expected errors from the student's own ``relative_output_error``: a sweep
  that invented numbers, with a measure that agreed, earned the point). A comparison of an
  answer's results with each other (a property: equivariance, padding changes nothing) is fine;
* :func:`borrowed_hidden_names`: a hidden block that reads a name another hidden block's checks
  define (ch06's ``_generator``, once defined in the first RoPE cell's checks): a block's checks run
  only when its cell's visible part passed, so one wrong answer cost every later part a NameError.
  What later blocks share goes in a block's setup (``# END HIDDEN SETUP``), defined in any case.
* :func:`fixed_inputs`: a hidden block whose calls of the notebook's code take only inputs written in
  it, the same every term: a class that records them in one term can hand the next a lookup table
  (ch07's ``layer_gradient_norms`` once had five literal cases). At least one call must take an input
  drawn through ``term_seed(n)`` (:mod:`coursetools.checker.term`): a value computed from it, a
  generator or ``random.Random`` seeded with it, a draw after ``torch.manual_seed(term_seed(n))``. The
  rare block whose inputs must stay as written (a trend that holds only for the seeds checked) says
  why in a line ``# fixed inputs: <why>``.
"""

from __future__ import annotations

import ast
import re

from nbformat.notebooknode import NotebookNode

from coursetools.checker.scopes import scope_names
from coursetools.common.cells import nbgrader_meta
from coursetools.common.hidden import split_hidden, split_hidden_block, split_setup

COMPARISONS = ("assert_close", "assert_equal")  # coursetools.checks' comparisons: (actual, expected, ...)
TERM_SEED = "term_seed"
FIXED_INPUTS = re.compile(r"^[ \t]*# fixed inputs:[ \t]*(?P<why>\S.*)$", re.MULTILINE)
# draws from a global generator: drawn through the term once it is seeded with torch.manual_seed(term_seed(n))
GLOBAL_DRAWS = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal",
                "bernoulli", "multinomial", "normal_", "uniform_", "random_", "shuffle", "choice", "sample",
                "random", "randrange", "uniform", "gauss"}
GLOBAL_SEEDS = {"manual_seed", "seed"}


def _top_level_bindings(source: str, kinds: tuple[type, ...]) -> set[str]:
    """The names that the top-level statements of ``kinds`` in ``source`` bind (none when it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and isinstance(node, kinds):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and isinstance(node, kinds):
            names.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node, kinds):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return names


def shadowed_answers(nb: NotebookNode) -> list[str]:
    """Locked cells that import, define or declare a name an answer cell defines.

    The checker binds the locked cells' imports, functions and classes itself (``coursetools/checker/runner.py``),
    so a hidden test naming such a name would call the locked object, not the student's answer."""
    answers: dict[str, str] = {}
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and meta.get("solution"):
            for name in _top_level_bindings(cell.source, (ast.FunctionDef, ast.ClassDef, ast.Assign)):
                answers.setdefault(name, meta.get("grade_id", "?"))
    problems = []
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and meta.get("locked") and not meta.get("solution"):
            visible, _ = split_hidden(cell.source)
            for name in sorted(_top_level_bindings(visible, (ast.Import, ast.ImportFrom, ast.FunctionDef,
                                                              ast.ClassDef)) & set(answers)):
                problems.append(f"{meta.get('grade_id', '?')}: binds {name!r}, which answer cell {answers[name]} "
                                "defines: the checker would give hidden tests the locked one (rename it)")
    return problems


def _answers_by_exercise(nb: NotebookNode) -> list[tuple[NotebookNode, set[str], set[str]]]:
    """(test cell, the names its exercise's answer cells define, every answer name of the notebook)."""
    every = {name for cell in nb.cells if cell.cell_type == "code" and nbgrader_meta(cell).get("solution")
             for name in _top_level_bindings(cell.source, (ast.FunctionDef, ast.ClassDef))}
    found, exercise, after_tests = [], set(), False
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type != "code":
            continue
        if meta.get("solution"):
            own = _top_level_bindings(cell.source, (ast.FunctionDef, ast.ClassDef))
            exercise, after_tests = (set() if after_tests else exercise) | own, False
        elif meta.get("grade"):
            after_tests = True
            found.append((cell, set(exercise), every))
    return found


def _hidden_tree(cell: NotebookNode) -> ast.Module | None:
    hidden = "\n".join(split_hidden(cell.source)[1])
    try:
        return ast.parse(hidden)
    except SyntaxError:
        return None


def hidden_writes(nb: NotebookNode) -> list[str]:
    """Hidden blocks that write ``globals()`` or bind an answer's name (see the module's docstring)."""
    problems = []
    for cell, _, answers in _answers_by_exercise(nb):
        tree = _hidden_tree(cell)
        for node in ast.walk(tree) if tree else []:
            target = None
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("globals", "globals().update",
                                                                          "globals().setdefault"):
                if isinstance(node.func, ast.Attribute) or any(isinstance(parent, (ast.Subscript, ast.Attribute))
                                                               for parent in _writes_through(tree, node)):
                    target = "globals()"
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.FunctionDef, ast.ClassDef)):
                bound = _bound_names(node) & answers
                target = ", ".join(sorted(bound)) if bound else None
            if target:
                problems.append(f"{nbgrader_meta(cell).get('grade_id', '?')}: the hidden block writes {target} in the "
                                "checker's namespace, which the student's code never sees: use "
                                "substitute(name, value) to give it the instructor's version")
    return sorted(set(problems))


def _writes_through(tree: ast.AST, call: ast.Call) -> list[ast.AST]:
    """The subscripts of ``globals()`` that are assigned to (``globals()["f"] = g``)."""
    return [target for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.Delete))
            for target in node.targets if isinstance(target, ast.Subscript) and target.value is call]


def _bound_names(node: ast.AST) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {name.id for target in targets for name in ast.walk(target)
            if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store)}


def borrowed_expectations(nb: NotebookNode) -> list[str]:
    """Hidden comparisons whose expected side comes from another exercise's answer (module docstring)."""
    problems = []
    for cell, own, answers in _answers_by_exercise(nb):
        tree = _hidden_tree(cell)
        if tree is None:
            continue
        sources = _answer_sources(tree, answers)
        others = answers - own
        for node in ast.walk(tree):
            sides: list[tuple[ast.expr, ast.expr]] = []
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in COMPARISONS:
                expected = node.args[1] if len(node.args) > 1 else next(
                    (k.value for k in node.keywords if k.arg == "expected"), None)
                if expected is not None and node.args:
                    sides.append((node.args[0], expected))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
                sides.append((node.left, node.right))
            elif isinstance(node, ast.Compare) and len(node.comparators) == 1:
                sides.append((node.left, node.comparators[0]))
            for actual, expected in sides:
                borrowed = _derived_from(expected, sources, answers) & others
                if borrowed and (_derived_from(actual, sources, answers) or isinstance(node, ast.Call)):
                    problems.append(f"{nbgrader_meta(cell).get('grade_id', '?')}: an expected value comes from "
                                    f"{', '.join(sorted(borrowed))}, another exercise's answer (line "
                                    f"{node.lineno} of the hidden block): compute it with the instructor's code")
    return sorted(set(problems))


def _answer_sources(tree: ast.Module, answers: set[str]) -> dict[str, set[str]]:
    """Name -> the answers its value comes from, for the names the block assigns (in order, once through)."""
    sources: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            came_from = _derived_from(node.value, sources, answers)
            for name in _bound_names(node):
                sources[name] = sources.get(name, set()) | came_from
        elif isinstance(node, (ast.For, ast.comprehension)):
            came_from = _derived_from(node.iter, sources, answers)
            for name in (n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)):
                sources[name] = sources.get(name, set()) | came_from
    return sources


def _derived_from(expression: ast.expr, sources: dict[str, set[str]], answers: set[str] = frozenset()) -> set[str]:
    """The answers ``expression`` calls, or reads through names assigned from them."""
    found: set[str] = set()
    for node in ast.walk(expression):
        if isinstance(node, ast.Name):
            found |= sources.get(node.id, set())
            if node.id in answers:
                found.add(node.id)
    return found


def borrowed_hidden_names(nb: NotebookNode) -> list[str]:
    """Hidden blocks that read a name which another hidden block's checks bind, or a later block's
    setup (module docstring): each block's checks must stand whatever the other cells' answers did."""
    blocks = []  # (grade_id, names its setup binds, names its checks bind, names it reads, its helpers' globals)
    given = set()  # what the locked cells import or define: bound in the checker before any hidden block
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and meta.get("locked") and not meta.get("solution"):
            given |= _top_level_bindings(split_hidden(cell.source)[0], (ast.Import, ast.ImportFrom, ast.FunctionDef,
                                                                        ast.ClassDef))
        hidden = split_hidden_block(cell.source)[1] if cell.cell_type == "code" and meta.get("grade") else ""
        if not hidden.strip():
            continue
        setup, checks = split_setup(hidden)
        try:
            setup_bound, setup_read = scope_names(setup)
            checks_bound, checks_read = scope_names(checks)
        except SyntaxError:
            continue
        helpers = [node for node in ast.parse(setup).body if isinstance(node, ast.FunctionDef)]
        helper_globals = {name for node in helpers for name in scope_names(ast.unparse(node))[1]} & setup_bound
        blocks.append((meta.get("grade_id", "?"), setup_bound, checks_bound,
                       setup_read | (checks_read - setup_bound), helper_globals))
    problems = []
    for index, (grade_id, _, _, read, helper_globals) in enumerate(blocks):
        for other, (other_id, setup_bound, checks_bound, _, _) in enumerate(blocks):
            if other == index:
                continue
            borrowed = read & (checks_bound | (setup_bound if other > index else set())) - given
            for name in sorted(borrowed):
                where = "checks" if name in checks_bound else "setup, which runs later"
                problems.append(f"{grade_id}: the hidden block reads {name!r}, which the hidden block of "
                                f"{other_id} binds in its {where}: define it in this block, or in an earlier "
                                "block's setup (above '# END HIDDEN SETUP'), which runs whatever the cell did")
            if other > index:  # a setup's helper reads its globals when called: no later block may rebind them
                for name in sorted(helper_globals & (setup_bound | checks_bound) - given):
                    problems.append(f"{grade_id}: a helper of its hidden setup reads {name!r}, which the hidden "
                                    f"block of {other_id} binds again: a shared name is bound once (rename one)")
    return problems


def fixed_inputs(nb: NotebookNode) -> list[str]:
    """Hidden blocks none of whose calls of the notebook's code takes an input drawn through ``term_seed``,
    without a ``# fixed inputs: <why>`` line (see the module's docstring). The blocks are read in order, as the
    checker runs them: a helper or a generator an earlier block defined serves the later ones."""
    problems = []
    drawn: dict[str, set[str]] = {TERM_SEED: {TERM_SEED}}
    helpers: set[str] = set()  # functions of hidden blocks that call the notebook's code
    for cell, _, answers in _answers_by_exercise(nb):
        tree = _hidden_tree(cell)
        if tree is None:
            continue
        drawn = _drawn_names(tree, drawn)
        helpers |= {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                    and _requests(node, answers | helpers)}
        requests = _requests(tree, answers | helpers)
        if FIXED_INPUTS.search("\n".join(split_hidden(cell.source)[1])) or any(
                _derived_from(argument, drawn) for call in requests for argument in [call.func, *_inputs(call)]):
            continue
        called = sorted({ast.unparse(call.func) for call in requests}) or ["nothing of the notebook"]
        problems.append(f"{nbgrader_meta(cell).get('grade_id', '?')}: the hidden block calls {', '.join(called)} "
                        "only with inputs written in it, the same every term (a lookup table recorded in one "
                        "term answers the next): draw them through term_seed(n), or say why they must stay "
                        "fixed in a line '# fixed inputs: <why>'")
    return problems


def fixed_input_reasons(nb: NotebookNode) -> list[str]:
    """The hidden blocks whose inputs stay as written, each with its reason (``# fixed inputs: <why>``), as lines."""
    return [f"{nbgrader_meta(cell).get('grade_id', '?')}: fixed inputs: {match['why'].strip()}"
            for cell in nb.cells if cell.cell_type == "code" and nbgrader_meta(cell).get("grade")
            for match in FIXED_INPUTS.finditer("\n".join(split_hidden(cell.source)[1]))]


def _inputs(call: ast.Call) -> list[ast.expr]:
    """What a call gives the code it calls: its arguments, and the object whose method it is."""
    receiver = [call.func.value] if isinstance(call.func, ast.Attribute) else []
    return [*call.args, *(keyword.value for keyword in call.keywords), *receiver]


def _requests(tree: ast.AST, answers: set[str]) -> list[ast.Call]:
    """The calls in ``tree`` that reach the notebook's code: of an answer (or a helper calling one), or of what
    one returned."""
    returned = {name for name, came_from in _answer_sources(tree, answers).items() if came_from}
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and (root := _root_name(node.func)) is not None and (root in answers or root in returned)]


def _root_name(expression: ast.expr) -> str | None:
    while isinstance(expression, (ast.Attribute, ast.Subscript, ast.Call)):
        expression = expression.func if isinstance(expression, ast.Call) else expression.value
    return expression.id if isinstance(expression, ast.Name) else None


def _drawn_names(tree: ast.Module, known: dict[str, set[str]]) -> dict[str, set[str]]:
    """Name -> {"term_seed"} for each name whose value is drawn through the term seed: computed from
    ``term_seed(...)`` or from such a name, a loop variable over one, a parameter of a local function given
    one, a local function that reads one; after ``torch.manual_seed(term_seed(n))`` (or ``random.seed``), a draw
    from the global generator. ``known``: those of the blocks before. Found again until nothing changes
    (over-approximate, as a lint may), a name the block binds itself judged by the block alone."""
    bound = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    bound |= {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    bound |= {node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)}
    drawn = {name: came_from for name, came_from in known.items() if name not in bound}
    variables = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    functions = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    seeded = any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in GLOBAL_SEEDS
                 and isinstance(node.func.value, ast.Name) and any(_derived_from(a, drawn) for a in node.args)
                 for node in ast.walk(tree))  # torch.manual_seed(term_seed(n)), random.seed(...): not a Generator's

    def is_drawn(expression: ast.AST) -> bool:
        return bool(_derived_from(expression, drawn)) or seeded and any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in GLOBAL_DRAWS
            for node in ast.walk(expression))

    changed = True
    while changed:
        before = len(drawn)
        for node in ast.walk(tree):
            found: set[str] = set()
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None \
                    and is_drawn(node.value):
                found = _bound_names(node)
            elif isinstance(node, (ast.For, ast.comprehension)) and is_drawn(node.iter):
                found = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
            elif isinstance(node, ast.FunctionDef) and any(is_drawn(statement) for statement in node.body):
                found = {node.name}
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions \
                    and any(is_drawn(argument) for argument in _inputs(node)):
                found = {argument.arg for argument in ast.walk(functions[node.func.id].args)
                         if isinstance(argument, ast.arg)}
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in variables and any(
                    is_drawn(argument) for argument in [*node.args, *(k.value for k in node.keywords)]):
                found = {node.func.value.id}  # parts.append(drawn): parts holds a draw
            if isinstance(node, (ast.Assign, ast.AugAssign)) and is_drawn(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found |= {_root_name(target) for target in targets
                          if isinstance(target, (ast.Subscript, ast.Attribute))} & variables  # x[0] = drawn
            for name in found - set(drawn):
                drawn[name] = {TERM_SEED}
        changed = len(drawn) != before
    return drawn
