"""The tamper guard of the exercise notebooks' tests, built on CPython's own objects.

nbgrader is not a sandbox: a student's cells run in the same kernel as the tests, so a student
could replace ``torch.allclose`` by ``lambda *a, **k: True`` and pass any test that calls it.
:mod:`coursetools.checks` imports this module, and every notebook's locked setup cell imports
that one, *before* any student code runs; what is watched is recorded then:

* :func:`verify_untampered` raises :class:`TamperingError` when anything watched changed since
  import: the public functions and classes of torch, ``torch.nn.functional``, ``torch.testing``,
  ``torch.autograd`` and ``torch.func`` (gradient checks rely on them), numpy and
  ``numpy.testing``; the methods of ``torch.Tensor`` and ``torch.nn.Module`` (replaced or
  shadowed); the builtins tests use; every public function and method of every module of
  :mod:`transformer_lib` (the package's files, each imported here, not only what ``import
  transformer_lib`` loads); and every function of the guarded modules. A Python function counts
  as replaced when its code, defaults or keyword defaults changed, not only its identity;
* :func:`guard` freezes a module of the tests (this one, and :mod:`coursetools.checks`):
  assigning or deleting its public names raises, and ``from coursetools.checks import
  assert_close`` returns the original even if the module's ``__dict__`` was edited, so hidden
  tests that import what they use at the top of their block get the real checks whatever the
  notebook namespace holds;
* :func:`forbid` makes the library's reference implementation raise while a student's
  function runs, so that a solution which only calls the reference earns nothing; :func:`refuse`
  does the same for a C builtin.

What remains possible (a determined student who rewrites this module's code objects, or IPython's
input transformers) is visible in the submitted source; ``coursetools.grading.autograde`` scans for it.
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import os
import pkgutil
import sys
import types
from typing import Any, Callable

import numpy
import numpy.testing
import torch
import torch.func
import torch.nn
import torch.nn.functional
import torch.testing
from torch.overrides import TorchFunctionMode

import transformer_lib
from coursetools.checks.managers import Nested, Replaced

__all__ = ["TamperingError", "verify_untampered", "forbid", "refuse", "guard"]


class TamperingError(AssertionError):
    """A function the tests rely on was replaced after the notebook started."""


# The builtins a test relies on. Not all of them: IPython rebinds some on every execution
# (``input``, ``display``, ``get_ipython``, ``exit``...), which is not tampering.
_WATCHED_BUILTINS = (
    "abs", "all", "any", "bool", "callable", "dict", "enumerate", "filter", "float", "getattr",
    "hasattr", "hash", "id", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max",
    "min", "next", "object", "range", "repr", "round", "set", "setattr", "sorted", "str", "sum",
    "super", "tuple", "type", "vars", "zip", "print", "slice", "format", "__import__",
    "__build_class__", "BaseException", "Exception", "AssertionError", "ValueError", "TypeError",
    "RuntimeError",
)
# The guarded modules decide with the builtins as they were at import, whatever the notebook does
# later: each puts these into its own globals, where name lookups find them before the builtins.
ORIGINAL_BUILTINS = {name: getattr(builtins, name) for name in _WATCHED_BUILTINS}
globals().update(ORIGINAL_BUILTINS)

_WATCHED_MODULES = (torch, torch.nn.functional, torch.testing, torch.autograd, torch.func, numpy, numpy.testing)
_WATCHED_CLASSES = (torch.Tensor, torch.nn.Module)
_MISSING = object()


def _fingerprint(value: Any) -> tuple | None:
    """What a swap of a Python function's insides would change: code and defaults."""
    function = getattr(value, "__func__", value)  # classmethod, staticmethod, bound method
    if type(function) is not types.FunctionType:
        return None
    return (function.__code__, function.__defaults__, dict(function.__kwdefaults__ or {}))


def _is_watched_value(value: Any) -> bool:
    return not isinstance(value, types.ModuleType) and (callable(value) or inspect.isdatadescriptor(value)
                                                       or isinstance(value, (classmethod, staticmethod)))


def _names_to_watch(owner: Any, private: bool) -> list[str]:
    """The routines and classes of a module (only the public ones unless ``private``); every
    callable entry of a class; every name but the dunders of a module of the tests (``private``:
    their functions, the modules they call through and their tables of operations, which the
    tests' own code never rebinds)."""
    if owner is builtins:
        return list(_WATCHED_BUILTINS)
    if private and isinstance(owner, types.ModuleType):
        return [name for name in vars(owner) if not (name.startswith("__") and name.endswith("__"))]
    names = [name for name, value in vars(owner).items() if _is_watched_value(value)]
    if isinstance(owner, types.ModuleType) and not private:
        names = [name for name in names if not name.startswith("_")]
    return names


def _library_modules() -> list[types.ModuleType]:
    """Every module of :mod:`transformer_lib`, imported: the package's files, found with
    ``pkgutil``, not only the submodules that ``import transformer_lib`` happens to load."""
    names = sorted(info.name for info in pkgutil.walk_packages(transformer_lib.__path__, "transformer_lib."))
    return [transformer_lib, *(importlib.import_module(name) for name in names)]


def _library_owners() -> list[Any]:
    """``transformer_lib``'s modules and the classes they define."""
    modules = _library_modules()
    classes = [value for module in modules for value in vars(module).values()
               if inspect.isclass(value) and value.__module__.startswith("transformer_lib")]
    return modules + classes


# Names Python itself adds to a class after it is defined: copyreg caches ``__slotnames__`` the first
# time an instance is copied or pickled (``copy.deepcopy(model)``, ``torch.save``).
# torch._dynamo marks nn.Module once it has patched it (see torch_original).
_PYTHON_CACHES = frozenset({"__slotnames__", "___needs_generation_tag_patch"})


class _Snapshot:
    """The watched attributes as they were when taken; :meth:`changed` lists the differences.

    Fast enough to run before every assertion (about a millisecond): identity checks on the
    owners' dictionaries, then the insides of the Python functions among them.
    """

    def __init__(self, owners: list[Any]) -> None:
        self.entries: list[tuple[dict, Any, str, Any]] = []
        self.functions: list[tuple[Any, Any, str, tuple]] = []
        self.class_keys: list[tuple[type, frozenset]] = []
        self.allowed_codes: dict[int, types.CodeType] = {}  # functions forbid() swapped right now
        self.watch(owners)

    def watch(self, owners: list[Any], *, private: bool = False) -> None:
        """Add ``owners`` (modules, classes) as they are now; ``private``: their private names too."""
        entries = [(vars(owner), owner, name, vars(owner)[name]) for owner in owners
                   for name in _names_to_watch(owner, private)]
        self.entries += entries
        self.functions += [(value, owner, name, _fingerprint(value)) for _, owner, name, value in entries
                           if _fingerprint(value) is not None]
        self.class_keys += [(cls, frozenset(vars(cls))) for cls in owners if inspect.isclass(cls)]

    def changed(self) -> list[str]:
        changed = [_describe(owner, name) for namespace, owner, name, value in self.entries
                   if namespace.get(name, _MISSING) is not value
                   and not _torch_wrapper_of(namespace.get(name, _MISSING), value)]
        changed += [_describe(owner, name) for value, owner, name, fingerprint in self.functions
                    if not self._same_insides(value, fingerprint)]
        for cls, keys in self.class_keys:
            if len(vars(cls)) != len(keys):
                changed += [_describe(cls, name) for name in set(vars(cls)) - keys - _PYTHON_CACHES]
        return sorted(set(changed))

    def _same_insides(self, value: Any, fingerprint: tuple) -> bool:
        function = getattr(value, "__func__", value)
        code = function.__code__
        if code is not fingerprint[0] and code is not self.allowed_codes.get(id(function)):
            return False
        return function.__defaults__ == fingerprint[1] and dict(function.__kwdefaults__ or {}) == fingerprint[2]


_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep


def torch_original(value: Any) -> Any:
    """What ``value`` wraps when torch itself wrapped it after import, else ``value``.

    ``torch._dynamo`` wraps ``torch.manual_seed`` when it loads (``__wrapped__``), and replaces
    ``nn.Module.__init__`` and ``__setstate__`` by functions that call the originals (its "generation
    tagging", ``install_generation_tagging_init``; the originals are in their closures). Either is
    torch's own when the wrapper's code lives in torch's files."""
    function = getattr(value, "__func__", value)
    code = getattr(function, "__code__", None)
    if code is None or not code.co_filename.startswith(_TORCH_DIR):
        return value
    if getattr(value, "__wrapped__", None) is not None:
        return value.__wrapped__
    if code.co_qualname.startswith("install_generation_tagging_init.<locals>."):
        originals = [cell.cell_contents for cell in function.__closure__ or ()
                     if isinstance(cell.cell_contents, types.FunctionType)]
        if len(originals) == 1:
            return originals[0]
    return value


def _torch_wrapper_of(current: Any, original: Any) -> bool:
    """True when torch itself wrapped ``original`` after import (:func:`torch_original`)."""
    return current is not original and torch_original(current) is original


def _describe(owner: Any, name: str) -> str:
    owner_name = getattr(owner, "__qualname__", None) or getattr(owner, "__name__", type(owner).__name__)
    return f"{owner_name}.{name}"


_modules = sys.modules  # taken before any student code ran
_GUARDED: dict[str, types.ModuleType] = {}  # the frozen modules of the tests, by name
_PROTECTED: dict[int, dict[str, Any]] = {}  # id(frozen module): its public names and what they named


def verify_untampered() -> None:
    """Raise :class:`TamperingError` if a watched function was replaced or its insides swapped."""
    changed = _SNAPSHOT.changed()
    changed += [f"the module {name} itself" for name, module in _GUARDED.items()
                if _modules.get(name) is not module or type(module) is not _GuardedModule]
    if changed:
        raise TamperingError(
            "functions that the tests rely on were replaced by notebook code: "
            + ", ".join(changed)
            + ". Restart the kernel and do not reassign library, torch, numpy or builtin functions."
        )


# --- solutions must not lean on the reference -----------------------------------------------

def _raiser_code(message: str, template: types.CodeType) -> types.CodeType:
    """A code object that raises ``RuntimeError(message)``, with the free variables ``template`` expects."""
    freevars = template.co_freevars
    lines = ["def outer():"]
    lines += [f"    {var} = None" for var in freevars]
    lines += ["    def inner(*args, **kwargs):"]
    lines += [f"        {var}" for var in freevars]
    lines += [f"        raise RuntimeError({message!r})", "    return inner"]
    namespace: dict[str, Any] = {}
    exec("\n".join(lines), namespace)  # noqa: S102 - builds a code object, runs nothing else
    inner = namespace["outer"]()
    return inner.__code__.replace(co_freevars=freevars) if freevars else inner.__code__


class _Swapped:
    """While entered, each Python function of ``targets`` (pairs of a function and its message) raises
    ``RuntimeError(message)``: its code is swapped, so a reference taken before is caught too."""

    def __init__(self, targets: list[tuple[types.FunctionType, str]]) -> None:
        self.targets, self.swapped = targets, []

    def __enter__(self) -> None:
        try:
            for target, message in self.targets:
                original = target.__code__
                target.__code__ = _raiser_code(message, original)
                _SNAPSHOT.allowed_codes[id(target)] = target.__code__
                self.swapped.append((target, original))
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool:
        while self.swapped:
            target, original = self.swapped.pop()
            target.__code__ = original
            _SNAPSHOT.allowed_codes.pop(id(target), None)
        return False


def _forbid_targets(reference: Callable[..., Any]) -> tuple[list[types.FunctionType], str]:
    if inspect.isclass(reference):
        targets = [vars(reference)[n] for n in ("forward", "__call__")
                   if inspect.isfunction(vars(reference).get(n))]
    elif inspect.isfunction(reference):
        targets = [reference]  # and the functions it decorates (torch.no_grad() and functools.wraps keep them)
        while inspect.isfunction(getattr(targets[-1], "__wrapped__", None)):
            targets.append(targets[-1].__wrapped__)
    else:
        raise TypeError(f"forbid() takes Python functions or classes, got {reference!r}")
    label = f"{reference.__module__}.{reference.__qualname__}"
    if not targets:
        raise TypeError(f"forbid(): {label} has no Python forward/__call__ to swap")
    return targets, label


def forbid(*references: Callable[..., Any]) -> Nested:
    """A context manager: while its block runs, calling any of ``references`` raises ``RuntimeError``.

    ``references`` are Python functions (their code is swapped, so references the student took
    earlier are caught too; a decorated function's inner function too) or classes (their
    ``forward``/``__call__`` is swapped). Builtin torch functions have no code to swap: pass
    the Python modules that wrap them, or use :func:`refuse`.
    """
    pairs = []
    for reference in references:
        targets, label = _forbid_targets(reference)
        message = (f"this exercise asks you to write it yourself: your solution called {label}, the library's "
                   "reference implementation")
        pairs += [(target, message) for target in targets]
    return Nested([_Swapped(pairs)])


class _Refusing(TorchFunctionMode):
    """Raises for the refused torch builtins, whoever holds them: torch hands every call of its
    functions to the modes in force (``__torch_function__``), with the function itself, so a
    reference taken before :func:`refuse` (``cell = torch.rnn_tanh_cell``), ``torch._VF``'s and
    ``nn.RNNCell``'s inner call are refused too."""

    def __init__(self, refused: list[Any], message: str) -> None:
        super().__init__()
        self.refused, self.message = refused, message

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        if any(func is refused for refused in self.refused):
            raise RuntimeError(self.message)
        return func(*args, **(kwargs or {}))


def refuse(owner: Any, names: str | tuple[str, ...], message: str) -> Nested:
    """A context manager: while its block runs, ``owner.<name>`` raises ``RuntimeError(message)`` for
    each of ``names``, however the notebook reaches it (a reference taken earlier too).

    A Python function (``torch.autograd.grad``, ``torch.Tensor.backward``) has its code swapped, as
    :func:`forbid` does; a C builtin such as ``torch.rnn_tanh_cell`` or
    ``F.scaled_dot_product_attention``, which has no code to swap, is refused by identity in every
    call torch makes through its function modes (:class:`_Refusing`); anything else (a class such as
    ``torch.enable_grad``) has its attribute on ``owner`` replaced. All are restored afterwards.
    """
    names = (names,) if isinstance(names, str) else tuple(names)
    saved = [(name, getattr(owner, name)) for name in names]
    functions = [value for _, value in saved if inspect.isfunction(value)]
    torch_builtins = [value for _, value in saved if _is_torch_builtin(value)]
    replaced = [name for name, value in saved if value not in functions and value not in torch_builtins]

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(message)

    managers = [_Swapped([(function, message) for function in functions])]
    if torch_builtins:
        managers.append(_Refusing(torch_builtins, message))
    return Nested([*managers, Replaced(owner, replaced, refused)])


def _is_torch_builtin(value: Any) -> bool:
    """A C function of torch (``torch.rnn_tanh_cell``, ``F.scaled_dot_product_attention``): torch
    hands its calls to the function modes in force."""
    module = getattr(value, "__module__", None) or ""
    return isinstance(value, types.BuiltinFunctionType) and module.startswith("torch")


# --- the tests' own modules cannot be edited from the notebook ------------------------------

class _GuardedModule(types.ModuleType):
    """A guarded module's type: its public names always give the originals and cannot be rebound."""

    def __getattribute__(self, name: str) -> Any:
        protected = _PROTECTED.get(id(self), {})
        if name in protected:
            return protected[name]
        return super().__getattribute__(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _PROTECTED.get(id(self), {}) or name.startswith("_"):
            raise TamperingError(f"{self.__name__}.{name} belongs to the tests and cannot be replaced")
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        raise TamperingError(f"{self.__name__}.{name} belongs to the tests and cannot be deleted")


def guard(module_name: str, public: tuple[str, ...]) -> None:
    """Freeze the module ``module_name`` of the tests; a module calls it last in its own import.

    From then on its ``public`` names give what they name now; assigning them or a private name
    raises, and so does deleting any name; every function and class in it, private ones too, is
    watched by :func:`verify_untampered`, which also fails if ``sys.modules`` stops holding this
    module.
    """
    module = _modules[module_name]
    if module_name in _GUARDED:
        raise TamperingError(f"{module_name} is guarded already: its snapshot cannot be taken again")
    _PROTECTED[id(module)] = {name: vars(module)[name] for name in public}
    _SNAPSHOT.watch([module], private=True)
    _SNAPSHOT.watch([value for value in vars(module).values()  # its classes' methods, its context managers'
                     if inspect.isclass(value) and value.__module__ == module_name])
    _GUARDED[module_name] = module
    module.__class__ = _GuardedModule


_SNAPSHOT = _Snapshot([builtins, *_WATCHED_MODULES, *_WATCHED_CLASSES, *_library_owners(), _GuardedModule,
                      _Refusing, TorchFunctionMode])
guard(__name__, tuple(__all__))
guard(Nested.__module__, ())  # coursetools.checks.managers
