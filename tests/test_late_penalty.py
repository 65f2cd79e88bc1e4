"""An optional late penalty (issue 34, item 12), without a kernel: the policy an instructor writes,
the points it takes off, and where it shows: the course's CSV (raw total, penalty, final total)
and the LMS uploads (the final total), never the gradebook."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from coursetools.cli import main
from coursetools.common.cells import GradedCell
from coursetools.common.layout import REPO_ROOT, Course
from coursetools.grading.outcomes import MISSING, OK
from coursetools.grading.penalty import LatePenalty, parse_late_penalty, penalty_points, record_late_penalty
from coursetools.grading.state import DUE as DUE_KEY
from coursetools.grading.state import LATE_PENALTY, SUBMITTED, load_state, update_state
from coursetools.reports.exports import ClassTable, class_row, class_table, csv_rows, late_fields
from coursetools.reports.report import render
from coursetools.reports.uploads import canvas_rows, moodle_rows

TEN_A_DAY = LatePenalty(10.0, "day", 50.0)
CELLS = [GradedCell("test_add", True, 10.0), GradedCell("why", False, 5.0)]
DUE = datetime(2026, 1, 12, 23, 59)


def test_a_policy_is_read_from_what_an_instructor_writes():
    assert parse_late_penalty("10%/day, max 50%") == TEN_A_DAY
    assert parse_late_penalty(" 2.5 % / Hour ") == LatePenalty(2.5, "hour", None)
    assert str(TEN_A_DAY) == "10%/day, max 50%" and str(LatePenalty(2.5, "hour", None)) == "2.5%/hour"
    for wrong in ("10 per day", "10%/week", "0%/day", "120%/day", "10%/day, max 0%", "10%/day max 50%"):
        with pytest.raises(ValueError, match=r"expected a late penalty like '10%/day, max 50%'.*got"):
            parse_late_penalty(wrong)


def test_each_started_day_costs_its_share_of_the_maximum_up_to_the_cap():
    assert penalty_points(TEN_A_DAY, timedelta(minutes=1), False, 15.0) == pytest.approx(1.5)
    assert penalty_points(TEN_A_DAY, timedelta(days=1), False, 15.0) == pytest.approx(1.5)
    assert penalty_points(TEN_A_DAY, timedelta(days=1, minutes=1), False, 15.0) == pytest.approx(3.0)
    assert penalty_points(TEN_A_DAY, timedelta(days=30), False, 15.0) == pytest.approx(7.5)
    assert penalty_points(LatePenalty(1.0, "hour", None), timedelta(days=200), False, 15.0) == pytest.approx(15.0)
    assert penalty_points(TEN_A_DAY, None, False, 15.0) == 0.0  # on time
    assert penalty_points(TEN_A_DAY, None, True, 15.0) is None  # late by a time nobody knows
    assert penalty_points(None, timedelta(days=3), True, 15.0) == 0.0  # no policy


def test_late_fields_say_how_late_and_what_it_costs():
    assert late_fields(DUE + timedelta(hours=10, minutes=1), DUE, False, TEN_A_DAY, 15.0) == \
        ("late by 10 h 1 min", pytest.approx(1.5))
    assert late_fields(DUE - timedelta(hours=1), DUE, False, TEN_A_DAY, 15.0) == ("", 0.0)
    assert late_fields(None, DUE, True, TEN_A_DAY, 15.0) == ("marked late by the LMS", None)
    assert late_fields(DUE + timedelta(days=2), DUE, False, None, 15.0) == ("late by 2 d", 0.0)


def penalised_table() -> ClassTable:
    ok = {"status": OK, "details": []}
    canvas = {"lms": "Canvas"}
    return ClassTable([
        class_row("early", ok, {"test_add": 10.0, "why": 5.0}, CELLS, person={**canvas, "lms_id": "1"}),
        class_row("late", ok, {"test_add": 10.0, "why": 4.0}, CELLS, "late by 1 d 1 min", {**canvas, "lms_id": "2"},
                  penalty=3.0),
        class_row("later", ok, {"test_add": 1.0, "why": 0.0}, CELLS, "late by 9 d", {**canvas, "lms_id": "3"},
                  penalty=7.5),
        class_row("lms", ok, {"test_add": 10.0, "why": 5.0}, CELLS, "marked late by the LMS",
                  {**canvas, "lms_id": "4", "email": "lms@uni"}, penalty=None),
    ], CELLS, TEN_A_DAY)


def test_the_csv_shows_the_raw_total_the_penalty_and_the_final_total():
    header, *rows = csv_rows(penalised_table())
    assert header[7:10] == ["total", "late_penalty", "final_total"]
    assert [row[7:10] for row in rows] == [["15", "0", "15"], ["14", "3", "11"], ["1", "7.5", "0"], ["15", "", ""]]
    no_policy = csv_rows(ClassTable(penalised_table().rows[:1], CELLS))
    assert "late_penalty" not in no_policy[0] and "final_total" not in no_policy[0]


def test_the_uploads_carry_the_final_total_and_leave_out_a_lateness_nobody_knows():
    canvas = canvas_rows(penalised_table(), "Homework (1)")
    assert [row[-1] for row in canvas.rows[2:]] == ["15", "11", "0"]
    why = "late by a time nobody gave (marked late by the LMS): give its submission time (--times) to apply the " \
          "late penalty"
    assert canvas.left_out == {"lms": why}
    moodle = moodle_rows(penalised_table(), datetime(2026, 1, 20))
    assert moodle.left_out["lms"] == why


def test_the_policy_is_kept_for_the_assignment_until_changed(tmp_path):
    shutil.copy(REPO_ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    course = Course(tmp_path)
    assert record_late_penalty(course, "tiny", "10%/day, max 50%") == TEN_A_DAY
    assert load_state(course, "tiny")[LATE_PENALTY] == "10%/day, max 50%"
    assert record_late_penalty(course, "tiny", None) == TEN_A_DAY  # not given: the recorded one
    assert record_late_penalty(course, "tiny", "none") is None
    assert load_state(course, "tiny")[LATE_PENALTY] is None
    with pytest.raises(ValueError, match="got '10 a day'"):
        record_late_penalty(course, "tiny", "10 a day")


def test_the_report_says_the_policy_and_what_each_late_student_loses():
    rows, cells, policy = penalised_table()
    page = render("tiny", rows, cells, [], penalty=policy)
    assert ("Late penalty 10%/day, max 50% of the 15 points, per started day late: 2 students lose points in the "
            "CSV (final_total) and the LMS uploads") in page
    assert "left out of the uploads until their submission time is given (--times): lms." in page
    students = page.split("<h2>Students</h2>")[1]
    assert "<td>late by 1 d 1 min (-3 points)</td>" in students and "<td>marked late by the LMS (penalty unknown)" \
        in students
    assert "late-penalty" not in render("tiny", rows, cells, [])


def test_a_policy_the_report_cannot_read_is_a_one_line_error(capsys):
    assert main(["--root", str(REPO_ROOT), "report", "ch01_tokens", "--late-penalty", "10 a day"]) == 2
    assert "course: error: --late-penalty: expected a late penalty like '10%/day, max 50%'" in capsys.readouterr().err


def test_the_class_table_takes_the_penalty_from_the_recorded_policy_and_times(tmp_path):
    shutil.copy(REPO_ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    course = Course(tmp_path)
    release = new_notebook(cells=[new_code_cell("assert 1", metadata={"nbgrader": {
        "grade": True, "grade_id": "test_add", "locked": True, "points": 15, "schema_version": 3}})])
    course.staged_release("tiny").parent.mkdir(parents=True)
    nbformat.write(release, course.staged_release("tiny"))
    missing = {"status": MISSING, "details": []}
    update_state(course, "tiny", {"ann": missing, "bob": missing, "cy": missing, DUE_KEY: DUE.isoformat(),
                                  SUBMITTED: {"ann": {"timestamp": (DUE + timedelta(days=1, hours=1)).isoformat()},
                                              "cy": {"marked_late": True}}})
    assert [row.penalty for row in class_table(course, "tiny").rows] == [0.0, 0.0, 0.0]
    record_late_penalty(course, "tiny", "10%/day")
    table = class_table(course, "tiny")
    assert table.penalty == LatePenalty(10.0, "day", None)
    assert [(row.student, row.late, row.penalty) for row in table.rows] == [
        ("ann", "late by 1 d 1 h", pytest.approx(3.0)), ("bob", "", 0.0), ("cy", "marked late by the LMS", None)]
