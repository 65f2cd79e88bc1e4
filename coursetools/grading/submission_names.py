"""Who submitted a file, read from the name a learning-management system (LMS) gave it.

Each convention is one row of :data:`CONVENTIONS`: its name, a pattern over the file's path in
the download (``{a}`` stands for the assignment id) and an example; the tests check every example. The
student id is the one the LMS puts in the name (Canvas's lower-case ``lastfirst``, Moodle's full
name turned into ``first_last``, Blackboard's user name, the course's own ``<student>_<a>``).

After the assignment id a name may carry what a student's computer or the LMS added to the file
name: ``-Copy1``, `` (1)``, ``_final``, ``_v2``, Canvas's resubmission number ``-1``. Timestamps
are read when the name has one (the course's compact ``20260111T093000``, Blackboard's
``2026-01-11-09-30-00``). When one student has several files, :func:`choose_latest` keeps the
latest (by timestamp, then resubmission number) and says which were left out; files it cannot
order are all left out and reported, never picked silently.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import NamedTuple

# What a student's computer or the LMS adds after the file's own name, any number of times.
COPY_SUFFIX = r"(?P<copy>(?:-? ?Copy\d*| ?\(\d+\)|[-_ ](?:final|Final|FINAL|v\d+)|-\d+)*)"
COMPACT_STAMP = r"\d{8}T\d{6}"
DASHED_STAMP = r"\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d"
USER = r"[A-Za-z0-9.\-]+"


class Convention(NamedTuple):
    """One LMS naming convention: ``pattern`` matches the whole path of a file in the download."""

    name: str
    pattern: str
    example: str
    expected: str  # the student id the example names


# Most specific first: a Canvas or Blackboard name also fits the course's loose ``<student>_<a>``.
CONVENTIONS = (
    Convention("Canvas",
               rf"(?:.*/)?(?P<student>[a-z0-9\-]+)(?P<late>_LATE)?_(?P<lms_id>\d+)_\d+_{{a}}{COPY_SUFFIX}\.ipynb",
               "doejane_123456_7891011_{a}-1.ipynb", "doejane"),
    Convention("Moodle (one folder per student)",
               r"(?:.*/)?(?P<name>[^/_]+)_(?P<lms_id>\d+)_assignsubmission_file_/(?:[^/]*/)*{a}" + COPY_SUFFIX
               + r"\.ipynb",
               "Jane Doe_4242_assignsubmission_file_/{a}.ipynb", "jane_doe"),
    Convention("Moodle (flat)",
               rf"(?:.*/)?(?P<name>[^/_]+)_(?P<lms_id>\d+)_assignsubmission_file_{{a}}{COPY_SUFFIX}\.ipynb",
               "Jane Doe_4242_assignsubmission_file_{a}.ipynb", "jane_doe"),
    Convention("Blackboard",
               rf"(?:.*/)?[^/]*?_(?P<student>{USER})_attempt_(?P<stamp>{DASHED_STAMP})_{{a}}{COPY_SUFFIX}\.ipynb",
               "Homework 4_jdoe_attempt_2026-01-11-09-30-00_{a}.ipynb", "jdoe"),
    Convention("course: <student>_<assignment>",
               rf"(?:.*/)?(?P<student>[\w.\-]+?)_{{a}}(?:[_-]{{1,2}}(?P<stamp>{COMPACT_STAMP}))?{COPY_SUFFIX}\.ipynb",
               "jdoe_{a}_20260111T093000.ipynb", "jdoe"),
    Convention("course: <assignment>--<student>",
               rf"(?:.*/)?{{a}}--(?P<student>[\w.\-]+?)(?:(?:--|_)(?P<stamp>{COMPACT_STAMP}))?{COPY_SUFFIX}\.ipynb",
               "{a}--jdoe_20260111T093000.ipynb", "jdoe"),
)


@dataclass(frozen=True)
class SubmissionName:
    """What a file's name says: whose it is, when it was submitted (None: the name does not say),
    its place among the student's copies and resubmissions, whether the LMS marked it late, and the
    LMS's own number for the student (``lms_id``: Canvas's user ID, Moodle's participant number in
    this assignment; empty when the name has none), which its grade import matches on."""

    path: str
    student: str
    convention: str
    timestamp: datetime | None = None
    attempt: int = 0
    marked_late: bool = False
    lms_id: str = ""


def parse_submission_name(path: str, assignment: str) -> SubmissionName | None:
    """The submission a file of an LMS download is, or None when its name fits no convention."""
    path = str(PurePosixPath(path.replace("\\", "/")))
    for convention in CONVENTIONS:
        match = re.fullmatch(convention.pattern.replace("{a}", re.escape(assignment)), path)
        if match:
            fields = match.groupdict()
            student = fields.get("student") or _name_to_id(fields.get("name") or "")
            if not re.match(r"[A-Za-z0-9]", student):  # never "", "." or "..": it names a folder
                continue
            return SubmissionName(path, student, convention.name, _timestamp(fields.get("stamp")),
                                  _attempt(fields.get("copy") or ""), bool(fields.get("late")),
                                  fields.get("lms_id") or "")
    return None


def _name_to_id(full_name: str) -> str:
    """``José Núñez`` -> ``jose_nunez``: letters and digits of a full name, words joined by ``_``."""
    ascii_name = unicodedata.normalize("NFKD", full_name).encode("ascii", "ignore").decode()
    return "_".join(re.findall(r"[a-z0-9]+", ascii_name.lower()))


def _timestamp(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    return datetime.strptime(stamp, "%Y%m%dT%H%M%S" if "T" in stamp else "%Y-%m-%d-%H-%M-%S")


def _attempt(copy_suffix: str) -> int:
    """The resubmission or copy number a suffix gives (``-2``, `` (2)``, ``-Copy2``: 2; ``Copy``: 1);
    0 for none. ``_final`` and ``_v2`` give no order against the plain name (0 and 2)."""
    numbers = [int(n) for n in re.findall(r"(?:-|\(|Copy|v)(\d+)", copy_suffix)]
    if numbers:
        return max(numbers)
    return 1 if "Copy" in copy_suffix else 0


class Choice(NamedTuple):
    """The files of a download sorted out: the file graded per student, the files left out per
    student (with why), and the files whose name fits no convention."""

    chosen: dict[str, SubmissionName]
    left_out: dict[str, list[str]]
    unmatched: list[str]


def choose_latest(paths: list[str], assignment: str) -> Choice:
    """Sort the files of a download: one submission per student, the latest.

    Latest means the latest timestamp in the name, then the highest resubmission number. A student
    whose latest files cannot be told apart (say ``jdoe_a.ipynb`` and ``jdoe_a_final.ipynb``) gets
    none chosen: every file is reported, and the instructor picks by renaming or grading one.
    """
    by_student: dict[str, list[SubmissionName]] = {}
    unmatched = []
    for path in sorted(paths):
        parsed = parse_submission_name(path, assignment)
        if parsed is None:
            unmatched.append(path)
        else:
            by_student.setdefault(parsed.student, []).append(parsed)
    chosen, left_out = {}, {}
    for student, files in sorted(by_student.items()):
        ordered = sorted(files, key=_order)
        if len(files) > 1 and _order(ordered[-1]) == _order(ordered[-2]):
            left_out[student] = [f"{f.path} (cannot tell which of {len(files)} files is the latest: "
                                 "rename the one to grade)" for f in files]
            continue
        chosen[student] = ordered[-1]
        if len(files) > 1:
            left_out[student] = [f"{f.path} (older than {ordered[-1].path})" for f in ordered[:-1]]
    return Choice(chosen, left_out, unmatched)


def _order(name: SubmissionName) -> tuple[datetime, int]:
    return name.timestamp or datetime.min, name.attempt
