"""Helpers for tests that run the real nbgrader pipeline in a throwaway copy of the course."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import nbformat
import pytest

from coursetools.authoring import sources
from coursetools.common.cells import is_autograded_test, nbgrader_meta
from coursetools.common.hidden import HIDDEN_MARKERS, MARKERS, SOLUTION_MARKERS, parse_blocks, visible_text
from coursetools.common.layout import REPO_ROOT, Course, run_nbgrader
from coursetools.devtools.session import KernelSession, notebook_plan
from coursetools.grading.nbgrader_plugins import mathjax_script
from coursetools.grading.sandbox import SandboxUnavailable
from coursetools.grading.sandbox import check as check_sandbox

HIDDEN_LINE = "assert add(40, 2) == 42, 'add is wrong for larger numbers'"

# A whole assignment source in the course's format (see solutions/<id>/<id>.md): setup, answer,
# test with a hidden block, free response.
TINY_SOURCE = f"""---
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

```{{code-cell}}
---
nbgrader:
  grade: false
  grade_id: setup
  locked: true
  schema_version: 3
  solution: false
---
import warnings
import torch
```

```{{code-cell}}
---
nbgrader:
  grade: false
  grade_id: add
  locked: false
  schema_version: 3
  solution: true
---
def add(a, b):
    \"\"\"Return a + b.\"\"\"
    ### BEGIN SOLUTION
    return a + b
    ### END SOLUTION
```

```{{code-cell}}
---
nbgrader:
  grade: true
  grade_id: test_add
  locked: true
  points: 2
  schema_version: 3
  solution: false
---
assert add(1, 1) == 2, "add(1, 1) should be 2"
### BEGIN HIDDEN TESTS
secret_operand = 40
{HIDDEN_LINE}
### END HIDDEN TESTS
```

+++ {{"nbgrader": {{"grade": true, "grade_id": "why", "locked": false, "points": 1, "schema_version": 3, "solution": true}}}}

Because addition is commutative.
"""


# What the issue-51 tests print in a graded answer: 300 MB in 1 MB lines, two million short lines,
# 300 MB from a thread, 300 MB of displays; then the model answer follows.
FLOODS = {
    "print_300_mb": "for _ in range(300):\n    print('x' * (2**20 - 1), flush=True)\n",
    "print_2m_lines": "for i in range(2_000_000):\n    print(i)\n",
    "thread_300_mb": ("import threading\n\ndef flood():\n    for _ in range(300):\n        print('y' * (2**20 - 1))\n\n"
                      "printer = threading.Thread(target=flood)\nprinter.start()\nprinter.join()\n"),
    "display_300_mb": ("from IPython.display import display\n\nfor _ in range(300):\n"
                       "    display({'text/plain': 'z' * 2**20}, raw=True)\n"),
}


@contextlib.contextmanager
def busy_processes(count: int) -> Iterator[list[subprocess.Popen]]:
    """``count`` processes that spin at full speed until the block ends (a machine busy with other work)."""
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield spinning
    finally:
        for process in spinning:
            process.kill()
        for process in spinning:
            process.wait()


def require_sandbox() -> None:
    """Skip a test that grades when no bubblewrap box can be made here (nbgrader_config.py runs
    every kernel in one); fail instead where ``COURSE_REQUIRE_SANDBOX=1`` (CI installs bwrap)."""
    try:
        check_sandbox()
    except SandboxUnavailable as error:
        if os.environ.get("COURSE_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"COURSE_REQUIRE_SANDBOX=1 but grading cannot be confined here: {error}")
        pytest.skip(f"grading needs a sandbox: {error}")


@dataclass
class CourseCopy:
    """A course directory in a temporary folder: config, one assignment's source, a gradebook."""

    root: Path
    assignment: str

    @classmethod
    def create(cls, destination: Path, assignment: str, source_text: str | None = None) -> "CourseCopy":
        """Copy the config and ``assignment``'s text source (or write ``source_text`` as it), then
        generate the notebook nbgrader reads, as ``make release`` does."""
        destination.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / "nbgrader_config.py", destination / "nbgrader_config.py")
        text = sources.text_source(destination, assignment)
        text.parent.mkdir(parents=True)
        if source_text is None:
            shutil.copy(sources.text_source(REPO_ROOT, assignment), text)
        else:
            text.write_text(source_text, encoding="utf-8")
        sources.build_notebook(destination, assignment)
        (destination / "grading").mkdir(exist_ok=True)
        return cls(destination, assignment)

    @cached_property
    def course(self) -> Course:
        """The copy's paths, as its ``nbgrader_config.py`` lays them out."""
        return Course(self.root)

    @property
    def source(self) -> Path:
        return sources.notebook_source(self.root, self.assignment)

    @property
    def release(self) -> Path:
        return self.course.notebook("release", self.assignment)

    def generate(self) -> Path:
        run_nbgrader(["generate_assignment", self.assignment, "--force"], self.root)
        return self.release

    def submit(self, student: str, notebook: Path | nbformat.NotebookNode) -> Path:
        """Place a notebook as ``student``'s submission (as an LMS download would)."""
        target = self.course.notebook("submitted", self.assignment, student)
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(notebook, Path):
            shutil.copy(notebook, target)
        else:
            nbformat.write(notebook, target)
        return target

    def autograde(self, *extra: str):
        require_sandbox()
        return run_nbgrader(["autograde", self.assignment, "--force", *extra], self.root, check=False)

    def feedback(self, *extra: str):
        return run_nbgrader(["generate_feedback", self.assignment, "--force", *extra], self.root)

    def autograded(self, student: str) -> nbformat.NotebookNode:
        return nbformat.read(self.course.notebook("autograded", self.assignment, student), as_version=4)

    def feedback_html(self, student: str) -> str:
        return self.course.feedback_page(self.assignment, student).read_text(encoding="utf-8")

    def scores(self, student: str) -> dict[str, tuple[float | None, float]]:
        """grade cell name -> (score, max score), from the gradebook."""
        from nbgrader.api import Gradebook

        with Gradebook(self.course.nbgrader.db_url) as gradebook:
            notebook = gradebook.find_submission_notebook(self.assignment, self.assignment, student)
            return {g.name: (g.score, g.max_score) for g in notebook.grades}

    def autograded_points(self, student: str) -> tuple[float, float]:
        """(earned, possible) over the code test cells, the part graded automatically."""
        earned = possible = 0.0
        for name, (score, max_score) in self.scores(student).items():
            if name in autograded_test_ids(self.source):
                earned += score or 0.0
                possible += max_score
        return earned, possible


def one_exercise_source(instructions: str, answer: str, answer_id: str, visible: str,
                        hidden: str) -> nbformat.NotebookNode:
    """A source with one exercise, for the lints' tests: its instructions, the answer cell
    ``answer_id`` and one 2-point test cell ``test_<answer_id>`` (``visible``, then ``hidden``)."""
    def meta(**nbgrader):
        return {"nbgrader": {"schema_version": 3, **nbgrader}}
    test = f"{visible}### BEGIN HIDDEN TESTS\n{hidden}### END HIDDEN TESTS\n"
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell(instructions, metadata=meta(grade=False, grade_id="task", locked=True,
                                                                  solution=False)),
        nbformat.v4.new_code_cell(answer, metadata=meta(grade=False, grade_id=answer_id, locked=False,
                                                        solution=True)),
        nbformat.v4.new_code_cell(test, metadata=meta(grade=True, grade_id=f"test_{answer_id}", locked=True,
                                                      points=2, solution=False)),
    ])


def cells_of(nb: nbformat.NotebookNode, kind: str) -> list:
    """``solution`` cells or ``test`` cells (autograded code tests), in order."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    if kind == "solution":
        return [c for c in code if nbgrader_meta(c).get("solution")]
    return [c for c in code if is_autograded_test(c)]


def answered(release: nbformat.NotebookNode, solution: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The release with the solution's answers typed in: a correct submission as a student makes it
    (locked cells as released, so without the hidden tests)."""
    nb = copy.deepcopy(release)
    for mine, model in zip(cells_of(nb, "solution"), cells_of(solution, "solution")):
        mine.source = model.source
    return nb


def exercises(nb: nbformat.NotebookNode) -> list[tuple[list[str], list[str]]]:
    """Each autograded exercise (or part) in order: (the grade_ids of its solution cells, the
    grade_ids of the test cells that grade them). A part's solution cells are those since the
    previous test cell; test cells in a row grade the same solution cells (partial credit: one
    test cell per property)."""
    found: list[tuple[list[str], list[str]]] = []
    pending: list[str] = []
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and meta.get("solution"):
            pending.append(meta["grade_id"])
        elif is_autograded_test(cell):
            if pending or not found:
                found.append((pending, []))
                pending = []
            found[-1][1].append(meta["grade_id"])
    return found


COPY_SUBMISSIONS = REPO_ROOT / "tests" / "copy_submissions"


def answer_files(folder: Path, assignment: str) -> dict[str, list[Path]]:
    """``<folder>/<assignment>/<answer grade_id>[__<name>].py``, by answer cell (the grade_id before
    ``__``), each cell's files in name order; empty when the folder has none for ``assignment``."""
    found: dict[str, list[Path]] = {}
    for path in sorted((folder / assignment).glob("*.py")):
        found.setdefault(path.stem.split("__")[0], []).append(path)
    return found


def copy_submission_files(assignment: str) -> dict[str, list[Path]]:
    """``tests/copy_submissions/<assignment>/<solution grade_id>[__<name>].py``, by answer cell:
    what a lazy student pastes into that cell (a public function renamed, or a page line, a given
    line and a library call put together); each must earn nothing for its exercise."""
    return answer_files(COPY_SUBMISSIONS, assignment)


def assignment_term(assignment: str) -> int:
    """A term seed of ``assignment``'s own (not 0), under which answers are graded with the hidden
    tests: the model answers must earn every point whatever the term (an integer seed passed to a
    hidden helper as written once broke ch03 under every other term)."""
    return int(hashlib.sha256(assignment.encode()).hexdigest()[:6], 16) + 1


def graded_outcomes(assignment: str, notebook: nbformat.NotebookNode, tries: dict[str, list[Path]],
                    term_seed: int = 0) -> dict[str, dict[str, bool]]:
    """file name -> {test grade_id: whether it passed} for each test cell grading the file's answer
    cell (an answer that raises fails them all), in one kernel
    (:class:`~coursetools.devtools.session.KernelSession`). Runs ``notebook``'s cells with the
    source's model answers, hidden blocks (in the checker) drawing their seeds from ``term_seed``;
    raises when a model answer fails a test of ``notebook``, or a file names no answer cell."""
    model = {answer.grade_id: answer.source
             for answer in notebook_plan(sources.read_text_source(sources.text_source(REPO_ROOT, assignment)))}
    left = dict(tries)
    outcomes: dict[str, dict[str, bool]] = {}
    with KernelSession(REPO_ROOT, term_seed=term_seed) as kernel:
        for answer in notebook_plan(notebook):
            kernel.reach(answer, model[answer.grade_id])
            failing = kernel.failing_tests(answer)
            assert not failing, f"{assignment}: the model answer {answer.grade_id} fails {failing}"
            for path in left.pop(answer.grade_id, []):
                ran = kernel.run(path.read_text(encoding="utf-8")).passed
                outcomes[path.name] = {test_id: ran and kernel.run(test, locked=True).passed
                                       for test_id, test in answer.tests}
                kernel.run(model[answer.grade_id])
    assert not left, f"{assignment}: files that name no answer cell: {sorted(left)}"
    return outcomes


def copy_submission_cells(assignment: str) -> dict[str, str]:
    """For each answer cell with copies, the first one (``<grade_id>.py`` sorts first): the copy
    graded through nbgrader; :func:`copy_submission_files` gives them all. Empty when the
    assignment has no such folder."""
    return {cell: paths[0].read_text(encoding="utf-8") for cell, paths in copy_submission_files(assignment).items()}


def with_cells(nb: nbformat.NotebookNode, sources_by_id: dict[str, str]) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose cells named in ``sources_by_id`` (by grade_id) hold those sources."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if grade_id in sources_by_id:
            cell.source = sources_by_id[grade_id]
    return nb


def given_code_answers(nb: nbformat.NotebookNode) -> dict[str, str]:
    """Bug hunts: for each answer cell that defines ``name`` (or ``Name``) where a locked cell gives
    ``buggy_name`` (or ``BuggyName``), an answer that hands the given code in unchanged:
    ``name = buggy_name``. Empty when the notebook hands out no buggy code."""
    given = {node.name for cell in nb.cells if cell.cell_type == "code" and not nbgrader_meta(cell).get("solution")
             for node in _top_definitions(cell.source) if node.name.lower().startswith("buggy")}
    answers = {}
    for cell in cells_of(nb, "solution"):
        for node in _top_definitions(cell.source):
            buggy = next((name for name in (f"buggy_{node.name}", f"Buggy{node.name}") if name in given), None)
            if buggy:
                answers[nbgrader_meta(cell)["grade_id"]] = f"{node.name} = {buggy}  # the given code, unchanged\n"
    return answers


def _top_definitions(source: str) -> list:
    """The functions and classes defined at the top of a cell (none when it does not parse)."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]


def autograded_test_ids(notebook_path: Path) -> set[str]:
    return {nbgrader_meta(c)["grade_id"] for c in cells_of(nbformat.read(notebook_path, as_version=4), "test")}


def _secret_and_visible(notebook_path: Path) -> tuple[set[str], set[str]]:
    """(stripped lines students must not see, stripped lines they see) of a source notebook."""
    nb = nbformat.read(notebook_path, as_version=4)
    secret: set[str] = set()
    visible: set[str] = set()
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "markdown" and meta.get("solution"):
            secret.update(line.strip() for line in cell.source.splitlines())
            continue
        in_solutions = parse_blocks(cell.source, SOLUTION_MARKERS)
        in_hidden_tests = parse_blocks(cell.source, HIDDEN_MARKERS)
        for (solution_role, line), (hidden_role, _) in zip(in_solutions, in_hidden_tests):
            roles = {solution_role, hidden_role}
            if not roles & {"begin", "end"}:
                (secret if "inside" in roles else visible).add(line.strip())
    return secret, visible


def secret_lines(notebook_path: Path, public: set[str] = frozenset()) -> set[str]:
    """Lines students must never see: solution bodies, hidden tests, model answers (stripped).

    Lines that also occur in the visible part of the notebook, or in ``public`` (see
    :func:`public_lines`), are not secret: ``super().__init__()`` gives nothing away.
    """
    secret, visible = _secret_and_visible(notebook_path)
    return {line for line in secret - visible - public if len(line) >= 6}


def public_lines() -> set[str]:
    """Lines anyone may read: the library's source, the course's modules students get
    (``student.COURSE_MODULES``: the checks and their tamper guard), the book's chapter pages
    (``book/*.md``, printed in the book) and the visible cells of every notebook."""
    from coursetools.authoring.student import COURSE_MODULES

    lines: set[str] = set()
    for path in [*(REPO_ROOT / "transformer_lib").rglob("*.py"),
                 *(REPO_ROOT / "coursetools" / module for module in COURSE_MODULES),
                 *(REPO_ROOT / "book").glob("*.md")]:
        lines.update(line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    for assignment in sources.assignments(REPO_ROOT):
        lines |= _secret_and_visible(source_notebook(assignment))[1]
    return lines


def source_notebook(assignment: str) -> Path:
    """The repository's instructor notebook of ``assignment``, generated from its text source."""
    return sources.build_notebook(REPO_ROOT, assignment)


def leaked_lines(text: str, secrets: set[str], *, is_html: bool = False,
                 markers: tuple[str, ...] = MARKERS) -> list[str]:
    """The secret lines (and markers) that occur in ``text``.

    HTML is compared as a reader sees it (``visible_text``).
    """
    if is_html:  # the feedback's inlined MathJax is public (and full of short lines such as `continue`)
        text = visible_text(text, (mathjax_script(),))
    found = [line for line in secrets if line in text]
    found += [marker for marker in markers if marker in text]
    return sorted(found)


def notebook_text(notebook_path: Path) -> str:
    """Every cell's source and every output's text, as a student would read them."""
    nb = nbformat.read(notebook_path, as_version=4)
    parts = []
    for cell in nb.cells:
        parts.append(cell.source)
        parts += _strings(cell.get("outputs", []))
    return "\n".join(parts)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def normalised(notebook_path: Path) -> str:
    """A notebook's JSON with volatile fields dropped, for comparing two releases."""
    nb = json.loads(Path(notebook_path).read_text(encoding="utf-8"))
    nb.get("metadata", {}).pop("widgets", None)
    return json.dumps(nb, sort_keys=True, indent=1)
