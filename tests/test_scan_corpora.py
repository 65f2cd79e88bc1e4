"""The scan on its two corpora (issue 49): no honest answer flagged, every attack flagged with its line.

``tests/honest_styles/`` and ``tests/hostile/`` (see :mod:`coursetools.devtools.scan_corpora`); every
model solution is scanned too, against its own allow-lists. The visible tests' check (``assert_may_use``,
the same scan on the code a kernel ran) passes every honest answer and every model solution, and fails
every attack the file scan finds outside its exercise's allow-list.
"""

from __future__ import annotations

from functools import cache

import nbformat
import pytest

from coursetools.authoring.sources import assignments, build_notebook
from coursetools.common.allowlist import allow_lists, exercises
from coursetools.common.cells import nbgrader_meta
from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.scan_corpora import EXERCISE, HONEST, HOSTILE, scan_file, visible_findings
from coursetools.grading.scan import submission_findings

scanned_file = cache(scan_file)  # each file read once by the tests below
HONEST_FILES = sorted(HONEST.glob("*.py"))
HOSTILE_FILES = sorted(HOSTILE.glob("*.py"))


def test_the_corpora_are_as_large_as_the_issue_asks():
    assert len(HONEST_FILES) >= 30
    assert len({EXERCISE.search(p.read_text())["assignment"] for p in HONEST_FILES}) >= 6
    assert len(HOSTILE_FILES) >= 40


@pytest.mark.parametrize("path", HONEST_FILES, ids=lambda p: p.stem)
def test_no_honest_answer_is_flagged_nor_fails_the_visible_check(path):
    scanned = scanned_file(path)
    assert scanned.findings == []
    assert scanned.visible == []


@pytest.mark.parametrize("path", HOSTILE_FILES, ids=lambda p: p.stem)
def test_every_attack_is_flagged_with_its_line(path):
    scanned = scanned_file(path)
    assert scanned.findings, f"{path.name}: nothing found"
    assert all(", line " in finding for finding in scanned.findings)
    if scanned.ruled:  # outside the exercise's allow-list: the visible test says so too, with the line
        assert scanned.visible, f"{path.name}: the visible check found nothing; the file scan found {scanned.findings}"
        assert all(", line " in finding for finding in scanned.visible)


def test_the_visible_check_fails_attacks_of_each_kind():
    """Not only a few: most attacks are uses outside an allow-list, which the visible test reports."""
    assert sum(bool(scanned_file(path).visible) for path in HOSTILE_FILES) >= 25


@pytest.mark.parametrize("assignment", assignments(REPO_ROOT))
def test_every_model_solution_keeps_to_its_allow_lists(assignment):
    source = nbformat.read(build_notebook(REPO_ROOT, assignment), as_version=4)
    release = nbformat.from_dict(source)
    release.cells = [cell for cell in source.cells if not nbgrader_meta(cell).get("solution")]
    assert submission_findings(release, source, allow_lists(source)) == []
    ruled = [answer for exercise in exercises(source) if exercise.allowed for answer in exercise.answers[:1]]
    assert {answer: [str(f) for f in visible_findings(source, answer)] for answer in ruled} == dict.fromkeys(ruled, [])
