"""Collect submissions into nbgrader's ``submitted`` folders: from an LMS download or a folder.

An LMS zip is read in place (nothing is extracted, so no name in it can write outside the
course): each file's name is parsed (:mod:`coursetools.grading.submission_names`), each student's latest
file is copied to ``submitted/<student>/<assignment>/<assignment>.ipynb`` with nbgrader's
``timestamp.txt`` when the name gives a time, and what was left out is recorded in the state
file (:mod:`coursetools.grading.state`) for the report: files naming no student, and students' older or
undecidable duplicates. The LMS's number for each student in the names (Canvas's user ID, Moodle's
participant number) is kept for the grade uploads (:mod:`coursetools.reports.uploads`).

Canvas and Moodle names carry no time, so lateness against a due date needs the times from
elsewhere: :func:`read_submission_times` reads a CSV of them (``course grade --times``). A folder
carries the time of each file: a student's submission collected from a folder is dated by the
folder's ``timestamp.txt`` (nbgrader's), else by the notebook file's modification time (in the
grading machine's time zone; a copy made with ``cp -p``, ``rsync -t`` or an unzip keeps it); a time
in the future is refused (the file's time was not kept), and a times file given in the same
command wins over both.
"""

from __future__ import annotations

import csv
import shutil
import zipfile
from datetime import datetime
from pathlib import Path

from coursetools.common.layout import Course
from coursetools.grading.state import (
    LEFT_OUT,
    LMS_IDS,
    SUBMITTED,
    TIMES,
    UNMATCHED,
    load_state,
    merge_state,
    update_state,
)
from coursetools.grading.submission_names import Choice, choose_latest

IGNORED = ("__MACOSX/", ".DS_Store")  # what a Mac adds to a zip
FROM_FOLDER = "from_folder"  # in a submission's record: collected from a folder, not a download
MODIFIED = "the file's modification time"  # what dates a folder's submission without a timestamp.txt


def collect_zip(course: Course, assignment: str, archive: Path, replace_folders: bool = False) -> Choice:
    """Copy each student's latest notebook of an LMS download into the submitted folders.

    A submission collected from a folder since (a late resubmission, :func:`collect_folder`) is
    kept, and the download's file for that student left out with the reason, unless
    ``replace_folders``: collecting the term's download again must not silently bring back an older
    file. Returns what was chosen, left out and not understood (also recorded in the state file).
    """
    with zipfile.ZipFile(archive) as handle:
        members = {info.filename: info for info in handle.infolist()
                   if not info.is_dir() and not any(part in info.filename for part in IGNORED)}
        choice = choose_latest(list(members), assignment)
        if not replace_folders:
            _keep_folder_submissions(course, assignment, choice)
        for student, name in choice.chosen.items():
            destination = _fresh_folder(course, assignment, student)
            (destination / f"{assignment}.ipynb").write_bytes(handle.read(members[name.path]))
            if name.timestamp is not None:
                (destination / "timestamp.txt").write_text(f"{name.timestamp:%Y-%m-%d %H:%M:%S}\n")
    update_state(course, assignment, {
        UNMATCHED: choice.unmatched, LEFT_OUT: choice.left_out,
        SUBMITTED: {student: {"file": name.path, "timestamp": name.timestamp and name.timestamp.isoformat(),
                              "marked_late": name.marked_late} for student, name in choice.chosen.items()}})
    merge_state(course, assignment, LMS_IDS, {student: {"lms": name.convention.split(" ")[0], "lms_id": name.lms_id}
                                              for student, name in choice.chosen.items() if name.lms_id})
    return choice


def _keep_folder_submissions(course: Course, assignment: str, choice: Choice) -> None:
    """Take out of ``choice`` the students whose submission was collected from a folder (it is there,
    and no download's record of it is), saying so in ``choice.left_out``."""
    records = load_state(course, assignment).get(SUBMITTED, {})
    from_downloads = {student for student, record in records.items() if not record.get(FROM_FOLDER)}
    for student in [s for s in choice.chosen if s not in from_downloads
                    and course.notebook("submitted", assignment, s).is_file()]:
        name = choice.chosen.pop(student)
        choice.left_out.setdefault(student, []).append(
            f"{name.path}: not collected, the submission collected from a folder since is kept "
            "(--replace-folders takes the download's)")


def collect_folder(course: Course, assignment: str, folder: Path) -> dict[str, dict]:
    """Copy ``folder/<student>/[<assignment>/]*.ipynb`` into the submitted folders; return each student's
    record: the file and when it was submitted (:func:`folder_time`), also written to the state.

    Every notebook is copied as it was named, so a misnamed one is reported at grading, not lost. A
    submission whose time cannot be right (in the future) stops the collection before anything is
    copied, with a ValueError saying what to do.
    """
    origins = {}
    for student_dir in sorted(p for p in Path(folder).iterdir() if p.is_dir()):
        inner = student_dir / assignment
        origins[student_dir.name] = inner if inner.is_dir() else student_dir
    records = {student: folder_time(origin, assignment) for student, origin in origins.items()}
    for student, origin in origins.items():
        destination = _fresh_folder(course, assignment, student)
        for notebook in sorted(origin.glob("*.ipynb")):
            shutil.copy2(notebook, destination / notebook.name)
        if (origin / "timestamp.txt").is_file():
            shutil.copy2(origin / "timestamp.txt", destination / "timestamp.txt")
    # what an earlier LMS download or times file said of these students' files (a time, a LATE) is not of these
    state = load_state(course, assignment)
    update_state(course, assignment, {
        SUBMITTED: {**{s: v for s, v in state.get(SUBMITTED, {}).items() if s not in records}, **records},
        TIMES: {s: v for s, v in state.get(TIMES, {}).items() if s not in records}})
    return records


def folder_time(origin: Path, assignment: str, now: datetime | None = None) -> dict:
    """The record of a submission in the folder ``origin``: its notebook (``<assignment>.ipynb``, else the
    latest one there), when it was submitted (ISO, naive) and what says so (``timestamp.txt``, else the
    notebook's modification time, in the grading machine's time zone); no time when there is no notebook.
    A modification time after ``now`` is refused: the file's time was not kept."""
    named = origin / f"{assignment}.ipynb"
    notebooks = sorted(origin.glob("*.ipynb"), key=lambda path: path.stat().st_mtime)
    notebook = named if named.is_file() else (notebooks[-1] if notebooks else None)
    record = {"file": str(notebook or origin), FROM_FOLDER: True, "timestamp": None, "time_from": None}
    if (origin / "timestamp.txt").is_file():
        text = (origin / "timestamp.txt").read_text(encoding="utf-8").strip()
        try:
            when, source = datetime.fromisoformat(text.split(".")[0].removesuffix(" UTC")), "timestamp.txt"
        except ValueError:
            raise ValueError(f"{origin / 'timestamp.txt'}: expected a time like 2026-01-12 22:10:00, got {text!r}") \
                from None
    elif notebook is not None:
        when, source = datetime.fromtimestamp(notebook.stat().st_mtime).replace(microsecond=0), MODIFIED
        if when > (now or datetime.now()):
            raise ValueError(f"{notebook}: modified at {when.isoformat()}, which is in the future: its time was not "
                             "kept when it was copied; copy the folder keeping times (cp -p, rsync -t, unzip) or give "
                             "the students' times with TIMES=times.csv (columns student, submitted_at)")
    else:
        return record
    return {**record, "timestamp": when.isoformat(), "time_from": source}


def read_submission_times(path: Path, lms_ids: dict[str, dict[str, str]]) -> dict[str, str]:
    """student -> ISO time of submission, from a CSV with a ``submitted_at`` column (ISO 8601, e.g.
    ``2026-01-12T22:10:00``; with an offset only when the due date has one) and a column naming the
    student: ``student`` (the course's id) or ``lms_id``/``user_id`` (the LMS's number, as Canvas's
    Submissions API gives ``user_id`` and ``submitted_at``), matched through ``lms_ids`` (the state's
    :data:`~coursetools.grading.state.LMS_IDS`). Rows with an empty time are skipped (nothing submitted)."""
    by_lms_id = {ids["lms_id"]: student for student, ids in lms_ids.items()}
    with Path(path).open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        fields = reader.fieldnames or []
        key = next((k for k in ("student", "lms_id", "user_id") if k in fields), None)
        if "submitted_at" not in fields or key is None:
            raise ValueError(f"{path}: expected a header with 'submitted_at' and one of 'student', 'lms_id', "
                             f"'user_id', got {fields}")
        times = {}
        for line, row in enumerate(reader, start=2):
            who, when = (row.get(key) or "").strip(), (row.get("submitted_at") or "").strip()
            if not who or not when:
                continue
            student = who if key == "student" else by_lms_id.get(who)
            if student is None:
                raise ValueError(f"{path}, line {line}: no collected student has the LMS id {who!r} "
                                 f"(known: {', '.join(sorted(by_lms_id)) or 'none; collect the download first'})")
            try:
                times[student] = datetime.fromisoformat(when.replace("Z", "+00:00")).isoformat()
            except ValueError:
                raise ValueError(f"{path}, line {line}: expected an ISO time like 2026-01-12T22:10:00, "
                                 f"got {when!r}") from None
        return times


def _fresh_folder(course: Course, assignment: str, student: str) -> Path:
    """``student``'s submitted folder, emptied of an earlier collection."""
    destination = course.folder("submitted", assignment, student)
    if destination.exists():
        shutil.rmtree(destination)
    destination.mkdir(parents=True)
    return destination
