"""Release: regenerate the student notebooks in ``notebooks/`` from ``solutions/`` with nbgrader.

``make release`` runs ``python -m coursetools.release [assignment ...]``. Every assignment is a
folder ``solutions/<id>/`` holding its text source ``<id>.md``; the notebook nbgrader reads is
generated from it first (``coursetools/sources.py``). The release is nbgrader's own
``generate_assignment`` (solutions replaced by stubs, hidden tests removed, cells locked by
checksum), run without the gradebook so that releasing never touches grades.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from coursetools import sources

REPO_ROOT = Path(__file__).resolve().parent.parent


def assignments(course_root: Path = REPO_ROOT) -> list[str]:
    """The assignment ids: folders of ``solutions/`` that hold a text source of the same name."""
    return sources.assignments(course_root)


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


def release(assignment: str, course_root: Path = REPO_ROOT) -> Path:
    """Generate ``notebooks/<assignment>/`` from ``solutions/<assignment>/``; return the folder."""
    known = assignments(course_root)
    if assignment not in known:
        raise ValueError(f"unknown assignment {assignment!r}; expected one of {known}")
    if sources.canonicalise(course_root, assignment):
        print(f"{sources.text_source(course_root, assignment).relative_to(course_root)}: "
              "metadata written in Jupytext's order (the order a save in Jupyter gives)")
    sources.build_notebook(course_root, assignment)
    run_nbgrader(["generate_assignment", assignment, "--force", "--no-db"], course_root)
    return course_root / "notebooks" / assignment


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="assignment ids (default: all in solutions/)")
    args = parser.parse_args(argv)
    for assignment in args.assignments or assignments():
        folder = release(assignment)
        print(f"released {assignment} -> {folder.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
