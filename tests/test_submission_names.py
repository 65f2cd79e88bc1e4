"""Submission file names from real LMS downloads: who, when, which copy; duplicates reported.

Pure and fast: no nbgrader run. ``tests/test_class_end_to_end.py`` collects a zip of such names.
"""

from __future__ import annotations

import shutil
import zipfile
from datetime import datetime

import pytest

from coursetools.common.layout import REPO_ROOT, Course
from coursetools.grading.collect import collect_zip
from coursetools.grading.state import LEFT_OUT, SUBMITTED, UNMATCHED, load_state
from coursetools.grading.submission_names import CONVENTIONS, choose_latest, parse_submission_name

A = "ch04_self_attention"


@pytest.mark.parametrize("convention", CONVENTIONS, ids=lambda c: c.name)
def test_each_conventions_example_names_its_student(convention):
    parsed = parse_submission_name(convention.example.replace("{a}", A), A)
    assert parsed is not None and (parsed.student, parsed.convention) == (convention.expected, convention.name)


@pytest.mark.parametrize("name, student, timestamp, attempt", [
    # the README's own forms (the first was collected as student "kq_20260111T093000")
    (f"{A}--kq_20260111T093000.ipynb", "kq", datetime(2026, 1, 11, 9, 30), 0),
    (f"{A}--kq--20260111T093000.ipynb", "kq", datetime(2026, 1, 11, 9, 30), 0),
    (f"jdoe_{A}.ipynb", "jdoe", None, 0),
    (f"j_roe_{A}_20260111T093000.ipynb", "j_roe", datetime(2026, 1, 11, 9, 30), 0),
    (f"extracted/x/{A}--a.smith.ipynb", "a.smith", None, 0),
    # what a student's computer adds
    (f"jdoe_{A}-Copy1.ipynb", "jdoe", None, 1),
    (f"jdoe_{A} (2).ipynb", "jdoe", None, 2),
    (f"jdoe_{A}_final.ipynb", "jdoe", None, 0),
    (f"jdoe_{A}-Copy1_final.ipynb", "jdoe", None, 1),
    # Canvas: lastfirst_userid_submissionid_<file>, -1 for a resubmission, LATE when late
    (f"doejane_123456_7891011_{A}.ipynb", "doejane", None, 0),
    (f"doejane_123456_7891011_{A}-1.ipynb", "doejane", None, 1),
    (f"submissions/doejane_LATE_123456_7891011_{A}-2.ipynb", "doejane", None, 2),
    # Moodle: a folder per student, or flat
    (f"Jane Doe_4242_assignsubmission_file_/{A}.ipynb", "jane_doe", None, 0),
    (f"José Núñez_77_assignsubmission_file_{A}.ipynb", "jose_nunez", None, 0),
    # Blackboard: <title>_<user>_attempt_<time>_<file>
    (f"Homework 4_jdoe_attempt_2026-01-11-09-30-00_{A}.ipynb", "jdoe", datetime(2026, 1, 11, 9, 30), 0),
])
def test_real_names(name, student, timestamp, attempt):
    parsed = parse_submission_name(name, A)
    assert parsed is not None, name
    assert (parsed.student, parsed.timestamp, parsed.attempt) == (student, timestamp, attempt)


def test_canvas_marks_late_submissions():
    assert parse_submission_name(f"doejane_LATE_123456_7891011_{A}.ipynb", A).marked_late
    assert not parse_submission_name(f"doejane_123456_7891011_{A}.ipynb", A).marked_late


@pytest.mark.parametrize("name", [
    "Untitled.ipynb", f"jdoe_{A}.txt", "jdoe_ch05_multi_head.ipynb", f"jdoe_{A}_2026-01-11-09-30-00.ipynb",
    f"_{A}.ipynb", f"jdoe_{A}notes.ipynb", f".._{A}.ipynb", f"{A}--...ipynb",
])
def test_names_that_name_no_student(name):
    assert parse_submission_name(name, A) is None


def test_the_latest_file_of_a_student_is_chosen_and_the_others_reported():
    choice = choose_latest([f"doejane_123456_7891011_{A}.ipynb", f"doejane_123456_7891011_{A}-1.ipynb",
                            f"{A}--kq_20260111T093000.ipynb", f"kq_{A}_20260112T080000.ipynb",
                            f"asmith_{A}.ipynb", "Untitled.ipynb"], A)
    assert {s: c.path for s, c in choice.chosen.items()} == {
        "doejane": f"doejane_123456_7891011_{A}-1.ipynb", "kq": f"kq_{A}_20260112T080000.ipynb",
        "asmith": f"asmith_{A}.ipynb"}
    assert choice.left_out == {
        "doejane": [f"doejane_123456_7891011_{A}.ipynb (older than doejane_123456_7891011_{A}-1.ipynb)"],
        "kq": [f"{A}--kq_20260111T093000.ipynb (older than kq_{A}_20260112T080000.ipynb)"]}
    assert choice.unmatched == ["Untitled.ipynb"]


def test_files_that_cannot_be_ordered_are_all_left_out():
    choice = choose_latest([f"jdoe_{A}.ipynb", f"jdoe_{A}_final.ipynb"], A)
    assert choice.chosen == {}
    assert len(choice.left_out["jdoe"]) == 2 and all("cannot tell" in why for why in choice.left_out["jdoe"])


def test_collect_zip_writes_the_latest_file_per_student_and_records_the_rest(tmp_path):
    shutil.copy(REPO_ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    course = Course(tmp_path)
    archive = tmp_path / "lms.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr(f"doejane_123456_7891011_{A}.ipynb", "first")
        handle.writestr(f"doejane_LATE_123456_7891011_{A}-1.ipynb", "second")
        handle.writestr(f"Homework 4_jdoe_attempt_2026-01-11-09-30-00_{A}.ipynb", "jdoe's")
        handle.writestr(f"../.._{A}.ipynb", "escape")
        handle.writestr("__MACOSX/._x.ipynb", "mac")
    choice = collect_zip(course, A, archive)
    assert sorted(choice.chosen) == ["doejane", "jdoe"]
    assert course.notebook("submitted", A, "doejane").read_text() == "second"
    assert (course.folder("submitted", A, "jdoe") / "timestamp.txt").read_text() == "2026-01-11 09:30:00\n"
    state = load_state(course, A)
    assert state[UNMATCHED] == [f"../.._{A}.ipynb"]
    assert list(state[LEFT_OUT]) == ["doejane"]
    assert state[SUBMITTED]["doejane"]["marked_late"] and state[SUBMITTED]["jdoe"]["timestamp"] == "2026-01-11T09:30:00"
    assert not (tmp_path.parent / A).exists()
