"""The scan on its two corpora (issue 49): no honest answer flagged, every attack flagged with its line.

``tests/honest_styles/`` and ``tests/hostile/`` (see :mod:`coursetools.devtools.scan_corpora`); every
model solution is scanned too, against its own allow-lists.
"""

from __future__ import annotations

import nbformat
import pytest

from coursetools.authoring.sources import assignments, build_notebook
from coursetools.common.allowlist import allow_lists
from coursetools.common.cells import nbgrader_meta
from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.scan_corpora import EXERCISE, HONEST, HOSTILE, submission
from coursetools.grading.pyscan import submission_findings

HONEST_FILES = sorted(HONEST.glob("*.py"))
HOSTILE_FILES = sorted(HOSTILE.glob("*.py"))


def test_the_corpora_are_as_large_as_the_issue_asks():
    assert len(HONEST_FILES) >= 30
    assert len({EXERCISE.search(p.read_text())["assignment"] for p in HONEST_FILES}) >= 6
    assert len(HOSTILE_FILES) >= 40


@pytest.mark.parametrize("path", HONEST_FILES, ids=lambda p: p.stem)
def test_no_honest_answer_is_flagged(path):
    assert submission_findings(*submission(path)) == []


@pytest.mark.parametrize("path", HOSTILE_FILES, ids=lambda p: p.stem)
def test_every_attack_is_flagged_with_its_line(path):
    findings = submission_findings(*submission(path))
    assert findings, f"{path.name}: nothing found"
    assert all(", line " in str(finding) for finding in findings)


@pytest.mark.parametrize("assignment", assignments(REPO_ROOT))
def test_every_model_solution_keeps_to_its_allow_lists(assignment):
    source = nbformat.read(build_notebook(REPO_ROOT, assignment), as_version=4)
    release = nbformat.from_dict(source)
    release.cells = [cell for cell in source.cells if not nbgrader_meta(cell).get("solution")]
    assert submission_findings(release, source, allow_lists(source)) == []
