"""The student edition (``make student``): all a student needs, nothing an instructor keeps.

The zip is built and unpacked; every secret line of every source notebook (solution bodies,
hidden tests, instructor notes, model answers; lines that the library or the visible cells also
hold are public) is searched for among the lines of every file of it; and in a
fresh virtual environment made from the edition alone, by the command its README gives, every
released notebook runs up to its first exercise, and its visible tests fail only with the
stubs' ``NotImplementedError``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from coursetools.authoring import student
from coursetools.authoring.sources import assignments
from coursetools.common.hidden import MARKERS
from coursetools.common.layout import REPO_ROOT

from course_helpers import notebook_text, public_lines, secret_lines, source_notebook

pytestmark = pytest.mark.slow
ASSIGNMENTS = assignments(REPO_ROOT)

# Run inside the edition's environment: execute each notebook, report every cell's errors.
RUNNER = r"""
import json, sys
from pathlib import Path
import nbformat
from nbclient import NotebookClient

report = {}
for path in sorted(Path("notebooks").glob("*/*.ipynb")):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    report[path.stem] = [
        {"index": i, "grade_id": c.metadata.get("nbgrader", {}).get("grade_id"),
         "test": bool(c.metadata.get("nbgrader", {}).get("grade")),
         "answer": bool(c.metadata.get("nbgrader", {}).get("solution")),
         "errors": [o.ename for o in c.get("outputs", []) if o.output_type == "error"]}
        for i, c in enumerate(nb.cells) if c.cell_type == "code"]
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def edition(tmp_path_factory) -> Path:
    """The edition as a student gets it: the zip, unpacked."""
    dist = tmp_path_factory.mktemp("dist")
    _, archive = student.build(dist=dist)
    unpacked = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(archive) as handle:
        handle.extractall(unpacked)
    return unpacked / student.TOP


def test_edition_has_no_secret_line(edition: Path):
    public = public_lines()
    secrets = set().union(*(secret_lines(source_notebook(a), public) for a in ASSIGNMENTS))
    assert len(secrets) > 100, "the search must have secrets to look for"
    leaked = {}
    for path in edition.rglob("*"):
        if path.is_file():
            text = notebook_text(path) if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")
            found = sorted(secrets & {line.strip() for line in text.splitlines()})
            found += [marker for marker in MARKERS if marker in text]
            if found:
                leaked[str(path.relative_to(edition))] = found[:5]
    assert not leaked, f"the student edition holds instructor-only lines: {leaked}"


def test_edition_holds_what_a_student_needs_and_no_instructor_file(edition: Path):
    files = {str(p.relative_to(edition)) for p in edition.rglob("*") if p.is_file()}
    assert {f"notebooks/{a}/{a}.ipynb" for a in ASSIGNMENTS} <= files
    assert {"README.md", "pyproject.toml", "constraints.txt", "LICENSE", "transformer_lib/__init__.py"} <= files
    assert {f for f in files if f.startswith("coursetools/")} == {
        "coursetools/__init__.py", "coursetools/checks/__init__.py", "coursetools/checks/tamper.py",
        "coursetools/checks/refusals.py", "coursetools/checks/managers.py", "coursetools/checks/names.py",
        "coursetools/checks/may_use.py", "coursetools/common/__init__.py", "coursetools/common/allowlist.py",
        "coursetools/common/cells.py", "coursetools/common/pynames.py", "coursetools/common/pyscan.py"}
    instructor = [f for f in files if f.split("/")[0] in {"solutions", "tests", "grading", "book", "benchmarks"}
                  or f.endswith(".md") and f != "README.md"]
    assert not instructor, f"instructor files in the edition: {instructor}"


@pytest.fixture(scope="module")
def run_in_fresh_environment(edition: Path, tmp_path_factory) -> dict:
    """Make the environment as the edition's README says, then execute every notebook in it."""
    venv = tmp_path_factory.mktemp("venv") / ".venv"
    bin_ = venv / "bin"
    env = {"PATH": f"{bin_}{os.pathsep}/usr/local/bin:/usr/bin:/bin", "HOME": str(venv.parent),
           "MPLBACKEND": "Agg", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    install = subprocess.run([str(bin_ / "python"), "-m", "pip", "install", "-q", "-c", "constraints.txt",
                              "-e", ".[notebooks]"], cwd=edition, env=env, capture_output=True, text=True)
    assert install.returncode == 0, f"the README's install command failed:\n{install.stderr[-3000:]}"
    run = subprocess.run([str(bin_ / "python"), "-c", RUNNER], cwd=edition, env=env, capture_output=True,
                         text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.deep  # a fresh venv and twelve notebooks: over 3 minutes on one core
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_notebook_runs_to_its_first_exercise_and_fails_only_on_stubs(run_in_fresh_environment, assignment):
    cells = run_in_fresh_environment[assignment]
    first_answer = next(c["index"] for c in cells if c["answer"])
    early = [c for c in cells if c["index"] < first_answer and c["errors"]]
    assert not early, f"cells before the first exercise raised: {early}"
    other = [c for c in cells if set(c["errors"]) - {"NotImplementedError"}]
    assert not other, f"cells raised something other than the stubs' NotImplementedError: {other}"
    passing_tests = [c["grade_id"] for c in cells if c["test"] and not c["answer"] and not c["errors"]]
    assert not passing_tests, f"visible tests that pass on the unanswered stubs: {passing_tests}"
