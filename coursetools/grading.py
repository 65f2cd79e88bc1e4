"""Grade a class with nbgrader: collect, autograde each student, feedback, export.

A thin layer over nbgrader's own commands that keeps every number honest
(``coursetools/README.md`` lists what nbgrader gets wrong by default):

* **collect** copies ``<folder>/<student>/[<assignment>/]*.ipynb`` into ``grading/submitted``, or
  runs ``nbgrader zip_collect`` on an LMS download; names it cannot match are reported;
* **grade** backs up the gradebook, checks each submission against the release (locked cells
  edited or deleted, code that reaches into the tests), then runs ``nbgrader autograde`` once per
  student in its own process (two at a time by default) under a per-notebook time limit: a
  student whose kernel dies or who loops forever is recorded as such and the others are kept.
  Every outcome is written to ``grading/state/<assignment>.json`` as soon as it is known, so an
  interrupted run resumes where it stopped; ``force`` grades again;
* **feedback** runs ``nbgrader generate_feedback`` (hidden tests removed by the course's
  preprocessor) and then withholds any feedback file that still quotes a hidden line;
* **export** writes nbgrader's CSV and the course's own, with one column per graded cell and a
  status per student.

Worst case per student: the ``notebook_timeout`` (default 180 s), plus a few seconds to kill.
"""

from __future__ import annotations

import ast
import hashlib
import csv
import json
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

import nbformat
import psutil
from nbgrader.utils import compute_checksum

from coursetools.nbgrader_plugins import MIN_QUOTED, match_submission_name, split_hidden, visible_text
from coursetools.release import nbgrader_env, run_nbgrader
from coursetools.sources import build_notebook

OK = "ok"
KERNEL_DIED = "kernel died"
TIMED_OUT = "timed out"
TAMPERED = "tampered"
MISSING = "missing notebook"
MANUAL = "needs manual grade"
STATUSES = (OK, KERNEL_DIED, TIMED_OUT, TAMPERED, MISSING, MANUAL)
GRADED = (OK, TAMPERED, MANUAL)  # the statuses whose autograded notebook holds scores
KERNEL_DIED_LOG = re.compile("DeadKernelError|Kernel died")  # how nbgrader's log says so
TIMED_OUT_LOG = re.compile("CellTimeoutError|Timeout waiting")
STAGING = Path("grading") / "release"  # a release made with the gradebook; notebooks/ is not touched
DEFAULT_NOTEBOOK_TIMEOUT = 180


@dataclass
class Outcome:
    """How grading one student's notebook went."""

    status: str
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0
    submission_sha: str = ""


@dataclass
class Course:
    """Paths of a course directory laid out by ``nbgrader_config.py``."""

    root: Path

    def submitted(self, assignment: str, student: str = "") -> Path:
        return self.root / "grading" / "submitted" / student / assignment if student else \
            self.root / "grading" / "submitted"

    def notebook(self, kind: str, assignment: str, student: str) -> Path:
        """``kind`` is ``submitted`` or ``autograded``."""
        return self.root / "grading" / kind / student / assignment / f"{assignment}.ipynb"

    def staged_release(self, assignment: str) -> Path:
        return self.root / STAGING / assignment / f"{assignment}.ipynb"

    @property
    def gradebook(self) -> Path:
        return self.root / "grading" / "gradebook.db"

    def state_file(self, assignment: str) -> Path:
        return self.root / "grading" / "state" / f"{assignment}.json"

    def log_file(self, assignment: str, student: str) -> Path:
        return self.root / "grading" / "logs" / assignment / f"{student}.log"

    def exports(self) -> Path:
        return self.root / "grading" / "exports"


# --- collecting submissions ---------------------------------------------------------------------

def collect_folder(course: Course, assignment: str, folder: Path) -> list[str]:
    """Copy ``folder/<student>/[<assignment>/]*.ipynb`` into ``grading/submitted``; return the students.

    Every notebook is copied as it was named, so a misnamed one is reported at grading, not lost.
    """
    students = []
    for student_dir in sorted(p for p in Path(folder).iterdir() if p.is_dir()):
        inner = student_dir / assignment
        origin = inner if inner.is_dir() else student_dir
        notebooks = sorted(origin.glob("*.ipynb"))
        destination = course.submitted(assignment, student_dir.name)
        if destination.exists():
            shutil.rmtree(destination)
        destination.mkdir(parents=True)
        for notebook in notebooks:
            shutil.copy2(notebook, destination / notebook.name)
        students.append(student_dir.name)
    return students


def collect_zip(course: Course, assignment: str, archive: Path) -> tuple[list[str], list[str]]:
    """Collect an LMS download with ``nbgrader zip_collect``; return (students, unmatched files)."""
    downloaded = course.root / "grading" / "downloaded" / assignment
    shutil.rmtree(downloaded, ignore_errors=True)
    (downloaded / "archive").mkdir(parents=True)
    shutil.copy2(archive, downloaded / "archive" / Path(archive).name)
    run_nbgrader(["zip_collect", assignment, "--force",
                  "--ZipCollectApp.downloaded_directory=grading/downloaded",
                  "--ZipCollectApp.collector_plugin=coursetools.nbgrader_plugins.LmsFileNameCollector"],
                 course.root)
    students, unmatched = set(), []
    for path in sorted((downloaded / "extracted").rglob("*")):
        if path.is_file():
            info = match_submission_name(str(path), assignment)
            if info is None:
                unmatched.append(str(path.relative_to(downloaded / "extracted")))
            else:
                students.add(info["student_id"])
    _update_state(course, assignment, {"_unmatched": unmatched})
    return sorted(students), unmatched


# --- checks made outside the kernel, on the submitted file ---------------------------------------

def locked_cell_changes(release: nbformat.NotebookNode, submission: nbformat.NotebookNode) -> list[str]:
    """Locked cells (setup, tests, instructions) the student edited or deleted, by grade_id.

    Compared with the checksums nbgrader stored in the release (``nbgrader.utils.compute_checksum``
    covers the source, the cell type, the flags and the points). nbgrader restores these cells at
    autograde, so the grade stays right; the change is reported.
    """
    submitted = {_meta(c).get("grade_id"): c for c in submission.cells if _meta(c)}
    changes = []
    for cell in release.cells:
        meta = _meta(cell)
        if not meta.get("locked"):
            continue
        mine = submitted.get(meta["grade_id"])
        if mine is None:
            changes.append(f"deleted locked cell {meta['grade_id']}")
        elif compute_checksum(mine) != meta.get("checksum"):
            changes.append(f"edited locked cell {meta['grade_id']}")
    return changes


# Names a solution has no reason to touch: the tests, the interpreter's insides, IPython's hooks.
_SUSPICIOUS_NAMES = {"coursetools", "verify_untampered", "__code__", "__defaults__",
                     "__kwdefaults__", "__closure__", "__globals__", "__builtins__", "builtins",
                     "__class__", "__dict__", "gc", "ctypes", "importlib", "get_ipython",
                     "input_transformers_cleanup", "input_transformers_post", "ast_transformers",
                     "set_custom_exc", "showtraceback", "exec", "eval", "compile", "setattr",
                     "globals", "vars", "FunctionType", "CodeType", "__import__"}
_ALLOWED_MAGICS = re.compile(r"get_ipython\(\)\.run_line_magic\('(matplotlib|time|timeit)'")


def suspicious_code(release: nbformat.NotebookNode, submission: nbformat.NotebookNode) -> list[str]:
    """What the student's own code cells do to the environment the tests run in.

    Flags assignments to attributes of imported modules (``torch.allclose = ...``) and uses of
    the names in ``_SUSPICIOUS_NAMES``. The check runs on the submitted file, where the student
    cannot reach it; it reports, it does not grade (an instructor reviews ``tampered``).
    """
    locked = {_meta(c)["grade_id"] for c in release.cells if _meta(c).get("locked")}
    student_cells = [c for c in submission.cells
                     if c.cell_type == "code" and _meta(c).get("grade_id") not in locked]
    student_trees = [_tree(cell.source) for cell in student_cells]
    release_trees = [_tree(cell.source) for cell in release.cells if cell.cell_type == "code"]
    imported = {name for tree in release_trees for name in _imported(tree)}
    imported |= {name for tree in student_trees for name in _imported(tree)}
    found: list[str] = []
    for tree in student_trees:
        found += _suspicious_in(tree, imported)
    return sorted(set(found))


def _tree(source: str) -> ast.AST | None:
    """The cell as Python (IPython magics transformed), or None if it does not parse: it fails in
    the kernel too, and scores nothing."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return ast.parse(_ALLOWED_MAGICS.sub("pass  #", TransformerManager().transform_cell(source)))
    except SyntaxError:
        return None


def _imported(tree: ast.AST | None) -> set[str]:
    if tree is None:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def _suspicious_in(tree: ast.AST | None, imported: set[str]) -> list[str]:
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [f"imports {alias.name}" for alias in node.names
                      if alias.name.split(".")[0] in _SUSPICIOUS_NAMES or alias.name in _SUSPICIOUS_NAMES]
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in _SUSPICIOUS_NAMES:
                found.append(f"imports from {node.module}")
        elif name in _SUSPICIOUS_NAMES:
            found.append(f"uses {name}")
        elif name == "modules" and _root_name(node) == "sys":
            found.append("uses sys.modules")
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            found += [f"assigns to {ast.unparse(t)}" for t in targets
                      if isinstance(t, (ast.Attribute, ast.Subscript)) and _root_name(t) in imported]
    return found


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


# --- grading ------------------------------------------------------------------------------------

def backup_gradebook(course: Course) -> Path | None:
    """A consistent copy of the gradebook under ``grading/backups/`` (None when there is none yet)."""
    if not course.gradebook.exists():
        return None
    folder = course.root / "grading" / "backups"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"gradebook-{datetime.now():%Y%m%dT%H%M%S-%f}.db"
    with sqlite3.connect(course.gradebook) as source, sqlite3.connect(target) as copy:
        source.backup(copy)
    return target


def prepare(course: Course, assignment: str) -> nbformat.NotebookNode:
    """Put the assignment in the gradebook (a release into ``grading/release``, so the committed
    ``notebooks/`` is left alone) when the source is newer; return that release."""
    source, staged = build_notebook(course.root, assignment), course.staged_release(assignment)
    if not staged.is_file() or staged.stat().st_mtime < source.stat().st_mtime or not course.gradebook.exists():
        run_nbgrader(["generate_assignment", assignment, "--force",
                      f"--CourseDirectory.release_directory={STAGING}"], course.root)
    return nbformat.read(staged, as_version=4)


def grade(course: Course, assignment: str, students: list[str] | None = None, *, force: bool = False,
          jobs: int = 2, cell_timeout: int | None = None,
          notebook_timeout: float = DEFAULT_NOTEBOOK_TIMEOUT, progress=print) -> dict[str, Outcome]:
    """Autograde ``students`` (default: every submission) and return each one's outcome.

    Students already graded from the same submitted file are skipped unless ``force``.
    """
    release = prepare(course, assignment)
    everyone = sorted(p.name for p in course.submitted(assignment).iterdir() if (p / assignment).is_dir()) \
        if course.submitted(assignment).is_dir() else []
    unknown = sorted(set(students or []) - set(everyone))
    if unknown:
        raise ValueError(f"no submission of {assignment!r} for {unknown}; submitted: {everyone}")
    state = load_state(course, assignment)
    todo = [s for s in (students or everyone) if force or not _already_graded(course, assignment, s, state)]
    progress(f"{assignment}: {len(todo)} to grade, {len(students or everyone) - len(todo)} already graded")
    if not todo:
        return {}
    backup = backup_gradebook(course)
    if backup:
        progress(f"gradebook backed up to {backup.relative_to(course.root)}")
    outcomes: dict[str, Outcome] = {}
    lock = threading.Lock()

    def one(student: str) -> None:
        outcome = grade_student(course, assignment, student, release, cell_timeout, notebook_timeout)
        with lock:
            outcomes[student] = outcome
            _update_state(course, assignment, {student: asdict(outcome)})
            progress(f"  {student}: {outcome.status} ({outcome.seconds:.1f} s)"
                     + (f": {'; '.join(outcome.details)}" if outcome.details else ""))

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(one, todo))
    return outcomes


def grade_student(course: Course, assignment: str, student: str, release: nbformat.NotebookNode,
                  cell_timeout: int | None = None,
                  notebook_timeout: float = DEFAULT_NOTEBOOK_TIMEOUT) -> Outcome:
    """Check and autograde one student's notebook in its own nbgrader process."""
    start = time.monotonic()
    path = course.notebook("submitted", assignment, student)
    submission = _read_submission(path)
    if isinstance(submission, str):
        _remove_autograded(course, assignment, student)
        return Outcome(MISSING, [submission], 0.0)
    sha = _sha(path)
    flags = locked_cell_changes(release, submission) + suspicious_code(release, submission)
    args = ["autograde", assignment, "--student", student, "--force"]
    if cell_timeout is not None:
        args.append(f"--ExecutePreprocessor.timeout={cell_timeout}")
    returncode, log = _run_with_limit(args, course, notebook_timeout)
    if returncode == 1 and "database is locked" in log:  # two writers at once: try again, once
        returncode, log = _run_with_limit(args, course, notebook_timeout)
    course.log_file(assignment, student).parent.mkdir(parents=True, exist_ok=True)
    course.log_file(assignment, student).write_text(log, encoding="utf-8")
    seconds = round(time.monotonic() - start, 1)
    if returncode is None:
        _remove_autograded(course, assignment, student)
        return Outcome(TIMED_OUT, [f"stopped after {notebook_timeout:g} s"] + flags, seconds, sha)
    if returncode != 0:
        # A kernel busy in a loop that ignores SIGINT makes nbgrader give up with a timeout error.
        status = KERNEL_DIED if KERNEL_DIED_LOG.search(log) else TIMED_OUT if TIMED_OUT_LOG.search(log) else MANUAL
        return Outcome(status, [_last_error_line(log)] + flags, seconds, sha)
    flags = _tampering_seen_by_tests(course.notebook("autograded", assignment, student)) + flags
    if flags:
        return Outcome(TAMPERED, flags, seconds, sha)
    ungraded = [name for name, score in _test_scores(course, assignment, student, release) if score is None]
    if ungraded:
        return Outcome(MANUAL, [f"no automatic score for {', '.join(ungraded)}"], seconds, sha)
    return Outcome(OK, [], seconds, sha)


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


def _run_with_limit(args: list[str], course: Course, limit: float) -> tuple[int | None, str]:
    """Run ``nbgrader <args>``; kill it and its kernel after ``limit`` s (returncode None)."""
    process = subprocess.Popen([sys.executable, "-m", "nbgrader", *args], cwd=course.root, env=nbgrader_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=limit)
        return process.returncode, output
    except subprocess.TimeoutExpired:
        _kill_tree(process.pid)
        output, _ = process.communicate()
        return None, output


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


def _last_error_line(log: str) -> str:
    """The most telling line of a failed autograde's log."""
    lines = [line.strip() for line in log.splitlines()]
    for pattern in (KERNEL_DIED_LOG, TIMED_OUT_LOG, re.compile("Error|error")):
        found = [line for line in lines if pattern.search(line)]
        if found:
            return found[-1][:300]
    return "nbgrader autograde failed (see the log)"


def _tampering_seen_by_tests(autograded: Path) -> list[str]:
    """The TamperingError messages the tests raised while grading."""
    if not autograded.is_file():
        return []
    nb = nbformat.read(autograded, as_version=4)
    return sorted({f"tests saw: {o.evalue}"[:400] for c in nb.cells if c.cell_type == "code"
                   for o in c.get("outputs", []) if o.output_type == "error" and o.ename == "TamperingError"})


def _remove_autograded(course: Course, assignment: str, student: str) -> None:
    shutil.rmtree(course.notebook("autograded", assignment, student).parent, ignore_errors=True)


def _already_graded(course: Course, assignment: str, student: str, state: dict) -> bool:
    """Same submitted file as last time, and its outcome is complete."""
    record = state.get(student)
    path = course.notebook("submitted", assignment, student)
    if not record or record["submission_sha"] != (_sha(path) if path.is_file() else ""):
        return False
    needs_notebook = record["status"] in GRADED
    return not needs_notebook or course.notebook("autograded", assignment, student).is_file()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_state(course: Course, assignment: str) -> dict:
    """The recorded outcome per student (and ``_unmatched``: files zip_collect could not place)."""
    path = course.state_file(assignment)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _update_state(course: Course, assignment: str, changes: dict) -> None:
    """Merge ``changes`` into the state file, atomically (an interrupted run leaves it whole)."""
    state = load_state(course, assignment)
    state.update(changes)
    path = course.state_file(assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(state, indent=1, sort_keys=True), encoding="utf-8")
    temporary.replace(path)


# --- scores -------------------------------------------------------------------------------------

def _grade_cells(release: nbformat.NotebookNode) -> list[tuple[str, bool, float]]:
    """(grade_id, graded automatically, points) of every graded cell, in notebook order."""
    return [(meta["grade_id"], c.cell_type == "code" and not meta.get("solution"), float(meta["points"]))
            for c in release.cells if (meta := _meta(c)).get("grade")]


def _test_scores(course: Course, assignment: str, student: str,
                 release: nbformat.NotebookNode) -> list[tuple[str, float | None]]:
    scores = gradebook_scores(course, assignment, student)
    return [(name, scores.get(name)) for name, auto, _ in _grade_cells(release) if auto]


def gradebook_scores(course: Course, assignment: str, student: str) -> dict[str, float | None]:
    """grade cell -> score from the gradebook (None: still to grade by hand); empty when it holds no submission."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{course.gradebook}") as gradebook:
        try:
            notebook = gradebook.find_submission_notebook(assignment, assignment, student)
        except MissingEntry:
            return {}
        return {g.name: g.score if not g.needs_manual_grade or g.manual_score is not None else None
                for g in notebook.grades}


@dataclass
class Row:
    """One student's line of the class export."""

    student: str
    status: str
    scores: dict[str, float | None]
    total: float | None
    details: list[str]


ClassTable = tuple[list[Row], list[tuple[str, bool, float]]]  # rows, graded cells (id, automatic, points)


def class_rows(course: Course, assignment: str) -> ClassTable:
    """Every recorded student's scores and status, and the graded cells (id, automatic, points).

    A student whose notebook was not graded (kernel died, timed out, missing) has no scores:
    their total is empty, never a silent 0.
    """
    cells = _grade_cells(nbformat.read(course.staged_release(assignment), as_version=4))
    rows = []
    for student, record in sorted(load_state(course, assignment).items()):
        if student.startswith("_"):
            continue
        graded = record["status"] in GRADED
        found = gradebook_scores(course, assignment, student) if graded else {}
        scores = {name: found.get(name) for name, _, _ in cells}
        total = sum(s or 0.0 for s in scores.values()) if graded else None
        rows.append(Row(student, record["status"], scores, total, record["details"]))
    return rows, cells


def export(course: Course, assignment: str, table: ClassTable | None = None) -> list[Path]:
    """Write nbgrader's CSV and the course's (per-cell columns, status); return both paths.

    ``table``: what :func:`class_rows` returns, when the caller has it already.
    """
    folder = course.exports()
    folder.mkdir(parents=True, exist_ok=True)
    nbgrader_csv = folder / f"{assignment}_nbgrader.csv"
    run_nbgrader(["export", f"--to={nbgrader_csv}", f"--assignment={assignment}"], course.root)
    rows, cells = table or class_rows(course, assignment)
    course_csv = folder / f"{assignment}_grades.csv"
    with course_csv.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "status", *[name for name, _, _ in cells], "total",
                         "max_total", "manual_to_grade", "details"])
        max_total = sum(p for _, _, p in cells)
        for row in rows:
            manual_left = sum(1 for name, auto, _ in cells if not auto and row.scores[name] is None) \
                if row.total is not None else ""
            writer.writerow([row.student, row.status, *[_blank(row.scores[n]) for n, _, _ in cells],
                             _blank(row.total), max_total, manual_left, "; ".join(row.details)])
    return [nbgrader_csv, course_csv]


def _blank(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


# --- feedback -----------------------------------------------------------------------------------

def feedback(course: Course, assignment: str) -> tuple[list[Path], list[str]]:
    """Generate feedback; return (feedback files, students whose file was withheld for a leak)."""
    run_nbgrader(["generate_feedback", assignment, "--force"], course.root)
    hidden = _hidden_lines(build_notebook(course.root, assignment))
    files, withheld = [], []
    for path in sorted((course.root / "grading" / "feedback").glob(f"*/{assignment}/*.html")):
        student = path.parent.parent.name
        submitted = course.notebook("submitted", assignment, student)
        own = _lines(submitted.read_text(encoding="utf-8")) if submitted.is_file() else set()
        if _quotes(path.read_text(encoding="utf-8"), hidden - own):
            path.unlink()
            withheld.append(student)
        else:
            files.append(path)
    return files, withheld


def _hidden_lines(source: Path) -> set[str]:
    nb = nbformat.read(source, as_version=4)
    hidden, visible = set(), set()
    for cell in nb.cells:
        shown, secret = split_hidden(cell.source)
        hidden |= {line.strip() for line in secret}
        visible |= {line.strip() for line in shown.splitlines()}
    return {line for line in hidden - visible if len(line) >= MIN_QUOTED}


def _lines(text: str) -> set[str]:
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception:  # noqa: BLE001 - an unreadable submission has no lines of its own
        return set()
    return {line.strip() for cell in nb.cells for line in cell.source.splitlines()}


def _quotes(page: str, lines: set[str]) -> list[str]:
    text = visible_text(page)
    return sorted(line for line in lines if line in text)
