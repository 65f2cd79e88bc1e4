"""Checks for the exercise notebooks' tests, written to survive hostile submissions.

Every notebook's locked setup cell imports this module, that is *before* any student code runs:

* :func:`assert_close`, :func:`assert_equal` and :func:`assert_shape` decide with functions
  captured at import (the builtins they use are copied into this module too), explain what is
  wrong, and call :func:`verify_untampered` first;
* :func:`expect_raises` checks that a block refuses bad input, and never turns tampering into a
  plain failure (a context manager of this module's: ``contextlib`` is the notebook's to replace);
* :func:`assert_may_use` checks what an answer uses against its exercise's May-use line, with the
  grader's scan on the code run in the kernel (:mod:`coursetools.checks.may_use`).

The tamper guard they rely on is :mod:`coursetools.checks.tamper`; its public names
(:class:`TamperingError`, :func:`verify_untampered`, :func:`forbid`, :func:`refuse`) are imported
from here too, as the notebooks do. This module is frozen like that one: assigning or deleting its
public names raises, and ``from coursetools.checks import assert_close`` returns the original even
if the module's ``__dict__`` was edited.
"""

from __future__ import annotations

from typing import Any

import numpy
import torch

from coursetools.checks.may_use import assert_may_use
from coursetools.checks.refusals import forbid, no_autograd, refuse, size_limit
from coursetools.checks.tamper import ORIGINAL_BUILTINS, TamperingError, guard, verify_untampered

__all__ = ["TamperingError", "verify_untampered", "assert_close", "assert_equal", "assert_shape", "forbid",
           "refuse", "no_autograd", "size_limit", "expect_raises", "assert_may_use"]

# This module decides with the builtins as they were at import, whatever the notebook does later.
globals().update(ORIGINAL_BUILTINS)

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
        raise AssertionError(_not_close(actual_t, expected_t, name, atol, rtol))


def _not_close(actual: torch.Tensor, expected: torch.Tensor, name: str, atol: float, rtol: float) -> str:
    """Why two float64 tensors of one shape are not close: the value furthest outside the tolerance,
    both numbers with the digits that tell them apart, the tolerance there, and how many values fail."""
    allowed = atol + rtol * expected.abs()
    infinity = float("inf")
    difference = (actual - expected).abs().nan_to_num(nan=infinity, posinf=infinity)
    excess = difference - allowed
    # equal values (an expected -inf got) are never the ones to show; an infinity missed always is
    excess = excess.nan_to_num(nan=infinity, posinf=infinity, neginf=-infinity).masked_fill(actual == expected,
                                                                                           -infinity)
    index = _unravel_index(int(excess.argmax()), tuple(excess.shape)) if excess.dim() else ()
    index = tuple(int(i) for i in index)
    got, want = float(actual[index]), float(expected[index])
    got_text, want_text = _distinct(got, want)
    failing = int((excess > 0).sum())
    where = f" at index {index}" if index else ""
    return (f"{name} is not close to the expected value{where}: got {got_text}, expected {want_text}, a difference "
            f"of {float(difference[index]):.3g} where at most atol + rtol * |expected| = {atol:g} + {rtol:g} * "
            f"{abs(want):.3g} = {float(allowed[index]):.3g} is allowed ({failing} of {excess.numel()} values are "
            "outside the tolerance)")


def _distinct(a: float, b: float) -> tuple[str, str]:
    """``a`` and ``b`` written with the fewest significant digits, at least 6, that tell them apart
    (17 digits, ``repr``'s precision, tell any two different floats apart)."""
    for digits in range(6, 18):
        a_text, b_text = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if a_text != b_text:
            break
    return _same_decimals(a_text, b_text)


def _same_decimals(a_text: str, b_text: str) -> tuple[str, str]:
    """Two decimals padded with zeros to as many decimal places ("0.9932620531", "0.9932620530"), so
    that a dropped trailing zero does not read as a missing digit; others as they are."""
    if not all("." in text and "e" not in text for text in (a_text, b_text)):
        return a_text, b_text
    places = max(len(text.split(".")[1]) for text in (a_text, b_text))
    return tuple(text + "0" * (places - len(text.split(".")[1])) for text in (a_text, b_text))


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
            raise AssertionError(f"{name} should be\n{expected}\ngot\n{actual}\n{_first_difference(actual, expected)}")
        return
    if type(actual) is not type(expected) or not _plain_equal(actual, expected):
        raise AssertionError(f"{name} should be {_short_repr(expected)}, got {_short_repr(actual)}")


def _first_difference(actual: torch.Tensor, expected: torch.Tensor) -> str:
    """Where two tensors of one shape and dtype first differ, with the digits that tell the values
    apart (a tensor prints 4 decimals, so two different tensors can print alike)."""
    index = tuple(int(i) for i in (actual != expected).nonzero()[0]) if actual.dim() else ()
    got, want = actual[index].item(), expected[index].item()
    got_text, want_text = _distinct(got, want) if isinstance(want, float) else (repr(got), repr(want))
    return f"first difference at index {index}: got {got_text}, expected {want_text}"


def _short_repr(value: Any, limit: int = 600) -> str:
    """``repr(value)``, its middle cut out past ``limit`` characters (a student's value may be huge)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit // 2]} ... [{len(text) - limit:,} characters cut] ... {text[-limit // 2:]}"


def _plain_equal(actual: Any, expected: Any) -> bool:
    """``expected == actual`` decided by the expected value's type (a student's object whose
    ``__eq__`` always says True cannot pass, since the types must match first)."""
    return bool(type(expected).__eq__(expected, actual) is True)


def expect_raises(exception: type[BaseException], message: str) -> _ExpectRaises:
    """A context manager: fail with an ``AssertionError`` that starts with ``message`` and says what
    happened instead ("expected ValueError, got RuntimeError: ...", or "..., nothing was raised")
    unless the block raises ``exception``. Tampering is never turned into a plain failure, and neither
    is a stub's ``NotImplementedError``: an answer not written yet says so, not "expected ValueError"."""
    return _ExpectRaises(exception, message)


class _ExpectRaises:
    """What :func:`expect_raises` returns: a class of this module's (watched, as the module is), not
    ``contextlib``'s, which the notebook can replace."""

    def __init__(self, exception: type[BaseException], message: str) -> None:
        self.exception, self.message = exception, message

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: Any) -> bool:
        expected = self.exception.__name__
        if kind is None:
            raise AssertionError(f"{self.message}: expected {expected}, nothing was raised")
        if issubclass(kind, self.exception):
            return True
        if issubclass(kind, (TamperingError, NotImplementedError)) or not issubclass(kind, Exception):
            return False
        raise AssertionError(f"{self.message}: expected {expected}, got {kind.__name__}: {error}") from error


guard(__name__, tuple(__all__))
