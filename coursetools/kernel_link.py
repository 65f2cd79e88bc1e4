"""The checker's end of the bridge: requests to a student's kernel as comm messages.

Once the kernel has imported :mod:`coursetools.bridge` (which registers the comm target
:data:`~coursetools.checker_names.COMM_TARGET`), :meth:`KernelLink.open` opens a comm to it. Each
request (:meth:`KernelLink.ask`) is then a ``comm_msg`` on the shell channel, which ipykernel hands
to the bridge without running a cell: no IPython ``run_cell``, no history, no execution count, no
output in any cell. The reply is the bridge's ``comm_msg`` on IOPub whose parent is the request;
everything else the kernel publishes under the request (output the student's code wrote past the
bridge's redirection, statuses) is read and dropped, so none of it reaches a notebook.

As for a cell: past the deadline the kernel is interrupted (its ``KeyboardInterrupt`` ends the
request) and :class:`~coursetools.checker.CheckTimeout` is raised; a kernel that stops beating
while a request waits raises nbclient's ``DeadKernelError``, as nbclient does for a cell.
The same code serves nbclient's asynchronous client (grading, :mod:`coursetools.checked_execute`)
and jupyter_client's blocking one (:mod:`coursetools.session`).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import zmq
from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import DeadKernelError

from coursetools.checker import CheckTimeout
from coursetools.checker_names import COMM_TARGET

POLL = 1.0  # seconds between checks that the kernel is alive while a request waits
AFTER_INTERRUPT = 5.0  # seconds an interrupted request is given to end before the checker moves on


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
        self._send("comm_open", {"comm_id": self.comm_id, "target_name": COMM_TARGET, "data": {}})

    def _send(self, kind: str, content: dict) -> str:
        return self.session.send(self.shell, kind, content)["header"]["msg_id"]

    def ask(self, text: str, deadline: float) -> str | None:
        """The bridge's reply to the request ``text``, or None when the kernel handled the request
        without replying (its bridge replaced or broken). ``deadline``: ``time.monotonic()`` seconds."""
        request = self._send("comm_msg", {"comm_id": self.comm_id, "data": {"request": text}})
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._interrupt(request)
                raise CheckTimeout("the hidden tests ran past the cell's time limit (the call was interrupted)")
            found = self._next(request, min(left, POLL))
            if found is not None:
                return found[0]

    def _next(self, request: str, timeout: float) -> tuple[str | None] | None:
        """(the reply,) or (None,) when the request ended without one; None when nothing came in time."""
        if not self.iopub.poll(int(timeout * 1000)):
            if not _done(self.client.is_alive()):
                self.died = True
                raise DeadKernelError("Kernel died")
            return None
        _, frames = self.session.feed_identities(self.iopub.recv_multipart())
        message = self.session.deserialize(frames, content=False)  # the content only of the reply
        if message["parent_header"].get("msg_id") != request:
            return None
        kind = message["msg_type"]
        if kind == "comm_msg":
            content = self.session.unpack(message["content"])
            data = content.get("data") if type(content) is dict and content.get("comm_id") == self.comm_id else None
            reply = data.get("reply") if type(data) is dict else None
            return (reply if type(reply) is str else None,)
        if kind == "status" and self.session.unpack(message["content"]).get("execution_state") == "idle":
            return (None,)
        return None

    def _interrupt(self, request: str) -> None:
        """Interrupt the kernel and wait (a little) for the request to end."""
        _done(self.manager.interrupt_kernel())
        until = time.monotonic() + AFTER_INTERRUPT
        while (left := until - time.monotonic()) > 0:
            found = self._next(request, min(left, POLL))
            if found is not None and found[0] is None:
                return
