"""The kernel's end of the checker's calls: the only grading code that runs in a student's kernel.

Grading imports this module into the kernel before the notebook's first cell; importing it
registers the comm target :data:`~coursetools.checks.names.COMM_TARGET`, which the checker opens
(:mod:`coursetools.checker.kernel_link`). The hidden tests run in a checker process
(:mod:`coursetools.checker`). At the start of a hidden block the checker sends a comm message,
which ipykernel hands to :func:`_serve` without running a cell (no history, no execution count);
:func:`_serve` connects to the checker's socket, and each time the block uses a name of the
notebook the checker sends a request on it, :func:`answer` answers it, and the reply goes back on
it, until the checker ends the block. A request and a reply are plain data
(:mod:`coursetools.checks.wire`): what a student's code can learn from them is the inputs its functions
are called with.

:func:`answer` answers:

* ``lookup``: what each name of the notebook is (plain data is sent as a copy; functions,
  classes and modules are described; an ``nn.Module`` is kept behind a handle);
* ``call``: call a name, a handle or an attribute path of either with arguments, under the
  rules the checker names (``forbid``/``refuse`` of :mod:`coursetools.checks.tamper`, a context manager
  the notebook's locked cells define), print output dropped, ``verify_untampered()`` after (when
  rules were applied; else at the block's ``reset``);
  with ``grad``, the call's tensor inputs that require grad are leaves and the graph is kept
  for ``backward``;
* ``getattr``: an attribute of a handle or name, described as ``lookup`` does;
* ``backward``: gradients of a kept call's inputs for given gradients of its outputs;
* ``verify``: :func:`~coursetools.checks.tamper.verify_untampered`; ``reset`` (the end of a hidden block):
  the same, then forget handles, graphs and fakes.

A student can replace this module in their kernel: that changes only the answers the checker
receives, which it treats as untrusted data anyway (and the submission scan reports code that
reaches into ``sys.modules`` or ``coursetools``).
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import copy
import importlib
import io
import pickle
import types
from collections import OrderedDict
from typing import Any

import torch
import zmq
from IPython import get_ipython

from coursetools.checks import wire
from coursetools.checks.names import COMM_TARGET, END_SERVING, LOCKED_MODULE, READY
from coursetools.checks.tamper import TamperingError, forbid, refuse, verify_untampered

_autograd_grad = torch.autograd.grad
_set_grad_enabled = torch.set_grad_enabled
_Module = torch.nn.Module
_MODULE_ITERATORS = {getattr(torch.nn.Module, name) for name in
                     ("parameters", "named_parameters", "buffers", "named_buffers", "children",
                      "named_children", "modules", "named_modules")}
_handles: dict[int, Any] = {}  # handle id -> object
_handle_of: dict[int, int] = {}  # id(object) -> handle id
_graphs: dict[int, tuple[list[torch.Tensor], list[torch.Tensor]]] = {}  # graph id -> (leaves, outputs)
_fakes: dict[int, "_Fake"] = {}  # the checker's fakes (coursetools.checker.Fake), by its id
_compiled: dict[str, types.CodeType] = {}  # the locked cells' functions, by source
_sockets: dict[str, Any] = {}  # the sockets the checker's requests come on, by the checker's address


class _Fake:
    """A function for student code to call, made for the checker (``coursetools.checker.Fake``):
    records each call's arguments by parameter name and returns a copy of ``answers[the arguments
    named in key]``, what ``wraps`` returns, or None."""

    def __init__(self, spec: dict, wraps: Any) -> None:
        self.names, self.answers, self.key = spec["names"], spec["answers"], spec["key"]
        self.wraps, self.calls = wraps, []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) > len(self.names) or set(kwargs) - set(self.names[len(args):]):
            raise TypeError(f"this function takes ({', '.join(self.names)}), got {len(args)} positional "
                            f"arguments and {sorted(kwargs)}")
        bound = {**dict(zip(self.names, args)), **kwargs}
        self.calls.append({k: v.get_state() if isinstance(v, torch.Generator) else v for k, v in bound.items()})
        if self.wraps is not None:
            return self.wraps(*args, **kwargs)
        if self.answers is not None:
            return copy.deepcopy(self.answers[tuple(_path(bound, name) for name in self.key)])
        return None


def answer(text: str) -> str:
    """The reply to one request (both plain data as text, :func:`coursetools.checks.wire.to_text`)."""
    try:
        request = wire.from_text(text)
        reply = {"value": _OPS[request["op"]](request)} if request["op"] != "call" else _call(request)
        return wire.to_text(reply)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - every failure of the student's code is reported
        return wire.to_text({"error": _describe_error(error)})


def _opened(comm: Any, message: dict) -> None:
    """The checker opened its comm: each of its messages asks the bridge to serve a hidden block."""
    comm.on_msg(lambda message: _serve(message["content"]["data"]))


def _serve(data: dict) -> None:
    """Answer the checker's requests on its socket (``data["serve"]``, where it listens) until it
    says the block is over. Each request is a message (its number, its text), each reply the same
    number and the answer's text."""
    socket = _sockets.get(data["serve"])
    if socket is None or socket.closed:
        socket = _sockets[data["serve"]] = zmq.Context.instance().socket(zmq.PAIR)
        socket.linger = 0
        socket.connect(data["serve"])
    socket.send_multipart([READY + str(data["number"]).encode(), b""])
    while True:
        frames = socket.recv_multipart()
        if frames[0] == END_SERVING:
            return
        if len(frames) == 2:
            socket.send_multipart([frames[0], answer(frames[1].decode("utf-8", errors="replace")).encode()])


def _register() -> None:
    shell = get_ipython()
    if shell is not None and hasattr(shell, "kernel"):  # imported by a kernel (not by a test's process)
        shell.kernel.comm_manager.register_target(COMM_TARGET, _opened)


def _describe_error(error: BaseException) -> list[str]:
    """[the builtin exception class it is an instance of, its own class name, its message]."""
    if isinstance(error, TamperingError):
        base = "TamperingError"
    elif isinstance(error, wire.NotPlainData):  # a result that cannot cross: a failed check
        return ["AssertionError", "AssertionError", str(error)[:2000]]
    else:
        base = next((k.__name__ for k in type(error).__mro__ if vars(builtins).get(k.__name__) is k), "Exception")
    return [base, type(error).__qualname__, str(error)[:2000]]


# --- names, handles and values --------------------------------------------------------------

def _namespace() -> dict[str, Any]:
    return get_ipython().user_ns


def _resolve(ref: dict) -> Any:
    if ref[wire.REF] == "handle":
        value = _handles[ref["id"]]
    elif ref[wire.REF] == "locked":
        value = _locked_function(ref["name"], ref["sources"])
    else:
        namespace = _namespace()
        if ref["name"] not in namespace:
            raise NameError(f"name {ref['name']!r} is not defined in the notebook")
        value = namespace[ref["name"]]
    for attribute in ref.get("path", ()):
        value = getattr(value, attribute)
    return value


def _path(bound: dict, name: str) -> Any:
    """``bound["a"].b.c`` for the name ``"a.b.c"``."""
    first, *rest = name.split(".")
    value = bound[first]
    for attribute in rest:
        value = getattr(value, attribute)
    return value


def _locked_function(name: str, sources: list[str]) -> Any:
    """The locked cells' function or class ``name`` as the instructor wrote it: the locked cells'
    functions and classes (visible code, sent by the checker) defined afresh over a copy of the
    notebook's names, so that a redefinition in the notebook changes nothing."""
    namespace = dict(_namespace())
    for source in sources:
        if source not in _compiled:
            _compiled[source] = compile(source, "<locked cell>", "exec")
        exec(_compiled[source], namespace)  # noqa: S102 - visible code of the locked cells
    return namespace[name]


class _Unpickler(pickle.Unpickler):
    """Unpickles what the checker passes by value; a locked cell's class is defined afresh."""

    def __init__(self, file: io.BytesIO, sources: list[str]) -> None:
        super().__init__(file)
        self.sources = sources

    def find_class(self, module: str, name: str) -> Any:
        if module.startswith(LOCKED_MODULE):
            return _locked_function(name, self.sources)
        return super().find_class(module, name)


def _imported(value: Any, passed: list) -> Any:
    """A decoded request value with its references replaced by what they name; the objects the
    checker passes by value (a generator, a module of torch or transformer_lib) are rebuilt and
    appended to ``passed``, whose states go back with the reply."""
    if type(value) is dict:
        kind = value.get(wire.REF)
        if kind == "generator":
            generator = torch.Generator()
            generator.set_state(value["state"])
            passed.append(generator)
            return generator
        if kind == "pickled":  # by the checker (trusted): a library module, a locked class's instance
            found = _Unpickler(io.BytesIO(base64.b64decode(value["data"])), value["sources"]).load()
            passed.append(found)
            return found
        if kind == "fake":
            if value["id"] not in _fakes:
                wraps = None if value["wraps"] is None else _imported(value["wraps"], passed)
                _fakes[value["id"]] = _Fake({**value, "answers": _imported(value["answers"], passed)}, wraps)
            return _fakes[value["id"]]
        if kind is not None:
            return _resolve(value)
        return {key: _imported(item, passed) for key, item in value.items()}
    if type(value) in (tuple, list):
        return type(value)(_imported(item, passed) for item in value)
    return value


def _states(passed: list) -> list:
    """What the checker copies back into the objects it passed by value after a call."""
    return [p.get_state() if isinstance(p, torch.Generator)
            else {k: v.detach() for k, v in _exported(dict(p.state_dict()), "a module's state").items()}
            if isinstance(p, _Module) else None for p in passed]


def _handle(value: Any) -> dict:
    number = _handle_of.get(id(value))
    if number is None or _handles.get(number) is not value:
        number = len(_handles) + 1
        _handles[number], _handle_of[id(value)] = value, number
    kind = type(value)
    return {wire.REF: "handle", "id": number, "type": kind.__qualname__,
            "class": f"{kind.__module__}:{kind.__qualname__}"}


def _exported(value: Any, where: str = "the result", strict: bool = True) -> Any:
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
    if isinstance(value, _Module) or id(value) in _handle_of or (callable(value) and not isinstance(value, type)):
        return _handle(value)
    if kind in (tuple, list) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        return (list if kind is list else tuple)(_exported(item, f"{where}[{i}]", strict)
                                                 for i, item in enumerate(value))
    if kind in (dict, OrderedDict):
        return {_exported(key, f"a key of {where}"): _exported(item, f"{where}[{key!r}]", strict)
                for key, item in value.items()}
    try:
        wire.check_plain(value, where)
    except wire.NotPlainData:
        if strict:
            raise
        return _handle(value)
    return value


def _describe(value: Any) -> dict:
    """What the checker binds for a value of the notebook."""
    if isinstance(value, types.ModuleType):
        return {"kind": "module", "name": value.__name__}
    if isinstance(value, type):
        return {"kind": "class", "name": value.__qualname__}
    if isinstance(value, _Module):
        return {"kind": "data", "value": _handle(value)}
    if callable(value):
        return {"kind": "function"}
    try:
        plain = _exported(value)
        return {"kind": "data", "value": wire.replace_tensors(plain, [t.detach() for t in wire.tensors_in(plain)])}
    except wire.NotPlainData as error:
        return {"kind": "other", "why": str(error)}


# --- the operations -------------------------------------------------------------------------

def _lookup(request: dict) -> dict:
    namespace = _namespace()
    return {name: _describe(namespace[name]) if name in namespace else {"kind": "missing"}
            for name in request["names"]}


def _getattr(request: dict) -> dict:
    return _describe(getattr(_resolve(request["target"]), request["name"]))


def _rule(rule: dict) -> contextlib.AbstractContextManager:
    if rule["kind"] == "forbid":
        return forbid(*(_qualified(target) for target in rule["targets"]))
    if rule["kind"] == "refuse":
        return refuse(_qualified(rule["owner"]), tuple(rule["names"]), rule["message"])
    if rule["kind"] == "substitute":
        return _substituted(rule["name"], _imported(rule["value"], []))
    return _namespace()[rule["name"]]()  # "enter": a context manager the locked cells define


@contextlib.contextmanager
def _substituted(name: str, value: Any) -> Any:
    namespace = _namespace()
    missing = object()
    saved = namespace.get(name, missing)
    namespace[name] = value
    try:
        yield
    finally:
        if saved is missing:
            namespace.pop(name, None)
        else:
            namespace[name] = saved


def _qualified(ref: dict) -> Any:
    if wire.REF in ref:  # a function of the notebook
        return _resolve(ref)
    value = importlib.import_module(ref["module"])
    for part in filter(None, ref["qualname"].split(".")):
        value = getattr(value, part)
    return value


def _call(request: dict) -> dict:
    function = _resolve(request["target"])
    args, kwargs = request["args"], request["kwargs"]
    leaves = _leaves([args, kwargs]) if request["grad"] else []
    passed: list = []
    args, kwargs = _imported(args, passed), _imported(kwargs, passed)
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
        stack.enter_context(_set_grad_enabled(bool(request["grad"] or request["grad_enabled"])))
        for rule in request["rules"]:
            stack.enter_context(_rule(rule))
        result = function(*args, **kwargs)
        if isinstance(result, types.GeneratorType) and getattr(function, "__func__", None) in _MODULE_ITERATORS:
            result = list(result)  # model.parameters() and the like
    if request["rules"]:  # the rules swapped functions in and out: check they are back (else at ``reset``)
        verify_untampered()
    if request.get("new"):
        return {"value": _handle(result), "passed": _states(passed)}
    target = request["target"]
    value = _exported(result, strict=target[wire.REF] == "name" and not target.get("path"))
    outputs = wire.tensors_in(value)
    reply = {"value": wire.replace_tensors(value, [t.detach() for t in outputs]), "passed": _states(passed)}
    if request["grad"]:
        reply["graph"] = len(_graphs) + 1
        reply["differentiable"] = [t.requires_grad for t in outputs]
        _graphs[reply["graph"]] = (leaves, outputs)
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


def _backward(request: dict) -> list:
    leaves, outputs = _graphs[request["graph"]]
    pairs = [(o, g) for o, g in zip(outputs, request["grads"]) if g is not None and o.requires_grad]
    if not leaves or not pairs:
        return [None] * len(leaves)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        grads = _autograd_grad([o for o, _ in pairs], leaves, [g for _, g in pairs], retain_graph=True,
                               allow_unused=True)
    return [None if g is None else _exported(g.detach()) for g in grads]


def _calls(request: dict) -> list:
    fake = _fakes.get(request["id"])
    return [] if fake is None else [_exported(call, "a call's arguments", strict=False) for call in fake.calls]


def _isinstance(request: dict) -> bool:
    return isinstance(_resolve(request["target"]), _resolve(request["cls"]))


def _verify(request: dict) -> None:
    verify_untampered()


def _reset(request: dict) -> None:
    verify_untampered()  # at the end of each hidden block (and after each call made under rules)
    _handles.clear()
    _handle_of.clear()
    _graphs.clear()
    _fakes.clear()


_OPS = {"lookup": _lookup, "getattr": _getattr, "backward": _backward, "verify": _verify, "isinstance": _isinstance,
        "calls": _calls, "reset": _reset}
_register()
