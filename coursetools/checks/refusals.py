"""The rules a test sets while a student's function runs, in the kernel: a solution that only calls
the library's reference, or a route the exercise rules out, earns nothing.

* :func:`forbid` makes the library's reference implementation raise (its code swapped, so a
  reference the student took earlier is caught too);
* :func:`refuse` does the same for any function, a C builtin of torch included (refused in every
  call torch makes through its function modes), and, for a function of a torch module, for the
  Tensor method of the same name (``rows.multinomial`` beside ``torch.multinomial``);
* :func:`no_autograd` is the one "no autograd" rule of every exercise that asks for a gradient by
  hand (:data:`~coursetools.checks.names.NO_AUTOGRAD`);
* :func:`size_limit` refuses any tensor larger than an exercise allows ("no tensor of length T").

Each returns a context manager of :mod:`coursetools.checks.managers` (not ``contextlib``, which the
notebook can replace). This module is guarded as :mod:`coursetools.checks.tamper` guards itself: its
names cannot be rebound, and its functions and its classes' methods are watched by
:func:`~coursetools.checks.tamper.verify_untampered`.
"""

from __future__ import annotations

import importlib
import inspect
import types
from typing import Any, Callable

import torch
from torch.overrides import TorchFunctionMode

from coursetools.checks.managers import GradMode, Nested, Replaced
from coursetools.checks.names import NO_AUTOGRAD, NO_AUTOGRAD_MESSAGE
from coursetools.checks.tamper import _SNAPSHOT, ORIGINAL_BUILTINS, guard

__all__ = ["forbid", "refuse", "no_autograd", "size_limit"]

# This module decides with the builtins as they were at import, whatever the notebook does later.
globals().update(ORIGINAL_BUILTINS)
_is_grad_enabled = torch._C.is_grad_enabled


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
    A function of a torch module is refused as a Tensor method too, where the Tensor has one of that
    name and its in-place ``name_``: refusing ``torch.multinomial`` refuses ``rows.multinomial(1)``.
    """
    names = (names,) if isinstance(names, str) else tuple(names)
    saved = [(name, getattr(owner, name)) for name in names]
    functions = [value for _, value in saved if inspect.isfunction(value)]
    torch_builtins = [value for _, value in saved if _is_torch_builtin(value)]
    replaced = [name for name, value in saved if value not in functions and value not in torch_builtins]
    methods = _tensor_methods(owner, names)
    functions += [method for method in methods if inspect.isfunction(method) and method not in functions]
    torch_builtins += [method for method in methods if not inspect.isfunction(method)]

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


def _tensor_methods(owner: Any, names: tuple[str, ...]) -> list[Any]:
    """The Tensor methods named as ``owner``'s refused functions and their in-place variants, when
    ``owner`` is a module of torch (``torch``, ``torch.nn.functional``, ``torch.special``...): a C
    method of the Tensor (``Tensor.multinomial``) or a Python one (``Tensor.backward``)."""
    if not isinstance(owner, types.ModuleType) or not owner.__name__.startswith("torch"):
        return []
    found = []
    for name in names:
        for method_name in (name, f"{name}_"):
            method = inspect.getattr_static(torch.Tensor, method_name, None)
            if isinstance(method, types.MethodDescriptorType) or inspect.isfunction(method):
                found.append(method)
    return found


class _GradientsOff(TorchFunctionMode):
    """Raises for any torch call (a function, a Tensor method, a factory) made while gradients are on:
    an answer run under :func:`no_autograd` that switches them back on (``torch.set_grad_enabled(True)``,
    ``torch._C._set_grad_enabled``) builds no graph to differentiate."""

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        if _is_grad_enabled():
            raise RuntimeError(self.message)
        return func(*args, **(kwargs or {}))


def _resolved(dotted: str) -> Any:
    """The module or class a dotted name of :data:`~coursetools.checks.names.NO_AUTOGRAD` names."""
    try:
        return importlib.import_module(dotted)
    except ModuleNotFoundError:
        module, _, attribute = dotted.rpartition(".")
        return getattr(importlib.import_module(module), attribute)


_AUTOGRAD_ROUTES = [(_resolved(owner), names) for owner, names in NO_AUTOGRAD]  # resolved before any student code


def no_autograd(message: str = NO_AUTOGRAD_MESSAGE) -> Nested:
    """The one "no autograd" rule, a context manager: while its block runs, gradients are off, every route
    of :data:`~coursetools.checks.names.NO_AUTOGRAD` (``torch.autograd.grad`` and ``backward``,
    ``Tensor.backward``, ``torch.autograd.functional``, forward-mode dual numbers, every differentiating
    transform of ``torch.func``, ``torch.enable_grad``) raises ``RuntimeError(message)``, and so does
    every torch call made with gradients switched back on."""
    return Nested([GradMode(False), *(refuse(owner, names, message) for owner, names in _AUTOGRAD_ROUTES),
                   _GradientsOff(message)])


class _SizeLimit(TorchFunctionMode):
    """Raises for any torch call that makes a tensor of more than ``max_elements`` numbers in new memory
    (a view of an argument, such as ``weight.T`` or ``weight[:d]``, makes none)."""

    def __init__(self, max_elements: int, message: str) -> None:
        super().__init__()
        self.max_elements, self.message = max_elements, message

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        result = func(*args, **(kwargs or {}))
        made = [t for t in (result if isinstance(result, (tuple, list)) else (result,)) if isinstance(t, torch.Tensor)]
        if any(t.numel() > self.max_elements for t in made):
            given = {_storage_of(t) for t in _tensors_in((args, kwargs))}
            for tensor in made:
                if tensor.numel() > self.max_elements and _storage_of(tensor) not in given:
                    raise RuntimeError(f"{self.message} (a tensor of shape {tuple(tensor.shape)}: "
                                       f"{tensor.numel()} numbers, more than the {self.max_elements} allowed)")
        return result


def _storage_of(tensor: torch.Tensor) -> int:
    """Where a tensor's numbers are (a view shares its base's); a tensor without storage counts as its own."""
    try:
        return tensor.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):
        return id(tensor)


def _tensors_in(value: Any) -> list[torch.Tensor]:
    """The tensors in a call's arguments (nested tuples, lists and dicts)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors_in(item)]
    if isinstance(value, dict):
        return [t for item in value.values() for t in _tensors_in(item)]
    return []


def size_limit(max_elements: int, message: str) -> _SizeLimit:
    """A context manager: while its block runs, any torch call (a function, a Tensor method, a factory)
    that makes a tensor of more than ``max_elements`` numbers in new memory raises
    ``RuntimeError(message)``: "no tensor of length T", "without forming a (3 d, d_in) matrix"."""
    return _SizeLimit(max_elements, message)


guard(__name__, tuple(__all__))
