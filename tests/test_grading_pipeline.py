"""Collecting submissions for ``course grade``: from an LMS zip and a folder.

The grading itself is proven by tests/test_hostile_submissions.py; here, names: typical LMS file
names reach the right student, and a name that names no student is reported, not dropped.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import nbformat
import pytest

from coursetools.cli import main
from coursetools.common.layout import Course
from coursetools.grading import autograde
from coursetools.grading.collect import collect_folder
from coursetools.grading.state import UNMATCHED, load_state

from course_helpers import TINY_SOURCE, CourseCopy, require_sandbox

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Course:
    copy_ = CourseCopy.create(tmp_path_factory.mktemp("collect"), "tiny", source_text=TINY_SOURCE)
    autograde.prepare(copy_.course, "tiny")
    return copy_.course


def test_zip_collect_places_lms_names_and_reports_the_rest(course, tmp_path, capsys):
    require_sandbox()
    release = nbformat.writes(nbformat.read(course.staged_release("tiny"), as_version=4))
    archive = tmp_path / "lms.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for name in ("jdoe_tiny.ipynb", "tiny--asmith.ipynb", "j_roe_tiny_20260111T093000.ipynb",
                     "Untitled.ipynb", "notes.txt"):
            handle.writestr(name, release)
    assert main(["--root", str(course.root), "grade", "tiny", "--zip", str(archive), "--student", "jdoe"]) == 0
    out = capsys.readouterr().out
    for student in ("jdoe", "asmith", "j_roe"):
        assert course.notebook("submitted", "tiny", student).is_file(), student
    assert (course.folder("submitted", "tiny", "j_roe") / "timestamp.txt").read_text().startswith("2026-01-11 09:30:00")
    assert re.search(r"NOT COLLECTED \(name matches no student\): \S*Untitled\.ipynb", out), out
    unmatched = load_state(course, "tiny")[UNMATCHED]
    assert sorted(Path(name).name for name in unmatched) == ["Untitled.ipynb", "notes.txt"]


def test_folder_collect_keeps_misnamed_notebooks(course, tmp_path):
    (tmp_path / "bob" / "tiny").mkdir(parents=True)
    (tmp_path / "bob" / "tiny" / "tiny (1).ipynb").write_text("{}")
    (tmp_path / "eve").mkdir()
    (tmp_path / "eve" / "tiny.ipynb").write_text("{}")
    assert list(collect_folder(course, "tiny", tmp_path)) == ["bob", "eve"]
    assert (course.folder("submitted", "tiny", "bob") / "tiny (1).ipynb").is_file()
    assert course.notebook("submitted", "tiny", "eve").is_file()
