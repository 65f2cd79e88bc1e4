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

This module is the transport and the table of operations; the notebook's objects, handles and
fakes are :mod:`coursetools.checks.handles`, a call under rules and its gradients
:mod:`coursetools.checks.calls`.

A student can replace this module in their kernel: that changes only the answers the checker
receives, which it treats as untrusted data anyway (and the submission scan reports code that
reaches into ``sys.modules`` or ``coursetools``). What the kernel's side calls between the checker's
socket and the student's code is its own, taken before any student code ran: pyzmq's C socket (not
its Python layer), JSON's and binascii's C functions (:mod:`coursetools.checks.wire`), context
managers of its own (not ``contextlib``, :mod:`coursetools.checks.managers`); each module is guarded,
its classes' methods too, so a notebook that replaces ``zmq.Socket.recv_multipart`` records nothing
of the checker's requests and one that replaces ``contextlib.ExitStack`` switches no rule off.
"""

from __future__ import annotations

import builtins
import sys
import types
from typing import Any

import zmq
from IPython import get_ipython

from coursetools.checks import calls, handles, names, wire
from coursetools.checks.names import COMM_TARGET, END_SERVING, ENTRY, READY
from coursetools.checks.tamper import TamperingError, guard, verify_untampered

_sockets: dict[str, Any] = {}  # the sockets the checker's requests come on, by the checker's address
# pyzmq's C socket and its methods, taken before any student code ran: its Python layer (zmq.Socket's
# send_multipart and recv_multipart, which a notebook can replace to record the checker's requests) is
# never called; the C type's methods cannot be replaced (it is immutable).
_Socket, _context = zmq.backend.Socket, zmq.Context.instance()
_send, _recv, _get, _set, _connect = _Socket.send, _Socket.recv, _Socket.get, _Socket.set, _Socket.connect
_PAIR, _SNDMORE, _RCVMORE, _LINGER = zmq.PAIR, zmq.SNDMORE, zmq.RCVMORE, zmq.LINGER


def answer(text: str) -> str:
    """The reply to one request (both plain data as text, :func:`coursetools.checks.wire.to_text`)."""
    try:
        request = wire.from_text(text)
        reply = {"value": _OPS[request["op"]](request)} if request["op"] != "call" else calls.call(request)
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
        socket = _sockets[data["serve"]] = _Socket(_context, _PAIR)
        _set(socket, _LINGER, 0)
        _connect(socket, data["serve"])
    _send_frames(socket, [READY + str(data["number"]).encode(), b""])
    handles.channel["entry"] = lambda fake, key: _entry(socket, fake, key)
    while True:
        frames = _receive_frames(socket)
        if frames[0] == END_SERVING:
            return
        if len(frames) == 2:
            _send_frames(socket, [frames[0], answer(frames[1].decode("utf-8", errors="replace")).encode()])


def _send_frames(socket: Any, frames: list[bytes]) -> None:
    """One message of ``frames``, through the C socket's own ``send``."""
    for frame in frames[:-1]:
        _send(socket, frame, _SNDMORE)
    _send(socket, frames[-1])


def _receive_frames(socket: Any) -> list[bytes]:
    """The frames of the next message, through the C socket's own ``recv``."""
    frames = [_recv(socket)]
    while _get(socket, _RCVMORE):
        frames.append(_recv(socket))
    return frames


def _entry(socket: Any, fake: int, key: list) -> Any:
    """Ask the checker for the entry ``key`` of the table of its fake ``fake``, while a call waits."""
    _send_frames(socket, [ENTRY, wire.to_text({"id": fake, "key": key}).encode()])
    frames = _receive_frames(socket)
    if frames[0] != ENTRY:
        raise RuntimeError("the checker did not answer a fake's question")
    reply = wire.from_text(frames[1].decode("utf-8", errors="replace"))
    if "error" in reply:
        raise KeyError(reply["error"])
    return handles.imported(reply["value"], [])


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


# --- the operations -------------------------------------------------------------------------

def _lookup(request: dict) -> dict:
    namespace = handles.notebook_names()
    return {name: handles.describe(namespace[name]) if name in namespace else {"kind": "missing"}
            for name in request["names"]}


def _getattr(request: dict) -> dict:
    return handles.describe(getattr(handles.resolve(request["target"]), request["name"]))


def _calls(request: dict) -> list:
    fake = handles.fakes.get(request["id"])
    return [] if fake is None else [handles.exported(call, "a call's arguments", strict=False) for call in fake.calls]


def _isinstance(request: dict) -> bool:
    return isinstance(handles.resolve(request["target"]), handles.resolve(request["cls"]))


def _verify(request: dict) -> None:
    verify_untampered()


def _reset(request: dict) -> None:
    verify_untampered()  # at the end of each hidden block (and after each call made under rules)
    handles.handles.clear()
    handles.handle_of.clear()
    calls.graphs.clear()
    handles.fakes.clear()


_OPS = types.MappingProxyType({"lookup": _lookup, "getattr": _getattr, "backward": calls.backward, "verify": _verify,
                               "isinstance": _isinstance, "calls": _calls, "reset": _reset})
_register()
# The kernel's side of the checker is guarded as the checks are: rebinding any of its names (the rules'
# machinery reached through a comm's __globals__, say) is tampering that verify_untampered reports,
# after each call made under rules and at the end of each hidden block.
for _module in (wire, names, handles, calls, sys.modules[__name__]):
    guard(_module.__name__, ())
