"""Hidden tests run here, in the grading process, never in the student's kernel.

A graded cell's visible part runs in the kernel; its hidden block (``### BEGIN HIDDEN TESTS``)
is executed by a :class:`Checker`, which never runs student code and never sends the kernel a
line of the hidden tests: only calls and plain data (:mod:`coursetools.checks.wire`), answered by
:mod:`coursetools.checks.bridge` in the kernel. A :class:`KernelChannel` is how a checker reaches the
kernel (:class:`coursetools.checker.kernel_link.KernelLink`, over nbclient's client in
:mod:`coursetools.grading.checked_execute` and jupyter_client's in :mod:`coursetools.devtools.session`), so every
grader uses the same path.

What a hidden block's names mean in the checker:

* the locked cells' imports, functions and classes are the instructor's, executed here
  (:meth:`Checker.add_locked`) in the order of the notebook: a helper such as a test's
  ``first_broken_rule`` is the one the test cell defines, whatever the notebook redefined. A
  locked function runs here, or in the kernel when it is given the kernel's objects (then
  defined afresh there from its visible source, :class:`LockedFunction`); an instance of a
  locked class goes to the kernel pickled, its class defined afresh there. A constant is taken
  here when it is computed without a call from names bound here (``PAD_ID, BOS_ID = 0, 1``; a
  tuple of torch functions); a ``@contextmanager`` function stays in the kernel (entered there
  around each call made inside it). Other values of locked cells (computed ones: random draws,
  a student's results) are read from the kernel like any student value, so a hidden test
  computes its expected values itself;
* every other free name is looked up in the kernel when the block starts: plain data becomes a
  copy, a function a :class:`KernelRef` (looked up again at each call), a class a
  :class:`KernelClass` (constructing one gives a :class:`Handle` to the object in the kernel).

A call whose tensor arguments require grad is differentiable here: the kernel keeps the graph,
and autograd in the checker (``backward``, ``torch.autograd.grad``, ``gradcheck``) asks it for the
inputs' gradients. ``forbid``/``refuse`` used by a hidden block are recorded and applied in the
kernel around every call made inside them. An exception raised by student code comes back as the
builtin exception class it is an instance of (``TamperingError`` as itself), so ``expect_raises``
works; printed output of student code during a check is dropped. Every hidden block sees
``term_seed(n)``, the seed ``n`` of this term (:mod:`coursetools.checker.term`).
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import math
import sys
import types
from collections.abc import Callable
from typing import Any, Protocol

import torch

from coursetools.checker.clock import Clock, wall_clock
from coursetools.checker.errors import CheckTimeout, KernelUnanswered, exception_from
from coursetools.checker.proxies import Fake, KernelClass, KernelContext, KernelRef, LockedFunction, incoming
from coursetools.checker.rules import Rules, checks_module
from coursetools.checker.scopes import is_contextmanager, parse_cell, scope_names
from coursetools.checker.transfer import KernelCall, copy_back, grad_inputs, outgoing
from coursetools.checks import wire
from coursetools.checks.names import LOCKED_MODULE
from coursetools.checks.tamper import TamperingError

BRIDGE_IMPORT = '__import__("coursetools.checks.bridge") and None'
UNLIMITED = wall_clock(math.inf)  # the clock of calls made outside a cell's time (none is)
_MISSING = object()


class KernelChannel(Protocol):
    """How a checker reaches the kernel's bridge (:class:`coursetools.checker.kernel_link.KernelLink`)."""

    def ask(self, request: str, clock: Clock) -> str | None:
        """Send ``request`` (text, :func:`coursetools.checks.wire.to_text`) to the bridge and return its
        reply (text), or None when the kernel handled it without replying; once ``clock`` has passed
        its limit, interrupt the kernel and raise :class:`CheckTimeout`."""

    def end(self) -> None:
        """The hidden block is over: leave the kernel free to run cells."""


class Checker:
    """Runs hidden blocks against one notebook's kernel, reached through ``kernel``.

    :attr:`clock`, when set, is the current cell's time (:class:`~coursetools.checker.clock.Clock`).
    """

    _count = 0

    def __init__(self, kernel: KernelChannel, term_seed: Callable[[int], int] = int):
        self.kernel = kernel
        self.rules = Rules()
        self.clock: Clock | None = None
        own_checks = checks_module(self)
        real_import = builtins.__import__

        tools_module = types.ModuleType("coursetools.checker")
        tools_module.Fake, tools_module.substitute = Fake, self.substitute

        def checker_import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
            if name in ("coursetools.checks", "coursetools.checker") and fromlist:
                return own_checks if name == "coursetools.checks" else tools_module
            return real_import(name, globals, locals, fromlist, level)

        # the locked cells' classes live in a module of their own, so that their instances pickle
        Checker._count += 1
        self.module = types.ModuleType(f"{LOCKED_MODULE}{Checker._count}")
        sys.modules[self.module.__name__] = self.module
        own_builtins = dict(vars(builtins), __import__=checker_import, term_seed=term_seed)
        self.namespace: dict[str, Any] = {"__builtins__": own_builtins, "__name__": self.module.__name__}
        self.own: set[str] = set()  # names bound by the instructor's code, here
        self.kernel_names: set[str] = set()  # names looked up in the kernel
        self.wanted: set[str] = set()  # free names of the locked functions executed here
        self.locked_sources: list[str] = []  # the locked functions, for the kernel (LockedFunction)
        self.fakes_sent: dict[int, Fake] = {}  # the fakes the kernel holds (until the block ends), by id
        if hasattr(kernel, "entries"):
            kernel.entries = self._entry
        torch.set_num_threads(1)  # as the notebooks' kernels: tiny tensors, and graders share machines

    def use_term(self, term_seed: Callable[[int], int]) -> None:
        """The hidden blocks run from now on draw their seeds from ``term_seed`` (another term's)."""
        self.namespace["__builtins__"]["term_seed"] = term_seed

    def substitute(self, name: str, value: Any) -> contextlib.AbstractContextManager:
        """While the block runs, the notebook's ``name`` is ``value`` (a :class:`Fake`, plain data) in
        the kernel, during every call made inside it: for student code that calls a name of the
        notebook, a stand-in that knows nothing of the student's other answers."""
        return self.rules.active({"kind": "substitute", "name": name, "value": outgoing(self, value, [])})

    # -- the locked cells ---------------------------------------------------------------------

    def add_locked(self, source: str) -> None:
        """Bind what a locked cell (or a test cell's visible part) defines, as described above."""
        tree = parse_cell(source)
        for statement in tree.body if tree else []:
            if isinstance(statement, ast.FunctionDef) and any(is_contextmanager(d) for d in statement.decorator_list):
                bare = copy.copy(statement)
                bare.decorator_list = [d for d in statement.decorator_list if not is_contextmanager(d)]
                self.namespace[statement.name] = KernelContext(self.rules, statement.name, ast.unparse(bare),
                                                               self.locked_sources)
                self.own.add(statement.name)
            elif isinstance(statement, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)) or \
                    self._is_constant(statement):
                code = ast.Module(body=[statement], type_ignores=[])
                try:
                    exec(compile(code, "<locked cell>", "exec"), self.namespace)  # noqa: S102 - the instructor's code
                except Exception:  # noqa: BLE001 - it needs a value of the kernel: looked up there instead
                    continue
                if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
                    self.locked_sources.append(ast.unparse(statement))
                if isinstance(statement, ast.ClassDef):
                    setattr(self.module, statement.name, self.namespace[statement.name])
                if isinstance(statement, ast.FunctionDef):
                    self.namespace[statement.name] = LockedFunction(self, statement.name,
                                                                    self.namespace[statement.name])
                bound, free = scope_names(ast.unparse(statement))
                self.own |= bound
                self.kernel_names -= bound
                self.wanted |= free

    def _is_constant(self, statement: ast.stmt) -> bool:
        """An assignment to names of a value computed without a call, from the names bound here
        (``PAD_ID, BOS_ID = 0, 1``; ``AUTOGRAD = (torch.autograd.grad, ...)``)."""
        if not isinstance(statement, ast.Assign):
            return False
        targets = [n for t in statement.targets for n in (t.elts if isinstance(t, ast.Tuple) else [t])]
        if not all(isinstance(n, ast.Name) for n in targets):
            return False
        nodes = list(ast.walk(statement.value))
        return not any(isinstance(n, (ast.Call, ast.Lambda, ast.NamedExpr)) for n in nodes) and all(
            n.id in self.own or n.id in vars(builtins) for n in nodes if isinstance(n, ast.Name))

    def add_setup(self, source: str) -> None:
        """Define a hidden block's setup (:func:`coursetools.common.hidden.split_setup`) here, without a
        call into the kernel: its helpers stay bound for the later hidden blocks, whose runs look up the
        notebook's names these helpers read (as for the locked functions)."""
        if not source.strip():
            return
        bound, free = scope_names(source)
        exec(compile(source, "<hidden setup>", "exec"), self.namespace)  # noqa: S102 - the instructor's code
        self.own |= bound
        self.kernel_names -= bound
        self.wanted |= free - bound

    # -- a hidden block -----------------------------------------------------------------------

    def run_hidden(self, source: str) -> None:
        """Execute a hidden block; raises what it raises (an ``AssertionError`` for a failed check).
        The kernel is free to run cells again when it returns."""
        try:
            self._run_block(source)
        finally:
            self.kernel.end()

    def _run_block(self, source: str) -> None:
        bound, free = scope_names(source)
        wanted = (free | self.wanted) - self.own - set(vars(builtins))
        try:
            self._bind(sorted(wanted | (self.kernel_names & free)))
            self.own |= bound
            self.kernel_names -= bound
            exec(compile(source, "<hidden tests>", "exec"), self.namespace)  # noqa: S102 - the instructor's code
        except BaseException as error:
            try:
                self._reset()
            except TamperingError as tampering:  # the failure may come from it: say so
                raise tampering from error
            except Exception:  # noqa: BLE001 - the block's own error is the one to report
                pass
            raise
        self._reset()  # raises TamperingError when the notebook replaced what the tests rely on

    def _reset(self) -> None:
        self.rules.stack.clear()
        self.fakes_sent.clear()
        self.request("reset")

    def _bind(self, names: list[str]) -> None:
        if not names:
            return
        found = self.request("lookup", names=names)["value"]
        for name, what in found.items():
            value = self._value(name, what)
            if value is _MISSING:
                self.namespace.pop(name, None)
                self.kernel_names.discard(name)
            else:
                self.namespace[name] = value
                self.kernel_names.add(name)

    def _value(self, name: str, what: dict) -> Any:
        kind, ref = what["kind"], {wire.REF: "name", "name": name}
        if kind == "data":
            return incoming(self, what["value"])
        if kind == "class":
            return KernelClass(self, ref)
        if kind == "module" and what["name"] in sys.modules:
            return sys.modules[what["name"]]
        if kind == "missing":
            return _MISSING
        return KernelRef(self, ref)

    # -- requests ------------------------------------------------------------------------------

    def _entry(self, text: str) -> str:
        """The reply to a fake's question from the kernel: the entry of its table at the key asked
        (plain data, or an error), never the rest of the table."""
        try:
            question = wire.from_text(text)
            fake = self.fakes_sent[question["id"]]
            value = fake.answers[tuple(question["key"])]
            return wire.to_text({"value": outgoing(self, copy.deepcopy(value), [])})
        except (KeyError, TypeError, wire.NotPlainData) as error:
            return wire.to_text({"error": f"no answer for {type(error).__name__}: {str(error)[:200]}"})


    def request(self, op: str, **fields: Any) -> dict:
        """Send one request to the kernel and return its decoded reply; an exception the notebook's
        code raised is raised here as its builtin class."""
        clock = self.clock or UNLIMITED
        if passed := clock.passed():
            raise CheckTimeout(f"the hidden tests ran past the cell's time limit ({clock.limit_text(passed)})")
        text = self.kernel.ask(wire.to_text({"op": op, **fields}), clock)
        if text is None:
            raise KernelUnanswered("the notebook's kernel did not answer the tests")
        try:
            reply = wire.from_text(text)
        except wire.NotPlainData as error:
            raise AssertionError(str(error)) from None
        if type(reply) is not dict:
            raise KernelUnanswered("the notebook's kernel gave the tests a reply that is not one")
        if "error" in reply:
            raise exception_from(reply["error"])
        return reply

    def call(self, ref: dict, args: tuple, kwargs: dict, new: bool = False) -> Any:
        """Call the kernel's object ``ref`` with ``args`` and ``kwargs`` under the rules in force."""
        passed: list = []
        plain_args, plain_kwargs = outgoing(self, list(args), passed), outgoing(self, dict(kwargs), passed)
        inputs = grad_inputs([args, kwargs])
        grad = torch.is_grad_enabled() and bool(inputs) and not new
        fields = {"target": ref, "args": plain_args, "kwargs": plain_kwargs, "rules": list(self.rules.stack),
                  "grad": grad, "grad_enabled": torch.is_grad_enabled(), "new": new}
        if not grad:
            reply = self.request("call", **fields)
            copy_back(passed, reply)
            return incoming(self, reply["value"])
        call = {"checker": self, "fields": fields, "passed": passed}
        outputs = KernelCall.apply(call, *inputs)
        value = call["value"]
        if wire.tensors_in(value):
            value = wire.replace_tensors(value, list(outputs))
        return incoming(self, value)

    def getattr(self, ref: dict, name: str) -> Any:
        what = self.request("getattr", target=ref, name=name)["value"]
        path_ref = {**ref, "path": [*ref.get("path", ()), name]}
        if what["kind"] == "data":
            return incoming(self, what["value"])
        return KernelClass(self, path_ref) if what["kind"] == "class" else KernelRef(self, path_ref)
