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
works; printed output of student code during a check is dropped.
"""

from __future__ import annotations

import ast
import base64
import builtins
import contextlib
import importlib
import math
import numbers
import pickle
import symtable
import sys
import time
import types
from collections.abc import Callable
from typing import Any, Iterator, Protocol

import numpy
import torch
from IPython.core.inputtransformer2 import TransformerManager

from coursetools import checks
from coursetools.checks import wire
from coursetools.checks.names import LOCKED_MODULE
from coursetools.checks.tamper import TamperingError, torch_original

BRIDGE_IMPORT = '__import__("coursetools.checks.bridge") and None'


class StudentError(Exception):
    """The notebook's code raised an exception that is not a builtin one (its class is named)."""


class CheckTimeout(Exception):
    """The hidden tests ran past the cell's time limit (a call into the kernel was interrupted)."""


class KernelUnanswered(AssertionError):
    """The kernel gave no valid reply to the tests (its bridge was broken or replaced)."""


# --- references to the kernel's objects -----------------------------------------------------

class KernelRef:
    """A function, or any object, of the notebook, reached by name or handle (and attribute path)."""

    __slots__ = ("_checker", "_ref")

    def __init__(self, checker: "Checker", ref: dict):
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
        if module.split(".")[0] in _LIBRARIES and module in sys.modules:
            found = sys.modules[module]
            for part in name.split("."):
                found = getattr(found, part, None)
            if isinstance(found, type):
                return found
        return Handle

    def __iter__(self) -> Iterator[Any]:
        raise TypeError(f"{self!r} lives in the notebook's kernel: iterate over a method's result instead")


# --- the recorded rules and the checker's own coursetools.checks -------------------------------

def _qualified(value: Any) -> dict:
    """A module, class or function of an importable module, as the kernel can find it again."""
    if isinstance(value, KernelRef):
        return value._ref
    if isinstance(value, types.ModuleType):
        return {"module": value.__name__, "qualname": ""}
    value = torch_original(value)  # nn.Module.__init__ once torch._dynamo has patched it, say
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", "")
    found = importlib.import_module(module) if module else None
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if torch_original(found) is not value:
        raise ValueError(f"a rule can only name importable modules, classes and functions, got {value!r}")
    return {"module": module, "qualname": qualname}


class _Rules:
    """The rules in force (a stack), sent with each call into the kernel."""

    def __init__(self) -> None:
        self.stack: list[dict] = []

    @contextlib.contextmanager
    def active(self, rule: dict) -> Iterator[None]:
        self.stack.append(rule)
        try:
            yield
        finally:
            self.stack.remove(rule)

    def forbid(self, *references: Any) -> contextlib.AbstractContextManager:
        """:func:`coursetools.checks.tamper.forbid`, applied in the kernel around each call inside the block."""
        return self.active({"kind": "forbid", "targets": [_qualified(r) for r in references]})

    def refuse(self, owner: Any, names: str | tuple[str, ...], message: str) -> contextlib.AbstractContextManager:
        """:func:`coursetools.checks.tamper.refuse`, applied in the kernel around each call inside the block."""
        names = [names] if isinstance(names, str) else list(names)
        return self.active({"kind": "refuse", "owner": _qualified(owner), "names": names, "message": message})


class LockedFunction:
    """A function of the locked cells: run here, unless an argument lives in the kernel (a handle, a
    function of the notebook): then in the kernel, defined afresh from the locked cells' source
    (visible code), so that what it does with the kernel's objects happens where they are."""

    def __init__(self, checker: "Checker", name: str, function: Callable[..., Any]):
        self.checker, self.name, self.function = checker, name, function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not _holds_kernel_objects([args, kwargs]):
            return self.function(*args, **kwargs)
        return self.checker.call(self.ref(), args, kwargs)

    def ref(self) -> dict:
        return {wire.REF: "locked", "name": self.name, "sources": list(self.checker.locked_sources)}


def _holds_kernel_objects(value: Any) -> bool:
    if isinstance(value, (KernelRef, Fake)) or (isinstance(value, torch.nn.Module) and _by_value(value)):
        return True
    if type(value) in (tuple, list):
        return any(_holds_kernel_objects(v) for v in value)
    if type(value) is dict:
        return any(_holds_kernel_objects(v) for v in value.values())
    return False


class Fake:
    """A function that hidden tests hand to student code, run in the kernel (the kernel cannot call
    the checker back), with the parameters ``names``: each call's arguments are recorded by name
    (:attr:`calls`; a generator as its state), and it returns a copy of ``answers[tuple(the
    arguments named in key)]`` (a name may read an attribute: ``"mha.tag"``), what
    ``wraps`` (a function of the notebook, a handle) returns, or None (a hook that records what it
    sees). ``answers`` is plain data, built by the test; student code sees it as it would see the
    answers of the function it stands for."""

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
        return self.checker._incoming(self.checker.request("calls", id=self.id)["value"])


class KernelContext:
    """A context manager that a locked cell defines, entered in the kernel around each call."""

    def __init__(self, rules: _Rules, name: str):
        self.rules, self.name = rules, name

    def __call__(self) -> contextlib.AbstractContextManager:
        return self.rules.active({"kind": "enter", "name": self.name})


def _checks_module(checker: "Checker") -> types.ModuleType:
    """What ``from coursetools.checks import ...`` gives a hidden block: the same comparisons, with
    ``verify_untampered`` asked of the kernel and ``forbid``/``refuse`` recorded for it.

    The comparisons run here, where no student code runs, so they do not check this process for
    tampering before each assertion as they do in the kernel (a millisecond each): the kernel is
    checked after each call made under a rule and at the end of each block."""
    module = types.ModuleType("coursetools.checks")
    untouched = {**vars(checks), "verify_untampered": lambda: None}
    for name in checks.__all__:
        value = original = getattr(checks, name)
        if type(original) is types.FunctionType and original.__globals__ is vars(checks):
            value = types.FunctionType(original.__code__, untouched, name, original.__defaults__, original.__closure__)
            value.__kwdefaults__ = original.__kwdefaults__
        module.__dict__[name] = value
    module.verify_untampered = lambda: checker.request("verify")
    module.forbid, module.refuse = checker.rules.forbid, checker.rules.refuse
    return module


# --- differentiable calls ---------------------------------------------------------------------

class _KernelCall(torch.autograd.Function):
    """A call into the kernel as one node of the checker's autograd graph."""

    @staticmethod
    def forward(ctx, call: dict, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        checker = call["checker"]
        reply = checker.request("call", **call["fields"])
        _copy_back(call["passed"], reply)
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


# --- the checker --------------------------------------------------------------------------------

class KernelChannel(Protocol):
    """How a checker reaches the kernel's bridge (:class:`coursetools.checker.kernel_link.KernelLink`)."""

    def ask(self, request: str, deadline: float) -> str | None:
        """Send ``request`` (text, :func:`coursetools.checks.wire.to_text`) to the bridge and return its
        reply (text), or None when the kernel handled it without replying; past ``deadline``
        (``time.monotonic()`` seconds), interrupt the kernel and raise :class:`CheckTimeout`."""

    def end(self) -> None:
        """The hidden block is over: leave the kernel free to run cells."""


class Checker:
    """Runs hidden blocks against one notebook's kernel, reached through ``kernel``.

    :attr:`deadline`, when set, is when the current cell's time is up.
    """

    _count = 0

    def __init__(self, kernel: KernelChannel):
        self.kernel = kernel
        self.rules = _Rules()
        self.deadline: float | None = None
        checks_module = _checks_module(self)
        real_import = builtins.__import__

        tools_module = types.ModuleType("coursetools.checker")
        tools_module.Fake, tools_module.substitute = Fake, self.substitute

        def checker_import(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
            if name in ("coursetools.checks", "coursetools.checker") and fromlist:
                return checks_module if name == "coursetools.checks" else tools_module
            return real_import(name, globals, locals, fromlist, level)

        # the locked cells' classes live in a module of their own, so that their instances pickle
        Checker._count += 1
        self.module = types.ModuleType(f"{LOCKED_MODULE}{Checker._count}")
        sys.modules[self.module.__name__] = self.module
        own_builtins = dict(vars(builtins), __import__=checker_import)
        self.namespace: dict[str, Any] = {"__builtins__": own_builtins, "__name__": self.module.__name__}
        self.own: set[str] = set()  # names bound by the instructor's code, here
        self.kernel_names: set[str] = set()  # names looked up in the kernel
        self.wanted: set[str] = set()  # free names of the locked functions executed here
        self.locked_sources: list[str] = []  # the locked functions, for the kernel (LockedFunction)
        self.fakes_sent: set[int] = set()  # the fakes the kernel holds (until the block ends)
        torch.set_num_threads(1)  # as the notebooks' kernels: tiny tensors, and graders share machines

    def substitute(self, name: str, value: Any) -> contextlib.AbstractContextManager:
        """While the block runs, the notebook's ``name`` is ``value`` (a :class:`Fake`, plain data) in
        the kernel, during every call made inside it: for student code that calls a name of the
        notebook, a stand-in that knows nothing of the student's other answers."""
        return self.rules.active({"kind": "substitute", "name": name, "value": self._outgoing(value, [])})

    # -- the locked cells ---------------------------------------------------------------------

    def add_locked(self, source: str) -> None:
        """Bind what a locked cell (or a test cell's visible part) defines, as described above."""
        tree = _parse(source)
        for statement in tree.body if tree else []:
            if isinstance(statement, ast.FunctionDef) and any(_is_contextmanager(d) for d in statement.decorator_list):
                self.namespace[statement.name] = KernelContext(self.rules, statement.name)
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
                bound, free = _names(ast.unparse(statement))
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

    # -- a hidden block -----------------------------------------------------------------------

    def run_hidden(self, source: str) -> None:
        """Execute a hidden block; raises what it raises (an ``AssertionError`` for a failed check).
        The kernel is free to run cells again when it returns."""
        try:
            self._run_block(source)
        finally:
            self.kernel.end()

    def _run_block(self, source: str) -> None:
        bound, free = _names(source)
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
            return self._incoming(what["value"])
        if kind == "class":
            return KernelClass(self, ref)
        if kind == "module" and what["name"] in sys.modules:
            return sys.modules[what["name"]]
        if kind == "missing":
            return _MISSING
        return KernelRef(self, ref)

    # -- requests ------------------------------------------------------------------------------

    def request(self, op: str, **fields: Any) -> dict:
        """Send one request to the kernel and return its decoded reply; an exception the notebook's
        code raised is raised here as its builtin class."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise CheckTimeout("the hidden tests ran past the cell's time limit")
        text = self.kernel.ask(wire.to_text({"op": op, **fields}),
                               math.inf if self.deadline is None else self.deadline)
        if text is None:
            raise KernelUnanswered("the notebook's kernel did not answer the tests")
        try:
            reply = wire.from_text(text)
        except wire.NotPlainData as error:
            raise AssertionError(str(error)) from None
        if type(reply) is not dict:
            raise KernelUnanswered("the notebook's kernel gave the tests a reply that is not one")
        if "error" in reply:
            raise _exception(reply["error"])
        return reply

    def call(self, ref: dict, args: tuple, kwargs: dict, new: bool = False) -> Any:
        """Call the kernel's object ``ref`` with ``args`` and ``kwargs`` under the rules in force."""
        passed: list = []
        plain_args, plain_kwargs = self._outgoing(list(args), passed), self._outgoing(dict(kwargs), passed)
        inputs = _grad_inputs([args, kwargs])
        grad = torch.is_grad_enabled() and bool(inputs) and not new
        fields = {"target": ref, "args": plain_args, "kwargs": plain_kwargs, "rules": list(self.rules.stack),
                  "grad": grad, "grad_enabled": torch.is_grad_enabled(), "new": new}
        if not grad:
            reply = self.request("call", **fields)
            _copy_back(passed, reply)
            return self._incoming(reply["value"])
        call = {"checker": self, "fields": fields, "passed": passed}
        outputs = _KernelCall.apply(call, *inputs)
        value = call["value"]
        if wire.tensors_in(value):
            value = wire.replace_tensors(value, list(outputs))
        return self._incoming(value)

    def getattr(self, ref: dict, name: str) -> Any:
        what = self.request("getattr", target=ref, name=name)["value"]
        path_ref = {**ref, "path": [*ref.get("path", ()), name]}
        if what["kind"] == "data":
            return self._incoming(what["value"])
        return KernelClass(self, path_ref) if what["kind"] == "class" else KernelRef(self, path_ref)

    def _outgoing(self, value: Any, passed: list, where: str = "an argument") -> Any:
        """A value of the tests as plain data for the kernel (tensors detached, keeping requires_grad).

        A ``torch.Generator``, a module of torch or transformer_lib, or an instance of a class of the
        locked cells is passed by value (a generator's state; the others pickled: the kernel may
        unpickle what the checker sends, and it defines the locked cells' classes afresh from their
        visible source) and appended to ``passed``: a generator's or a module's state after the call
        is copied back (:func:`_copy_back`). A hidden block's own objects cannot go."""
        if isinstance(value, KernelRef):
            return value._ref
        if isinstance(value, LockedFunction):
            return value.ref()
        if isinstance(value, Fake):
            value.checker = self
            if value.id in self.fakes_sent:  # the kernel has it
                return {wire.REF: "fake", "id": value.id}
            self.fakes_sent.add(value.id)
            wraps = None if value.wraps is None else self._outgoing(value.wraps, passed, where)
            return {wire.REF: "fake", "id": value.id, "names": value.names, "key": value.key, "wraps": wraps,
                    "answers": self._outgoing(value.answers, passed, where)}
        if isinstance(value, torch.Generator):
            passed.append(value)
            return {wire.REF: "generator", "state": value.get_state()}
        if _by_value(value):
            passed.append(value)
            data = pickle.dumps(value)
            return {wire.REF: "pickled", "data": base64.b64encode(data).decode("ascii"),  # text: JSON can carry it
                    "sources": list(self.locked_sources)}
        if isinstance(value, torch.Tensor):
            if type(value) not in (torch.Tensor, torch.nn.Parameter):
                raise TypeError(f"{where} is a {type(value).__name__}: only plain tensors go to the notebook")
            return value.detach().requires_grad_(value.requires_grad)
        if type(value) in (tuple, list):
            return type(value)(self._outgoing(item, passed, where) for item in value)
        if type(value) is dict:
            return {key: self._outgoing(item, passed, where) for key, item in value.items()}
        if isinstance(value, (torch.Size, torch.dtype)) or type(value) in (bool, int, float, str, type(None)):
            return value
        if isinstance(value, numbers.Integral):  # numpy's integers and bools, as Python's
            return bool(value) if isinstance(value, (bool, numpy.bool_)) else int(value)
        if isinstance(value, numbers.Real):
            return float(value)
        raise TypeError(f"{where} is a {type(value).__name__}: the tests can pass the notebook plain data, "
                        "handles and names of the notebook only")

    def _incoming(self, value: Any) -> Any:
        """A decoded reply value with the kernel's handles as :class:`Handle` objects."""
        if type(value) is dict:
            if value.get(wire.REF) == "handle":
                return Handle(self, value)
            return {key: self._incoming(item) for key, item in value.items()}
        if type(value) in (tuple, list):
            return type(value)(self._incoming(item) for item in value)
        return value


_MISSING = object()
_LIBRARIES = ("torch", "transformer_lib")  # whose modules a hidden test may pass to student code


def _grad_inputs(value: Any) -> list[torch.Tensor]:
    """The tensors of a call's arguments that require grad, in the order the kernel finds them
    (:func:`coursetools.checks.bridge._leaves`): the leaves of a differentiable call."""
    if isinstance(value, torch.Tensor) and type(value) in (torch.Tensor, torch.nn.Parameter):
        return [value] if value.requires_grad else []
    if type(value) in (tuple, list):
        return [t for item in value for t in _grad_inputs(item)]
    if type(value) is dict:
        return [t for item in value.values() for t in _grad_inputs(item)]
    return []


def _by_value(value: Any) -> bool:
    """Whether ``value`` goes to the kernel pickled: a module of torch or transformer_lib, or an
    instance of a locked cell's class."""
    module = type(value).__module__
    return (isinstance(value, torch.nn.Module) and module.split(".")[0] in _LIBRARIES) or \
        module.startswith(LOCKED_MODULE)


def _copy_back(passed: list, reply: dict) -> None:
    """Give the objects passed by value the states the kernel left them in (a generator that drew
    numbers moves on; a module the student changed in place is changed here too)."""
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
        except (RuntimeError, TypeError, KeyError) as error:
            raise AssertionError(f"the notebook left a {type(original).__name__} it was given in a state the "
                                 f"tests cannot read back: {str(error)[:300]}") from None


def _exception(error: Any) -> Exception:
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


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(TransformerManager().transform_cell(source))
    except SyntaxError:
        return None


def _is_contextmanager(decorator: ast.expr) -> bool:
    return ast.unparse(decorator).split(".")[-1] in ("contextmanager", "asynccontextmanager")


def _names(source: str) -> tuple[set[str], set[str]]:
    """(the names ``source`` binds at its top level, the global names it reads without binding them),
    functions' bodies included."""
    table = symtable.symtable(source, "<hidden tests>", "exec")
    bound = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()
             or s.is_namespace()}
    used: set[str] = set()

    def walk(scope: symtable.SymbolTable, top: bool) -> None:
        for symbol in scope.get_symbols():
            if symbol.is_referenced() and (top or symbol.is_global()):
                used.add(symbol.get_name())
            if not top and symbol.is_declared_global() and symbol.is_assigned():
                bound.add(symbol.get_name())
        for child in scope.get_children():
            walk(child, False)

    walk(table, True)
    return bound, used - bound
