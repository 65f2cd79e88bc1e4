"""The checker's end of the bridge: requests to a student's kernel, over a socket of the bridge's.

Once the kernel has imported :mod:`coursetools.bridge` (which registers the comm target
:data:`~coursetools.checker_names.COMM_TARGET`), a :class:`KernelLink` opens a comm to it. The
first request of a hidden block sends one ``comm_msg`` on the shell channel, which ipykernel hands
to the bridge without running a cell (no IPython ``run_cell``, no history, no execution count, no
output in any cell): *serve*. The bridge then answers on a ZeroMQ socket of its own, bound where
the kernel binds its channels (``ipc`` in the box's scratch folder, or ``tcp`` on the kernel's
address), whose address it gives in a comm message; each request of the block is one message on
that socket and its reply one message back, about five times cheaper than a comm round trip
through ipykernel (a ``comm_msg``, two statuses and the reply on IOPub), and
:meth:`KernelLink.end` ends the serving, so that the kernel is free to run the next cell. The
serving request's IOPub messages (output the student's code wrote past the bridge's redirection,
statuses) are read and dropped, so none of it reaches a notebook.

As for a cell: past the deadline the kernel is interrupted (its ``KeyboardInterrupt`` ends the
serving) and :class:`~coursetools.checker.CheckTimeout` is raised; a kernel that stops beating
while a request waits raises nbclient's ``DeadKernelError``, as nbclient does for a cell; a
bridge that stops serving without a reply (replaced or broken by the notebook) makes the request
unanswered (None). The same code serves nbclient's asynchronous client (grading,
:mod:`coursetools.checked_execute`) and jupyter_client's blocking one (:mod:`coursetools.session`).
"""

from __future__ import annotations

import os
import stat
import time
import uuid
from typing import Any

import zmq
from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import DeadKernelError

from coursetools import wire
from coursetools.checker import CheckTimeout
from coursetools.checker_names import COMM_TARGET, END_SERVING

POLL = 1.0  # seconds between checks that the kernel is alive while a request waits
AFTER_INTERRUPT = 5.0  # seconds an interrupted (or ended) serving is given to stop before the checker moves on
MAX_MESSAGE = wire.MAX_BYTES * 4 // 3 + 64  # a longer reply is refused by ZeroMQ itself (never read into memory)


def _done(value: Any) -> Any:
    """What a client's or manager's method gave: itself, or what it awaits (asynchronous ones)."""
    return run_sync(ensure_async)(value)


class KernelLink:
    """One comm to the bridge of a kernel reached by ``client`` (and interrupted through ``manager``).

    The client's shell and IOPub sockets are used directly, without an event loop (a shadow of
    each: the same ZeroMQ socket), between cells only: nothing else reads them then."""

    def __init__(self, client: Any, manager: Any) -> None:
        self.client, self.manager, self.session = client, manager, client.session
        self.shell = zmq.Socket.shadow(client.shell_channel.socket.underlying)
        self.iopub = zmq.Socket.shadow(client.iopub_channel.socket.underlying)
        self.comm_id = uuid.uuid4().hex
        self.died = False  # set when a request found the kernel dead
        self.serving: str | None = None  # the serve request's id while the bridge serves
        self.requests: zmq.Socket | None = None  # connected to the bridge's socket
        self.endpoint = ""  # the bridge's socket's address
        self.number = 0  # the last request's number: a reply carries it
        self._send("comm_open", {"comm_id": self.comm_id, "target_name": COMM_TARGET, "data": {}})

    def _send(self, kind: str, content: dict) -> str:
        return self.session.send(self.shell, kind, content)["header"]["msg_id"]

    def ask(self, text: str, deadline: float) -> str | None:
        """The bridge's reply to the request ``text``, or None when the bridge stopped serving
        without replying (replaced or broken). ``deadline``: ``time.monotonic()`` seconds."""
        if self.serving is None:
            self.number += 1  # a late reply to an interrupted request is not taken for the bridge's address
            self.serving = self._send("comm_msg", {"comm_id": self.comm_id, "data": {"serve": self._wanted()}})
            if self._wait(deadline) is None:
                return None
        self.number += 1
        self.requests.send_multipart([str(self.number).encode(), text.encode()])
        return self._wait(deadline)

    def end(self) -> None:
        """End the serving (if any): the kernel is free to run cells again."""
        if self.serving is None or self.died:
            return
        self.requests.send_multipart([END_SERVING, b""])
        until = time.monotonic() + AFTER_INTERRUPT
        while self.serving is not None and (left := until - time.monotonic()) > 0:
            self._next(min(left, POLL))
        if self.serving is not None:  # the notebook's code keeps the kernel busy: stop it
            self._interrupt()

    def _wait(self, deadline: float) -> str | None:
        """The reply to the last request (or the bridge's address, for a serve request)."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._interrupt()
                raise CheckTimeout("the hidden tests ran past the cell's time limit (the call was interrupted)")
            found = self._next(min(left, POLL))
            if found is not None:
                return found[0]

    def _next(self, timeout: float) -> tuple[str | None] | None:
        """(the reply,) or (None,) when the serving ended without one; None when nothing came in time."""
        sockets = [self.iopub] + ([self.requests] if self.requests is not None else [])
        ready, _, _ = zmq.select(sockets, [], [], timeout)
        if not ready:
            if not _done(self.client.is_alive()):
                self.died = True
                raise DeadKernelError("Kernel died")
            return None
        if self.requests in ready:
            frames = self.requests.recv_multipart()
            if len(frames) == 2 and frames[0] == str(self.number).encode():
                return (frames[1].decode("utf-8", errors="replace"),)
            return None  # a late reply to an interrupted request
        return self._iopub_message()

    def _iopub_message(self) -> tuple[str | None] | None:
        """The serve request's end (None,), or the bridge's address once it serves (("",)); other
        messages are dropped."""
        _, frames = self.session.feed_identities(self.iopub.recv_multipart())
        message = self.session.deserialize(frames, content=False)  # the content only of what is wanted
        if self.serving is None or message["parent_header"].get("msg_id") != self.serving:
            return None
        kind = message["msg_type"]
        if kind == "status" and self.session.unpack(message["content"]).get("execution_state") == "idle":
            self.serving = None
            return (None,)
        if kind == "comm_msg":
            content = self.session.unpack(message["content"])
            data = content.get("data") if type(content) is dict and content.get("comm_id") == self.comm_id else None
            endpoint = data.get("serving") if type(data) is dict else None
            if self._acceptable(endpoint):
                self._connect(endpoint)
                return ("",)
        return None

    def _wanted(self) -> str:
        """Where the bridge is asked to bind: beside the kernel's own channels."""
        if self.client.transport == "tcp":
            return f"tcp://{self.client.ip}:*"
        return f"ipc://{self.client.ip}-bridge"

    def _acceptable(self, endpoint: Any) -> bool:
        """Whether ``endpoint``, which the kernel sent, is one the checker connects to: the address
        asked for (a port of the kernel's address for ``tcp``), and for ``ipc`` a socket, not a
        link the notebook put there to make the grader connect elsewhere."""
        if type(endpoint) is not str:
            return False
        if self.client.transport == "tcp":
            prefix = f"tcp://{self.client.ip}:"
            return endpoint.startswith(prefix) and endpoint[len(prefix):].isdigit()
        try:
            return endpoint == self._wanted() and stat.S_ISSOCK(os.lstat(endpoint[len("ipc://"):]).st_mode)
        except OSError:
            return False

    def _connect(self, endpoint: str) -> None:
        if endpoint == self.endpoint:
            return
        if self.requests is not None:
            self.requests.close(linger=0)
        self.requests = zmq.Context.instance().socket(zmq.PAIR)
        self.requests.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
        self.requests.linger = 0
        self.requests.connect(endpoint)
        self.endpoint = endpoint

    def _interrupt(self) -> None:
        """Interrupt the kernel and wait (a little) for the serving to end."""
        _done(self.manager.interrupt_kernel())
        until = time.monotonic() + AFTER_INTERRUPT
        while self.serving is not None and (left := until - time.monotonic()) > 0:
            self._next(min(left, POLL))
        self.serving = None
