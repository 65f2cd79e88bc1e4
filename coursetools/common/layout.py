"""Where a course's files live, and how nbgrader runs in it.

:data:`REPO_ROOT` is this repository, the course root every command defaults to;
:func:`run_nbgrader` runs nbgrader in a course root with the environment it needs (:func:`nbgrader_env`).

nbgrader's folders (``submitted``, ``autograded``, ``feedback``, the gradebook) are wherever the
course root's ``nbgrader_config.py`` puts them: :class:`Course` loads that file into nbgrader's
own ``CourseDirectory`` and asks it (``format_path``), so that nothing here repeats the layout.
What nbgrader does not know about, the course's grading adds under :data:`GRADING`: the release
graded against, the outcome of each student, logs, exports, the class report, gradebook backups
and the roster.
"""

from __future__ import annotations

import difflib
import glob
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.coursedir import CourseDirectory
from traitlets.config.loader import PyFileConfigLoader

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG_FILE = "nbgrader_config.py"
GRADING = Path("grading")  # the course's own grading files (git-ignored), beside nbgrader's
STAGED_RELEASE = GRADING / "release"  # a release made with the gradebook; notebooks/ is not touched
NBGRADER_STEPS = ("source", "release", "submitted", "autograded", "feedback")


def nbgrader_env() -> dict[str, str]:
    """The environment nbgrader needs: this interpreter's ``bin/`` first on PATH (the
    ``python3`` kernel and nbgrader's ``alembic`` migrations are found there)."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.setdefault("PYTHONHASHSEED", "0")
    env.setdefault("MPLBACKEND", "Agg")
    return env


def run_nbgrader(args: list[str], course_root: Path, *, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``nbgrader <args>`` in ``course_root`` (where nbgrader_config.py is)."""
    command = [sys.executable, "-m", "nbgrader", *args]
    result = subprocess.run(command, cwd=course_root, env=nbgrader_env(), capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"`nbgrader {' '.join(args)}` failed with exit code {result.returncode}:\n"
                           f"{result.stdout}\n{result.stderr}")
    return result


def source_dir(course_root: Path) -> Path:
    """The folder of the exercise sources (``solutions/<assignment>/<assignment>.md``)."""
    return course_root / "solutions"


def assignments(course_root: Path) -> list[str]:
    """The assignment ids: folders of ``solutions/`` that hold a text source of the same name."""
    return sorted(p.name for p in source_dir(course_root).iterdir() if (p / f"{p.name}.md").is_file())


def check_assignment(assignment: str, course_root: Path = REPO_ROOT) -> str:
    """``assignment`` if it is one of the course's, else a ValueError naming the closest ids."""
    known = assignments(course_root)
    if assignment in known:
        return assignment
    close = difflib.get_close_matches(assignment, known, n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise ValueError(f"unknown assignment {assignment!r}: {hint}the assignments are {', '.join(known)}")


def course_directory(root: Path) -> CourseDirectory:
    """nbgrader's ``CourseDirectory`` as ``<root>/nbgrader_config.py`` configures it; its root is
    ``root`` unless the file sets one (nbgrader runs in ``root``, and defaults to where it runs)."""
    config = PyFileConfigLoader(CONFIG_FILE, path=str(root)).load_config()
    if "root" not in config.CourseDirectory:
        config.CourseDirectory.root = str(Path(root).resolve())
    return CourseDirectory(config=config)


@dataclass
class Course:
    """The paths of one course directory: nbgrader's, from its configuration, and the course's own."""

    root: Path
    nbgrader: CourseDirectory = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        self.nbgrader = course_directory(self.root)

    # --- nbgrader's folders -----------------------------------------------------------------

    def folder(self, step: str, assignment: str, student: str = ".") -> Path:
        """``student``'s folder of ``assignment`` at an nbgrader step (one of :data:`NBGRADER_STEPS`;
        ``source`` and ``release`` have no student)."""
        return Path(self.nbgrader.format_path(self._directory(step), student, assignment))

    def notebook(self, step: str, assignment: str, student: str = ".") -> Path:
        """The assignment's notebook (each assignment is one notebook named after it) at ``step``."""
        return self.folder(step, assignment, student) / f"{assignment}.ipynb"

    def feedback_page(self, assignment: str, student: str) -> Path:
        """The feedback HTML nbgrader generates for ``student``."""
        return self.folder("feedback", assignment, student) / f"{assignment}.html"

    def students(self, step: str, assignment: str) -> list[str]:
        """The students with a folder of ``assignment`` at ``step``, found the way nbgrader finds
        them: a glob over its directory structure, the student id read back with a pattern."""
        directory = self._directory(step)
        pattern = re.compile(self.nbgrader.format_path(directory, "(?P<student_id>[^/]+)", assignment,
                                                       escape=True) + "$")
        matches = (pattern.match(path) for path in glob.glob(self.nbgrader.format_path(directory, "*", assignment)))
        return sorted(match["student_id"] for match in matches if match and os.path.isdir(match.string))

    def _directory(self, step: str) -> str:
        if step not in NBGRADER_STEPS:
            raise ValueError(f"unknown nbgrader step {step!r}; expected one of {NBGRADER_STEPS}")
        return getattr(self.nbgrader, f"{step}_directory")

    @property
    def gradebook(self) -> Path:
        """The gradebook's SQLite file (``CourseDirectory.db_url``)."""
        url = self.nbgrader.db_url
        if not url.startswith("sqlite:///"):
            raise ValueError(f"the course's grading needs an SQLite gradebook, got db_url {url!r}")
        return Path(url.removeprefix("sqlite:///"))

    # --- the course's own ---------------------------------------------------------------------

    @property
    def grading_folder(self) -> Path:
        return self.root / GRADING

    def staged_release(self, assignment: str) -> Path:
        """The release notebook grading compares submissions with (made by ``grading.prepare``)."""
        return Path(self.nbgrader.format_path(str(STAGED_RELEASE), ".", assignment)) / f"{assignment}.ipynb"

    def state_file(self, assignment: str) -> Path:
        """Each student's recorded outcome (:mod:`coursetools.grading.state`)."""
        return self.grading_folder / "state" / f"{assignment}.json"

    def log_file(self, assignment: str, student: str) -> Path:
        """What ``nbgrader autograde`` printed for ``student``."""
        return self.grading_folder / "logs" / assignment / f"{student}.log"

    def exports(self) -> Path:
        return self.grading_folder / "exports"

    def report(self, assignment: str) -> Path:
        return self.grading_folder / "reports" / f"{assignment}.html"

    def backups(self) -> Path:
        return self.grading_folder / "backups"

    def roster(self) -> Path:
        """The optional class list (``student,name,email``), kept out of git: it names people."""
        return self.grading_folder / "roster.csv"
