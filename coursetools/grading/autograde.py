"""Grade a class with nbgrader: collect, autograde each student, feedback.

A thin layer over nbgrader's own commands that keeps every number honest
(``coursetools/README.md`` lists what nbgrader gets wrong by default):

* **grade** backs up the gradebook, scans each submission against the release
  (:mod:`coursetools.grading.scan`), then runs ``nbgrader autograde`` once per student in its own process
  (forked from a server that imported nbgrader once; two at a time by default) under a
  per-notebook time limit, counted in CPU seconds of that process and its kernel's, which a busy
  machine does not change, with a wall-clock guard :data:`~coursetools.checker.clock.WALL_FACTOR`
  times longer for a kernel that waits without computing (:mod:`coursetools.checker.clock`): a
  student whose kernel dies or who loops forever is recorded as
  such (:mod:`coursetools.grading.outcomes`) and the others are kept. Every outcome is written to the
  state file as soon as it is known (:mod:`coursetools.grading.state`), so an interrupted run resumes
  where it stopped; a student graded with tests that have changed since is graded again;
  ``force`` grades again. Every kernel runs in a bubblewrap box (:mod:`coursetools.grading.sandbox`):
  grading checks that a box can be made before the first student and stops if not, unless
  ``confine=False`` (``--unsafe-no-sandbox``), which is written into every graded student's details;
* **feedback** runs ``nbgrader generate_feedback`` (hidden tests removed by the course's
  preprocessor) and then withholds any feedback file that still quotes a hidden line
  (:mod:`coursetools.common.hidden`).

Collecting submissions is :mod:`coursetools.grading.collect`; the exports and the class report are
:mod:`coursetools.reports.exports` and :mod:`coursetools.reports.report`; every path comes from
:mod:`coursetools.common.layout`.

Worst case per student: the ``notebook_timeout`` (default 180 s of CPU time; 1800 s of wall-clock
time for a kernel that waits), plus a few seconds to kill.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import re
import resource
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

import nbformat
import psutil

from coursetools.authoring.release import earlier_releases
from coursetools.authoring.sources import build_notebook, notebook_source
from coursetools.checker.clock import REFRESH, WALL_FACTOR, Clock
from coursetools.common.allowlist import allow_lists, answer_test_cells
from coursetools.common.cells import answer_texts, graded_cells
from coursetools.common.files import write_atomically
from coursetools.common.hidden import hidden_lines, quoted_lines
from coursetools.common.layout import STAGED_RELEASE, Course, nbgrader_env, run_nbgrader
from coursetools.grading.gradebook import backup_gradebook, gradebook_scores, keep_hand_grades, restore_overrides
from coursetools.grading.nbgrader_plugins import mathjax_script
from coursetools.grading.outcomes import (
    GRADED,
    HAND_GRADE_AGAIN,
    MISSING,
    OK,
    UNCONFINED,
    Outcome,
    already_graded,
    autograde_status,
    cells_stopped_at_limit,
    explained_log,
    grading_fingerprint,
    tampering_seen_by_tests,
    worth_another_run,
)
from coursetools.grading.output_cap import output_cut
from coursetools.grading.rubrics import add_rubrics, hand_graded_answers
from coursetools.grading.sandbox import check as check_sandbox
from coursetools.grading.scan import Rules, locked_cell_changes, locked_changes_in, submission_findings
from coursetools.grading.state import load_state, update_state
from coursetools.grading.unfinished import record_unfinished

DEFAULT_NOTEBOOK_TIMEOUT = 180
# Each student's nbgrader runs in a process of its own, forked from a server that has imported
# nbgrader once (importing it took 2.4 of the ~5 CPU seconds a student cost when each run was a
# fresh `python -m nbgrader`).
_FORKSERVER = multiprocessing.get_context("forkserver")
_FORKSERVER.set_forkserver_preload(["nbgrader.apps.nbgraderapp", "coursetools.grading.nbgrader_plugins",
                                     "coursetools.grading.sandbox", "coursetools.grading.autograde",
                                     "coursetools.grading.checked_execute"])
# The address space each student's grading process may take (its soft RLIMIT_AS; the kernel's box
# sets its own): an honest notebook's grader peaks near 1.3 GiB of it (0.4 GiB resident), and a
# notebook whose replies would grow the grader past it fails alone, "grader out of memory".
GRADER_MEMORY = 3 * 2**30
PEAK_MEMORY = re.compile(r"^\[course\] grader peak memory: (\d+) MiB$", re.MULTILINE)
# One scan at a time: CPython 3.11's ast.parse is not thread-safe ("SystemError: AST constructor
# recursion depth mismatch" when two students were scanned at once).
_SCAN_LOCK = threading.Lock()


UNCONFINED_KERNEL_MANAGER = "jupyter_client.manager.AsyncKernelManager"  # nbclient's default: no box


# --- grading ------------------------------------------------------------------------------------

def prepare(course: Course, assignment: str) -> nbformat.NotebookNode:
    """Put the assignment in the gradebook (a release into the staged release folder, so the
    committed ``notebooks/`` is left alone) when the source is newer; return that release."""
    source, staged = build_notebook(course.root, assignment), course.staged_release(assignment)
    if not staged.is_file() or staged.stat().st_mtime < source.stat().st_mtime or not course.gradebook.exists():
        run_nbgrader(["generate_assignment", assignment, "--force",
                      f"--CourseDirectory.release_directory={STAGED_RELEASE}"], course.root)
    return nbformat.read(staged, as_version=4)


def grade(course: Course, assignment: str, students: list[str] | None = None, *, force: bool = False,
          jobs: int = 2, cell_timeout: int | None = None, notebook_timeout: float = DEFAULT_NOTEBOOK_TIMEOUT,
          confine: bool = True, progress: Callable[[str], object] = print) -> dict[str, Outcome]:
    """Autograde ``students`` (default: every submission) and return each one's outcome.

    Students already graded from the same submitted file are skipped unless ``force``. With
    ``confine`` (the default) a :class:`~coursetools.grading.sandbox.SandboxUnavailable` stops the run
    before anyone is graded.
    """
    if confine:
        check_sandbox()
    release = prepare(course, assignment)
    everyone = course.students("submitted", assignment)
    unknown = sorted(set(students or []) - set(everyone))
    if unknown:
        raise ValueError(f"no submission of {assignment!r} for {unknown}; submitted: {everyone}")
    state = load_state(course, assignment)
    # the instructor notebook prepare() has just built from the source
    source = nbformat.read(notebook_source(course.root, assignment), as_version=4)
    tests_sha, rubrics = grading_fingerprint(source), hand_graded_answers(source)
    rules = Rules(allow_lists(source), answer_test_cells(source))
    todo = [s for s in (students or everyone)
            if force or not _still_graded(course, assignment, s, state, tests_sha)]
    changed = [s for s in todo if state.get(s, {}).get("tests_sha") not in (None, tests_sha)]
    progress(f"{assignment}: {len(todo)} to grade, {len(students or everyone) - len(todo)} already graded"
             + (f" ({len(changed)} again because the tests changed since they were graded)" if changed else ""))
    if not todo:
        return {}
    backup = backup_gradebook(course)
    if backup:
        progress(f"gradebook backed up to {backup.relative_to(course.root)}")
    releases = [release, *earlier_releases(course.notebook("release", assignment))]
    if not confine:
        progress(f"WARNING: grading UNCONFINED (--unsafe-no-sandbox): {UNCONFINED}")
    outcomes: dict[str, Outcome] = {}
    lock = threading.Lock()
    scratch = tempfile.TemporaryDirectory(prefix="course-grading-")  # the boxes' scratch folders

    def one(student: str) -> None:
        record = state.get(student)
        hand_graded_on = answers_as_scored(course, assignment, student, record)
        was_unfinished = record is not None and record["status"] not in GRADED
        outcome = grade_student(course, assignment, student, releases, cell_timeout, notebook_timeout,
                                confine=confine, scratch_root=Path(scratch.name), rules=rules, rubrics=rubrics,
                                overrides=record.get("overrides", {}) if was_unfinished else None)
        outcome.tests_sha = tests_sha
        if outcome.status not in GRADED:
            outcome.overrides = _record_unfinished(course, assignment, student, outcome, release, rubrics)
            if was_unfinished:  # what was written on its test cells since the last finished run is no override
                outcome.overrides = record.get("overrides", {})
        outcome.details += [name + HAND_GRADE_AGAIN
                            for name in keep_hand_grades(course, assignment, student, hand_graded_on)]
        outcome.answers = _answers_graded(course, assignment, student) or hand_graded_on
        with lock:
            outcomes[student] = outcome
            update_state(course, assignment, {student: asdict(outcome)})
            progress(f"  {student}: {outcome.status} ({outcome.seconds:.1f} s)"
                     + (f": {'; '.join(outcome.details)}" if outcome.details else ""))

    with scratch, ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(one, todo))
    return outcomes


def _record_unfinished(course: Course, assignment: str, student: str, outcome: Outcome,
                       release: nbformat.NotebookNode, rubrics: dict[str, nbformat.NotebookNode]) -> dict[str, float]:
    """A notebook that did not finish has no score on any test cell, and a notebook formgrader shows them in
    as not graded (:mod:`coursetools.grading.unfinished`); returns the instructor's overrides of its test
    cells, taken off until a regrade finishes (``grade_student``'s ``overrides``)."""
    submission = _read_submission(course.notebook("submitted", assignment, student))
    return record_unfinished(course, assignment, student, release, None if isinstance(submission, str) else submission,
                             outcome.status, outcome.details, rubrics)


def grade_student(course: Course, assignment: str, student: str, releases: list[nbformat.NotebookNode],
                  cell_timeout: int | None = None, notebook_timeout: float = DEFAULT_NOTEBOOK_TIMEOUT, *,
                  confine: bool = True, scratch_root: Path | None = None,
                  rules: Rules | None = None,
                  rubrics: dict[str, nbformat.NotebookNode] | None = None,
                  overrides: dict[str, float] | None = None) -> Outcome:
    """Scan and autograde one student's notebook in its own nbgrader process, its kernel in a box
    (scratch folders under ``scratch_root``) unless not ``confine``.

    ``rules``: each answer cell's allow-list and its exercise's test cells (read from the instructor's
    source when not given): a use outside the list withholds those cells' points (``Outcome.withheld``).

    ``releases``: the release graded against first, then earlier releases students may have had
    (a locked cell as one of them released it is not an edit).

    ``rubrics``: the source's cells of the answers graded by hand
    (:func:`~coursetools.grading.rubrics.hand_graded_answers`), copied after the student's answers
    into the autograded notebook, which formgrader shows.

    ``overrides``: when the student's last run did not finish, the instructor's overrides of its test
    cells from before (:func:`~coursetools.grading.gradebook.restore_overrides`): once this run finishes,
    the tests' scores replace whatever was written on them meanwhile."""
    release = releases[0]
    if rules is None:
        source = nbformat.read(notebook_source(course.root, assignment), as_version=4)
        rules = Rules(allow_lists(source), answer_test_cells(source))
    start = time.monotonic()
    path = course.notebook("submitted", assignment, student)
    submission = _read_submission(path)
    if isinstance(submission, str):
        _remove_autograded(course, assignment, student)
        return Outcome(MISSING, [submission], 0.0)
    sha = _sha(path)
    with _SCAN_LOCK:
        changes = locked_cell_changes(release, submission, releases[1:])
        found = submission_findings(release, submission, rules.allowed)
        flags = changes + [str(finding) for finding in found]
    args = ["autograde", assignment, "--student", student, "--force"]
    if cell_timeout is not None:
        args.append(f"--ExecutePreprocessor.timeout={cell_timeout}")
    if not confine:
        args.append(f"--ExecutePreprocessor.kernel_manager_class={UNCONFINED_KERNEL_MANAGER}")
    elif scratch_root is not None:
        args.append(f"--ConfinedKernelManager.scratch_root={scratch_root}")
    returncode, log, stopped_after = _run_with_limit(args, course, notebook_timeout)
    if worth_another_run(returncode, log):  # once
        returncode, log, stopped_after = _run_with_limit(args, course, notebook_timeout)
    course.log_file(assignment, student).parent.mkdir(parents=True, exist_ok=True)
    edited = {name for _, name in locked_changes_in(changes)}
    course.log_file(assignment, student).write_text(explained_log(log, edited), encoding="utf-8")
    if returncode is None:
        _remove_autograded(course, assignment, student)
    ungraded, stopped, cut = [], [], []
    if returncode == 0:
        autograded = course.notebook("autograded", assignment, student)
        if autograded.is_file():
            autograded_nb = nbformat.read(autograded, as_version=4)
            flags = tampering_seen_by_tests(autograded_nb) + flags
            stopped = cells_stopped_at_limit(autograded_nb)
            cut = output_cut(autograded_nb)
            if rubrics:
                write_atomically(autograded, nbformat.writes(add_rubrics(autograded_nb, rubrics)))
        if overrides is not None:
            restore_overrides(course, assignment, student, {cell.grade_id for cell in graded_cells(release)
                                                            if cell.automatic}, overrides)
        scores = gradebook_scores(course, assignment, student)
        ungraded = [cell.grade_id for cell in graded_cells(release)
                    if cell.automatic and scores.get(cell.grade_id) is None]
    status, details = autograde_status(returncode, log, flags, ungraded, stopped_after, stopped, cut)
    if not confine:
        details = [UNCONFINED, *details]
    withheld = sorted({test for finding in found if finding.exercise for test in rules.tests.get(finding.exercise, [])})
    return Outcome(status, details, round(time.monotonic() - start, 1), sha, withheld=withheld)


def _read_submission(path: Path) -> nbformat.NotebookNode | str:
    """The notebook, or why there is none to grade."""
    if not path.is_file():
        others = sorted(p.name for p in path.parent.glob("*.ipynb")) if path.parent.is_dir() else []
        found = f"; found {', '.join(others)} (rename it to {path.name} and grade again)" if others else ""
        return f"expected {path.name}{found}"
    try:
        return nbformat.read(path, as_version=4)
    except Exception as error:  # noqa: BLE001 - any unreadable file is reported, not fatal
        return f"{path.name} is not a readable notebook: {type(error).__name__}: {error}"


def _run_with_limit(args: list[str], course: Course, limit: float) -> tuple[int | None, str, str]:
    """Run ``nbgrader <args>`` in a process of its own; kill it and its kernel once they have used
    ``limit`` CPU seconds, or taken :data:`~coursetools.checker.clock.WALL_FACTOR` times as many
    wall-clock seconds (returncode None). Returns the exit code, what nbgrader printed and, when it was
    killed, the limit it passed in words ("180 s of CPU time")."""
    handle, log = tempfile.mkstemp(prefix="nbgrader-", suffix=".log")
    os.close(handle)
    try:
        process = _FORKSERVER.Process(target=_nbgrader_main, args=(args, str(course.root), log))
        process.start()
        clock = Clock(limit, limit * WALL_FACTOR, process.pid)
        while process.exitcode is None and not clock.passed():
            process.join(max(REFRESH, min(clock.left(), 1.0)))
        passed = clock.passed() if process.exitcode is None else None
        if passed:
            _kill_tree(process.pid)
            process.join()
        text = Path(log).read_text(encoding="utf-8", errors="replace")
        return (None, text, clock.limit_text(passed)) if passed else (process.exitcode, text, "")
    finally:
        os.unlink(log)


def _nbgrader_main(args: list[str], root: str, log: str) -> None:
    """``nbgrader <args>`` run in ``root``, printing into the file ``log`` (a forked process's target)."""
    from nbgrader.apps.nbgraderapp import NbGraderApp  # preloaded by the fork server

    os.setsid()
    os.chdir(root)
    os.environ.update(nbgrader_env())
    with open(log, "w", encoding="utf-8") as output:
        for stream in (1, 2):
            os.dup2(output.fileno(), stream)
    sys.argv = ["nbgrader", *args]
    resource.setrlimit(resource.RLIMIT_AS, (GRADER_MEMORY, resource.getrlimit(resource.RLIMIT_AS)[1]))
    try:
        NbGraderApp.launch_instance(argv=args)
    finally:
        print(f"[course] grader peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB",
              flush=True)


def _kill_tree(pid: int) -> None:
    """SIGKILL a process and all its descendants (the kernel runs in a session of its own)."""
    try:
        parent = psutil.Process(pid)
        family = parent.children(recursive=True) + [parent]
    except psutil.NoSuchProcess:
        return
    for process in family:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(family, timeout=10)


def answers_as_scored(course: Course, assignment: str, student: str, record: dict | None) -> dict[str, str]:
    """The hand-graded answers as their hand grades were given on, read before a regrade replaces
    them: the autograded notebook's, or, when a failed run removed it, those ``record`` (the
    student's last outcome) kept, so that a transient failure loses no hand grade."""
    return _answers_graded(course, assignment, student) or (record or {}).get("answers", {})


def _answers_graded(course: Course, assignment: str, student: str) -> dict[str, str]:
    """The hand-graded answers of ``student``'s autograded notebook as it is now (empty when none)."""
    path = course.notebook("autograded", assignment, student)
    return answer_texts(nbformat.read(path, as_version=4)) if path.is_file() else {}


def _remove_autograded(course: Course, assignment: str, student: str) -> None:
    shutil.rmtree(course.folder("autograded", assignment, student), ignore_errors=True)


def _still_graded(course: Course, assignment: str, student: str, state: dict, tests_sha: str) -> bool:
    """:func:`~coursetools.grading.outcomes.already_graded` for the files and tests as they are now."""
    path = course.notebook("submitted", assignment, student)
    return already_graded(state.get(student), _sha(path),
                          course.notebook("autograded", assignment, student).is_file(), tests_sha)


def _sha(path: Path) -> str:
    """The SHA-256 of a file's bytes; empty when there is no file."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


# --- feedback -----------------------------------------------------------------------------------

def feedback(course: Course, assignment: str) -> tuple[list[Path], list[str]]:
    """Generate feedback; return (feedback files, students whose file was withheld for a leak).

    A page is withheld (deleted) when it quotes a hidden line that the student did not write themselves.
    A notebook that did not finish gets no page (it has no score; nbgrader would show 0 for each test).
    """
    run_nbgrader(["generate_feedback", assignment, "--force"], course.root)
    hidden = hidden_lines(nbformat.read(build_notebook(course.root, assignment), as_version=4))
    state = load_state(course, assignment)
    files, withheld = [], []
    for student in course.students("feedback", assignment):
        secret = hidden - _own_lines(course, assignment, student)
        for page in sorted(course.folder("feedback", assignment, student).glob("*.html")):
            if state.get(student, {}).get("status", OK) not in GRADED:
                page.unlink()
            elif quoted_lines(page.read_text(encoding="utf-8"), secret, (mathjax_script(),)):
                page.unlink()
                withheld.append(student)
            else:
                files.append(page)
    return files, sorted(set(withheld))


def _own_lines(course: Course, assignment: str, student: str) -> set[str]:
    """The stripped source lines of ``student``'s submitted notebook (none when unreadable)."""
    path = course.notebook("submitted", assignment, student)
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # noqa: BLE001 - a missing or unreadable submission has no lines of its own
        return set()
    return {line.strip() for cell in nb.cells for line in cell.source.splitlines()}
