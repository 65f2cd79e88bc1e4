"""The checker's stand-ins for what lives in the kernel: a function or object of the notebook
(:class:`KernelRef`), a class (:class:`KernelClass`), an object kept there (:class:`Handle`), a
function of the locked cells (:class:`LockedFunction`), a fake for student code to call (:class:`Fake`),
a context manager of the locked cells (:class:`KernelContext`)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Iterator

import torch

from coursetools.checks import wire
from coursetools.checks.names import LOCKED_MODULE

if TYPE_CHECKING:
    from coursetools.checker.rules import Rules
    from coursetools.checker.runner import Checker

LIBRARIES = ("torch", "transformer_lib")  # whose modules a hidden test may pass to student code


class KernelRef:
    """A function, or any object, of the notebook, reached by name or handle (and attribute path)."""

    __slots__ = ("_checker", "_ref")

    def __init__(self, checker: Checker, ref: dict):
        object.__setattr__(self, "_checker", checker)
        object.__setattr__(self, "_ref", ref)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._checker.call(self._ref, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._checker.getattr(self._ref, name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"the tests cannot set {name} on {self!r}: it lives in the notebook's kernel")

    def __bool__(self) -> bool:
        raise TypeError(f"{self!r} lives in the notebook's kernel: the tests cannot take its truth value")

    def __repr__(self) -> str:
        where = self._ref.get("name") or f"{self._ref.get('type', 'object')} #{self._ref['id']}"
        return f"<notebook {'.'.join([where, *self._ref.get('path', ())])}>"


class KernelClass(KernelRef):
    """A class of the notebook: calling it constructs an object in the kernel (a :class:`Handle`)."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._checker.call(self._ref, args, kwargs, new=True)

    def __instancecheck__(self, instance: Any) -> bool:
        return isinstance(instance, KernelRef) and self._checker.request("isinstance", target=instance._ref,
                                                                         cls=self._ref)["value"]


class Handle(KernelRef):
    """An object kept in the kernel (a student's module): call it, read its attributes, call its methods.

    ``isinstance(handle, C)`` holds for a class ``C`` of torch or transformer_lib when the kernel's
    object says it is one (its class, by module and name, is ``C`` or a subclass of it)."""

    __slots__ = ()

    @property
    def __class__(self) -> type:
        module, _, name = self._ref.get("class", "").rpartition(":")
        if module.split(".")[0] in LIBRARIES and module in sys.modules:
            found = sys.modules[module]
            for part in name.split("."):
                found = getattr(found, part, None)
            if isinstance(found, type):
                return found
        return Handle

    def __iter__(self) -> Iterator[Any]:
        raise TypeError(f"{self!r} lives in the notebook's kernel: iterate over a method's result instead")


class LockedFunction:
    """A function of the locked cells: run here, unless an argument lives in the kernel (a handle, a
    function of the notebook): then in the kernel, defined afresh from the locked cells' source
    (visible code), so that what it does with the kernel's objects happens where they are."""

    def __init__(self, checker: Checker, name: str, function: Callable[..., Any]):
        self.checker, self.name, self.function = checker, name, function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not holds_kernel_objects([args, kwargs]):
            return self.function(*args, **kwargs)
        return self.checker.call(self.ref(), args, kwargs)

    def ref(self) -> dict:
        return {wire.REF: "locked", "name": self.name, "sources": list(self.checker.locked_sources)}


def holds_kernel_objects(value: Any) -> bool:
    if isinstance(value, (KernelRef, Fake)) or (isinstance(value, torch.nn.Module) and by_value(value)):
        return True
    if type(value) in (tuple, list):
        return any(holds_kernel_objects(v) for v in value)
    if type(value) is dict:
        return any(holds_kernel_objects(v) for v in value.values())
    return False


class Fake:
    """A function that hidden tests hand to student code, run in the kernel, with the parameters
    ``names``: each call's arguments are recorded by name (:attr:`calls`; a generator as its
    state), and it returns a copy of ``answers[tuple(the arguments named in key)]`` (a name may
    read an attribute: ``"mha.tag"``), what ``wraps`` (a function of the notebook, a handle)
    returns, or None (a hook that records what it sees). ``answers`` is plain data, built by the
    test, and stays here: each call in the kernel asks the checker for the one entry it needs, so
    the kernel never holds the entries no call asked for. Student code sees an entry as it would
    see the answer of the function the fake stands for."""

    _count = 0

    def __init__(self, names: tuple[str, ...], answers: dict | None = None, key: tuple[str, ...] = (),
                 wraps: Any = None):
        Fake._count += 1
        self.id, self.names, self.answers, self.key, self.wraps = Fake._count, list(names), answers, list(key), wraps
        self.checker: Checker | None = None

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The arguments of each call so far (plain data; the kernel's objects as handles)."""
        if self.checker is None:
            return []
        return incoming(self.checker, self.checker.request("calls", id=self.id)["value"])


class KernelContext:
    """A context manager that a locked cell defines, entered in the kernel around each call: defined
    afresh there from ``source`` (its generator function, without the decorator) after the locked
    cells' other functions (``sources``), and entered without the notebook's ``contextlib``."""

    def __init__(self, rules: Rules, name: str, source: str, sources: list[str]):
        self.rules, self.name, self.source, self.sources = rules, name, source, sources

    def __call__(self) -> contextlib.AbstractContextManager:
        return self.rules.active({"kind": "enter", "name": self.name, "sources": [*self.sources, self.source]})


def by_value(value: Any) -> bool:
    """Whether ``value`` goes to the kernel pickled: a module of torch or transformer_lib, or an
    instance of a locked cell's class."""
    module = type(value).__module__
    return (isinstance(value, torch.nn.Module) and module.split(".")[0] in LIBRARIES) or \
        module.startswith(LOCKED_MODULE)


def incoming(checker: Checker, value: Any) -> Any:
    """A decoded reply value with the kernel's handles as :class:`Handle` objects."""
    if type(value) is dict:
        if value.get(wire.REF) == "handle":
            return Handle(checker, value)
        return {key: incoming(checker, item) for key, item in value.items()}
    if type(value) in (tuple, list):
        return type(value)(incoming(checker, item) for item in value)
    return value
