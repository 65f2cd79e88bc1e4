"""A call of student code for the checker, in the kernel: under the rules the checker names, its
printed output dropped, its tensor inputs kept as leaves of a graph when the checker differentiates
through it (:func:`backward` answers for their gradients).

Nothing here goes through a module the notebook can replace (``contextlib``'s ``ExitStack``,
``redirect_stdout`` and ``contextmanager``, ``torch.set_grad_enabled``'s Python class): its context
managers are its own, and the classes it calls were taken when it was imported, before any student
code ran; the module is guarded, its classes' methods too (:func:`coursetools.checks.tamper.guard`).
"""

from __future__ import annotations

import types
from typing import Any

import torch

from coursetools.checks import handles, wire
from coursetools.checks.managers import Generated, GradMode, Nested, Quiet
from coursetools.checks.tamper import forbid, refuse, verify_untampered

_autograd_grad = torch.autograd.grad
_GeneratorType = types.GeneratorType
_MODULE_ITERATORS = {getattr(torch.nn.Module, name) for name in
                     ("parameters", "named_parameters", "buffers", "named_buffers", "children",
                      "named_children", "modules", "named_modules")}
graphs: dict[int, tuple[list[torch.Tensor], list[torch.Tensor]]] = {}  # graph id -> (leaves, outputs)


def _rule(rule: dict) -> Any:
    """The context manager of one rule the checker sent."""
    if rule["kind"] == "forbid":
        return forbid(*(handles.qualified(target) for target in rule["targets"]))
    if rule["kind"] == "refuse":
        return refuse(handles.qualified(rule["owner"]), tuple(rule["names"]), rule["message"])
    if rule["kind"] == "substitute":
        return _Substituted(rule["name"], handles.imported(rule["value"], []))
    # "enter": a context manager the locked cells define, defined afresh from their visible source
    return Generated(handles.locked_generator(rule["name"], rule["sources"])())


class _Substituted:
    """While entered, the notebook's ``name`` is ``value``; what it was comes back after."""

    _MISSING = object()

    def __init__(self, name: str, value: Any) -> None:
        self.name, self.value, self.saved = name, value, self._MISSING

    def __enter__(self) -> None:
        namespace = handles.notebook_names()
        self.saved = namespace.get(self.name, self._MISSING)
        namespace[self.name] = self.value

    def __exit__(self, kind: Any, error: Any, trace: Any) -> bool:
        namespace = handles.notebook_names()
        if self.saved is self._MISSING:
            namespace.pop(self.name, None)
        else:
            namespace[self.name] = self.saved
        return False


def call(request: dict) -> dict:
    function = handles.resolve(request["target"])
    args, kwargs = request["args"], request["kwargs"]
    leaves = _leaves([args, kwargs]) if request["grad"] else []
    passed: list = []
    args, kwargs = handles.imported(args, passed), handles.imported(kwargs, passed)
    with Nested([Quiet(), GradMode(bool(request["grad"] or request["grad_enabled"])),
                 *(_rule(rule) for rule in request["rules"])]):
        result = function(*args, **kwargs)
        if isinstance(result, _GeneratorType) and getattr(function, "__func__", None) in _MODULE_ITERATORS:
            result = list(result)  # model.parameters() and the like
    if request["rules"]:  # the rules swapped functions in and out: check they are back (else at ``reset``)
        verify_untampered()
    if request.get("new"):
        return {"value": handles.handle(result), "passed": handles.states(passed)}
    target = request["target"]
    value = handles.exported(result, strict=target[wire.REF] == "name" and not target.get("path"))
    outputs = wire.tensors_in(value)
    reply = {"value": wire.replace_tensors(value, [t.detach() for t in outputs]), "passed": handles.states(passed)}
    if request["grad"]:
        reply["graph"] = len(graphs) + 1
        reply["differentiable"] = [t.requires_grad for t in outputs]
        graphs[reply["graph"]] = (leaves, outputs)
    return reply


def _leaves(value: Any) -> list[torch.Tensor]:
    """The tensors of a request's arguments that require grad (references left out), in order."""
    if type(value) is torch.Tensor:
        return [value] if value.requires_grad else []
    if type(value) in (tuple, list):
        return [t for item in value for t in _leaves(item)]
    if type(value) is dict and wire.REF not in value:
        return [t for item in value.values() for t in _leaves(item)]
    return []


def backward(request: dict) -> list:
    leaves, outputs = graphs[request["graph"]]
    pairs = [(o, g) for o, g in zip(outputs, request["grads"]) if g is not None and o.requires_grad]
    if not leaves or not pairs:
        return [None] * len(leaves)
    with Quiet():
        grads = _autograd_grad([o for o, _ in pairs], leaves, [g for _, g in pairs], retain_graph=True,
                               allow_unused=True)
    return [None if g is None else handles.exported(g.detach()) for g in grads]
