"""Checks for the exercise notebooks' tests, written to survive hostile submissions.

nbgrader is not a sandbox: a student's cells run in the same kernel as the tests, so a
student could replace ``torch.allclose`` by ``lambda *a, **k: True`` and pass any test that
calls it. This module is imported by every notebook's locked setup cell, that is *before* any
student code runs, and keeps its own references to everything a test relies on:

* :func:`assert_close`, :func:`assert_equal` and :func:`assert_shape` decide with functions
  captured at import (the builtins they use are copied into this module too), explain what is
  wrong, and call :func:`verify_untampered` first;
* :func:`verify_untampered` raises :class:`TamperingError` when anything watched changed since
  import: the public functions and classes of torch, ``torch.nn.functional``, ``torch.testing``,
  ``torch.autograd`` and ``torch.func`` (gradient checks rely on them), numpy and
  ``numpy.testing``; the methods of ``torch.Tensor`` and ``torch.nn.Module`` (replaced or shadowed); the builtins tests use; every public function and method of
  :mod:`transformer_lib`; and this module's own functions. A Python function counts as replaced
  when its code, defaults or keyword defaults changed, not only its identity;
* this module is frozen: assigning or deleting its public names raises, and ``from
  coursetools.checks import assert_close`` returns the original even if the module's
  ``__dict__`` was edited, so hidden tests that import what they use at the top of their block
  get the real checks whatever the notebook namespace holds;
* :func:`forbid` makes the library's reference implementation raise while a student's
  function runs, so that a solution which only calls the reference earns nothing.

What remains possible (a determined student who rewrites this module's code objects, or IPython's
input transformers) is visible in the submitted source; ``coursetools.grading`` scans for it.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import os
import sys
import types
from typing import Any, Callable, Iterator

import numpy
import numpy.testing
import torch
import torch.nn
import torch.nn.functional
import torch.func
import torch.testing

import transformer_lib  # noqa: F401 - loads its submodules into sys.modules, where the watch list is found


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
# This module decides with the builtins as they were at import, whatever the notebook does later.
globals().update({name: getattr(builtins, name) for name in _WATCHED_BUILTINS})

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


def _names_to_watch(owner: Any) -> list[str]:
    """The public routines and classes of a module; every callable entry of a class."""
    if owner is builtins:
        return list(_WATCHED_BUILTINS)
    names = [name for name, value in vars(owner).items() if _is_watched_value(value)]
    if isinstance(owner, types.ModuleType) and owner.__name__ != __name__:  # all of this module's
        names = [name for name in names if not name.startswith("_")]
    return names


def _library_owners() -> list[Any]:
    """``transformer_lib``'s modules and the classes they define."""
    modules = [m for name, m in sorted(sys.modules.items()) if name.split(".")[0] == "transformer_lib"]
    classes = [value for module in modules for value in vars(module).values()
               if inspect.isclass(value) and value.__module__.startswith("transformer_lib")]
    return modules + classes


# Names Python itself adds to a class after it is defined: copyreg caches ``__slotnames__`` the first
# time an instance is copied or pickled (``copy.deepcopy(model)``, ``torch.save``).
_PYTHON_CACHES = frozenset({"__slotnames__"})


class _Snapshot:
    """The watched attributes as they were when taken; :meth:`changed` lists the differences.

    Fast enough to run before every assertion (about a millisecond): identity checks on the
    owners' dictionaries, then the insides of the Python functions among them.
    """

    def __init__(self, owners: list[Any]) -> None:
        self.entries = [(vars(owner), owner, name, vars(owner)[name]) for owner in owners
                        for name in _names_to_watch(owner)]
        self.functions = [(value, owner, name, _fingerprint(value)) for _, owner, name, value in self.entries
                          if _fingerprint(value) is not None]
        self.class_keys = [(cls, frozenset(vars(cls))) for cls in owners if inspect.isclass(cls)]
        self.allowed_codes: dict[int, types.CodeType] = {}  # functions forbid() swapped right now

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


def _torch_wrapper_of(current: Any, original: Any) -> bool:
    """True when torch itself wrapped ``original`` after import (``torch._dynamo`` wraps
    ``torch.manual_seed`` when it loads): the wrapper's code lives in torch's own files."""
    code = getattr(getattr(current, "__func__", current), "__code__", None)
    return (getattr(current, "__wrapped__", None) is original and code is not None
            and code.co_filename.startswith(_TORCH_DIR))


def _describe(owner: Any, name: str) -> str:
    owner_name = getattr(owner, "__qualname__", None) or getattr(owner, "__name__", type(owner).__name__)
    return f"{owner_name}.{name}"


# Private references, taken before any student code ran.
_torch_allclose = torch.allclose
_torch_equal = torch.equal
_torch_isnan = torch.isnan
_as_tensor = torch.as_tensor
_float64 = torch.float64
_bool_dtype = torch.bool
_Tensor = torch.Tensor
_ndarray = numpy.ndarray
_unravel_index = numpy.unravel_index
_modules = sys.modules


def verify_untampered() -> None:
    """Raise :class:`TamperingError` if a watched function was replaced or its insides swapped."""
    changed = _SNAPSHOT.changed()
    module = _modules.get(__name__)
    if module is not _THIS_MODULE or type(module) is not _GuardedModule:
        changed.append(f"the module {__name__} itself")
    if changed:
        raise TamperingError(
            "functions that the tests rely on were replaced by notebook code: "
            + ", ".join(changed)
            + ". Restart the kernel and do not reassign library, torch, numpy or builtin functions."
        )


# --- comparisons that explain themselves ----------------------------------------------------

def assert_shape(actual: Any, expected: tuple[int, ...], name: str = "result") -> None:
    """Fail with a message naming both shapes when ``actual.shape != expected``."""
    verify_untampered()
    if not isinstance(actual, (_Tensor, _ndarray)):
        raise AssertionError(f"{name} should be a tensor of shape {tuple(expected)}, got {type(actual).__name__}")
    if tuple(actual.shape) != tuple(expected):
        raise AssertionError(f"{name} should have shape {tuple(expected)}, got {tuple(actual.shape)}")


def assert_close(actual: Any, expected: Any, *, atol: float = 1e-6, rtol: float = 1e-5,
                 name: str = "result") -> None:
    """Fail unless ``actual`` matches ``expected`` in type, shape and values (within tolerance).

    The message says what differs: not a tensor, the shapes, a NaN, or the largest absolute
    difference and the index where it occurs.
    """
    verify_untampered()
    if not isinstance(actual, (_Tensor, _ndarray)):
        raise AssertionError(f"{name} should be a tensor, got {type(actual).__name__}")
    actual_t = _as_tensor(actual)
    expected_t = _as_tensor(expected)
    if tuple(actual_t.shape) != tuple(expected_t.shape):
        raise AssertionError(f"{name} should have shape {tuple(expected_t.shape)}, got {tuple(actual_t.shape)}")
    if actual_t.dtype == _bool_dtype or expected_t.dtype == _bool_dtype:
        if actual_t.dtype != expected_t.dtype:
            raise AssertionError(f"{name} should have dtype {expected_t.dtype}, got {actual_t.dtype}")
        if not _torch_equal(actual_t, expected_t):
            wrong = (actual_t != expected_t).nonzero()[0].tolist()
            raise AssertionError(f"{name} differs from the expected mask, first at index {wrong}")
        return
    actual_t = actual_t.detach().to(_float64)
    expected_t = expected_t.detach().to(_float64)
    if bool(_torch_isnan(actual_t).any()) and not bool(_torch_isnan(expected_t).any()):
        raise AssertionError(f"{name} contains NaN")
    if not _torch_allclose(actual_t, expected_t, atol=atol, rtol=rtol):
        raise AssertionError(_largest_difference(actual_t, expected_t, name))


def _largest_difference(actual: torch.Tensor, expected: torch.Tensor, name: str) -> str:
    difference = (actual - expected).abs().nan_to_num(float("inf"))
    index = _unravel_index(int(difference.argmax()), tuple(difference.shape)) if difference.dim() else ()
    index = tuple(int(i) for i in index)
    return (f"{name} is not close to the expected value: largest difference {float(difference.max()):.3g} "
            f"at index {index} (got {float(actual[index]):.6g}, expected {float(expected[index]):.6g})")


def assert_equal(actual: Any, expected: Any, name: str = "result") -> None:
    """Fail unless two tensors (or plain values) are exactly equal, with a helpful message."""
    verify_untampered()
    if isinstance(expected, _Tensor):
        if not isinstance(actual, _Tensor):
            raise AssertionError(f"{name} should be a tensor, got {type(actual).__name__}")
        if tuple(actual.shape) != tuple(expected.shape):
            raise AssertionError(f"{name} should have shape {tuple(expected.shape)}, got {tuple(actual.shape)}")
        if actual.dtype != expected.dtype:
            raise AssertionError(f"{name} should have dtype {expected.dtype}, got {actual.dtype}")
        if not _torch_equal(actual, expected):
            raise AssertionError(f"{name} should be\n{expected}\ngot\n{actual}")
        return
    if type(actual) is not type(expected) or not _plain_equal(actual, expected):
        raise AssertionError(f"{name} should be {expected!r}, got {actual!r}")


def _plain_equal(actual: Any, expected: Any) -> bool:
    """``expected == actual`` decided by the expected value's type (a student's object whose
    ``__eq__`` always says True cannot pass, since the types must match first)."""
    return bool(type(expected).__eq__(expected, actual) is True)


# --- solutions must not lean on the reference -----------------------------------------------

def _raiser_code(description: str, template: types.CodeType) -> types.CodeType:
    """A code object that raises, with the free variables ``template`` expects."""
    freevars = template.co_freevars
    message = (f"this exercise asks you to write it yourself: your solution called {description}, "
               "the library's reference implementation")
    lines = ["def outer():"]
    lines += [f"    {var} = None" for var in freevars]
    lines += ["    def inner(*args, **kwargs):"]
    lines += [f"        {var}" for var in freevars]
    lines += [f"        raise RuntimeError({message!r})", "    return inner"]
    namespace: dict[str, Any] = {}
    exec("\n".join(lines), namespace)  # noqa: S102 - builds a code object, runs nothing else
    inner = namespace["outer"]()
    return inner.__code__.replace(co_freevars=freevars) if freevars else inner.__code__


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


@contextlib.contextmanager
def forbid(*references: Callable[..., Any]) -> Iterator[None]:
    """While the block runs, calling any of ``references`` raises ``RuntimeError``.

    ``references`` are Python functions (their code is swapped, so references the student took
    earlier are caught too; a decorated function's inner function too) or classes (their
    ``forward``/``__call__`` is swapped). Builtin torch functions have no code to swap: pass
    the Python modules that wrap them, or use :func:`refuse`.
    """
    swapped: list[tuple[types.FunctionType, types.CodeType]] = []
    try:
        for reference in references:
            targets, label = _forbid_targets(reference)
            for target in targets:
                original = target.__code__
                target.__code__ = _raiser_code(label, original)
                _SNAPSHOT.allowed_codes[id(target)] = target.__code__
                swapped.append((target, original))
        yield
    finally:
        for target, original in reversed(swapped):
            target.__code__ = original
            _SNAPSHOT.allowed_codes.pop(id(target), None)


@contextlib.contextmanager
def refuse(owner: Any, names: str | tuple[str, ...], message: str) -> Iterator[None]:
    """While the block runs, ``owner.<name>`` raises ``RuntimeError(message)`` for each of ``names``.

    For C builtins such as ``torch.rnn_tanh_cell`` or ``F.scaled_dot_product_attention``, which
    :func:`forbid` cannot swap: the attribute itself is replaced, and restored afterwards.
    """
    names = (names,) if isinstance(names, str) else tuple(names)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(message)

    saved = [(name, getattr(owner, name)) for name in names]
    try:
        for name in names:
            setattr(owner, name, refused)
        yield
    finally:
        for name, original in saved:
            setattr(owner, name, original)


@contextlib.contextmanager
def expect_raises(exception: type[BaseException], message: str) -> Iterator[None]:
    """Fail with an ``AssertionError`` that starts with ``message`` and says what happened instead
    ("expected ValueError, got RuntimeError: ...", or "..., nothing was raised") unless the block
    raises ``exception``. Tampering is never turned into a plain failure."""
    try:
        yield
    except exception:
        return
    except TamperingError:
        raise
    except Exception as error:  # noqa: BLE001 - reported, with its type, as the wrong outcome
        raise AssertionError(f"{message}: expected {exception.__name__}, got {type(error).__name__}: {error}") \
            from error
    raise AssertionError(f"{message}: expected {exception.__name__}, nothing was raised")


# --- this module cannot be edited from the notebook -----------------------------------------

PUBLIC = ("TamperingError", "verify_untampered", "assert_close", "assert_equal",
          "assert_shape", "forbid", "refuse", "expect_raises")
_THIS_MODULE = sys.modules[__name__]
_PROTECTED = {name: globals()[name] for name in PUBLIC}


class _GuardedModule(types.ModuleType):
    """This module's type: its public names always give the originals and cannot be rebound."""

    def __getattribute__(self, name: str) -> Any:
        if name in _PROTECTED:
            return _PROTECTED[name]
        return super().__getattribute__(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _PROTECTED or name.startswith("_"):
            raise TamperingError(f"{__name__}.{name} belongs to the tests and cannot be replaced")
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        raise TamperingError(f"{__name__}.{name} belongs to the tests and cannot be deleted")


_SNAPSHOT = _Snapshot([builtins, *_WATCHED_MODULES, *_WATCHED_CLASSES, *_library_owners(), _THIS_MODULE])
_THIS_MODULE.__class__ = _GuardedModule
