"""The package's namespace: importing a submodule never replaces a name the package exports."""

from __future__ import annotations

import importlib
import pkgutil
import types

import transformer_lib


def test_no_export_shares_its_name_with_a_submodule():
    exported = {name: value for name, value in vars(transformer_lib).items() if not name.startswith("_")}
    submodules = [info.name for info in pkgutil.iter_modules(transformer_lib.__path__)]
    clashes = [name for name in submodules
               if name in exported and not isinstance(exported[name], types.ModuleType)]
    assert not clashes, (f"transformer_lib exports {clashes} and has submodules of the same names: importing "
                         "the submodule replaces the export (python -m, a test) and the watch list of "
                         "coursetools.checks then reports it as tampering")
    for name in submodules:  # and importing each one leaves the exports as they were
        importlib.import_module(f"transformer_lib.{name}")
    changed = [name for name, value in exported.items() if getattr(transformer_lib, name) is not value]
    assert not changed, f"importing the submodules replaced {changed}"
