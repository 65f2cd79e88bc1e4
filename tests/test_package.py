"""The package's namespace: importing a submodule never replaces a name the package exports; no import cycle."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import types
from pathlib import Path

import transformer_lib


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
    """The modules of ``package`` that the file at ``path`` imports, read with ``ast`` (function-level imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
