"""What a check can end in besides a failed assertion: the notebook's own exception, the cell's
time limit, a kernel that gave no valid answer; and the exception a reply's error becomes here."""

from __future__ import annotations

import builtins
from typing import Any

from coursetools.checks.tamper import TamperingError


class StudentError(Exception):
    """The notebook's code raised an exception that is not a builtin one (its class is named)."""


class CheckTimeout(Exception):
    """The hidden tests ran past the cell's time limit (a call into the kernel was interrupted)."""


class KernelUnanswered(AssertionError):
    """The kernel gave no valid reply to the tests (its bridge was broken or replaced)."""


def exception_from(error: Any) -> Exception:
    """The exception to raise here for ``[builtin class name, own class name, message]``."""
    if not (type(error) in (list, tuple) and len(error) == 3 and all(type(e) is str for e in error)):
        return KernelUnanswered("the notebook's kernel gave the tests a malformed error")
    base, own, message = error
    text = message if own == base else f"{own}: {message}"
    if base == "TamperingError":
        return TamperingError(message)
    cls = vars(builtins).get(base)
    if isinstance(cls, type) and issubclass(cls, Exception):
        return cls(text)
    return StudentError(f"{own}: {message}")
