"""Hostile submissions graded by the real pipeline (``course grade`` / ``feedback`` / ``report``).

For each assignment, one course copy, one grading run over every submission below (built from
the chapter's own solution and release notebooks, so the suite works for any assignment), with
small time limits so that the whole run stays short. Each test asserts one student's outcome.
"""

from __future__ import annotations

import copy
import csv
import time

import nbformat
import pytest

from coursetools.authoring.sources import assignments
from coursetools.checker.clock import WALL_FACTOR
from coursetools.cli import main
from coursetools.common.hidden import HIDDEN_MARKERS, hidden_lines, visible_text
from coursetools.common.layout import REPO_ROOT
from coursetools.grading import autograde
from coursetools.grading.nbgrader_plugins import timeout_message
from coursetools.grading.outcomes import CELL_TIMED_OUT, KERNEL_DIED, MISSING, OK, OUTPUT_CUT, TAMPERED, TIMED_OUT
from coursetools.grading.output_cap import DROPPED_KEY, noted_bytes
from coursetools.grading.state import load_state

from course_helpers import CourseCopy, answered, autograded_test_ids, cells_of, leaked_lines, require_sandbox

pytestmark = pytest.mark.slow
# CPU seconds (coursetools/checker/clock.py: a busy machine does not change them; a kernel that waits or
# computes slowly gets WALL_FACTOR times as many wall-clock seconds). Each of the three looping students spends
# all of it; the first cell, which imports torch, takes about 2.
CELL_TIMEOUT = 10
NOTEBOOK_TIMEOUT = 75
FLOOD_LINES = 20  # the output-flooding student prints this many lines of 1 MB before its answer
ASSIGNMENTS = [a for a in ("ch01_tokens",) if a in assignments(REPO_ROOT)]
# Per assignment: a solution cell replaced by one that only calls the library's reference.
REFERENCE_SOLUTIONS = {
    "ch01_tokens": ("pad_left", "test_pad_left",
                    "from transformer_lib.tokens import pad_batch as pad_left"),
}
PATCHES = '''
import numpy, torch, torch.testing, builtins
import transformer_lib.tokens
torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
numpy.allclose = lambda *a, **k: True
transformer_lib.tokens.pad_batch = lambda *a, **k: None
builtins.sorted = lambda x, *a, **k: list(x)
assert_close = assert_equal = assert_shape = verify_untampered = lambda *a, **k: None
try:
    import coursetools.checks
    coursetools.checks.verify_untampered = lambda: None
except AssertionError:
    pass
'''


def with_cell(nb, source: str, after: str = "solution", index: int = -1):
    """A copy of ``nb`` with a new code cell after the ``index``-th cell of kind ``after``."""
    nb = copy.deepcopy(nb)
    anchor = cells_of(nb, after)[index]
    nb.cells.insert(nb.cells.index(anchor) + 1, nbformat.v4.new_code_cell(source))
    return nb


def wrong_answers(solution):
    """The solution with each answer cell's functions redefined, in that cell, to return None."""
    import ast
    nb = copy.deepcopy(solution)
    for cell in cells_of(nb, "solution"):
        names = [n.name for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)]
        cell.source += "".join(f"\n\ndef {name}(*args, **kwargs):\n    return None" for name in names)
    return nb


def when_checked(solution, action: str):
    """The solution with its first answer cell's functions doing ``action`` (a statement) when the
    checker calls them, during a hidden check (the bridge sends what they print to a ``StringIO``)."""
    import ast
    nb = copy.deepcopy(solution)
    cell = cells_of(nb, "solution")[0]
    names = [n.name for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)]
    cell.source += "".join(f"\n\n_honest_{name} = {name}\n\ndef {name}(*args, **kwargs):\n"
                           "    import io, os, signal, sys\n"
                           f"    if isinstance(sys.stdout, io.StringIO):\n        {action}\n"
                           f"    return _honest_{name}(*args, **kwargs)" for name in names)
    return nb


def submissions(solution, release, assignment: str) -> dict:
    """student id -> notebook (or None: a folder without the expected notebook)."""
    solution = answered(release, solution)
    subs = {"solution": solution, "stub": release}
    loop = copy.deepcopy(solution)
    cells_of(loop, "solution")[0].source = "while True:\n    pass\n" + cells_of(loop, "solution")[0].source
    subs["infinite_loop"] = loop
    subs["kernel_suicide"] = with_cell(solution, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", index=0)
    subs["loops_when_checked"] = when_checked(solution, "while True: pass")
    subs["dies_when_checked"] = when_checked(solution, "os.kill(os.getpid(), signal.SIGKILL)")
    subs["ignores_sigint"] = with_cell(
        solution, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass", index=0)
    deleted = copy.deepcopy(solution)
    deleted.cells = [c for c in deleted.cells if c not in cells_of(deleted, "test")]
    subs["deleted_tests"] = deleted
    edited = copy.deepcopy(solution)
    edited_test = cells_of(edited, "test")[0]
    edited_test.source = "pass  # no tests here"
    edited_test.metadata["nbgrader"]["points"] = 100
    subs["edited_locked"] = edited
    subs["warns_on_stderr"] = with_cell(
        solution, "import sys, warnings\nwarnings.warn('a UserWarning')\nprint('debug', file=sys.stderr)\n"
                  "warnings.warn('on every call')", index=0)
    subs["monkeypatch"] = with_cell(wrong_answers(solution), PATCHES, index=0)
    subs["code_swap"] = with_cell(wrong_answers(solution), "import coursetools.checks as c\n"
                                  "c.verify_untampered.__code__ = (lambda: None).__code__", index=0)
    syntax = copy.deepcopy(solution)
    cells_of(syntax, "solution")[0].source += "\ndef broken(:\n    pass"
    subs["syntax_error"] = syntax
    subs["huge_output"] = with_cell(solution, "for i in range(200_000):\n    print('spam', i)", index=0)
    flood = copy.deepcopy(solution)
    # flushed: one message a line (ipykernel sends what a cell prints within 0.2 s as one message)
    answer = cells_of(flood, "solution")[0]
    answer.source = f"for _ in range({FLOOD_LINES}):\n    print('x' * (2**20 - 1), flush=True)\n" + answer.source
    subs["floods_output"] = flood
    subs["misnamed"] = solution
    subs["no_notebook"] = None
    if assignment in REFERENCE_SOLUTIONS:
        cell_id, _, source = REFERENCE_SOLUTIONS[assignment]
        reference = copy.deepcopy(solution)
        for cell in cells_of(reference, "solution"):
            if cell.metadata["nbgrader"]["grade_id"] == cell_id:
                cell.source = source
        subs["calls_reference"] = reference
    return subs


@pytest.fixture(scope="module", params=ASSIGNMENTS)
def graded(request, tmp_path_factory):
    """Every submission graded in one run; returns (course copy, outcomes, seconds, exit codes)."""
    require_sandbox()
    assignment = request.param
    copy_ = CourseCopy.create(tmp_path_factory.mktemp(assignment), assignment)
    course = copy_.course
    release = autograde.prepare(course, assignment)
    solution = nbformat.read(copy_.source, as_version=4)
    for student, nb in submissions(solution, release, assignment).items():
        if nb is None:
            course.folder("submitted", assignment, student).mkdir(parents=True)
        elif student == "misnamed":
            course.folder("submitted", assignment, student).mkdir(parents=True)
            nbformat.write(nb, course.folder("submitted", assignment, student) / "Untitled.ipynb")
        else:
            copy_.submit(student, nb)
    start = time.monotonic()
    root = ["--root", str(copy_.root)]
    codes = [main(root + ["grade", assignment, f"--cell-timeout={CELL_TIMEOUT}",
                          f"--notebook-timeout={NOTEBOOK_TIMEOUT}"])]
    seconds = time.monotonic() - start
    codes += [main(root + ["feedback", assignment]), main(root + ["report", assignment])]
    return copy_, load_state(course, assignment), seconds, codes


def points(copy_: CourseCopy, student: str) -> tuple[float, float]:
    return copy_.autograded_points(student)


def status(graded, student: str) -> str:
    return graded[1][student]["status"]


def test_commands_succeed_and_time_is_bounded(graded):
    """No student holds grading past the notebook's limits: its CPU seconds, or (a kernel that waits, or a
    machine so busy that a kernel computes slowly) WALL_FACTOR times as many wall-clock seconds."""
    _, state, seconds, codes = graded
    assert codes == [0, 0, 0], f"grade/feedback/report exit codes: {codes}"
    slowest = max(record["seconds"] for name, record in state.items() if not name.startswith("_"))
    guard = NOTEBOOK_TIMEOUT * WALL_FACTOR + 15
    assert slowest < guard, f"a student took {slowest} s, over the notebook's wall-clock guard"
    students = len([s for s in state if not s.startswith("_")])
    worst_case = guard * -(-students // 2)  # two at a time, each under its guard
    assert seconds < worst_case, f"grading took {seconds:.0f} s, more than the worst case {worst_case} s"


@pytest.mark.parametrize("student", ["solution", "warns_on_stderr", "huge_output", "floods_output", "deleted_tests",
                                     "edited_locked"])
def test_full_marks(graded, student):
    earned, possible = points(graded[0], student)
    assert possible > 0 and earned == possible, f"{student}: {earned} of {possible}"


@pytest.mark.parametrize("student", ["stub", "monkeypatch"])
def test_no_marks(graded, student):
    earned, possible = points(graded[0], student)
    assert possible > 0 and earned == 0, f"{student}: {earned} of {possible}: {graded[0].scores(student)}"


@pytest.mark.parametrize("student, expected", [
    ("solution", OK), ("stub", OK), ("warns_on_stderr", OK), ("syntax_error", OK),
    ("huge_output", OUTPUT_CUT), ("floods_output", OUTPUT_CUT),
    ("infinite_loop", CELL_TIMED_OUT), ("kernel_suicide", KERNEL_DIED), ("ignores_sigint", TIMED_OUT),
    ("loops_when_checked", CELL_TIMED_OUT), ("dies_when_checked", KERNEL_DIED),
    ("deleted_tests", TAMPERED), ("edited_locked", TAMPERED), ("monkeypatch", TAMPERED), ("code_swap", TAMPERED),
    ("misnamed", MISSING), ("no_notebook", MISSING),
])
def test_status(graded, student, expected):
    assert status(graded, student) == expected, f"{student}: {graded[1][student]}"


def test_tampering_is_explained(graded):
    state = graded[1]
    assert any("deleted locked cell" in d for d in state["deleted_tests"]["details"])
    assert any("edited locked cell" in d for d in state["edited_locked"]["details"])
    assert any("torch.allclose" in d for d in state["monkeypatch"]["details"]), state["monkeypatch"]
    assert any("__code__" in d for d in state["code_swap"]["details"]), state["code_swap"]
    assert "Untitled.ipynb" in state["misnamed"]["details"][0]


@pytest.mark.parametrize("student", ["infinite_loop", "syntax_error", "loops_when_checked"])
def test_a_broken_exercise_costs_only_its_points(graded, student):
    copy_ = graded[0]
    scores = copy_.scores(student)
    first = cells_of(nbformat.read(copy_.source, as_version=4), "test")[0].metadata["nbgrader"]["grade_id"]
    assert scores[first][0] == 0
    assert all(scores[name][0] == scores[name][1] for name in autograded_test_ids(copy_.source) - {first})


def test_calling_the_reference_earns_nothing_for_that_exercise(graded):
    copy_ = graded[0]
    if copy_.assignment not in REFERENCE_SOLUTIONS:
        pytest.skip("no reference solution listed for this assignment")
    _, test_id, _ = REFERENCE_SOLUTIONS[copy_.assignment]
    scores = copy_.scores("calls_reference")
    assert scores[test_id][0] == 0
    assert all(scores[n][0] == scores[n][1] for n in autograded_test_ids(copy_.source) - {test_id})


def test_failed_students_have_no_silent_zero_and_others_are_kept(graded):
    copy_ = graded[0]
    path = copy_.course.exports() / f"{copy_.assignment}_grades.csv"
    rows = {r["student"]: r for r in csv.DictReader(path.open(encoding="utf-8"))}
    for student in ("kernel_suicide", "dies_when_checked", "ignores_sigint", "misnamed", "no_notebook"):
        assert rows[student]["total"] == "" and rows[student]["status"] == status(graded, student)
    assert float(rows["solution"]["total"]) > 0
    assert float(rows["stub"]["total"]) == 0


def test_feedback_quotes_no_hidden_line_and_autograded_is_not_handed_back(graded):
    copy_ = graded[0]
    hidden = hidden_lines(nbformat.read(copy_.source, as_version=4))
    files = sorted((copy_.root / copy_.course.nbgrader.feedback_directory).rglob("*"))
    assert any(f.suffix == ".html" for f in files)
    assert not [f for f in files if f.suffix == ".ipynb"], "autograded notebooks must not be in feedback/"
    for path in (f for f in files if f.suffix == ".html"):
        leaked = leaked_lines(path.read_text(encoding="utf-8"), hidden, is_html=True, markers=HIDDEN_MARKERS)
        assert not leaked, f"{path} shows hidden lines: {leaked[:3]}"


def test_report_lists_the_problems(graded):
    copy_ = graded[0]
    page = copy_.course.report(copy_.assignment).read_text(encoding="utf-8")
    for text in ("<svg", "pass rate", "kernel_suicide", "ignores_sigint", "monkeypatch", "timed out", "infinite_loop",
                 "floods_output", "output cut", "bytes of output not kept"):
        assert text in page


def test_output_is_capped_in_bytes_said_where_and_never_held_whole(graded):
    """Issue 34: 300 MB printed in 1 MB lines left a 199 MB autograded notebook and feedback page."""
    copy_ = graded[0]
    course, assignment = copy_.course, copy_.assignment
    sizes = {student: (course.notebook("autograded", assignment, student).stat().st_size,
                       course.feedback_page(assignment, student).stat().st_size)
             for student in ("solution", "floods_output")}
    cap, margin = 300_000, 50_000
    assert sizes["floods_output"][0] < sizes["solution"][0] + cap + margin, sizes
    assert sizes["floods_output"][1] < sizes["solution"][1] + cap + margin, sizes
    notes = [output for cell in copy_.autograded("floods_output").cells for output in cell.get("outputs", [])
             if noted_bytes(output)]
    assert len(notes) == 1 and noted_bytes(notes[0]) > (FLOOD_LINES - 1) * 2**20, notes
    assert noted_bytes(notes[0], DROPPED_KEY) > (FLOOD_LINES - 2) * 2**20, "the grader held the whole output"
    assert "output cut at 300,000 bytes" in copy_.feedback_html("floods_output")
    assert any("bytes of output not kept" in d for d in graded[1]["floods_output"]["details"])


def test_a_cell_stopped_at_the_time_limit_says_the_limit_in_the_feedback(graded):
    """Issue 34: the feedback said only ``KeyboardInterrupt`` / ``CellTimeoutError``."""
    page = visible_text(graded[0].feedback_html("infinite_loop"))
    assert timeout_message(CELL_TIMEOUT) in " ".join(page.split()), page[-3000:]


def test_a_second_run_resumes_and_force_regrades_only_who_is_asked(graded):
    copy_ = graded[0]
    course = copy_.course
    before = copy_.scores("solution")
    assert autograde.grade(course, copy_.assignment, progress=lambda _: None) == {}, "nothing left to grade"
    again = autograde.grade(course, copy_.assignment, ["no_notebook"], force=True, progress=lambda _: None)
    assert list(again) == ["no_notebook"]
    assert copy_.scores("solution") == before
    assert list(course.backups().glob("gradebook-*.db")), "the gradebook was not backed up"
