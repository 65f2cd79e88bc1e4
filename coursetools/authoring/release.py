"""Release: regenerate the student notebooks in ``notebooks/`` from ``solutions/`` with nbgrader.

``make release [A=<id>]`` runs ``python -m coursetools.authoring.release [assignment ...]``. Every assignment
is a folder ``solutions/<id>/`` holding its text source ``<id>.md``; the notebook nbgrader reads is
generated from it first (``coursetools/authoring/sources.py``). The release is nbgrader's own
``generate_assignment`` (solutions replaced by stubs, hidden tests removed, cells locked by
checksum), run without the gradebook so that releasing never touches grades. Then the model
solution is autograded in a throwaway copy of the course (:func:`solution_shortfalls`): a
release whose solution does not earn every point fails. An assignment whose inputs have not
changed since its last release (:func:`release_inputs_sha`, recorded under ``build/release/``)
is skipped unless ``--force``.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from coursetools.authoring import sources
from coursetools.common.layout import REPO_ROOT, check_assignment, run_nbgrader

STAMPS = Path("build") / "release"  # git-ignored: the inputs of each assignment's last release
# What a release is made of besides the assignment's source (paths relative to the course root).
SHARED_INPUTS = ("nbgrader_config.py", "coursetools/authoring/how_grading_works.md",
                 "coursetools/authoring/grading_rules.py")


def release(assignment: str, course_root: Path = REPO_ROOT) -> Path:
    """Generate ``notebooks/<assignment>/`` from ``solutions/<assignment>/``; return the folder."""
    check_assignment(assignment, course_root)
    if sources.canonicalise(course_root, assignment):
        print(f"{sources.text_source(course_root, assignment).relative_to(course_root)}: "
              "metadata written in Jupytext's order (the order a save in Jupyter gives)")
    sources.build_notebook(course_root, assignment)
    run_nbgrader(["generate_assignment", assignment, "--force", "--no-db"], course_root)
    return course_root / "notebooks" / assignment


def solution_shortfalls(assignment: str, course_root: Path = REPO_ROOT) -> list[str]:
    """The graded test cells on which the model solution does not earn every point, as
    ``test_x: 0 of 3 points``; empty when it earns them all.

    The instructor notebook is autograded as a submission, in a throwaway copy of the course (its
    configuration and this one assignment), so that nothing of the real course is touched.
    """
    from nbgrader.api import Gradebook

    with tempfile.TemporaryDirectory(prefix=f"check-{assignment}-") as folder:
        copy = Path(folder)
        shutil.copy2(course_root / "nbgrader_config.py", copy / "nbgrader_config.py")
        text = sources.text_source(copy, assignment)
        text.parent.mkdir(parents=True)
        shutil.copy2(sources.text_source(course_root, assignment), text)
        source = sources.build_notebook(copy, assignment)
        (copy / "grading").mkdir()  # where the copy's nbgrader_config.py puts the gradebook
        run_nbgrader(["generate_assignment", assignment, "--force",
                      "--CourseDirectory.release_directory=grading/release"], copy)
        submitted = copy / "grading" / "submitted" / "model_solution" / assignment
        submitted.mkdir(parents=True)
        shutil.copy2(source, submitted / source.name)
        run_nbgrader(["autograde", assignment, "--force"], copy)
        with Gradebook(f"sqlite:///{copy / 'grading' / 'gradebook.db'}") as gradebook:
            notebook = gradebook.find_submission_notebook(assignment, assignment, "model_solution")
            return [f"{grade.name}: {grade.auto_score or 0:g} of {grade.max_score:g} points"
                    for grade in notebook.grades
                    if grade.cell.cell_type == "code" and (grade.auto_score or 0) < grade.max_score]


def release_inputs_sha(assignment: str, course_root: Path = REPO_ROOT) -> str:
    """A hash of everything a release of ``assignment`` is made from (its source, the shared
    inputs, nbgrader's version) and of the released notebook itself (so a hand edit is redone)."""
    import nbgrader

    digest = hashlib.sha256(nbgrader.__version__.encode())
    released = course_root / "notebooks" / assignment / f"{assignment}.ipynb"
    for path in (sources.text_source(course_root, assignment), *(course_root / p for p in SHARED_INPUTS), released):
        digest.update(path.read_bytes() if path.is_file() else b"(none)")
    return digest.hexdigest()


def earlier_releases(release_notebook: Path) -> list[nbformat.NotebookNode]:
    """Every version of a released notebook that students may hold: the file as it is now and as
    each commit of its git history had it (only the file when it is not in a git checkout)."""
    folder = release_notebook.parent
    top = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True) if folder.is_dir() else None
    texts = [release_notebook.read_text(encoding="utf-8")] if release_notebook.is_file() else []
    if top is not None and top.returncode == 0:
        # Both commands run at the top of the checkout: `git log -- <path>` reads its path relative to
        # the folder it runs in (relative to -C), `git show <commit>:<path>` relative to the top.
        root = Path(top.stdout.strip()).resolve()
        relative = release_notebook.resolve().relative_to(root).as_posix()
        commits = subprocess.run(["git", "-C", str(root), "log", "--format=%H", "--", relative],
                                 capture_output=True, text=True).stdout.split()
        for commit in commits:
            shown = subprocess.run(["git", "-C", str(root), "show", f"{commit}:{relative}"],
                                   capture_output=True, text=True)
            if shown.returncode == 0:
                texts.append(shown.stdout)
    return [nbformat.reads(text, as_version=4) for text in dict.fromkeys(texts)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="assignment ids (default: all in solutions/)")
    parser.add_argument("--force", action="store_true", help="release even when nothing changed")
    args = parser.parse_args(argv)
    try:
        chosen = [check_assignment(a) for a in args.assignments] or sources.assignments(REPO_ROOT)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    failed = []
    for assignment in chosen:
        stamp = REPO_ROOT / STAMPS / f"{assignment}.sha256"
        if not args.force and stamp.is_file() and stamp.read_text() == release_inputs_sha(assignment):
            print(f"{assignment}: unchanged since its last release (--force to release it again)")
            continue
        folder = release(assignment)
        shortfalls = solution_shortfalls(assignment)
        if shortfalls:
            failed.append(assignment)
            print(f"{assignment}: RELEASE FAILED: the model solution does not earn every point "
                  f"({'; '.join(shortfalls)}): fix the solution or the test", file=sys.stderr)
            continue
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(release_inputs_sha(assignment))
        print(f"released {assignment} -> {folder.relative_to(REPO_ROOT)} (the model solution earns every point)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
