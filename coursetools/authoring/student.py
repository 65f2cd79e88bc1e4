"""Build the student edition: what a student needs to do the exercises, and nothing an instructor keeps.

``make student`` runs ``python -m coursetools.authoring.student`` and writes ``dist/student/`` and
``dist/student.zip`` (one top folder, ``transformer-course-student/``). The edition holds

* ``notebooks/``: the released exercise notebooks (nbgrader's stubs, no hidden tests);
* ``transformer_lib/``: the library the notebooks import, and ``coursetools/checks/__init__.py`` with the
  modules it imports (:data:`COURSE_MODULES`: the tamper guard, the rules, the May-use check and the scan it
  shares with the grader): the checks the visible tests call (the only course tools a student needs);
* ``pyproject.toml`` and ``constraints.txt``: the library's dependencies, pinned exactly as here;
* ``README.md``: the book's address (``--book-url`` or ``html.baseurl`` of ``_config.yml``), the
  two commands (set up the environment; open Jupyter) and how to submit (keep the file name).

Nothing comes from ``solutions/``, ``tests/`` or the grading tools: the test suite searches the
built edition for every secret line of every source notebook.
"""

from __future__ import annotations

import argparse
import shutil
import zipfile
from pathlib import Path

import tomllib

from coursetools.common.layout import REPO_ROOT

TOP = "transformer-course-student"
# what the notebooks import from coursetools/: the checks, and the scan their May-use check shares with the grader
COURSE_MODULES = ("checks/__init__.py", "checks/tamper.py", "checks/refusals.py", "checks/managers.py",
                  "checks/names.py", "checks/may_use.py", "common/__init__.py", "common/allowlist.py",
                  "common/cells.py", "common/pynames.py", "common/pyscan.py")
CHECKS_INIT = '"""What the exercise notebooks import from the course: the checks of their visible tests."""\n'

README = """# The Transformer, built: exercises

These are the exercise notebooks of the course *The Transformer, built*, one per chapter, with
the small library they use. Read each chapter in the online book first{book}; the exercise page
there links the notebook you find here.

## Set up (once)

You need Python 3.10 or newer. In this folder:

```bash
python3 -m venv .venv && .venv/bin/python -m pip install -c constraints.txt -e ".[notebooks]"
```

(On Windows: `py -m venv .venv` then `.venv\\Scripts\\python -m pip install -c constraints.txt -e ".[notebooks]"`.)
Everything is pinned in `constraints.txt`; PyTorch is the CPU build unless you already have another.

## Work

```bash
.venv/bin/jupyter lab notebooks/
```

Open `notebooks/<chapter>/<chapter>.ipynb`. In each answer cell replace `raise NotImplementedError()`
under `# YOUR CODE HERE` with your code, then run the test cell below it: the visible tests
check a small worked example and say what is wrong. Hidden tests grade your submission more
thoroughly. Do not edit the locked cells or reassign library functions, and write your own code
rather than calling the library's version of what an exercise asks for (that earns no points).
Before you submit: *Kernel → Restart & Run All*, and hand in the `.ipynb` file as your course
says. **Keep the file name** (`<chapter>.ipynb`, e.g. `ch01_tokens.ipynb`): the grader finds your
work by it. Do not hand in a renamed copy (`Untitled.ipynb`, `ch01_tokens-Copy1.ipynb`) or a
notebook you made yourself: locked cells and their hidden tests are matched to the original.

`notebooks/` holds the exercises, `transformer_lib/` the course library (its code is part of
what you learn from), `coursetools/checks/__init__.py` the checks the tests use (`coursetools/checks/tamper.py` is their
guard against replaced functions).
"""


def book_url(course_root: Path) -> str:
    """The published book's address: ``html.baseurl`` of the book's ``_config.yml`` (empty when unset)."""
    import yaml

    config_file = course_root / "_config.yml"
    config = yaml.safe_load(config_file.read_text(encoding="utf-8")) if config_file.is_file() else {}
    return str(((config or {}).get("html") or {}).get("baseurl") or "")


def readme(url: str) -> str:
    """The edition's README, naming the book's address when there is one."""
    return README.replace("{book}", f" (<{url}>)" if url else "")


def _pyproject(course_root: Path) -> str:
    """The edition's project file: this course's library and its dependencies, and Jupyter."""
    project = tomllib.loads((course_root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dependencies = ",\n".join(f'    "{d}"' for d in project["dependencies"])
    return f"""[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "transformer-course-student"
version = "{project['version']}"
description = "Exercises of the course The Transformer, built, and its library."
requires-python = "{project['requires-python']}"
license = "{project['license']}"
dependencies = [
{dependencies},
]

[project.optional-dependencies]
notebooks = ["jupyterlab"]

[tool.setuptools.packages.find]
include = ["transformer_lib*", "coursetools*"]
"""


def _copy_tree(source: Path, target: Path, patterns: tuple[str, ...]) -> None:
    for path in sorted(p for pattern in patterns for p in source.rglob(pattern)):
        if "__pycache__" in path.parts or ".ipynb_checkpoints" in path.parts:
            continue
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)


def build(course_root: Path = REPO_ROOT, dist: Path | None = None, url: str | None = None) -> tuple[Path, Path]:
    """Write ``dist/student/`` and ``dist/student.zip`` (replacing earlier ones); return both.

    ``url``: the book's address for the README (default: :func:`book_url`)."""
    dist = dist or course_root / "dist"
    edition = dist / "student"
    if edition.exists():
        shutil.rmtree(edition)
    edition.mkdir(parents=True)
    _copy_tree(course_root / "notebooks", edition / "notebooks", ("*.ipynb",))
    _copy_tree(course_root / "transformer_lib", edition / "transformer_lib", ("*.py",))
    for module in COURSE_MODULES:
        (edition / "coursetools" / module).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(course_root / "coursetools" / module, edition / "coursetools" / module)
    (edition / "coursetools" / "__init__.py").write_text(CHECKS_INIT, encoding="utf-8")
    shutil.copy2(course_root / "constraints.txt", edition / "constraints.txt")
    shutil.copy2(course_root / "LICENSE", edition / "LICENSE")
    (edition / "pyproject.toml").write_text(_pyproject(course_root), encoding="utf-8")
    (edition / "README.md").write_text(readme(book_url(course_root) if url is None else url), encoding="utf-8")

    archive = dist / "student.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as handle:
        for path in sorted(edition.rglob("*")):
            if path.is_file():
                handle.write(path, Path(TOP) / path.relative_to(edition))
    return edition, archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=REPO_ROOT / "dist", help="output folder (default: dist/)")
    parser.add_argument("--book-url", help="the published book's address, named in the README "
                                           "(default: html.baseurl of _config.yml)")
    args = parser.parse_args(argv)
    edition, archive = build(dist=args.dist, url=args.book_url)
    files = sum(1 for p in edition.rglob("*") if p.is_file())
    print(f"wrote {edition} ({files} files) and {archive} ({archive.stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
