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
are compared by what they are (``nn.Module.__init__`` and ``torch.nn.Module.__init__`` are one),
and calls by what they call (``r = refuse; r(...)``, ``from coursetools.checks import refuse as no``).
The declaration is not trusted either: :mod:`coursetools.authoring.hidden_reads` reads from the
hidden code what it does, and each of these must be shown by a visible test of the exercise:

* a torch function patched directly (``torch.x = ...``, ``setattr``, ``unittest.mock.patch``);
* an exception expected for a reason (its message or ``match``) that neither a visible test nor
  the instructions give; ``pytest.raises`` and ``except E`` count as expecting ``E``;
* a dtype check (``assert_equal(x.dtype, ...)``, ``.dtype ==``), unless a declared property or edge
  about the dtype is shown; and each dtype it names (``torch.float32``), always;
* an error expected from a negative argument (a sign rule: ``num_heads=-2``);
* a tensor of a rank, or an empty input, passed to the exercise's answers that no visible test
  passes them (literal inputs only), unless a declared ``edge`` is shown;
* a time measurement: it must declare ``bound``, and a ``bound`` needs a visible test that times
  code, not only the instructions' words.

A detail is shown only as a whole word or phrase, and a detail of common words alone (``the``)
shows nothing. A line ``# hidden only: <answer> -- <why>`` allow-lists an answer that only the
hidden block rejects (:mod:`coursetools.devtools.surprises`); one without a reason is a problem.
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

from coursetools.authoring import hidden_reads as reads
from coursetools.authoring.hidden_reads import aliases as _aliases
from coursetools.authoring.hidden_reads import dotted as _dotted
from coursetools.authoring.hidden_reads import parse as _parse
from coursetools.common.cells import is_autograded_test, nbgrader_meta
from coursetools.common.hidden import hidden_only, split_hidden_block

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
    answers: set[str] = field(default_factory=set)  # the functions and classes its answer cells define


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
        elif current is not None and cell.cell_type == "code" and meta.get("solution"):
            current.answers |= {node.name for node in _parse(cell.source).body
                                if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
        elif current is not None and is_autograded_test(cell):
            visible, hidden = split_hidden_block(cell.source)
            current.visible.append(visible)
            current.hidden.append((meta["grade_id"], hidden))
    return found


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



def guarded_targets(code: str, context: list[str]) -> set[str]:
    """What ``code`` refuses or forbids: ``owner.name`` for each ``refuse(owner, names, ...)``,
    the rule itself for ``no_autograd()`` and ``size_limit()``, each reference of ``forbid(...)``
    (a ``*name`` of a tuple assigned in ``code`` or ``context`` is expanded), as canonical dotted
    names. ``context`` is the other code of the notebook, for the imports and tuples it defines."""
    tree = _parse(code)
    trees = [tree, *map(_parse, context)]
    aliases, sequences = _aliases(trees), _sequences(trees)
    targets: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = reads.called(node, aliases)  # through aliases: r = refuse; r(...), refuse as no
        if function == "refuse" and len(node.args) >= 2:
            owner = _dotted(node.args[0], aliases) or ast.unparse(node.args[0])
            names = node.args[1]
            if isinstance(names, ast.Name) and names.id in sequences:
                names = ast.Tuple(elts=sequences[names.id])
            constants = names.elts if isinstance(names, (ast.Tuple, ast.List)) else [names]
            targets |= {f"{_canonical(owner)}.{n.value}" if isinstance(n, ast.Constant) else
                        f"{owner}.{ast.unparse(n)}" for n in constants}
        elif function == "no_autograd":
            targets.add("no_autograd (the one rule: coursetools.checks.names.NO_AUTOGRAD)")
        elif function == "size_limit":
            targets.add("size_limit (a tensor size probe)")
        elif function == "forbid":
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
    """The exception classes ``code`` expects (``expect_raises``, ``pytest.raises``, ``except``), by name."""
    return {error for error, _ in reads.expected_exceptions(code)}


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


# words that say nothing of what a check is about: a detail made of these alone is shown by any text
COMMON_WORDS = frozenset("""a an the of to in on at by for from with as and or not no is are be it its this that
these those one all any each every value values input inputs output outputs result results case cases test tests
check checks answer function call""".split())


def is_vague(detail: str) -> bool:
    """Whether ``detail`` is made of :data:`COMMON_WORDS` alone (``the``, ``values of the input``)."""
    return set(re.findall(r"\w+", _normal(detail))) <= COMMON_WORDS


def is_shown(detail: str, shown: str) -> bool:
    """Whether ``shown`` (normalised text) holds ``detail`` as a whole word or phrase, not inside another word."""
    return bool(re.search(rf"(?<!\w){re.escape(_normal(detail))}(?!\w)", shown))


def is_said(reason: str, shown: str) -> bool:
    """Whether ``shown`` (normalised text) holds more than half of the words of ``reason`` that are not
    :data:`COMMON_WORDS` (a reason said in other words: "must be divisible" for "does not divide" does not count)."""
    words = set(re.findall(r"\w+", _normal(reason))) - COMMON_WORDS
    return not words or 2 * len(words & set(re.findall(r"\w+", shown))) > len(words)


def _kind_problems(where: str, kinds: list[tuple[str, str]], shown: str, visible: str) -> list[str]:
    """What is wrong with a hidden block's declared kinds (``where`` names the block)."""
    problems = []
    for kind, detail in kinds:
        if kind not in KINDS:
            problems.append(f"{where}: unknown kind '{kind}' in '{DECLARATION}' (known: "
                            f"{', '.join(KINDS)}; refused calls and raised errors are read from the code)")
        elif kind in SHOWN_KINDS and not detail:
            problems.append(f"{where}: the kind '{kind}' needs a detail (what it checks)")
        elif kind in SHOWN_KINDS and is_vague(detail):
            problems.append(f"{where}: the {kind} detail '{detail}' is made of common words only: name what is "
                            "checked (a common word is written in every exercise, so it shows nothing)")
        elif kind in SHOWN_KINDS and not is_shown(detail, shown):
            problems.append(f"{where}: the hidden block checks {kind} '{detail}', which neither a "
                            "visible test of the exercise shows nor its instructions name (write it in a visible "
                            "check's code or message, or in the instructions)")
        elif kind == "bound" and not reads.times_code(visible):
            problems.append(f"{where}: the hidden block checks bound '{detail}', and no visible test of the exercise "
                            "measures time (time.perf_counter, timeit): the instructions' words alone do not show it")
        elif kind == "value" and not re.search(r"\bassert", visible):
            problems.append(f"{where}: the hidden block checks values, and no visible test of the exercise checks one")
    return problems


def _read_problems(where: str, exercise: Exercise, hidden: str, context: list[str], shown: str,
                   declared: dict[str, list[str]]) -> list[str]:
    """What the hidden block's code does (not its declaration) that no visible test of ``exercise`` shows."""
    problems = []
    visible = "\n".join(exercise.visible)
    shown_edge = any(is_shown(d, shown) and not is_vague(d) for d in declared.get("edge", []))
    patched_visibly = set().union(*(reads.patched_targets(code, context) for code in exercise.visible))
    for target in sorted(reads.patched_targets(hidden, context) - patched_visibly):
        problems.append(f"{where}: the hidden block patches {target} directly, which no visible test of the exercise "
                        "does (and a hidden block runs in the checker: the patch does not reach the student's "
                        "kernel; refuse, forbid or substitute it, as a visible test does)")
    raised_visibly = reads.expected_exceptions(visible)
    for error, reason in sorted(reads.expected_exceptions(hidden)):
        if reason and error in {e for e, _ in raised_visibly} and (error, reason) not in raised_visibly \
                and not is_said(reason, shown):  # an error no visible test expects is named by check_exercise
            problems.append(f"{where}: the hidden block expects {error} for '{reason}', a reason that no visible "
                            f"test of the exercise gives for {error} and the instructions do not name")
    if reads.checks_dtype(hidden) and not reads.checks_dtype(visible) \
            and not any("dtype" in d.lower() for d in declared.get("property", []) + declared.get("edge", [])):
        problems.append(f"{where}: the hidden block checks a dtype, and no visible test of the exercise does "
                        f"(declared as {', '.join(declared) or 'nothing'}): add a visible dtype check")
    for dtype in sorted(reads.checked_dtypes(hidden) - reads.checked_dtypes(visible)):
        problems.append(f"{where}: the hidden block checks a result's dtype against torch.{dtype}, and no visible "
                        f"test of the exercise does: show the rule for torch.{dtype} in a visible dtype check")
    if reads.expects_error_for_negative(hidden) and not reads.expects_error_for_negative(visible):
        problems.append(f"{where}: the hidden block expects an error from a negative argument, and no visible test "
                        "of the exercise tries one: show the sign rule in a visible test")
    hidden_ranks, hidden_empty = reads.input_shapes(hidden, exercise.answers, context)
    visible_ranks, visible_empty = set(), False
    for code in exercise.visible:
        ranks, empty = reads.input_shapes(code, exercise.answers, context)
        visible_ranks, visible_empty = visible_ranks | ranks, visible_empty or empty
    if not shown_edge:
        for rank in sorted(hidden_ranks - visible_ranks) if visible_ranks else []:
            names = ", ".join(sorted(exercise.answers))
            problems.append(f"{where}: the hidden block passes {names} a {rank}-D tensor, "
                            "and no visible test of the exercise does: an edge case (declare it 'edge <detail>' and "
                            "show it in a visible test or the instructions)")
        if hidden_empty and not visible_empty:
            problems.append(f"{where}: the hidden block passes an empty input (a size of 0, [] or ''), and no visible "
                            "test of the exercise does: an edge case (declare it 'edge <detail>' and show it)")
    if reads.times_code(hidden) and "bound" not in declared:
        problems.append(f"{where}: the hidden block measures time, and does not declare a bound: declare "
                        "'bound <detail>' and time the code in a visible test too")
    return problems


def check_exercise(exercise: Exercise, context: list[str]) -> list[str]:
    """Every rule of this module that ``exercise`` breaks, as sentences naming it and the kind."""
    problems: list[str] = []
    visible = "\n".join(exercise.visible)
    instructions = "\n".join(exercise.instructions)
    shown = _normal(" ".join([*(without_comments(code) for code in exercise.visible), instructions]))
    refused_visibly = set().union(*(guarded_targets(code, context) for code in exercise.visible))
    raised_visibly = expected_errors(visible)
    for test, hidden in exercise.hidden:
        where = f"exercise '{exercise.title}', {test}"
        kinds = declared_kinds(hidden)
        if kinds is None:
            problems.append(f"{where}: the hidden block declares no kinds: add a line "
                            f"'{DECLARATION} value; property <detail>; edge <detail>; bound <detail>' "
                            "naming what it checks")
            kinds = []
        problems += _kind_problems(where, kinds, shown, visible)
        for target in sorted(guarded_targets(hidden, context) - refused_visibly):
            problems.append(f"{where}: the hidden block refuses {target}, which no visible test of the "
                            "exercise refuses (refuse or forbid it there too, with the same target)")
        for error in sorted(expected_errors(hidden)):
            if error not in raised_visibly:
                problems.append(f"{where}: the hidden block expects {error} (raises), which no visible "
                                "expect_raises of the exercise expects")
            if error not in instructions:
                problems.append(f"{where}: the hidden block expects {error} (raises), which the "
                                "exercise's instructions do not name")
        declared: dict[str, list[str]] = {}
        for kind, detail in kinds:
            declared.setdefault(kind, []).append(detail)
        problems += _read_problems(where, exercise, hidden, context, shown, declared)
        problems += [f"{where}: '# hidden only: {answer}' gives no reason (write ' -- <why>' after it)"
                     for answer, reason in hidden_only(hidden) if not reason]
    return problems


def hidden_only_reasons(nb: NotebookNode) -> list[str]:
    """Every allow-listed surprise of ``nb`` with its reason (``# hidden only: <answer> -- <reason>``), as lines."""
    return [f"exercise '{exercise.title}', {test}: hidden only: {answer} -- {reason or '(no reason given)'}"
            for exercise in exercises(nb) for test, hidden in exercise.hidden for answer, reason in hidden_only(hidden)]


def check_fairness(nb: NotebookNode) -> list[str]:
    """Every fairness rule (see the module's docstring) that the exercises of ``nb`` break."""
    context = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    return [problem for exercise in exercises(nb) for problem in check_exercise(exercise, context)]
