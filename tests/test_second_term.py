"""An instructor's second term (issue 34), without a kernel: hand grades after a regrade, the LMS
uploads, submission times, the report's names and links, reviews of flagged students.

The end-to-end proof (a test changed, released, committed and regraded) is the second term of
``test_class_end_to_end.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from coursetools.cli import main
from coursetools.common.cells import GradedCell, cell_titles, graded_cells, short_title
from coursetools.common.layout import REPO_ROOT, Course
from coursetools.grading.autograde import answers_as_scored
from coursetools.grading.collect import collect_folder, collect_zip, read_submission_times
from coursetools.grading.gradebook import (
    class_scores,
    close_unfinished,
    gradebook_scores,
    keep_hand_grades,
    restore_overrides,
)
from coursetools.grading.outcomes import CLEARED, KEPT, OK, TAMPERED, reviewed
from coursetools.grading.state import (
    LEFT_OUT,
    LMS_IDS,
    REVIEWS,
    SUBMITTED,
    TIMES,
    load_state,
    merge_state,
    update_state,
)
from coursetools.grading.unfinished import not_graded_notebook
from coursetools.reports.exports import ClassTable, class_row, csv_rows, late_by, lateness, submission_time
from coursetools.reports.report import render, student_links
from coursetools.reports.uploads import canvas_rows, moodle_rows, write_uploads

A = "tiny"


@pytest.fixture()
def course(tmp_path, monkeypatch) -> Course:
    # creating a gradebook runs the environment's `alembic` (coursetools/README.md)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    shutil.copy(REPO_ROOT / "nbgrader_config.py", tmp_path / "nbgrader_config.py")
    (tmp_path / "grading").mkdir()
    return Course(tmp_path)


def written_answer(text: str) -> nbformat.NotebookNode:
    meta = {"grade": True, "grade_id": "why", "locked": False, "points": 3, "schema_version": 3, "solution": True}
    return new_notebook(cells=[new_markdown_cell(text, metadata={"nbgrader": meta})])


def regraded_gradebook(course: Course, students: dict[str, str]) -> None:
    """A gradebook as nbgrader's autograde leaves it when it grades again students whose written
    answer ``why`` was scored 2 by hand: ``manual_score`` kept, ``needs_manual_grade`` set again;
    each student's autograded notebook holds the text in ``students``."""
    from nbgrader.api import Gradebook

    with Gradebook(course.nbgrader.db_url) as gradebook:
        gradebook.update_or_create_assignment(A)
        gradebook.add_notebook(A, A)
        gradebook.add_grade_cell("why", A, A, max_score=3, cell_type="markdown")
        gradebook.add_solution_cell("why", A, A)
        for student, text in students.items():
            gradebook.add_student(student)
            with gradebook.db.no_autoflush:  # nbgrader's add_submission flushes half-built rows otherwise (SAWarning)
                gradebook.add_submission(A, student)
            grade = gradebook.find_grade("why", A, A, student)
            grade.manual_score, grade.auto_score, grade.needs_manual_grade = 2, None, True
            nbformat.write(written_answer(text), course.notebook("autograded", A, student))
        gradebook.db.commit()


def needs_manual_grade(course: Course, student: str) -> bool:
    from nbgrader.api import Gradebook

    with Gradebook(course.nbgrader.db_url) as gradebook:
        return gradebook.find_grade("why", A, A, student).needs_manual_grade


def test_a_hand_grade_stands_after_a_regrade_while_its_answer_is_unchanged(course):
    """Issue 34: after a regrade formgrader listed every hand-graded student as needing a manual
    grade (nbgrader marks a grade holding a manual score for review) while the CSV said 0 left."""
    for student in ("ann", "bob"):
        course.folder("autograded", A, student).mkdir(parents=True)
    regraded_gradebook(course, {"ann": "Because addition commutes.", "bob": "I rewrote my answer."})
    assert gradebook_scores(course, A, "ann") == {"why": None}  # as formgrader shows it: to grade
    assert keep_hand_grades(course, A, "ann", {"why": "Because addition commutes."}) == []
    assert keep_hand_grades(course, A, "bob", {"why": "My first answer."}) == ["why"]
    assert (needs_manual_grade(course, "ann"), gradebook_scores(course, A, "ann")) == (False, {"why": 2})
    assert (needs_manual_grade(course, "bob"), gradebook_scores(course, A, "bob")) == (True, {"why": None})


def test_a_hand_grade_stands_after_a_failed_run_removed_the_autograded_notebook(course):
    """Issue 42: a transient failure removed the autograded notebook, and the next regrade read "the
    answer changed since its hand grade" for an identical file: the texts now also live in the state."""
    course.folder("autograded", A, "ann").mkdir(parents=True)
    regraded_gradebook(course, {"ann": "Because addition commutes."})
    record = {"status": OK, "answers": answers_as_scored(course, A, "ann", None)}
    assert record["answers"] == {"why": "Because addition commutes."}
    shutil.rmtree(course.folder("autograded", A, "ann"))  # what a failed autograde does
    assert answers_as_scored(course, A, "ann", None) == {}
    assert answers_as_scored(course, A, "ann", record) == {"why": "Because addition commutes."}


# --- a notebook that did not finish, and scores outside a cell's points (issue 51, item 2) ------------

def planted_gradebook(course: Course, student: str) -> None:
    """One submission of ``student`` with a test cell ``test_add`` (2 points) that scored 2 and which an
    instructor overrode to 1, and a written answer ``why`` (3 points) scored 2 by hand."""
    from nbgrader.api import Gradebook

    with Gradebook(course.nbgrader.db_url) as gradebook:
        gradebook.update_or_create_assignment(A)
        gradebook.add_notebook(A, A)
        gradebook.add_grade_cell("test_add", A, A, max_score=2, cell_type="code")
        gradebook.add_grade_cell("why", A, A, max_score=3, cell_type="markdown")
        gradebook.add_solution_cell("why", A, A)
        gradebook.add_student(student)
        with gradebook.db.no_autoflush:
            gradebook.add_submission(A, student)
        test = gradebook.find_grade("test_add", A, A, student)
        test.auto_score, test.manual_score, test.needs_manual_grade = 2, 1, False
        why = gradebook.find_grade("why", A, A, student)
        why.manual_score, why.needs_manual_grade = 2, False
        gradebook.db.commit()


def write_score(course: Course, student: str, grade_id: str, score: float) -> None:
    """What formgrader's grade API does with a score typed in (it accepts any number)."""
    from nbgrader.api import Gradebook

    with Gradebook(course.nbgrader.db_url) as gradebook:
        grade = gradebook.find_grade(grade_id, A, A, student)
        grade.manual_score, grade.needs_manual_grade = score, False
        gradebook.db.commit()


def grades(course: Course, student: str) -> dict[str, tuple]:
    from nbgrader.api import Gradebook

    with Gradebook(course.nbgrader.db_url) as gradebook:
        return {g.name: (g.auto_score, g.manual_score, g.needs_manual_grade)
                for g in gradebook.find_submission_notebook(A, A, student).grades}


def test_a_notebook_that_did_not_finish_has_no_test_score_until_a_regrade_finishes(course):
    """Issue 51: after `timed out` every test cell was marked needs_manual_grade; formgrader took 2 on a
    1-point cell, which outlived the next regrade."""
    planted_gradebook(course, "ann")
    overrides = close_unfinished(course, A, "ann", {"test_add"}, stubs={"why": "YOUR ANSWER HERE"},
                                 answers={"why": "Because addition commutes."})
    assert overrides == {"test_add": 1}
    assert grades(course, "ann") == {"test_add": (None, None, False), "why": (None, 2, False)}, \
        "no test score, none waited for; the hand grade stands"
    write_score(course, "ann", "test_add", 7)  # meanwhile, through formgrader's API
    restore_overrides(course, A, "ann", {"test_add"}, overrides)  # the regrade that finished
    assert grades(course, "ann")["test_add"][1:] == (1, True), "the override from before, to look at again"
    restore_overrides(course, A, "ann", {"test_add"}, {})
    assert grades(course, "ann")["test_add"][1:] == (None, False), "the tests' score stands alone"


def test_an_untouched_written_answer_of_a_notebook_that_did_not_finish_scores_zero_as_autograde_scores_it(course):
    planted_gradebook(course, "bob")
    write_score(course, "bob", "why", None)
    close_unfinished(course, A, "bob", {"test_add"}, stubs={"why": "YOUR ANSWER HERE"},
                     answers={"why": "YOUR ANSWER HERE"})
    assert grades(course, "bob")["why"] == (0, None, False)
    close_unfinished(course, A, "bob", {"test_add"}, stubs={"why": "YOUR ANSWER HERE"}, answers={"why": "Mine."})
    assert grades(course, "bob")["why"] == (None, None, True), "a written answer waits for its hand grade"


def test_a_score_outside_its_cells_points_is_refused_and_reported(course):
    """Issue 51: formgrader accepted 2.0 on a 1-point cell; the course counted it."""
    planted_gradebook(course, "cat")
    course.folder("autograded", A, "cat").mkdir(parents=True)
    nbformat.write(written_answer("Because addition commutes."), course.notebook("autograded", A, "cat"))
    write_score(course, "cat", "why", 5)  # above its 3 points
    read = class_scores(course, A, ["cat"])["cat"]
    assert read.scores["why"] is None and "outside its 0 to 3 points" in read.refused["why"]
    assert keep_hand_grades(course, A, "cat", {"why": "Because addition commutes."}) == []
    assert grades(course, "cat")["why"][2] is True, "keeping hand grades does not make it count"
    cells = [GradedCell("test_add", True, 2.0), GradedCell("why", False, 3.0)]
    row = class_row("cat", {"status": OK, "details": []}, read.scores, cells, refused=read.refused)
    assert (row.total, row.to_grade_by_hand, row.refused) == (1.0, ["why"], read.refused)
    assert any("outside its 0 to 3 points" in detail and "score it again in formgrader" in detail
               for detail in row.details)
    assert class_row("cat", {"status": "timed out", "details": []}, {}, cells, refused=read.refused).refused == {}


def test_formgrader_shows_the_tests_of_a_notebook_that_did_not_finish_as_not_graded():
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    test_meta = {"grade": True, "grade_id": "test_add", "locked": True, "points": 2, "schema_version": 3,
                 "solution": False}
    answer_meta = {"grade": False, "grade_id": "add", "locked": False, "schema_version": 3, "solution": True}
    release = new_notebook(cells=[new_code_cell("# YOUR CODE HERE", metadata={"nbgrader": answer_meta}),
                                  new_code_cell("assert add(1, 1) == 2", metadata={"nbgrader": test_meta}),
                                  *written_answer("YOUR ANSWER HERE").cells])
    answer = new_code_cell("def add(a, b):\n    return a + b", metadata={"nbgrader": answer_meta})
    submission = new_notebook(cells=[answer, *written_answer("Because addition commutes.").cells])  # test deleted
    shown = not_graded_notebook(release, submission, "timed out", ["stopped after 180 s of CPU time"])
    assert [cell.source for cell in shown.cells] == ["def add(a, b):\n    return a + b", "assert add(1, 1) == 2",
                                                    "Because addition commutes."]
    assert graded_cells(shown) == [GradedCell("why", False, 3.0)], "only the written answer is graded (by hand)"
    assert shown.cells[1].outputs[0].text.startswith("not graded: timed out (stopped after 180 s of CPU time)")
    config = Config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    html, _ = HTMLExporter(config=config).from_notebook_node(shown, resources={
        "base_url": "", "mathjax_url": "", "submission_id": "1", "notebook_id": A, "index": 0, "total": 1,
        "student": "ann", "last_name": "", "first_name": "", "notebook_path": "x", "assignment_id": A})
    assert re.findall(r'<input class="score tabbable" id="([^"]+)"', html) == ["why"], "no score box for a test"
    assert "not graded: timed out" in html


# --- the LMS uploads (item 7) and submission times (item 6) ---------------------------------------

def lms_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as handle:
        handle.writestr(f"doejane_10001_7891011_{A}.ipynb", "canvas")
        handle.writestr(f"Jane Roe_4242_assignsubmission_file_/{A}.ipynb", "moodle")
        handle.writestr(f"jdoe_{A}_20260113T100000.ipynb", "course")
    return path


def test_collecting_keeps_the_lms_number_of_each_student(course):
    """Issue 34: the Canvas user id in ``doejane_10001_..._<A>.ipynb`` was dropped, so no row of the
    CSV could be matched by an LMS's grade import."""
    collect_zip(course, A, lms_zip(course.root / "lms.zip"))
    assert load_state(course, A)[LMS_IDS] == {"doejane": {"lms": "Canvas", "lms_id": "10001"},
                                              "jane_roe": {"lms": "Moodle", "lms_id": "4242"}}


CELLS2 = [GradedCell("test_add", True, 2.0), GradedCell("why", False, 1.0)]


def uploads_table() -> ClassTable:
    ok = {"status": OK, "details": []}
    return ClassTable([
        class_row("doejane", ok, {"test_add": 2.0, "why": 1.0}, CELLS2,
                  person={"name": "Jane Doe", "lms": "Canvas", "lms_id": "10001", "section": "S1"}),
        class_row("jane_roe", ok, {"test_add": 1.0, "why": 0.0}, CELLS2,
                  person={"name": "Jane Roe", "email": "roe@example.org", "lms": "Moodle", "lms_id": "4242"}),
        class_row("kq", ok, {"test_add": 2.0, "why": None}, CELLS2, person={"lms": "Canvas", "lms_id": "10002"}),
        class_row("nomad", ok, {"test_add": 2.0, "why": 1.0}, CELLS2, person={"sis_login_id": "nomad@uni"}),
    ], CELLS2)


def test_the_canvas_upload_has_canvas_columns_and_only_final_grades():
    upload = canvas_rows(uploads_table(), "Homework 1 (4242)")
    assert upload.rows == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Homework 1 (4242)"],
        ["    Points Possible", "", "", "", "", "3"],
        ["Jane Doe", "10001", "", "", "S1", "3"],
        ["nomad", "", "", "nomad@uni", "", "3"],
    ]
    assert upload.left_out == {"jane_roe": "no Canvas ID or SIS id (collect a Canvas download, or add lms_id to "
                                           "the roster)", "kq": "answers still to grade by hand"}


def test_the_moodle_upload_is_a_grading_worksheet():
    upload = moodle_rows(uploads_table(), datetime(2026, 1, 20, 9, 30))
    assert upload.rows == [
        ["Identifier", "Full name", "Email address", "Grade", "Maximum Grade", "Last modified (grade)"],
        ["Participant 4242", "Jane Roe", "roe@example.org", "1", "3", "2026-01-20 09:30"],
    ]
    assert set(upload.left_out) == {"doejane", "kq", "nomad"}


def test_each_upload_is_written_only_for_a_class_that_lms_matches(course):
    """Issue 42: a Moodle file with an empty Identifier on every row was written for a Canvas-only class
    whose roster gave emails."""
    ok = {"status": OK, "details": []}
    canvas_class = ClassTable([
        class_row("doejane", ok, {"test_add": 2.0, "why": 1.0}, CELLS2,
                  person={"email": "doe@example.org", "lms": "Canvas", "lms_id": "10001"}),
        class_row("kq", ok, {"test_add": 2.0, "why": 1.0}, CELLS2, person={"email": "kq@example.org"})], CELLS2)
    assert [p.name for p in write_uploads(course, A, canvas_class)] == [f"{A}_canvas.csv"]
    both = [p.name for p in write_uploads(course, A, uploads_table())]
    assert both == [f"{A}_canvas.csv", f"{A}_moodle.csv"]
    emails_only = ClassTable([class_row("kq", ok, {"test_add": 2.0, "why": 1.0}, CELLS2,
                                        person={"email": "kq@example.org"})], CELLS2)
    assert [p.name for p in write_uploads(course, A, emails_only)] == [f"{A}_moodle.csv"]  # Moodle matches emails


def test_the_course_csv_keeps_the_lms_number():
    header, first = csv_rows(uploads_table())[:2]
    assert header[:5] == ["student", "name", "email", "lms_id", "status"] and first[3] == "10001"


def test_submission_times_come_from_a_times_file_by_student_or_lms_number(course):
    """Issue 34: ``DUE=`` did nothing for a Canvas download (its names carry no time)."""
    collect_zip(course, A, lms_zip(course.root / "lms.zip"))
    times_file = course.root / "times.csv"
    times_file.write_text("user_id,submitted_at\n10001,2026-01-13T01:05:00\n\n4242,\n", encoding="utf-8")
    times = read_submission_times(times_file, load_state(course, A)[LMS_IDS])
    assert times == {"doejane": "2026-01-13T01:05:00"}
    merge_state(course, A, TIMES, times)
    state = load_state(course, A)
    due = datetime(2026, 1, 12, 23, 59)
    assert lateness(submission_time(course, A, "doejane", state), due) == "late by 1 h 6 min"
    assert lateness(submission_time(course, A, "jdoe", state), due) == "late by 10 h 1 min"  # from its name
    assert submission_time(course, A, "jane_roe", state) is None
    times_file.write_text("user_id,submitted_at\n99999,2026-01-13T01:05:00\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no collected student has the LMS id '99999'"):
        read_submission_times(times_file, state[LMS_IDS])
    times_file.write_text("who,when\n", encoding="utf-8")
    with pytest.raises(ValueError, match="expected a header with 'submitted_at'"):
        read_submission_times(times_file, state[LMS_IDS])


def test_the_terms_zip_collected_again_keeps_a_resubmission_collected_from_a_folder(course, tmp_path):
    """Issue 42: re-running the term's zip command after a late resubmission came from a folder silently
    put the zip's older file back."""
    collect_zip(course, A, lms_zip(course.root / "lms.zip"))
    (tmp_path / "late" / "jdoe").mkdir(parents=True)
    (tmp_path / "late" / "jdoe" / f"{A}.ipynb").write_text("resubmitted later")
    collect_folder(course, A, tmp_path / "late")
    choice = collect_zip(course, A, lms_zip(course.root / "lms.zip"))
    assert course.notebook("submitted", A, "jdoe").read_text() == "resubmitted later"
    assert "jdoe" not in choice.chosen and any("collected from a folder" in why for why in choice.left_out["jdoe"])
    assert "collected from a folder" in " ".join(load_state(course, A)[LEFT_OUT]["jdoe"])
    collect_zip(course, A, lms_zip(course.root / "lms.zip"), replace_folders=True)
    assert course.notebook("submitted", A, "jdoe").read_text() != "resubmitted later"


def late_folder(tmp_path: Path, files: dict[str, datetime | None]) -> Path:
    """``late/<student>/<A>.ipynb`` for each student, modified at the time given (None: now)."""
    for student, modified in files.items():
        notebook = tmp_path / "late" / student / f"{A}.ipynb"
        notebook.parent.mkdir(parents=True)
        notebook.write_text(f"{student}'s answers")
        if modified is not None:
            os.utime(notebook, (modified.timestamp(), modified.timestamp()))
    return tmp_path / "late"


def test_a_submission_from_a_folder_is_dated_by_its_file_and_marked_late(course, tmp_path):
    """Issue 51: the README offers FROM= for a late submission, but a folder carried no time: `make grade`
    said it had none, and DUE= marked nothing."""
    collect_zip(course, A, lms_zip(course.root / "lms.zip"))
    merge_state(course, A, TIMES, {"jdoe": "2026-01-11T09:00:00"})  # the zip's file, from a times file
    folder = late_folder(tmp_path, {"jdoe": datetime(2026, 1, 14, 8, 30), "kim": datetime(2026, 1, 12, 20, 0)})
    (folder / "kim" / "timestamp.txt").write_text("2026-01-13 00:29:00\n")  # nbgrader's own stamp wins
    records = collect_folder(course, A, folder)
    assert {s: (r["timestamp"], r["time_from"]) for s, r in records.items()} == {
        "jdoe": ("2026-01-14T08:30:00", "the file's modification time"),
        "kim": ("2026-01-13T00:29:00", "timestamp.txt")}
    state = load_state(course, A)
    due = datetime(2026, 1, 12, 23, 59)
    assert lateness(submission_time(course, A, "jdoe", state), due) == "late by 1 d 8 h 31 min", \
        "the folder's file, not the times file's time of the zip's file"
    assert lateness(submission_time(course, A, "kim", state), due) == "late by 30 min"
    assert "jdoe" not in state[TIMES] and state[SUBMITTED]["doejane"]["file"].startswith("doejane")


def test_a_folder_whose_file_times_were_not_kept_is_refused_with_what_to_do(course, tmp_path, capsys):
    folder = late_folder(tmp_path, {"jdoe": datetime(2026, 1, 14, 8, 30), "kim": datetime(2099, 1, 1)})
    with pytest.raises(ValueError, match="in the future: its time was not kept .* TIMES=times.csv"):
        collect_folder(course, A, folder)
    assert not course.notebook("submitted", A, "jdoe").exists(), "nothing is collected"
    assert main(["--root", str(course.root), "grade", A, "--from", str(folder)]) == 2
    assert "course: error:" in capsys.readouterr().err


def test_a_times_file_given_with_a_folder_stands_before_the_files_time(course, tmp_path):
    folder = late_folder(tmp_path, {"jdoe": datetime(2026, 1, 14, 8, 30)})
    collect_folder(course, A, folder)
    merge_state(course, A, TIMES, {"jdoe": "2026-01-12T23:00:00"})  # what `--times` in the same command does
    state = load_state(course, A)
    assert lateness(submission_time(course, A, "jdoe", state), datetime(2026, 1, 12, 23, 59)) == ""


def test_a_files_local_time_and_a_due_date_with_an_offset_compare_in_the_machines_time_zone():
    local = datetime(2026, 1, 13, 10, 0)
    due = datetime(2026, 1, 13, 9, 0).astimezone()  # the same wall clock, an hour earlier, with its offset
    assert late_by(local, due) == late_by(local.astimezone(), due) == timedelta(hours=1)


# --- the report (item 8) ------------------------------------------------------------------------

def titled_release() -> nbformat.NotebookNode:
    def graded(grade_id: str, points: int, solution: bool = False) -> dict:
        return {"nbgrader": {"grade": True, "grade_id": grade_id, "points": points, "solution": solution,
                             "locked": not solution, "schema_version": 3}}
    return new_notebook(cells=[
        new_markdown_cell("# Exercises\n\n## Exercise 1: addition (2 points)"),
        new_code_cell("assert add(1, 1) == 2", metadata=graded("test_add", 2)),
        new_markdown_cell("## Exercise 2: why (1 point, graded by hand)"),
        new_markdown_cell("# My own heading\nYOUR ANSWER HERE", metadata=graded("why", 1, solution=True)),
    ])


def test_exercises_are_named_as_the_notebook_names_them():
    assert cell_titles(titled_release()) == {"test_add": "Exercise 1: addition", "why": "Exercise 2: why"}
    parts = titled_release()
    parts.cells.insert(2, new_code_cell("assert add(2, 2) == 4", metadata={"nbgrader": {
        "grade": True, "grade_id": "test_add_more", "points": 1, "locked": True, "schema_version": 3}}))
    titles = cell_titles(parts)
    assert titles["test_add_more"] == "Exercise 1: addition, part 2 of 2"
    assert short_title(titles["test_add_more"], "test_add_more") == "Ex. 1.2" and short_title("", "x") == "x"
    # issue 42: a later part under its own heading is not the whole exercise (it read "Ex. 3" beside "Ex. 3.1")
    assert short_title("Exercise 3, continued: predict, then derive", "position_answer") == "Ex. 3 cont."
    assert short_title("Exercise 3: relative positions, part 1 of 2", "test_rope") == "Ex. 3.1"


def test_the_report_names_exercises_and_students_lists_a_stub_and_links_each_students_pages():
    """Issue 34: exercises listed by test-cell id, students by id, no per-student table, the stub
    (0 of all) not among the students to look at, no link to anyone's pages."""
    ok = {"status": OK, "details": []}
    rows = [class_row("ann", ok, {"test_add": 2.0, "why": 1.0}, CELLS2, person={"name": "Ann Lee"}),
            class_row("kq", ok, {"test_add": 0.0, "why": 0.0}, CELLS2)]
    titles = cell_titles(titled_release())
    links = {"ann": [("feedback", "../feedback/ann/tiny/tiny.html"),
                     ("autograded notebook", "../autograded/ann/tiny/tiny.ipynb")]}
    page = render(A, rows, CELLS2, [], titles=titles, links=links)
    assert "<tr><td>Exercise 1: addition</td><td>automatically</td>" in page
    look_at = page.split("Students to look at")[1].split("</table>")[0]
    assert "<td>kq</td><td>ok</td><td>0 of 3 points: nothing answered, or the wrong file?</td>" in look_at
    assert "Ann Lee" not in look_at
    students = page.split("<h2>Students</h2>")[1]
    assert "<th title='Exercise 1: addition'>Ex. 1 / 2</th><th title='Exercise 2: why'>Ex. 2 / 1</th>" in students
    assert ("<tr><td>Ann Lee (ann)</td><td>ok</td><td>2</td><td>1</td><td>3</td><td></td><td></td><td>"
            "<a href='../feedback/ann/tiny/tiny.html'>feedback</a> "
            "<a href='../autograded/ann/tiny/tiny.ipynb'>autograded notebook</a></td></tr>") in students


def test_student_links_point_from_the_report_to_pages_that_exist(course):
    page = course.feedback_page(A, "ann")
    page.parent.mkdir(parents=True)
    page.write_text("<html></html>")
    assert student_links(course, A, ["ann", "bob"]) == {"ann": [("feedback", "../feedback/ann/tiny/tiny.html")],
                                                        "bob": []}
    assert (course.report(A).parent / "../feedback/ann/tiny/tiny.html").resolve() == page.resolve()


# --- reviews of flagged students (item 12) ----------------------------------------------------------

def test_a_review_clears_or_keeps_a_flag_for_the_file_it_was_made_on():
    record = {"status": TAMPERED, "details": ["edited locked cell test_add"], "submission_sha": "abc"}
    on_abc = {"status": TAMPERED, "submission_sha": "abc"}
    cleared = reviewed(record, {"decision": CLEARED, "note": "a blank line", **on_abc})
    assert cleared["status"] == OK and cleared["details"][0] == "reviewed, tampered flag cleared: a blank line"
    kept = reviewed(record, {"decision": KEPT, "note": "replaced the test", **on_abc})
    assert kept["status"] == TAMPERED and kept["details"][0] == "reviewed, tampered kept: replaced the test"
    resubmitted = {**record, "submission_sha": "new"}
    assert reviewed(resubmitted, {"decision": CLEARED, "note": "", "status": TAMPERED, "submission_sha": "abc"}) \
        == resubmitted


def test_course_review_records_the_decision_and_refuses_what_it_cannot_review(course, capsys):
    update_state(course, A, {"bwong": {"status": TAMPERED, "details": ["deleted locked cell test_add"],
                                       "submission_sha": "abc", "seconds": 1.0},
                             "ann": {"status": OK, "details": [], "submission_sha": "def", "seconds": 1.0}})
    (course.root / "solutions" / A).mkdir(parents=True)
    (course.root / "solutions" / A / f"{A}.md").write_text("")
    root = ["--root", str(course.root)]
    assert main([*root, "review", A, "bwong", "--clear", "deleted by mistake, restored unchanged"]) == 0
    assert load_state(course, A)[REVIEWS]["bwong"] == {"decision": CLEARED, "note": "deleted by mistake, restored "
                                                       "unchanged", "status": TAMPERED, "submission_sha": "abc"}
    assert main([*root, "review", A, "ann", "--keep", "x"]) == 2 and "nothing to review" in capsys.readouterr().err
    assert main([*root, "review", A, "zed", "--keep", "x"]) == 2 and "has not been graded" in capsys.readouterr().err
