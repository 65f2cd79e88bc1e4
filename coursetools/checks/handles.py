"""The notebook's objects as the checker's requests name them, in the kernel.

A request names a value of the notebook (``{REF: "name"}``), an object kept for the checker behind a
handle (``{REF: "handle"}``: a model, a function a call returned), a locked cell's function defined
afresh from its visible source (``{REF: "locked"}``) or a fake the checker made (``{REF: "fake"}``).
:func:`imported` turns a decoded request into the objects it names; :func:`exported` turns what
student code returned into plain data (:mod:`coursetools.checks.wire`), handles where it cannot be.
"""

from __future__ import annotations

import binascii
import importlib
import io
import pickle
import types
from collections import OrderedDict
from typing import Any

import torch
from IPython import get_ipython

from coursetools.checks import wire
from coursetools.checks.names import LOCKED_MODULE

_Module = torch.nn.Module
_FunctionType, _b64decode = types.FunctionType, binascii.a2b_base64  # taken before any student code ran
handles: dict[int, Any] = {}  # handle id -> object
handle_of: dict[int, int] = {}  # id(object) -> handle id
channel: dict[str, Any] = {}  # "entry": how a fake asks the checker for an entry (set by the bridge)
fakes: dict[int, "Fake"] = {}  # the checker's fakes (coursetools.checker.Fake), by its id
compiled: dict[str, types.CodeType] = {}  # the locked cells' functions, by source


class Fake:
    """A function for student code to call, made for the checker (``coursetools.checker.Fake``):
    records each call's arguments by parameter name and returns ``answers[the arguments named in
    key]``, what ``wraps`` returns, or None. The table stays with the checker: each call asks it
    for the one entry it needs (:data:`channel`), so the kernel never holds the entries no call
    asked for."""

    def __init__(self, spec: dict, wraps: Any) -> None:
        self.id, self.names, self.key = spec["id"], spec["names"], spec["key"]
        self.has_answers, self.wraps, self.calls = spec["answers"], wraps, []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) > len(self.names) or set(kwargs) - set(self.names[len(args):]):
            raise TypeError(f"this function takes ({', '.join(self.names)}), got {len(args)} positional "
                            f"arguments and {sorted(kwargs)}")
        bound = {**dict(zip(self.names, args)), **kwargs}
        self.calls.append({k: v.get_state() if isinstance(v, torch.Generator) else v for k, v in bound.items()})
        if self.wraps is not None:
            return self.wraps(*args, **kwargs)
        if self.has_answers:
            return channel["entry"](self.id, [attribute_path(bound, name) for name in self.key])
        return None


def notebook_names() -> dict[str, Any]:
    return get_ipython().user_ns


def resolve(ref: dict) -> Any:
    if ref[wire.REF] == "handle":
        value = handles[ref["id"]]
    elif ref[wire.REF] == "locked":
        value = locked_function(ref["name"], ref["sources"])
    else:
        namespace = notebook_names()
        if ref["name"] not in namespace:
            raise NameError(f"name {ref['name']!r} is not defined in the notebook")
        value = namespace[ref["name"]]
    for attribute in ref.get("path", ()):
        value = getattr(value, attribute)
    return value


def attribute_path(bound: dict, name: str) -> Any:
    """``bound["a"].b.c`` for the name ``"a.b.c"``."""
    first, *rest = name.split(".")
    value = bound[first]
    for attribute in rest:
        value = getattr(value, attribute)
    return value


def locked_function(name: str, sources: list[str]) -> Any:
    """The locked cells' function or class ``name`` as the instructor wrote it: the locked cells'
    functions and classes (visible code, sent by the checker) defined afresh over a copy of the
    notebook's names, so that a redefinition in the notebook changes nothing."""
    namespace = dict(notebook_names())
    for source in sources:
        if source not in compiled:
            compiled[source] = compile(source, "<locked cell>", "exec")
        exec(compiled[source], namespace)  # noqa: S102 - visible code of the locked cells
    return namespace[name]


def locked_generator(name: str, sources: list[str]) -> Any:
    """The generator function of a locked cell's ``@contextmanager`` ``name``, whose source comes last
    in ``sources`` without its decorator: defined afresh as :func:`locked_function` does, with the
    notebook's names as its globals (what it rebinds with ``global`` is the notebook's). The kernel
    enters it without ``contextlib`` (:class:`coursetools.checks.managers.Generated`)."""
    function = locked_function(name, sources)
    return _FunctionType(function.__code__, notebook_names(), name, function.__defaults__, function.__closure__)


class _Unpickler(pickle.Unpickler):
    """Unpickles what the checker passes by value; a locked cell's class is defined afresh."""

    def __init__(self, file: io.BytesIO, sources: list[str]) -> None:
        super().__init__(file)
        self.sources = sources

    def find_class(self, module: str, name: str) -> Any:
        if module.startswith(LOCKED_MODULE):
            return locked_function(name, self.sources)
        return super().find_class(module, name)


class _Given:
    """A tensor argument and a copy of it as it came: if the call changes it in place, the change goes
    back to the checker (:func:`states`), as it would reach the caller's tensor in one process."""

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor, self.before = tensor, tensor.detach().clone()

    def changed(self) -> bool:
        now, before = self.tensor.detach(), self.before
        if now.shape != before.shape or now.dtype != before.dtype:
            return True
        same = torch.equal(now, before) if not now.is_floating_point() and not now.is_complex() else \
            bool(torch.isclose(now, before, rtol=0, atol=0, equal_nan=True).all())
        return not same


def imported(value: Any, passed: list) -> Any:
    """A decoded request value with its references replaced by what they name; the objects the
    checker passes by value (a generator, a module of torch or transformer_lib, a tensor) are
    rebuilt and appended to ``passed``, whose states go back with the reply."""
    if isinstance(value, torch.Tensor):
        passed.append(_Given(value))
        return value
    if type(value) is dict:
        kind = value.get(wire.REF)
        if kind == "generator":
            generator = torch.Generator()
            generator.set_state(value["state"])
            passed.append(generator)
            return generator
        if kind == "pickled":  # by the checker (trusted): a library module, a locked class's instance
            found = _Unpickler(io.BytesIO(_b64decode(value["data"])), value["sources"]).load()
            passed.append(found)
            return found
        if kind == "fake":
            if value["id"] not in fakes:
                wraps = None if value["wraps"] is None else imported(value["wraps"], passed)
                fakes[value["id"]] = Fake(value, wraps)
            return fakes[value["id"]]
        if kind is not None:
            return resolve(value)
        return {key: imported(item, passed) for key, item in value.items()}
    if type(value) in (tuple, list):
        return type(value)(imported(item, passed) for item in value)
    return value


def states(passed: list) -> list:
    """What the checker copies back into the objects it passed by value after a call: a tensor's
    value only if the call changed it in place (None if not)."""
    return [p.get_state() if isinstance(p, torch.Generator)
            else {k: v.detach() for k, v in exported(dict(p.state_dict()), "a module's state").items()}
            if isinstance(p, _Module) else (p.tensor.detach() if p.changed() else None) if isinstance(p, _Given)
            else None for p in passed]


def handle(value: Any) -> dict:
    number = handle_of.get(id(value))
    if number is None or handles.get(number) is not value:
        number = len(handles) + 1
        handles[number], handle_of[id(value)] = value, number
    kind = type(value)
    return {wire.REF: "handle", "id": number, "type": kind.__qualname__,
            "class": f"{kind.__module__}:{kind.__qualname__}"}


def exported(value: Any, where: str = "the result", strict: bool = True) -> Any:
    """``value`` as plain data: an ``nn.Module``, a function (or an object already behind a handle)
    becomes a handle, a parameter a tensor, an ordered dict a dict, a named tuple a tuple; anything
    else that is not plain raises :class:`~coursetools.checks.wire.NotPlainData` naming its type, unless
    not ``strict`` (what a method, a constructor or a locked function returns): a handle too."""
    kind = type(value)
    if isinstance(value, torch.Tensor):
        if kind is torch.nn.Parameter:
            return value.detach()
        if kind is not torch.Tensor:
            raise wire.NotPlainData(f"{where} is a {kind.__qualname__} (a Tensor subclass): return a plain tensor")
        return value
    if isinstance(value, _Module) or id(value) in handle_of or (callable(value) and not isinstance(value, type)):
        return handle(value)
    if kind in (tuple, list) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        return (list if kind is list else tuple)(exported(item, f"{where}[{i}]", strict)
                                                 for i, item in enumerate(value))
    if kind in (dict, OrderedDict):
        return {exported(key, f"a key of {where}"): exported(item, f"{where}[{key!r}]", strict)
                for key, item in value.items()}
    try:
        wire.check_plain(value, where)
    except wire.NotPlainData:
        if strict:
            raise
        return handle(value)
    return value


def describe(value: Any) -> dict:
    """What the checker binds for a value of the notebook."""
    if isinstance(value, types.ModuleType):
        return {"kind": "module", "name": value.__name__}
    if isinstance(value, type):
        return {"kind": "class", "name": value.__qualname__}
    if isinstance(value, _Module):
        return {"kind": "data", "value": handle(value)}
    if callable(value):
        return {"kind": "function"}
    try:
        plain = exported(value)
        return {"kind": "data", "value": wire.replace_tensors(plain, [t.detach() for t in wire.tensors_in(plain)])}
    except wire.NotPlainData as error:
        return {"kind": "other", "why": str(error)}


def qualified(ref: dict) -> Any:
    if wire.REF in ref:  # a function of the notebook
        return resolve(ref)
    value = importlib.import_module(ref["module"])
    for part in filter(None, ref["qualname"].split(".")):
        value = getattr(value, part)
    return value
