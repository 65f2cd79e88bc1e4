"""A call into the kernel from the checker's side: its arguments as plain data (some objects passed by
value, their states copied back after), and a call whose inputs require grad as one node of the
checker's autograd graph, whose backward asks the kernel for the inputs' gradients."""

from __future__ import annotations

import base64
import numbers
import pickle
from typing import TYPE_CHECKING, Any

import numpy
import torch

from coursetools.checker.errors import KernelUnanswered
from coursetools.checker.proxies import Fake, KernelRef, LockedFunction, by_value
from coursetools.checks import wire

if TYPE_CHECKING:
    from coursetools.checker.runner import Checker


def outgoing(checker: Checker, value: Any, passed: list, where: str = "an argument") -> Any:
    """A value of the tests as plain data for the kernel (tensors detached, keeping requires_grad).

    A ``torch.Generator``, a module of torch or transformer_lib, or an instance of a class of the
    locked cells is passed by value (a generator's state; the others pickled: the kernel may
    unpickle what the checker sends, and it defines the locked cells' classes afresh from their
    visible source) and appended to ``passed``: a generator's or a module's state after the call
    is copied back (:func:`copy_back`). A hidden block's own objects cannot go."""
    if isinstance(value, KernelRef):
        return value._ref
    if isinstance(value, LockedFunction):
        return value.ref()
    if isinstance(value, Fake):
        value.checker = checker
        if value.id in checker.fakes_sent:  # the kernel has it
            return {wire.REF: "fake", "id": value.id}
        checker.fakes_sent[value.id] = value
        wraps = None if value.wraps is None else outgoing(checker, value.wraps, passed, where)
        return {wire.REF: "fake", "id": value.id, "names": value.names, "key": value.key, "wraps": wraps,
                "answers": value.answers is not None}  # the table stays here: each call asks for its entry
    if isinstance(value, torch.Generator):
        passed.append(value)
        return {wire.REF: "generator", "state": value.get_state()}
    if by_value(value):
        passed.append(value)
        data = pickle.dumps(value)
        return {wire.REF: "pickled", "data": base64.b64encode(data).decode("ascii"),  # text: JSON can carry it
                "sources": list(checker.locked_sources)}
    if isinstance(value, torch.Tensor):
        if type(value) not in (torch.Tensor, torch.nn.Parameter):
            raise TypeError(f"{where} is a {type(value).__name__}: only plain tensors go to the notebook")
        passed.append(value)  # a change the call makes in place comes back (copy_back)
        return value.detach().requires_grad_(value.requires_grad)
    if type(value) in (tuple, list):
        return type(value)(outgoing(checker, item, passed, where) for item in value)
    if type(value) is dict:
        return {key: outgoing(checker, item, passed, where) for key, item in value.items()}
    if isinstance(value, (torch.Size, torch.dtype)) or type(value) in (bool, int, float, str, type(None)):
        return value
    if isinstance(value, numbers.Integral):  # numpy's integers and bools, as Python's
        return bool(value) if isinstance(value, (bool, numpy.bool_)) else int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"{where} is a {type(value).__name__}: the tests can pass the notebook plain data, "
                    "handles and names of the notebook only")


class KernelCall(torch.autograd.Function):
    """A call into the kernel as one node of the checker's autograd graph."""

    @staticmethod
    def forward(ctx, call: dict, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        checker = call["checker"]
        reply = checker.request("call", **call["fields"])
        copy_back(call["passed"], reply)
        outputs = wire.tensors_in(reply["value"])
        call["value"] = reply["value"]
        ctx.checker, ctx.graph, ctx.n_inputs = checker, reply["graph"], len(inputs)
        frozen = [o for o, d in zip(outputs, reply["differentiable"]) if not d]
        if not outputs:
            outputs = [torch.zeros(0)]
            frozen = outputs
        ctx.mark_non_differentiable(*frozen)
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grads: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        got = ctx.checker.request("backward", graph=ctx.graph, grads=[g.detach() for g in grads])["value"]
        if len(got) != ctx.n_inputs:
            raise KernelUnanswered(f"the kernel returned {len(got)} gradients for {ctx.n_inputs} inputs")
        return (None, *got)


def grad_inputs(value: Any) -> list[torch.Tensor]:
    """The tensors of a call's arguments that require grad, in the order the kernel finds them
    (:func:`coursetools.checks.calls._leaves`): the leaves of a differentiable call."""
    if isinstance(value, torch.Tensor) and type(value) in (torch.Tensor, torch.nn.Parameter):
        return [value] if value.requires_grad else []
    if type(value) in (tuple, list):
        return [t for item in value for t in grad_inputs(item)]
    if type(value) is dict:
        return [t for item in value.values() for t in grad_inputs(item)]
    return []


def copy_back(passed: list, reply: dict) -> None:
    """Give the objects passed by value the states the kernel left them in (a generator that drew
    numbers moves on; a module or a tensor the student changed in place is changed here too, so that
    a test of the inputs after a call sees what one process would: it once could never fail)."""
    states = reply.get("passed")
    if type(states) is not list or len(states) != len(passed):
        raise KernelUnanswered("the kernel did not return the states of the objects it was given")
    for original, state in zip(passed, states):
        try:
            if isinstance(original, torch.Generator):
                original.set_state(state)
            elif isinstance(original, torch.nn.Module):
                with torch.no_grad():
                    original.load_state_dict(state)
            elif isinstance(original, torch.Tensor) and state is not None:
                _changed_in_place(original, state)
        except (RuntimeError, TypeError, KeyError) as error:
            raise AssertionError(f"the notebook left a {type(original).__name__} it was given in a state the "
                                 f"tests cannot read back: {str(error)[:300]}") from None


def _changed_in_place(original: torch.Tensor, state: Any) -> None:
    """Copy into ``original`` the value the call left its copy in; a change no copy can carry (a new
    shape or dtype, or a tensor that requires grad) fails the test."""
    if not isinstance(state, torch.Tensor):
        raise KernelUnanswered("the kernel returned a tensor argument's value as something else")
    if state.shape != original.shape or state.dtype != original.dtype or original.requires_grad:
        raise AssertionError(f"the notebook changed in place a tensor it was given (shape {tuple(original.shape)}, "
                             f"{original.dtype}{', requiring grad' if original.requires_grad else ''})")
    with torch.no_grad():
        original.copy_(state)
