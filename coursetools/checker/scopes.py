"""The names a cell binds and the names it reads, as the checker decides where each name lives."""

from __future__ import annotations

import ast
import symtable

from IPython.core.inputtransformer2 import TransformerManager


def parse_cell(source: str) -> ast.Module | None:
    try:
        return ast.parse(TransformerManager().transform_cell(source))
    except SyntaxError:
        return None


def is_contextmanager(decorator: ast.expr) -> bool:
    return ast.unparse(decorator).split(".")[-1] in ("contextmanager", "asynccontextmanager")


def scope_names(source: str) -> tuple[set[str], set[str]]:
    """(the names ``source`` binds at its top level, the global names it reads without binding them),
    functions' bodies included."""
    table = symtable.symtable(source, "<hidden tests>", "exec")
    bound = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()
             or s.is_namespace()}
    used: set[str] = set()

    def walk(scope: symtable.SymbolTable, top: bool) -> None:
        for symbol in scope.get_symbols():
            if symbol.is_referenced() and (top or symbol.is_global()):
                used.add(symbol.get_name())
            if not top and symbol.is_declared_global() and symbol.is_assigned():
                bound.add(symbol.get_name())
        for child in scope.get_children():
            walk(child, False)

    walk(table, True)
    return bound, used - bound
