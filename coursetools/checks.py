"""Checks for the exercise notebooks' tests, written to survive hostile submissions.

nbgrader is not a sandbox: a student's cells run in the same kernel as the tests, so a
student could replace ``torch.allclose`` by ``lambda *a, **k: True`` and pass any test that
calls it. This module is imported by every notebook's locked setup cell, that is *before* any
student code runs, and keeps its own references to everything a test relies on:

* :func:`assert_close` and :func:`assert_shape` compare with the functions captured at import
  and explain what is wrong (shapes, the largest difference, where it is);
* :func:`verify_untampered` raises :class:`TamperingError` when any watched function (the
  comparison functions of torch and numpy, the builtins, every public function and method of
  :mod:`transformer_lib`) was replaced since import; every hidden test calls it first;
* :func:`forbid` makes the library's reference implementation raise while a student's
  function runs, so that a solution which only calls the reference earns nothing.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import sys
import types
from typing import Any, Callable, Iterator

import numpy
import numpy.testing
import torch
import torch.testing

import transformer_lib


class TamperingError(AssertionError):
    """A function the tests rely on was replaced after the notebook started."""


class ReferenceUsedError(RuntimeError):
    """A solution called the library's reference implementation it was asked to write."""


# --- what is watched ------------------------------------------------------------------------

_WATCHED_ATTRIBUTES: list[tuple[Any, str]] = [
    (torch, "allclose"), (torch, "isclose"), (torch, "equal"), (torch, "all"), (torch, "abs"),
    (torch.Tensor, "allclose"), (torch.Tensor, "equal"), (torch.Tensor, "__eq__"),
    (torch.Tensor, "abs"), (torch.Tensor, "max"), (torch.Tensor, "all"), (torch.Tensor, "item"),
    (torch.testing, "assert_close"),
    (numpy, "allclose"), (numpy, "isclose"), (numpy, "array_equal"),
    (numpy.testing, "assert_allclose"), (numpy.testing, "assert_array_equal"),
]
# The builtins a test relies on. Not all of them: IPython rebinds some on every execution
# (``input``, ``display``, ``get_ipython``, ``exit``...), which is not tampering.
_WATCHED_BUILTINS = (
    "abs", "all", "any", "bool", "callable", "dict", "enumerate", "filter", "float", "getattr",
    "hasattr", "hash", "id", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max",
    "min", "next", "object", "range", "repr", "round", "set", "setattr", "sorted", "str", "sum",
    "super", "tuple", "type", "vars", "zip", "AssertionError", "Exception",
)
_WATCHED_ATTRIBUTES += [(builtins, name) for name in _WATCHED_BUILTINS]


def _library_attributes() -> list[tuple[Any, str]]:
    """Every public function and class method of ``transformer_lib`` and its modules."""
    found: list[tuple[Any, str]] = []
    modules = [m for name, m in sys.modules.items() if name.split(".")[0] == "transformer_lib"]
    for module in modules:
        for name, value in vars(module).items():
            if name.startswith("_"):
                continue
            if inspect.isfunction(value) or inspect.isclass(value):
                found.append((module, name))
            if inspect.isclass(value) and value.__module__.startswith("transformer_lib"):
                for attr, member in vars(value).items():
                    if inspect.isfunction(member) and not (attr.startswith("__") and attr != "__init__"):
                        found.append((value, attr))
    return found


def _snapshot(attributes: list[tuple[Any, str]]) -> dict[tuple[int, str], tuple[Any, str, Any, Any]]:
    snapshot = {}
    for owner, name in attributes:
        value = getattr(owner, name)
        code = getattr(value, "__code__", None)
        snapshot[(id(owner), name)] = (owner, name, value, code)
    return snapshot


_ORIGINALS = _snapshot(_WATCHED_ATTRIBUTES + _library_attributes())
# Private references, taken before any student code ran.
_torch_allclose = torch.allclose
_torch_isclose = torch.isclose
_torch_equal = torch.equal
_as_tensor = torch.as_tensor
_isinstance = builtins.isinstance
_tuple = builtins.tuple


def _describe(owner: Any, name: str) -> str:
    owner_name = getattr(owner, "__name__", type(owner).__name__)
    return f"{owner_name}.{name}"


def verify_untampered() -> None:
    """Raise :class:`TamperingError` if a watched function was replaced or its code swapped."""
    changed = []
    for owner, name, value, code in _ORIGINALS.values():
        current = getattr(owner, name, None)
        if current is not value or getattr(current, "__code__", None) is not code:
            changed.append(_describe(owner, name))
    if changed:
        raise TamperingError(
            "functions that the tests rely on were replaced by notebook code: "
            + ", ".join(sorted(changed))
            + ". Restart the kernel and do not reassign library or builtin functions."
        )


# --- comparisons that explain themselves ----------------------------------------------------

def _shape(x: Any) -> tuple[int, ...]:
    return _tuple(x.shape) if hasattr(x, "shape") else ()


def assert_shape(actual: Any, expected: tuple[int, ...], name: str = "result") -> None:
    """Fail with a message naming both shapes when ``actual.shape != expected``."""
    if not hasattr(actual, "shape"):
        raise AssertionError(f"{name} should be a tensor of shape {_tuple(expected)}, got {type(actual).__name__}")
    if _tuple(actual.shape) != _tuple(expected):
        raise AssertionError(f"{name} should have shape {_tuple(expected)}, got {_tuple(actual.shape)}")


def assert_close(actual: Any, expected: Any, *, atol: float = 1e-6, rtol: float = 1e-5,
                 name: str = "result") -> None:
    """Fail unless ``actual`` matches ``expected`` in type, shape and values (within tolerance).

    The message says what differs: not a tensor, the shapes, a NaN, or the largest absolute
    difference and the index where it occurs.
    """
    if not _isinstance(actual, (torch.Tensor, numpy.ndarray)):
        raise AssertionError(f"{name} should be a tensor, got {type(actual).__name__}")
    actual_t = _as_tensor(actual)
    expected_t = _as_tensor(expected)
    if _tuple(actual_t.shape) != _tuple(expected_t.shape):
        raise AssertionError(f"{name} should have shape {_tuple(expected_t.shape)}, got {_tuple(actual_t.shape)}")
    if actual_t.dtype == torch.bool or expected_t.dtype == torch.bool:
        if actual_t.dtype != expected_t.dtype:
            raise AssertionError(f"{name} should have dtype {expected_t.dtype}, got {actual_t.dtype}")
        if not _torch_equal(actual_t, expected_t):
            wrong = (actual_t != expected_t).nonzero()[0].tolist()
            raise AssertionError(f"{name} differs from the expected mask, first at index {wrong}")
        return
    actual_t = actual_t.detach().to(torch.float64)
    expected_t = expected_t.detach().to(torch.float64)
    if bool(torch.isnan(actual_t).any()) and not bool(torch.isnan(expected_t).any()):
        raise AssertionError(f"{name} contains NaN")
    if not _torch_allclose(actual_t, expected_t, atol=atol, rtol=rtol):
        difference = (actual_t - expected_t).abs()
        flat_index = int(difference.nan_to_num(float("inf")).argmax())
        index = numpy.unravel_index(flat_index, _tuple(difference.shape)) if difference.dim() else ()
        index = _tuple(int(i) for i in index)
        raise AssertionError(
            f"{name} is not close to the expected value: largest difference "
            f"{float(difference.nan_to_num(float('inf')).max()):.3g} at index {index} "
            f"(got {float(actual_t[index]):.6g}, expected {float(expected_t[index]):.6g})"
        )


def assert_equal(actual: Any, expected: Any, name: str = "result") -> None:
    """Fail unless two tensors (or plain values) are exactly equal, with a helpful message."""
    if _isinstance(expected, torch.Tensor):
        if not _isinstance(actual, torch.Tensor):
            raise AssertionError(f"{name} should be a tensor, got {type(actual).__name__}")
        if _tuple(actual.shape) != _tuple(expected.shape):
            raise AssertionError(f"{name} should have shape {_tuple(expected.shape)}, got {_tuple(actual.shape)}")
        if actual.dtype != expected.dtype:
            raise AssertionError(f"{name} should have dtype {expected.dtype}, got {actual.dtype}")
        if not _torch_equal(actual, expected):
            raise AssertionError(f"{name} should be\n{expected}\ngot\n{actual}")
        return
    if type(actual) is not type(expected) or actual != expected:
        raise AssertionError(f"{name} should be {expected!r}, got {actual!r}")


# --- solutions must not lean on the reference -----------------------------------------------

def _raiser_code(description: str, template: types.CodeType) -> types.CodeType:
    """A code object that raises, with the free variables ``template`` expects."""
    freevars = template.co_freevars
    message = (f"this exercise asks you to write it yourself: your solution called {description}, "
               "the library's reference implementation")
    lines = [f"def outer():"]
    lines += [f"    {var} = None" for var in freevars]
    lines += ["    def inner(*args, **kwargs):"]
    lines += [f"        {var}" for var in freevars]
    lines += [f"        raise RuntimeError({message!r})", "    return inner"]
    namespace: dict[str, Any] = {}
    exec("\n".join(lines), namespace)  # noqa: S102 - builds a code object, runs nothing else
    inner = namespace["outer"]()
    return inner.__code__.replace(co_freevars=freevars) if freevars else inner.__code__


@contextlib.contextmanager
def forbid(*references: Callable[..., Any]) -> Iterator[None]:
    """While the block runs, calling any of ``references`` raises ``RuntimeError``.

    ``references`` are Python functions (their code is swapped, so references the student took
    earlier are caught too) or classes (their ``forward``/``__call__`` is swapped). Builtin
    torch functions cannot be swapped; pass the Python modules that wrap them instead.
    """
    swapped: list[tuple[types.FunctionType, types.CodeType]] = []
    try:
        for reference in references:
            if inspect.isclass(reference):
                targets = [vars(reference)[n] for n in ("forward", "__call__") if n in vars(reference)
                           and inspect.isfunction(vars(reference)[n])]
                label = f"{reference.__module__}.{reference.__qualname__}"
            elif inspect.isfunction(reference):
                targets = [reference]
                label = f"{reference.__module__}.{reference.__qualname__}"
            else:
                raise TypeError(f"forbid() takes Python functions or classes, got {reference!r}")
            if not targets:
                raise TypeError(f"forbid(): {label} has no Python forward/__call__ to swap")
            for target in targets:
                original = target.__code__
                target.__code__ = _raiser_code(label, original)
                swapped.append((target, original))
        yield
    finally:
        for target, original in reversed(swapped):
            target.__code__ = original
