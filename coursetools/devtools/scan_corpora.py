"""The scan's precision and recall on the two corpora: ``python -m coursetools.devtools.scan_corpora``.

``tests/honest_styles/`` holds honest answers in ordinary styles, ``tests/hostile/`` every attack class
the course knows. Each file is one submission's own code: a first line ``# exercise: <assignment>/<answer
cell grade_id>``, then the answer cell, then, after each ``# %%`` line, a cell the student added. It is
scanned (:func:`coursetools.grading.scan.submission_findings`) as the grader scans a submission: the
release's locked cells around it, the exercise's allow-list from its source. The visible tests' check
(:func:`coursetools.checks.may_use.assert_may_use`) reads the same answers as a kernel holds them when the
notebook is run top to bottom (:func:`visible_findings`): no honest answer may fail it, and every attack
the file scan finds outside its exercise's allow-list must.
"""

from __future__ import annotations

import argparse
import re
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell

from coursetools.authoring.sources import build_notebook
from coursetools.common.allowlist import Allowed, allow_lists, exercises, may_use_call, parse_may_use
from coursetools.common.cells import grade_id
from coursetools.common.hidden import split_hidden_block
from coursetools.common.layout import REPO_ROOT
from coursetools.common.pyscan import Finding, history_findings
from coursetools.grading.scan import submission_findings

HONEST = REPO_ROOT / "tests" / "honest_styles"
HOSTILE = REPO_ROOT / "tests" / "hostile"
EXERCISE = re.compile(r"^# exercise: (?P<assignment>\w+)/(?P<answer>\w+)$", re.MULTILINE)


@dataclass
class Scanned:
    """One corpus file and what the scan found in it."""

    path: Path
    findings: list[str]
    ruled: bool  # a finding outside the exercise's allow-list (not only what no cell may do)
    visible: list[str]  # what the visible test's check finds


@cache
def _instructor(assignment: str) -> tuple[nbformat.NotebookNode, dict[str, Allowed]]:
    """The instructor's notebook (its locked cells are the release's) and its allow-lists."""
    nb = nbformat.read(build_notebook(REPO_ROOT, assignment), as_version=4)
    return nb, allow_lists(nb)


def submission(path: Path) -> tuple[nbformat.NotebookNode, nbformat.NotebookNode, dict[str, Allowed]]:
    """(release, submission, allow-lists) for a corpus file: the instructor's notebook with the file's
    first cell as the answer cell it names and the others added after it."""
    text = path.read_text(encoding="utf-8")
    named = EXERCISE.search(text)
    if named is None:
        raise ValueError(f"{path}: the first line must be '# exercise: <assignment>/<answer grade_id>'")
    release, allowed = _instructor(named["assignment"])
    nb = nbformat.from_dict(nbformat.reader.reads(nbformat.writes(release)))
    answer = next((cell for cell in nb.cells if grade_id(cell) == named["answer"]), None)
    if answer is None:
        raise ValueError(f"{path}: {named['assignment']} has no answer cell {named['answer']!r}")
    first, *added = re.split(r"^# %%.*$\n?", text, flags=re.MULTILINE)
    answer.source = first
    at = nb.cells.index(answer)
    nb.cells[at + 1:at + 1] = [new_code_cell(code) for code in added]
    return release, nb, allowed


def visible_findings(nb: nbformat.NotebookNode, answer: str) -> list[Finding]:
    """What the check at the start of the first test cell of ``answer``'s exercise finds when ``nb`` is run top
    to bottom in a kernel (each code cell before that test is the kernel's history); [] for an exercise
    without the check."""
    exercise = next(e for e in exercises(nb) if answer in e.answers)
    at = next(i for i, cell in enumerate(nb.cells) if grade_id(cell) == exercise.test_ids[0])
    test = split_hidden_block(nb.cells[at].source)[0]
    call = may_use_call(test)
    if call is None:
        return []
    history = [(f"In [{n}]", cell.source) for n, cell in
               enumerate((cell for cell in nb.cells[:at] if cell.cell_type == "code"), start=1)]
    return history_findings(history, test, [name.strip() for name in call[0].split(",")], parse_may_use(call[1]))


def scan_file(path: Path) -> Scanned:
    """A corpus file, scanned as the grader scans it and as its visible test does."""
    release, nb, allowed = submission(path)
    found = submission_findings(release, nb, allowed)
    answer = EXERCISE.search(path.read_text(encoding="utf-8"))["answer"]
    return Scanned(path, [str(f) for f in found], any(f.exercise for f in found),
                   [str(f) for f in visible_findings(nb, answer)])


def scan_folder(folder: Path) -> list[Scanned]:
    """Every corpus file of ``folder``, scanned."""
    return [scan_file(path) for path in sorted(folder.glob("*.py"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print every finding")
    args = parser.parse_args(argv)
    start = time.process_time()
    honest, hostile = scan_folder(HONEST), scan_folder(HOSTILE)
    seconds = time.process_time() - start
    flagged_honest = [s for s in honest if s.findings]
    missed = [s for s in hostile if not s.findings]
    caught = len(hostile) - len(missed)
    for scanned in (honest + hostile) if args.verbose else flagged_honest + missed:
        print(f"{scanned.path.relative_to(REPO_ROOT)}: {scanned.findings or 'nothing found'}")
    print(f"honest answers flagged: {len(flagged_honest)} of {len(honest)}")
    print(f"attacks flagged: {caught} of {len(hostile)}")
    flagged = caught + len(flagged_honest)
    print(f"precision {caught / flagged if flagged else 1:.3f}, recall {caught / len(hostile) if hostile else 1:.3f}")
    failed_honest = [s for s in honest if s.visible]
    ruled = [s for s in hostile if s.ruled]
    visible_missed = [s for s in ruled if not s.visible]
    for scanned in failed_honest + visible_missed:
        print(f"{scanned.path.relative_to(REPO_ROOT)}: the visible check found {scanned.visible or 'nothing'}")
    print(f"visible check: honest answers failed {len(failed_honest)} of {len(honest)}; attacks outside their "
          f"allow-list failed {len(ruled) - len(visible_missed)} of {len(ruled)}")
    print(f"scan time: {seconds:.2f} CPU s for {len(honest) + len(hostile)} submissions "
          f"({1000 * seconds / max(1, len(honest) + len(hostile)):.0f} ms each, notebooks built included)")
    return 1 if flagged_honest or missed or failed_honest or visible_missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
