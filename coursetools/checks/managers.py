"""The context managers of the kernel's side of the checker, its own: ``contextlib`` (``ExitStack``,
``contextmanager``, ``redirect_stdout``) and torch's ``set_grad_enabled`` class are modules and
classes of the notebook's, which a student can replace while the kernel serves a hidden block (an
``ExitStack`` that enters nothing switched every rule off). What these call was taken at import,
before any student code ran, and :mod:`coursetools.checks.tamper` guards this module, its classes'
methods too.
"""

from __future__ import annotations

import io
import sys
from typing import Any

import torch

_is_grad_enabled, _set_grad_enabled = torch._C.is_grad_enabled, torch._C._set_grad_enabled
_StringIO, _sys = io.StringIO, sys


class Nested:
    """Context managers entered in order and exited in reverse, as nested ``with`` statements are.

    The kernel's side of the checker uses it, and the context managers below, in place of
    :mod:`contextlib` (``ExitStack``, ``contextmanager``), a module of the notebook's that a student
    can replace. An exception is never swallowed; each manager is exited even when one before it
    raised, and the first such error is raised after."""

    def __init__(self, managers: list[Any]) -> None:
        self.managers, self.entered = list(managers), []

    def __enter__(self) -> Nested:
        try:
            for manager in self.managers:
                type(manager).__enter__(manager)
                self.entered.append(manager)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool:
        failure = None
        while self.entered:
            manager = self.entered.pop()
            try:
                type(manager).__exit__(manager, kind, error, trace)
            except BaseException as raised:  # noqa: BLE001 - the others are exited first
                failure = failure or raised
        if failure is not None:
            raise failure
        return False


class Replaced:
    """While entered, ``owner.<name>`` is ``value`` for each of ``names``; put back after."""

    def __init__(self, owner: Any, names: list[str], value: Any) -> None:
        self.owner, self.names, self.value, self.saved = owner, names, value, []

    def __enter__(self) -> None:
        for name in self.names:
            self.saved.append((name, getattr(self.owner, name)))
            setattr(self.owner, name, self.value)

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool:
        while self.saved:
            name, value = self.saved.pop()
            setattr(self.owner, name, value)
        return False


class Generated:
    """A generator function's one ``yield`` as a context manager (what ``@contextmanager`` makes of it):
    the code before it runs on entering, the rest on leaving; an exception of the block is thrown in."""

    def __init__(self, generator: Any) -> None:
        self.generator = generator

    def __enter__(self) -> Any:
        return next(self.generator)

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool:
        try:
            if kind is None:
                next(self.generator)
            else:
                self.generator.throw(error if error is not None else kind())
        except StopIteration:
            return False
        except BaseException as raised:
            if raised is error:
                return False
            raise
        raise RuntimeError(f"the locked context manager {self.generator.__name__} yields more than once")


class Quiet:
    """While entered, what is printed to ``sys.stdout`` and ``sys.stderr`` is dropped."""

    def __enter__(self) -> None:
        self.saved = _sys.stdout, _sys.stderr
        _sys.stdout, _sys.stderr = _StringIO(), _StringIO()

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool:
        _sys.stdout, _sys.stderr = self.saved
        return False


class GradMode:
    """While entered, autograd records (``enabled``) or not; as it was after."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __enter__(self) -> None:
        self.saved = _is_grad_enabled()
        _set_grad_enabled(self.enabled)

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool:
        _set_grad_enabled(self.saved)
        return False
