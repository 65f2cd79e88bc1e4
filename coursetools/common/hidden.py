"""What students must not see, found in one place: the marked blocks of a source and their quotes.

nbgrader marks two kinds of block in a cell's source, each between a begin and an end line:

* solution bodies, ``### BEGIN SOLUTION`` ... ``### END SOLUTION``, which the release replaces
  by a stub;
* hidden tests, ``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS``, which the release
  removes and autograding puts back.

:func:`parse_blocks` is the one parser of these markers: the lint, the feedback preprocessor,
the leak check after feedback and the tests all read blocks through it. The rest of the module
answers the leak questions: which lines of a notebook are hidden (:func:`hidden_lines`), whether
a page quotes one (:func:`quoted_lines`, on the page's text, :func:`visible_text`), and a text
with the quotes replaced (:func:`redact`). :func:`hidden_only` reads a hidden block's allow-list of
answers that only it rejects (``# hidden only: <answer> -- <why>``), and :func:`split_setup` its setup
(the lines above ``# END HIDDEN SETUP``): helpers later hidden blocks may use, defined whether or not
the cell's visible part passed.
"""

from __future__ import annotations

import textwrap
from typing import Literal

from bs4 import BeautifulSoup
from nbformat import NotebookNode

BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
SOLUTION_MARKERS = (BEGIN_SOLUTION, END_SOLUTION)
HIDDEN_MARKERS = (BEGIN_HIDDEN, END_HIDDEN)
MARKERS = (*SOLUTION_MARKERS, *HIDDEN_MARKERS)

END_SETUP = "# END HIDDEN SETUP"  # a hidden block's setup ends here (split_setup)
HIDDEN_ONLY = "# hidden only:"  # an answer only the hidden block rejects, and why that is fair
HIDDEN_PLACEHOLDER = "# (hidden tests: graded, not shown)"
REDACTED = "[hidden test code]"
MIN_QUOTED = 6  # shorter hidden lines ("else:", ")") cannot identify a test

Role = Literal["begin", "end", "inside", "outside"]


def parse_blocks(source: str, markers: tuple[str, str] = HIDDEN_MARKERS) -> list[tuple[Role, str]]:
    """Each line of ``source`` with its role: a ``begin`` or ``end`` marker, ``inside`` a block or
    ``outside`` every block.

    ``markers`` is the (begin, end) pair: :data:`HIDDEN_MARKERS` or :data:`SOLUTION_MARKERS`. A
    marker line starts with the marker once its indentation is stripped (the lint holds every
    source to that form). An unterminated block runs to the end of the source: nbgrader refuses
    such a source at release, and for a leak check the rest of the cell is the safe guess.
    """
    begin, end = markers
    roles: list[tuple[Role, str]] = []
    inside = False
    for line in source.splitlines():
        marker = line.strip()
        if marker.startswith(begin):
            inside = True
            roles.append(("begin", line))
        elif marker.startswith(end):
            inside = False
            roles.append(("end", line))
        else:
            roles.append(("inside" if inside else "outside", line))
    return roles


def split_hidden(source: str) -> tuple[str, list[str]]:
    """``source`` with each hidden block replaced by :data:`HIDDEN_PLACEHOLDER` (indented like
    its marker), and the hidden lines."""
    shown, hidden = [], []
    for role, line in parse_blocks(source):
        if role == "begin":
            shown.append(line[: len(line) - len(line.lstrip())] + HIDDEN_PLACEHOLDER)
        elif role == "inside":
            hidden.append(line)
        elif role == "outside":
            shown.append(line)
    return "\n".join(shown), hidden


def split_hidden_block(source: str) -> tuple[str, str]:
    """(the cell without its hidden blocks and their markers, the hidden lines dedented)."""
    visible, hidden = [], []
    for role, line in parse_blocks(source):
        if role == "outside":
            visible.append(line)
        elif role == "inside":
            hidden.append(line)
    return "\n".join(visible), textwrap.dedent("\n".join(hidden))


def hidden_lines(nb: NotebookNode) -> set[str]:
    """The lines of ``nb``'s hidden tests that would give a test away if quoted: stripped, at
    least :data:`MIN_QUOTED` characters, and not also written where students see them."""
    hidden, shown = set(), set()
    for cell in nb.cells:
        for role, line in parse_blocks(cell.source):
            (hidden if role == "inside" else shown).add(line.strip())
    return {line for line in hidden - shown if len(line) >= MIN_QUOTED}


def visible_text(page: str, public: tuple[str, ...] = ()) -> str:
    """An HTML page's text with the markup taken out: entities decoded, and the pieces a syntax
    highlighter splits a line into (``<span>``\\ s) joined again.

    Every string counts, scripts and comments included: whatever the page's source holds can be
    read by the student it is handed to; except a string equal to one of ``public``, a text known to
    hold no test (the feedback's inlined MathJax, whose code is full of short lines such as
    ``continue``).
    """
    return "".join(text for text in BeautifulSoup(page, "html.parser").find_all(string=True)
                   if not (public and text in public))


def quoted_lines(page: str, lines: set[str], public: tuple[str, ...] = ()) -> list[str]:
    """The ``lines`` that an HTML page quotes (compared with its :func:`visible_text`), sorted."""
    text = visible_text(page, public)
    return sorted(line for line in lines if line in text)


def redact(text: str, hidden: list[str]) -> str:
    """``text`` with every quote of a ``hidden`` line (compared without indentation) replaced by
    :data:`REDACTED`; lines shorter than :data:`MIN_QUOTED` are left alone."""
    for line in sorted({h.strip() for h in hidden}, key=len, reverse=True):
        if len(line) >= MIN_QUOTED:
            text = text.replace(line, REDACTED)
    return text


def hidden_only(hidden: str) -> list[tuple[str, str]]:
    """The allow-list of a hidden block: ``(answer, reason)`` for each of its comment lines
    ``# hidden only: <answer> -- <reason>``, where ``<answer>`` names an answer that passes every
    visible test and that this block rejects on purpose: a file of ``tests/wrong_answers/<id>/``
    (its name without ``.py``, or the part after ``__``) or a mutant as ``coursetools.devtools.mutate``
    labels it (a right answer of ``tests/alternative_answers/`` cannot be allow-listed). ``reason`` is
    ``""`` when the line gives none."""
    entries = []
    for line in hidden.splitlines():
        stripped = line.strip()
        if stripped.startswith(HIDDEN_ONLY):
            answer, _, reason = stripped[len(HIDDEN_ONLY):].partition(" -- ")
            entries.append((answer.strip(), reason.strip()))
    return entries


def split_setup(hidden: str) -> tuple[str, str]:
    """(the setup of a hidden block, its checks): the lines above its ``# END HIDDEN SETUP`` line and
    those below; ``("", hidden)`` when it has none.

    A hidden block's checks run only when its cell's visible part passed; its setup is defined in
    the checker in any case, without a call into the kernel (imports, helper functions, constants,
    a generator), so a later hidden block may use what it defines whatever this cell's answer did
    (``coursetools.authoring.hidden_rules.borrowed_hidden_names``)."""
    lines = hidden.splitlines()
    ends = [index for index, line in enumerate(lines) if line.strip() == END_SETUP]
    if not ends:
        return "", hidden
    return "\n".join(lines[:ends[0]]), "\n".join(lines[ends[0] + 1:])
