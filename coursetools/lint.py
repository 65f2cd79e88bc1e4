"""Check an assignment's source without running it: the rules nbgrader does not check itself.

``python -m coursetools.lint [assignment ...]`` (also run by ``make release`` before releasing)
prints one line per problem and exits 1 when there is any. Rules, for every source notebook:

* every nbgrader cell has ``schema_version: 3`` and a ``grade_id``, unique in the notebook;
* every solution code cell has balanced ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers;
* every autograded test cell is locked, has points, and exactly one hidden block, whose first
  line is the instructor notes (``# Instructor notes: ...``: the mistakes the block catches);
* every hand-graded answer has points;
* the points table in the ``grading`` cell adds up: its rows sum to its total, which equals the
  sum of the graded cells' points; each ``## Exercise N: ... (k points)`` heading gives the
  points of the graded cell that follows it;
* the ``grading`` cell includes the shared text on how grading works.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from nbformat.notebooknode import NotebookNode

from coursetools import sources
from coursetools.cells import is_autograded_test, nbgrader_meta
from coursetools.hidden import BEGIN_SOLUTION, END_SOLUTION, HIDDEN_MARKERS, SOLUTION_MARKERS, parse_blocks
from coursetools.layout import REPO_ROOT
from coursetools.nbgrader_plugins import INCLUDE_RULES

NOTES = "# Instructor notes:"
_TABLE_ROW = re.compile(r"^\|\s*(?P<name>[^|]+?)\s*\|\s*(?P<points>[\d.*]+)\s*\|\s*$")
_HEADING_POINTS = re.compile(r"^#+ .*\((?P<points>\d+(?:\.\d+)?) points?\b", re.MULTILINE)


def _markers(source: str, markers: tuple[str, str]) -> list[str]:
    """The roles of the marker lines of ``source``, in order: ``begin``, ``end``, ..."""
    return [role for role, _ in parse_blocks(source, markers) if role in ("begin", "end")]


def _paired(roles: list[str]) -> bool:
    """At least one block, and markers alternating begin, end, begin, end, ..."""
    return len(roles) >= 2 and roles == ["begin", "end"] * (len(roles) // 2)


def _hidden_notes(source: str) -> str:
    """The first non-blank line inside the hidden block."""
    return next((line.strip() for role, line in parse_blocks(source) if role == "inside" and line.strip()), "")


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
    for index, cell in enumerate(nb.cells):
        match = _HEADING_POINTS.search(cell.source) \
            if cell.cell_type == "markdown" and not nbgrader_meta(cell).get("grade") \
            else None
        if not match:
            continue
        graded = next((c for c in nb.cells[index + 1:] if nbgrader_meta(c).get("grade")), None)
        if graded is None or float(nbgrader_meta(graded).get("points", 0)) != float(match["points"]):
            found = None if graded is None else nbgrader_meta(graded).get("points")
            problems.append(f"the heading '{match.group(0).strip()}' announces {match['points']} points, "
                            f"the graded cell after it carries {found}")
    return problems


def lint(assignment: str, course_root: Path = REPO_ROOT) -> list[str]:
    """:func:`lint_notebook` of an assignment's text source, each problem prefixed by its id."""
    nb = sources.read_text_source(sources.text_source(course_root, assignment))
    return [f"{assignment}: {problem}" for problem in lint_notebook(nb)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="assignment ids (default: all in solutions/)")
    args = parser.parse_args(argv)
    problems = [p for a in args.assignments or sources.assignments(REPO_ROOT) for p in lint(a)]
    print("\n".join(problems) if problems else "no problems found")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
