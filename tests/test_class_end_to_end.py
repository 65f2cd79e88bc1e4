"""A class graded start to end as the README says, asserting every number a student or instructor sees.

One course copy of ``ch01_tokens`` (the cheapest assignment to grade). Its release is committed to
git, then a visible test is changed and released again (the class worked on the first release).
Nine files arrive in an LMS zip named as Canvas, Moodle, Blackboard and the README name them:

=========  ===========================================  ===============================================
student    file                                         what it holds
=========  ===========================================  ===============================================
jdoe       ``jdoe_<a>.ipynb``                           every answer, a written response
doejane    Canvas ``..._<a>.ipynb`` and ``..._<a>-1``   the stub, then a resubmission with 2 answers
kq         ``<a>--kq_20260111T093000.ipynb``            the stub
asmith     ``asmith_<a>-Copy1.ipynb``                   every answer, an endless loop in the first
jane_roe   Moodle folder                                every answer, a syntax error in the last, text
bwong      ``bwong_<a>_final.ipynb``                    every answer, test cells deleted, text
clee       Blackboard, after the due date               every answer, text
oldrel     ``oldrel_<a>.ipynb``                         every answer (the earlier release's tests), text
(nobody)   ``Untitled.ipynb``                           not collected
=========  ===========================================  ===============================================

A roster names jdoe and mnoor, who submitted nothing. Then ``make grade``, ``make report`` (hand
grading pending), ``make feedback`` (refused), hand grading through nbgrader's ``Gradebook`` as
formgrader does, ``make feedback``, ``make report``,
a hidden test changed and one student graded again.
"""

from __future__ import annotations

import copy
import csv
import subprocess
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from coursetools.authoring.release import release, solution_shortfalls
from coursetools.authoring.sources import read_text_source, text_source
from coursetools.common.cells import cell_titles, graded_cells
from coursetools.common.hidden import HIDDEN_MARKERS, hidden_lines, visible_text
from coursetools.common.layout import REPO_ROOT
from coursetools.grading import autograde
from coursetools.grading.outcomes import CELL_TIMED_OUT, OK, OUTPUT_CUT, TAMPERED, TIMED_OUT
from coursetools.grading.rubrics import HEADING as RUBRIC_HEADING
from coursetools.grading.scan import locked_changes_in
from coursetools.grading.state import LEFT_OUT, load_state

from course_helpers import CourseCopy, answered, cells_of, exercises, leaked_lines, with_cells

A = "ch01_tokens"
# Each autograded test cell and its points, read from the source (ch01: 17 points over 5 cells).
AUTO_POINTS = {cell.grade_id: int(cell.points) for cell in graded_cells(read_text_source(text_source(REPO_ROOT, A)))
               if cell.automatic}
WRITTEN = "batching_answer"  # the hand-graded answer, 3 points
WRITTEN_TITLE = "Exercise 5: predict, then measure what batching costs"  # its heading in the notebook
VISIBLE_CHANGE = "# (a comment added to a visible test after the release)\n"
HAND_GRADES = {"jdoe": 3, "jane_roe": 2, "bwong": 3, "clee": 1, "oldrel": 0}
DUE = "2026-01-12T23:59"
pytestmark = pytest.mark.slow


def make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", "-C", str(REPO_ROOT), *args], capture_output=True,
                          text=True)


def written(nb: nbformat.NotebookNode, text: str) -> nbformat.NotebookNode:
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == WRITTEN:
            cell.source = text
    return nb


def class_zip(release: nbformat.NotebookNode, solution: nbformat.NotebookNode, path: Path) -> Path:
    """The LMS download of the table above, made from the first release."""
    full = answered(release, solution)
    answers = [ids for ids, _ in exercises(solution)]
    stub_ids = {cell.metadata["nbgrader"]["grade_id"]: cell.source for cell in cells_of(release, "solution")}
    partial = with_cells(full, {grade_id: stub_ids[grade_id] for ids in answers[2:] for grade_id in ids})
    loop = with_cells(full, {answers[0][0]: "while True:\n    pass"})
    syntax = with_cells(full, {answers[-1][-1]: "def broken(:\n    pass"})
    deleted = copy.deepcopy(full)
    deleted.cells = [c for c in deleted.cells if c not in cells_of(deleted, "test")]
    files = {
        f"jdoe_{A}.ipynb": written(full, "Sort by length, then cut batches by a token budget."),
        f"doejane_123456_7891011_{A}.ipynb": release,
        f"doejane_123456_7891011_{A}-1.ipynb": partial,
        f"{A}--kq_20260111T093000.ipynb": release,
        f"asmith_{A}-Copy1.ipynb": loop,
        f"Jane Roe_4242_assignsubmission_file_/{A}.ipynb": written(syntax, "Padding wastes compute."),
        f"bwong_{A}_final.ipynb": written(deleted, "Buckets of similar lengths."),
        f"HW1_clee_attempt_2026-01-13-10-00-00_{A}.ipynb": written(full, "Shorter batches."),
        f"oldrel_{A}.ipynb": written(full, "I did not think about it."),
        "Untitled.ipynb": full,
    }
    with zipfile.ZipFile(path, "w") as handle:
        for name, nb in files.items():
            handle.writestr(name, nbformat.writes(nb))
    return path


def edit_source(course_copy: CourseCopy, old: str, new: str) -> None:
    text = course_copy.root / "solutions" / A / f"{A}.md"
    source = text.read_text(encoding="utf-8")
    assert source.count(old) == 1, old
    text.write_text(source.replace(old, new), encoding="utf-8")


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


def csv_by_student(course_copy: CourseCopy) -> dict[str, dict[str, str]]:
    path = course_copy.course.exports() / f"{A}_grades.csv"
    return {row["student"]: row for row in csv.DictReader(path.open(encoding="utf-8"))}


def hand_grade(course_copy: CourseCopy, grades: dict[str, float], grade_id: str = WRITTEN) -> None:
    """Score the written answers (or another graded cell) as formgrader does (its grade API's PUT, which
    takes any number): a manual score on the student's grade, which then needs no manual grade."""
    from nbgrader.api import Gradebook

    with Gradebook(course_copy.course.nbgrader.db_url) as gradebook:
        for student, score in grades.items():
            grade = gradebook.find_grade(grade_id, A, A, student)
            grade.manual_score = score
            grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
        gradebook.db.commit()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The whole class run: returns (course copy, what each step printed and returned, seconds)."""
    start = time.monotonic()
    course_copy = CourseCopy.create(tmp_path_factory.mktemp("class"), A)
    root, course = course_copy.root, course_copy.course
    first_release = autograde.prepare(course, A)
    released = course.notebook("release", A)
    released.parent.mkdir(parents=True)
    released.write_text(nbformat.writes(first_release), encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", str(released))
    git(root, "commit", "-qm", "first release")
    edit_source(course_copy, "ids, mask, positions = pad_left([[5, 6, 7], [8]], pad_id=0)\n",
                VISIBLE_CHANGE + "ids, mask, positions = pad_left([[5, 6, 7], [8]], pad_id=0)\n")
    archive = class_zip(first_release, nbformat.read(course_copy.source, as_version=4), root / "lms.zip")
    course.roster().write_text("student,name,email\njdoe,Jo Doe,jdoe@example.org\nmnoor,Mia Noor,mnoor@example.org\n",
                               encoding="utf-8")
    steps = {"grade": make("grade", f"A={A}", f"COURSE={root}", f"ZIP={archive}", f"DUE={DUE}",
                           "ARGS=--cell-timeout=10 --notebook-timeout=120")}
    steps["report, pending"] = make("report", f"A={A}", f"COURSE={root}")
    steps["csv, pending"] = csv_by_student(course_copy)
    steps["html, pending"] = course.report(A).read_text(encoding="utf-8")
    steps["feedback, pending"] = make("feedback", f"A={A}", f"COURSE={root}")
    steps["feedback pages, pending"] = sorted(p.parent.parent.name for p in
                                              (root / "grading" / "feedback").rglob("*.html"))
    hand_grade(course_copy, HAND_GRADES)
    steps["feedback"] = make("feedback", f"A={A}", f"COURSE={root}")
    steps["report"] = make("report", f"A={A}", f"COURSE={root}")
    steps["csv"] = csv_by_student(course_copy)
    steps["html"] = course.report(A).read_text(encoding="utf-8")
    return course_copy, steps, time.monotonic() - start


@pytest.fixture(scope="module")
def regraded(graded):
    """A hidden test the model solution fails is added; jdoe is graded again."""
    course_copy, _, _ = graded
    edit_source(course_copy, NOTES_END, NOTES_END + "assert False, 'a hidden test nobody passes'\n")
    shortfalls = solution_shortfalls(A, course_copy.root)
    again = make("grade", f"A={A}", f"COURSE={course_copy.root}", "ARGS=--student jdoe --cell-timeout=10")
    report = make("report", f"A={A}", f"COURSE={course_copy.root}")
    return shortfalls, again, report, csv_by_student(course_copy)


def test_every_step_succeeds_or_refuses_as_documented(graded):
    _, steps, seconds = graded
    print(f"the class took {seconds:.0f} s")
    for step in ("grade", "report, pending", "feedback", "report"):
        assert steps[step].returncode == 0, f"{step}:\n{steps[step].stdout}\n{steps[step].stderr}"
    assert "NOT COLLECTED (name matches no student): Untitled.ipynb" in steps["grade"].stdout
    assert (f"LEFT OUT for doejane: doejane_123456_7891011_{A}.ipynb (older than "
            f"doejane_123456_7891011_{A}-1.ipynb)") in steps["grade"].stdout


STATUSES = {"jdoe": OK, "doejane": OK, "kq": OK, "asmith": CELL_TIMED_OUT, "jane_roe": OK, "bwong": TAMPERED,
            "clee": OK, "oldrel": OK}
FULL = sum(AUTO_POINTS.values())
AUTO_TOTALS = {"jdoe": FULL, "doejane": 3 + 4, "kq": 0, "asmith": FULL - 3, "jane_roe": FULL - 6, "bwong": FULL,
               "clee": FULL, "oldrel": FULL}


def test_statuses_and_autograded_points(graded):
    course_copy, steps, _ = graded
    state = load_state(course_copy.course, A)
    assert {s: state[s]["status"] for s in STATUSES} == STATUSES
    assert "pad_left stopped at the per-cell time limit" in "; ".join(state["asmith"]["details"])
    assert any("deleted locked cell" in d for d in state["bwong"]["details"])
    for student, total in AUTO_TOTALS.items():
        assert sum(float(steps["csv, pending"][student][cell] or 0) for cell in AUTO_POINTS) == total, student
    from nbgrader.api import Gradebook

    with Gradebook(course_copy.course.nbgrader.db_url) as gradebook:  # what formgrader shows
        flagged = {s for s in STATUSES if gradebook.find_submission_notebook(A, A, s).flagged}
    assert flagged == {"asmith", "bwong"}


def test_the_pending_report_and_csv_agree_on_what_is_left_to_grade_by_hand(graded):
    _, steps, _ = graded
    rows, page = steps["csv, pending"], steps["html, pending"]
    pending = {s for s, row in rows.items() if row["manual_to_grade"] == "1"}
    assert pending == set(HAND_GRADES)
    assert all(rows[s]["manual_to_grade"] == "0" for s in set(STATUSES) - pending)
    names = ", ".join("Jo Doe (jdoe)" if s == "jdoe" else s for s in sorted(pending))  # the roster's name
    assert f"Hand grading pending: 5 answers of 5 students</strong> ({names})" in page
    assert "<tr><td>answers still to grade by hand</td><td>5</td></tr>" in page
    assert (f"<tr><td>{WRITTEN_TITLE}</td><td>by hand</td><td>0%</td><td>0%</td><td>3</td><td>5</td></tr>"
            in page)
    auto_mean = 100 * sum(AUTO_TOTALS.values()) / (len(AUTO_TOTALS) * FULL)
    assert f"Autograded tests: mean {auto_mean:.1f} % of their {FULL} points over the 8 graded students." in page
    complete = ("doejane", "kq", "asmith")  # nothing written: nbgrader scores an untouched answer 0
    total_mean = 100 * sum(AUTO_TOTALS[s] for s in complete) / (3 * (FULL + 3))
    assert (f"Total: mean {total_mean:.1f} % of {FULL + 3} points over the 3 students whose grading is complete "
            "(the 5 with answers still to grade by hand are left out).") in page
    assert "HAND GRADING PENDING for 5 students" in steps["report, pending"].stdout


def test_feedback_is_refused_while_hand_grading_is_pending(graded):
    _, steps, _ = graded
    refused = steps["feedback, pending"]
    assert refused.returncode != 0 and "REFUSED: 5 students have answers still to grade by hand" in refused.stderr
    assert steps["feedback pages, pending"] == []


def test_the_final_numbers(graded):
    course_copy, steps, _ = graded
    rows = steps["csv"]
    for student, auto in AUTO_TOTALS.items():
        assert float(rows[student]["total"]) == auto + HAND_GRADES.get(student, 0), student
        assert rows[student]["manual_to_grade"] == "0" and rows[student]["max_total"] == str(FULL + 3)
    assert rows["clee"]["late"] == "late by 10 h 1 min"
    assert (rows["jdoe"]["name"], rows["jdoe"]["email"]) == ("Jo Doe", "jdoe@example.org")
    assert (rows["mnoor"]["status"], rows["mnoor"]["total"], rows["mnoor"]["name"]) == ("no submission", "", "Mia Noor")
    assert all(rows[s]["late"] == "" for s in set(STATUSES) - {"clee"})
    page = steps["html"]
    assert "Hand grading pending" not in page
    mean = 100 * sum(AUTO_TOTALS[s] + HAND_GRADES.get(s, 0) for s in STATUSES) / (8 * (FULL + 3))
    assert f"Total: mean {mean:.1f} % of {FULL + 3} points over the 8 students whose grading is complete." in page
    look_at = page.split("Students to look at")[1].split("</table>")[0]
    for student in ("asmith", "bwong", "clee", "Mia Noor (mnoor)", "kq"):  # kq: the stub, 0 of every point
        assert f"<td>{student}</td>" in look_at
    for student in ("Jo Doe (jdoe)", "oldrel", "jane_roe", "doejane"):
        assert f"<td>{student}</td>" not in look_at
    students = page.split("<h2>Students</h2>")[1]
    assert ("<td>Jo Doe (jdoe)</td><td>ok</td>" in students
            and f"<a href='../feedback/jdoe/{A}/{A}.html'>feedback</a>" in students
            and f"<a href='../autograded/jdoe/{A}/{A}.ipynb'>autograded notebook</a>" in students)


def test_feedback_shows_the_hand_grade_and_no_hidden_test(graded):
    course_copy, _, _ = graded
    hidden = hidden_lines(nbformat.read(course_copy.source, as_version=4))
    pages = {p.parent.parent.name: p.read_text(encoding="utf-8")
             for p in (course_copy.root / "grading" / "feedback").rglob("*.html")}
    assert set(pages) == set(STATUSES)
    for student, page in pages.items():  # (the answers pasted from the model keep its solution markers)
        assert not leaked_lines(page, hidden, is_html=True, markers=HIDDEN_MARKERS), student
    assert f"Score: {FULL + 3}.0 / {FULL + 3}.0" in visible_text(pages["jdoe"])
    clee = visible_text(pages["clee"])
    assert f"Score: {FULL + 1}.0 / {FULL + 3}.0" in clee and "Score: 1.0 / 3.0" in clee
    titles = cell_titles(nbformat.read(course_copy.course.staged_release(A), as_version=4))
    for student, page in pages.items():  # the table of contents names exercises, never "Test cell"
        toc = visible_text(page.split('<div id="toc">')[1].split("</ol>")[0])
        assert "Test cell" not in toc and all(title in toc for title in titles.values()), student
    deleted = [name for how, name in locked_changes_in(load_state(course_copy.course, A)["bwong"]["details"])]
    assert deleted and all(f"You deleted the test cell of “{titles[name]}”." in visible_text(pages["bwong"])
                           for name in deleted)
    assert all('id="put-back"' not in pages[s] for s in ("jdoe", "clee", "oldrel"))
    # issue 42, item 4: formgrader shows the model answer and rubric right after the answer graded by hand;
    # feedback never does
    autograded = nbformat.read(course_copy.course.notebook("autograded", A, "clee"), as_version=4)
    at = next(i for i, cell in enumerate(autograded.cells)
              if cell.metadata.get("nbgrader", {}).get("grade_id") == WRITTEN)
    rubric = autograded.cells[at + 1]
    model = next(cell for cell in nbformat.read(course_copy.source, as_version=4).cells
                 if cell.metadata.get("nbgrader", {}).get("grade_id") == WRITTEN)
    assert rubric.metadata["course"] == {"rubric": True} and rubric.source.endswith(model.source)
    assert sum(1 for cell in autograded.cells if cell.metadata.get("course", {}).get("rubric")) == 1
    assert all(RUBRIC_HEADING not in page for page in pages.values())  # (some students pasted the model answer itself)


@pytest.mark.deep  # a scenario of its own, about a minute: make test-deep
def test_a_changed_hidden_test_fails_the_release_check_and_regrades_keeping_hand_grades(regraded):
    shortfalls, again, report, rows = regraded
    assert shortfalls == ["test_pad_left: 0 of 3 points"]
    assert again.returncode == 0, again.stdout + again.stderr
    assert "1 to grade, 0 already graded (1 again because the tests changed since they were graded)" in again.stdout
    assert float(rows["jdoe"]["test_pad_left"]) == 0
    assert float(rows["jdoe"][WRITTEN]) == HAND_GRADES["jdoe"]
    assert float(rows["jdoe"]["total"]) == FULL - 3 + HAND_GRADES["jdoe"]
    assert float(rows["clee"]["total"]) == FULL + HAND_GRADES["clee"]  # not asked for: unchanged


SECOND_CHANGE = "# (the second term: this visible test changed again, released and committed)\n"
NOTES_END = "# rejected; pad_id ignored; float ids; no ValueError for an empty batch.\n"


def gradebook_left_to_grade(course_copy: CourseCopy, students) -> dict[str, int]:
    """What formgrader shows: each student's grades marked ``needs_manual_grade``."""
    from nbgrader.api import Gradebook

    with Gradebook(course_copy.course.nbgrader.db_url) as gradebook:
        return {s: sum(g.needs_manual_grade for g in gradebook.find_submission_notebook(A, A, s).grades)
                for s in students}


def formgrader_flags(course_copy: CourseCopy, students) -> set[str]:
    from nbgrader.api import Gradebook

    with Gradebook(course_copy.course.nbgrader.db_url) as gradebook:
        return {s for s in students if gradebook.find_submission_notebook(A, A, s).flagged}


@pytest.fixture(scope="module")
def second_term(regraded, graded):
    """The next term, as the README says to change a test: the hidden test nobody passes is taken
    out again, a visible test is changed, ``make release``'s release written into ``notebooks/`` and
    committed; two flagged students reviewed (``make review``); the whole class graded again with
    the new tests (the same files: they worked on the first release) and the report made."""
    course_copy, _, _ = graded
    root = course_copy.root
    edit_source(course_copy, NOTES_END + "assert False, 'a hidden test nobody passes'\n", NOTES_END)
    edit_source(course_copy, VISIBLE_CHANGE, SECOND_CHANGE)
    released = release(A, root) / f"{A}.ipynb"
    assert SECOND_CHANGE.strip() in released.read_text(encoding="utf-8")
    git(root, "add", str(released))
    git(root, "commit", "-qm", "second release")
    reviews = [make("review", f"A={A}", f"COURSE={root}", "S=bwong", "KEEP=deleted every test cell"),
               make("review", f"A={A}", f"COURSE={root}", "S=asmith", "CLEAR=a slow first try, rewritten below")]
    grade = make("grade", f"A={A}", f"COURSE={root}", "ARGS=--cell-timeout=10 --notebook-timeout=120")
    report = make("report", f"A={A}", f"COURSE={root}")
    return reviews, grade, report, csv_by_student(course_copy), load_state(course_copy.course, A)


@pytest.mark.deep  # a scenario of its own, about a minute: make test-deep
def test_the_second_term_flags_no_honest_student_keeps_hand_grades_and_formgrader_agrees(graded, second_term):
    """Issue 34: after a re-release every student was flagged ``tampered`` (no earlier release was
    found in git), and formgrader listed every hand-graded student as still to grade while the CSV
    said 0 left."""
    course_copy = graded[0]
    reviews, grade, report, rows, state = second_term
    assert all(r.returncode == 0 for r in (*reviews, grade, report)), [r.stdout + r.stderr for r in reviews]
    assert f"{len(STATUSES)} to grade, 0 already graded ({len(STATUSES)} again because the tests changed" \
        in grade.stdout
    assert {s: state[s]["status"] for s in STATUSES} == STATUSES  # only bwong tampered; asmith's loop again
    assert not any("edited locked cell" in d for s in STATUSES for d in state[s]["details"])
    for student, auto in AUTO_TOTALS.items():
        assert float(rows[student][WRITTEN]) == HAND_GRADES.get(student, 0), student
        assert float(rows[student]["total"]) == auto + HAND_GRADES.get(student, 0), student
    left = gradebook_left_to_grade(course_copy, STATUSES)
    assert left == {s: int(rows[s]["manual_to_grade"]) for s in STATUSES} == dict.fromkeys(STATUSES, 0)
    assert rows["asmith"]["status"] == OK and rows["asmith"]["details"].startswith(
        "reviewed, cell timed out flag cleared: a slow first try")
    assert rows["bwong"]["status"] == TAMPERED and rows["bwong"]["details"].startswith(
        "reviewed, tampered kept: deleted every test cell")
    assert formgrader_flags(course_copy, STATUSES) == {"bwong"}


FLOOD = "for _ in range(300):\n    print('x' * (2**20 - 1), flush=True)\n"  # 300 MB of output, then the answer


REGRADED_BY_HAND = 2  # jdoe's written answer, hand graded again while the notebook had not finished


@pytest.fixture(scope="module")
def later_in_the_term(second_term, graded, tmp_path_factory):
    """Issue 42, after the second term's grading: jdoe's regrade fails (a notebook limit of 1 s of CPU: what
    a transient failure does, total blank) and, issue 51, while it has not finished its written answer is
    hand graded again in formgrader, and a score above its points is typed on a test cell; then jdoe is
    graded again. doejane resubmits every answer from a folder, with flood, a new student whose first
    answer prints 300 MB; then the term's zip command is run again, as an instructor who forgot the
    folder would."""
    course_copy = graded[0]
    root, course = course_copy.root, course_copy.course
    events = {"failed": make("grade", f"A={A}", f"COURSE={root}",
                             "ARGS=--student jdoe --force --cell-timeout=1 --notebook-timeout=1")}
    events["failed status"] = load_state(course, A)["jdoe"]["status"]
    events["failed, left to grade"] = gradebook_left_to_grade(course_copy, ["jdoe"])
    events["failed, formgrader's notebook"] = nbformat.read(course.notebook("autograded", A, "jdoe"), as_version=4)
    events["failed, report"] = make("report", f"A={A}", f"COURSE={root}")
    events["failed, csv"] = csv_by_student(course_copy)
    hand_grade(course_copy, {"jdoe": REGRADED_BY_HAND})
    hand_grade(course_copy, {"jdoe": 2 * AUTO_POINTS["test_pad_left"]}, "test_pad_left")  # formgrader takes any number
    events["again"] = make("grade", f"A={A}", f"COURSE={root}",
                           "ARGS=--student jdoe --force --cell-timeout=10 --notebook-timeout=120")
    release_now = nbformat.read(course.notebook("release", A), as_version=4)
    full = answered(release_now, nbformat.read(course_copy.source, as_version=4))
    flood = copy.deepcopy(full)
    first_answer = cells_of(flood, "solution")[0]
    first_answer.source = FLOOD + first_answer.source
    late = tmp_path_factory.mktemp("late")
    resubmissions = {"doejane": written(full, "Sorting by length first."), "flood": written(flood, "Buckets.")}
    for student, nb in resubmissions.items():
        (late / student).mkdir()
        nbformat.write(nb, late / student / f"{A}.ipynb")
    events["folder"] = make("grade", f"A={A}", f"COURSE={root}", f"FROM={late}",
                            "ARGS=--cell-timeout=10 --notebook-timeout=120")
    events["zip again"] = make("grade", f"A={A}", f"COURSE={root}", f"ZIP={root / 'lms.zip'}", f"DUE={DUE}",
                               "ARGS=--cell-timeout=10 --notebook-timeout=120")
    events["submitted doejane"] = course.notebook("submitted", A, "doejane").read_text(encoding="utf-8")
    events["report"] = make("report", f"A={A}", f"COURSE={root}")
    return events, csv_by_student(course_copy), load_state(course, A)


@pytest.mark.deep  # a scenario of its own, about a minute: make test-deep
def test_a_failed_run_a_folder_resubmission_and_a_flood_later_in_the_term(later_in_the_term):
    """Issue 42: after a transient failure, regrading an unchanged file kept its hand grade (it had
    said "the answer changed since its hand grade"); the term's zip run again kept the newer
    resubmission from a folder (it had silently put the zip's file back); 300 MB of output is
    `output cut` with every point, never `timed out`. Issue 51: while jdoe's notebook had not finished,
    formgrader offered its test cells for hand scores and took any; the regrade kept them."""
    events, rows, state = later_in_the_term
    assert all(events[step].returncode == 0 for step in ("failed", "again", "folder", "zip again", "report")), \
        {step: events[step].stdout[-800:] + events[step].stderr[-800:] for step in ("failed", "again", "folder")}
    assert events["failed status"] == TIMED_OUT, "the 1 s limit must make the run fail"
    assert events["failed, left to grade"] == {"jdoe": 0}, "no test cell waits for a hand score"
    shown = events["failed, formgrader's notebook"]
    assert [cell.grade_id for cell in graded_cells(shown)] == [WRITTEN], "formgrader scores the written answer only"
    assert all(cell.outputs[0].text.startswith("not graded: timed out") for cell in shown.cells
               if cell.metadata.get("nbgrader", {}).get("grade_id") in AUTO_POINTS)
    failed_row = events["failed, csv"]["jdoe"]
    assert (failed_row["status"], failed_row["total"], failed_row["test_pad_left"]) == (TIMED_OUT, "", "")
    assert state["jdoe"]["status"] == OK
    assert float(rows["jdoe"][WRITTEN]) == REGRADED_BY_HAND, "the hand grade given while it had not finished"
    assert float(rows["jdoe"]["test_pad_left"]) == AUTO_POINTS["test_pad_left"], "the tests' score, not formgrader's"
    assert float(rows["jdoe"]["total"]) == FULL + REGRADED_BY_HAND and rows["jdoe"]["manual_to_grade"] == "0"
    assert not any("grade it again" in detail for detail in state["jdoe"]["details"]), state["jdoe"]["details"]
    assert "Sorting by length first." in events["submitted doejane"], "the folder's newer file stays"
    assert any("collected from a folder" in why for why in state[LEFT_OUT]["doejane"]), state[LEFT_OUT]
    assert sum(float(rows["doejane"][cell]) for cell in AUTO_POINTS) == FULL  # every answer, resubmitted
    assert (state["flood"]["status"], sum(float(rows["flood"][cell]) for cell in AUTO_POINTS)) == (OUTPUT_CUT, FULL)


def test_make_without_an_assignment_or_with_a_typo_says_what_is_expected(tmp_path):
    missing = make("report")
    assert missing.returncode != 0 and "name the assignment: make report A=<id>" in missing.stdout
    typo = make("report", "A=ch01_token")
    assert typo.returncode != 0 and "unknown assignment 'ch01_token': did you mean ch01_tokens" in typo.stderr
    assert "Traceback" not in typo.stderr


def test_make_clean_keeps_hand_grades_and_backups():
    dry_run = make("-n", "clean").stdout
    assert "grading/autograded" in dry_run and "grading/feedback" in dry_run
    for kept in ("grading/gradebook.db", "grading/backups", "grading/submitted", "grading/state", "rm -rf grading\n"):
        assert kept not in dry_run
    assert make("wipe-grading").returncode != 0
