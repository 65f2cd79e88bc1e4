"""The packages' shape: importing a submodule never replaces a name transformer_lib exports; no import cycle in
transformer_lib or coursetools; coursetools' stages import only the stages before them; the kernel's side of the
checker imports nothing of the grader's."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
import types
from pathlib import Path

import coursetools
import transformer_lib
from coursetools.authoring import student
from coursetools.common.layout import REPO_ROOT


def test_no_export_shares_its_name_with_a_submodule():
    exported = {name: value for name, value in vars(transformer_lib).items() if not name.startswith("_")}
    submodules = [info.name for info in pkgutil.iter_modules(transformer_lib.__path__)]
    clashes = [name for name in submodules
               if name in exported and not isinstance(exported[name], types.ModuleType)]
    assert not clashes, (f"transformer_lib exports {clashes} and has submodules of the same names: importing "
                         "the submodule replaces the export (python -m, a test) and the watch list of "
                         "coursetools.checks.tamper then reports it as tampering")
    for name in submodules:  # and importing each one leaves the exports as they were
        importlib.import_module(f"transformer_lib.{name}")
    changed = [name for name, value in exported.items() if getattr(transformer_lib, name) is not value]
    assert not changed, f"importing the submodules replaced {changed}"


def _imported_modules(path: Path, package: str, modules: set[str]) -> set[str]:
    """The modules of ``package`` that the file at ``path`` imports, read with ``ast`` (function-level imports too;
    not those under ``if TYPE_CHECKING:``, which never run: annotations may name a type of a later module)."""
    found = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only = {id(n) for node in ast.walk(tree)
                 if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
                 for statement in node.body for n in ast.walk(statement)}
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # from .tokens import Vocab: relative to the package
                base = f"{package}.{base}" if base else package
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        found |= {name for name in names if name in modules}
    return found


def _import_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` (module -> modules it imports) as a path that returns to its start, or []."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str]:
        if module in path:
            return path[path.index(module):] + [module]
        if module in done:
            return []
        for imported in sorted(graph[module]):
            cycle = visit(imported, path + [module])
            if cycle:
                return cycle
        done.add(module)
        return []

    return next((cycle for module in sorted(graph) if (cycle := visit(module, []))), [])


def test_import_cycle_is_found():
    assert _import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _import_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_package_has_no_import_cycle():
    """Each module imports only modules below it (the package root, which imports them all, from none of them):
    a module that needs a higher one, even inside a function, is a layer in the wrong place."""
    root = Path(transformer_lib.__file__).parent
    files = {f"transformer_lib.{p.stem}": p for p in root.glob("*.py") if p.stem != "__init__"}
    files["transformer_lib"] = root / "__init__.py"
    graph = {module: _imported_modules(path, "transformer_lib", set(files)) - {module}
             for module, path in files.items()}
    assert graph["transformer_lib"] and graph["transformer_lib.g2p"], "the import reader found no imports"
    cycle = _import_cycle(graph)
    assert not cycle, f"import cycle: {' -> '.join(cycle)}"


def _module_files(package: Path, name: str) -> dict[str, Path]:
    """Every module of the package at ``package`` (sub-packages too), by dotted name; a package by its ``__init__``."""
    files = {}
    for path in package.rglob("*.py"):
        parts = [name, *path.relative_to(package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def _coursetools_graph() -> dict[str, set[str]]:
    files = _module_files(Path(coursetools.__file__).parent, "coursetools")
    graph = {}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        graph[module] = _imported_modules(path, package, set(files)) - {module}
    return graph


# coursetools' stages, each importing only those before it: the order of the pipeline (coursetools/README.md)
STAGES = ("common", "checks", "checker", "authoring", "grading", "reports", "devtools", "cli")


def _stage(module: str) -> str:
    return module.split(".")[1] if module.count(".") else ""


def test_coursetools_has_no_import_cycle():
    graph = _coursetools_graph()
    assert graph["coursetools.checker.runner"] and graph["coursetools.cli"], "the import reader found no imports"
    cycle = _import_cycle(graph)
    assert not cycle, f"import cycle: {' -> '.join(cycle)}"


def test_each_stage_of_coursetools_imports_only_the_stages_before_it():
    graph = _coursetools_graph()
    assert {_stage(m) for m in graph} - {""} == set(STAGES), "a stage was added or removed: say where it goes in STAGES"
    upward = [f"{module} imports {imported}" for module, imported_modules in sorted(graph.items())
              for imported in sorted(imported_modules)
              if _stage(module) and _stage(imported)
              and STAGES.index(_stage(imported)) > STAGES.index(_stage(module))]
    assert not upward, "a stage imports a later one:\n" + "\n".join(upward)


# the modules of common/ the kernel's side imports (the scan the visible tests' May-use check shares with the grader)
KERNEL_COMMON = {"coursetools.common", "coursetools.common.allowlist", "coursetools.common.cells",
                 "coursetools.common.pynames", "coursetools.common.pyscan"}


def test_the_kernels_side_imports_nothing_of_the_graders():
    """``coursetools.checks`` is all the grading code a student's kernel runs: it must not import the grader's
    modules (their code and data would then be in the kernel's reach), nor the heavy packages the grader uses;
    of ``common/`` only the scan its May-use check shares with the grader (no nbformat, no nbgrader)."""
    graph = _coursetools_graph()
    kernel_side = {m for m in graph if m == "coursetools.checks" or m.startswith("coursetools.checks.")} | KERNEL_COMMON
    assert "coursetools.checks.bridge" in kernel_side
    outside = {f"{m} imports {i}" for m in kernel_side for i in graph[m]
               if i not in kernel_side and i != "coursetools"}
    assert not outside, f"the kernel's side imports the grader's: {sorted(outside)}"

    # what the kernel really loads when grading imports the bridge (function-level imports, re-exports and all)
    probe = ("import sys, json; import coursetools.checks.bridge; "
             "print(json.dumps(sorted(sys.modules)))")
    loaded = set(__import__("json").loads(subprocess.run([sys.executable, "-c", probe], capture_output=True,
                                                          text=True, check=True).stdout))
    graders = sorted(m for m in loaded if m.startswith("coursetools.") and m not in kernel_side)
    assert not graders, f"importing the bridge loads the grader's modules {graders}"
    heavy = {"nbgrader", "nbclient", "nbconvert", "jupyter_client", "jupyter_server", "sqlalchemy", "alembic",
             "bs4", "psutil", "jinja2", "nbformat"}
    assert not heavy & {m.split(".")[0] for m in loaded}, \
        f"importing the bridge loads {sorted(heavy & {m.split('.')[0] for m in loaded})}, which it does not need"


def test_the_student_edition_ships_every_module_the_notebooks_checks_import():
    """``from coursetools.checks import ...`` in a student's kernel: every module it imports is in the edition."""
    graph = _coursetools_graph()
    needed, todo = set(), ["coursetools.checks"]
    while todo:
        module = todo.pop()
        if module not in needed:
            needed.add(module)
            todo += graph[module] - {"coursetools"}
    shipped = {"coursetools." + m.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
               for m in student.COURSE_MODULES}
    assert needed - shipped == set(), "the student edition lacks modules the checks import (COURSE_MODULES)"


def test_the_import_reader_sees_imports_and_leaves_out_type_only_ones(tmp_path: Path):
    (tmp_path / "a.py").write_text("from typing import TYPE_CHECKING\nfrom .b import x\nif TYPE_CHECKING:\n"
                                   "    from .c import y\ndef f():\n    import pkg.d\n", encoding="utf-8")
    assert _imported_modules(tmp_path / "a.py", "pkg", {"pkg.b", "pkg.c", "pkg.d"}) == {"pkg.b", "pkg.d"}
    graph = _coursetools_graph()
    assert "coursetools.checks.tamper" in graph["coursetools.checks"]
    assert "coursetools.checks" in graph["coursetools.checker.rules"]


MAX_LINES = 400  # a module longer than this holds more than one idea: split it along its seams


def test_no_module_of_the_library_or_the_course_tools_is_over_400_lines():
    long = {str(path.relative_to(REPO_ROOT)): n for package in (transformer_lib, coursetools)
            for path in Path(package.__file__).parent.rglob("*.py")
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"
