"""The scan's precision and recall on the two corpora: ``python -m coursetools.devtools.scan_corpora``.

``tests/honest_styles/`` holds honest answers in ordinary styles, ``tests/hostile/`` every attack class
the course knows. Each file is one submission's own code: a first line ``# exercise: <assignment>/<answer
cell grade_id>``, then the answer cell, then, after each ``# %%`` line, a cell the student added. It is
scanned (:func:`coursetools.grading.pyscan.submission_findings`) as the grader scans a submission: the
release's locked cells around it, the exercise's allow-list from its source.
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
from coursetools.common.allowlist import Allowed, allow_lists
from coursetools.common.cells import grade_id
from coursetools.common.layout import REPO_ROOT
from coursetools.grading.pyscan import submission_findings

HONEST = REPO_ROOT / "tests" / "honest_styles"
HOSTILE = REPO_ROOT / "tests" / "hostile"
EXERCISE = re.compile(r"^# exercise: (?P<assignment>\w+)/(?P<answer>\w+)$", re.MULTILINE)


@dataclass
class Scanned:
    """One corpus file and what the scan found in it."""

    path: Path
    findings: list[str]


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


def scan_folder(folder: Path) -> list[Scanned]:
    """Every corpus file of ``folder``, scanned."""
    return [Scanned(path, [str(finding) for finding in submission_findings(*submission(path))])
            for path in sorted(folder.glob("*.py"))]


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
    print(f"scan time: {seconds:.2f} CPU s for {len(honest) + len(hostile)} submissions "
          f"({1000 * seconds / max(1, len(honest) + len(hostile)):.0f} ms each, notebooks built included)")
    return 1 if flagged_honest or missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
