"""Collect submissions into nbgrader's ``submitted`` folders: from an LMS download or a folder.

An LMS zip is read in place (nothing is extracted, so no name in it can write outside the
course): each file's name is parsed (:mod:`coursetools.submission_names`), each student's latest
file is copied to ``submitted/<student>/<assignment>/<assignment>.ipynb`` with nbgrader's
``timestamp.txt`` when the name gives a time, and what was left out is recorded in the state
file (:mod:`coursetools.state`) for the report: files naming no student, and students' older or
undecidable duplicates.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from coursetools.layout import Course
from coursetools.state import LEFT_OUT, SUBMITTED, UNMATCHED, update_state
from coursetools.submission_names import Choice, choose_latest

IGNORED = ("__MACOSX/", ".DS_Store")  # what a Mac adds to a zip


def collect_zip(course: Course, assignment: str, archive: Path) -> Choice:
    """Copy each student's latest notebook of an LMS download into the submitted folders.

    Returns what was chosen, left out and not understood (also recorded in the state file).
    """
    with zipfile.ZipFile(archive) as handle:
        members = {info.filename: info for info in handle.infolist()
                   if not info.is_dir() and not any(part in info.filename for part in IGNORED)}
        choice = choose_latest(list(members), assignment)
        for student, name in choice.chosen.items():
            destination = _fresh_folder(course, assignment, student)
            (destination / f"{assignment}.ipynb").write_bytes(handle.read(members[name.path]))
            if name.timestamp is not None:
                (destination / "timestamp.txt").write_text(f"{name.timestamp:%Y-%m-%d %H:%M:%S}\n")
    update_state(course, assignment, {
        UNMATCHED: choice.unmatched, LEFT_OUT: choice.left_out,
        SUBMITTED: {student: {"file": name.path, "timestamp": name.timestamp and name.timestamp.isoformat(),
                              "marked_late": name.marked_late} for student, name in choice.chosen.items()}})
    return choice


def collect_folder(course: Course, assignment: str, folder: Path) -> list[str]:
    """Copy ``folder/<student>/[<assignment>/]*.ipynb`` into the submitted folders; return the students.

    Every notebook is copied as it was named, so a misnamed one is reported at grading, not lost.
    """
    students = []
    for student_dir in sorted(p for p in Path(folder).iterdir() if p.is_dir()):
        inner = student_dir / assignment
        origin = inner if inner.is_dir() else student_dir
        destination = _fresh_folder(course, assignment, student_dir.name)
        for notebook in sorted(origin.glob("*.ipynb")):
            shutil.copy2(notebook, destination / notebook.name)
        if (origin / "timestamp.txt").is_file():
            shutil.copy2(origin / "timestamp.txt", destination / "timestamp.txt")
        students.append(student_dir.name)
    return students


def _fresh_folder(course: Course, assignment: str, student: str) -> Path:
    """``student``'s submitted folder, emptied of an earlier collection."""
    destination = course.folder("submitted", assignment, student)
    if destination.exists():
        shutil.rmtree(destination)
    destination.mkdir(parents=True)
    return destination
