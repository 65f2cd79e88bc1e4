"""The checker's end of the bridge: requests to a student's kernel, on a socket of the checker's.

A :class:`KernelLink` is made once the kernel has imported :mod:`coursetools.checks.bridge` (which
registers the comm target :data:`~coursetools.checks.names.COMM_TARGET`) and before any student
code has run. It binds a ZeroMQ socket where the kernel's own channels are (``ipc`` in the box's
scratch folder, or ``tcp`` on the kernel's address) and opens a comm to the bridge. The first
request of a hidden block sends one ``comm_msg`` on the shell channel, which ipykernel hands to
the bridge without running a cell (no IPython ``run_cell``, no history, no execution count, no
output in any cell): *serve*, with the socket's address. The bridge connects to it, says it is
ready, and answers each request of the block, one message each way (a request's number and text;
the number and the reply's text), about four times cheaper than a comm round trip through
ipykernel (a ``comm_msg``, two statuses and the reply on IOPub); :meth:`KernelLink.end` ends the
serving, so that the kernel is free to run the next cell. The grader only binds: it never
connects to an address a kernel could choose. The serving request's IOPub messages (output the
student's code wrote past the bridge's redirection, statuses) are read and dropped, so none of it
reaches a notebook.

While a call waits, the kernel may ask for one entry of a fake's table (:data:`ENTRY`): the
checker answers it there (:attr:`KernelLink.entries`), so a fake's table never goes whole. Nothing
the kernel sends can exhaust the grader: ZeroMQ refuses a message over :data:`MAX_MESSAGE` unread and
holds :data:`QUEUED` message for the checker, a hidden block reads at most :data:`BLOCK_BYTES`, and a
message the checker did not ask for (not a reply, not a fake's question, no interrupt before it) fails
the block.

As for a cell: once the cell's clock (:class:`~coursetools.checker.clock.Clock`: CPU seconds of
the grading process and the kernel, or its wall-clock guard) has passed its limit, the kernel is interrupted
(its ``KeyboardInterrupt`` ends the serving) and :class:`~coursetools.checker.CheckTimeout` is
raised; a kernel that stops beating while a request waits raises nbclient's ``DeadKernelError``,
as nbclient does for a cell; a bridge that stops serving without a reply (replaced or broken by the notebook) leaves the
request unanswered (None). The same code serves nbclient's asynchronous client (grading,
:mod:`coursetools.grading.checked_execute`) and jupyter_client's blocking one (:mod:`coursetools.devtools.session`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import zmq
from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import DeadKernelError

from coursetools.checker.clock import Clock
from coursetools.checker.errors import CheckTimeout, KernelUnanswered
from coursetools.checks import wire
from coursetools.checks.names import COMM_TARGET, END_SERVING, ENTRY, READY

POLL = 1.0  # seconds between checks that the kernel is alive while a request waits
AFTER_INTERRUPT = 5.0  # seconds an interrupted (or ended) serving is given to stop before the checker moves on
MAX_MESSAGE = wire.MAX_TEXT + 64  # a longer reply is refused by ZeroMQ itself (never read into memory)
QUEUED = 1  # messages ZeroMQ holds for the checker before it reads them (its default, 1000, let a flood pile up)
BLOCK_BYTES = 4 * MAX_MESSAGE  # what the checker reads from the socket in one hidden block, at most


def _done(value: Any) -> Any:
    """What a client's or manager's method gave: itself, or what it awaits (asynchronous ones)."""
    return run_sync(ensure_async)(value)


class KernelLink:
    """One comm to the bridge of a kernel reached by ``client`` (and interrupted through ``manager``),
    and the socket the bridge answers on.

    The client's shell and IOPub sockets are used directly, without an event loop (a shadow of
    each: the same ZeroMQ socket), between cells only: nothing else reads them then."""

    def __init__(self, client: Any, manager: Any) -> None:
        self.client, self.manager, self.session = client, manager, client.session
        self.shell = zmq.Socket.shadow(client.shell_channel.socket.underlying)
        self.iopub = zmq.Socket.shadow(client.iopub_channel.socket.underlying)
        self.requests = zmq.Context.instance().socket(zmq.PAIR)
        self.requests.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
        self.requests.setsockopt(zmq.RCVHWM, QUEUED)
        self.requests.linger = 0
        self.requests.bind(f"tcp://{client.ip}:*" if client.transport == "tcp" else f"ipc://{client.ip}-bridge")
        self.endpoint = self.requests.last_endpoint.decode()
        self.comm_id = uuid.uuid4().hex
        self.died = False  # set when a request found the kernel dead
        self.serving: str | None = None  # the serve request's id while the bridge serves
        self.number = 0  # the last request's number: its reply carries it
        self.received = 0  # bytes read from the socket in this hidden block
        self.interrupted = False  # a late reply to an interrupted request may still come
        self.entries: Callable[[str], str] | None = None  # answers a fake's question (the checker's)
        self._send("comm_open", {"comm_id": self.comm_id, "target_name": COMM_TARGET, "data": {}})

    def _send(self, kind: str, content: dict) -> str:
        return self.session.send(self.shell, kind, content)["header"]["msg_id"]

    def ask(self, text: str, clock: Clock) -> str | None:
        """The bridge's reply to the request ``text``, or None when the bridge stopped serving
        without replying (replaced or broken); the wait ends once ``clock`` has passed its limit."""
        if self.died:  # a hidden block may have caught the first DeadKernelError
            raise DeadKernelError("Kernel died")
        if self.serving is None:
            self.number += 1
            self.serving = self._send("comm_msg", {"comm_id": self.comm_id,
                                                   "data": {"serve": self.endpoint, "number": self.number}})
            if self._wait(clock, READY) is None:
                return None
        self.number += 1
        if not self._put(str(self.number).encode(), text.encode()):
            return None
        return self._wait(clock)

    def end(self) -> None:
        """End the serving (if any): the kernel is free to run cells again."""
        self.received = 0
        if self.serving is None or self.died:
            return
        self._put(END_SERVING, b"")
        until = time.monotonic() + AFTER_INTERRUPT
        while self.serving is not None and (left := until - time.monotonic()) > 0:
            self._next(min(left, POLL))
        if self.serving is not None:  # the notebook's code keeps the kernel busy: stop it
            self._interrupt()

    def _put(self, *frames: bytes) -> bool:
        """Send a message to the bridge; False when no bridge is connected to take it."""
        try:
            self.requests.send_multipart(frames, flags=zmq.NOBLOCK)
        except zmq.Again:
            return False
        return True

    def _wait(self, clock: Clock, kind: bytes = b"") -> str | None:
        """The reply to the last request, or (``kind`` ``READY``) the bridge's word that it serves."""
        while True:
            if passed := clock.passed():
                self._interrupt()
                raise CheckTimeout(f"the hidden tests ran past the cell's time limit ({clock.limit_text(passed)}; "
                                   "the call was interrupted)")
            found = self._next(min(clock.left(), POLL), kind)
            if found is not None:
                return found[0]

    def _next(self, timeout: float, kind: bytes = b"") -> tuple[str | None] | None:
        """(the reply,) or (None,) when the serving ended without one; None when nothing came in time."""
        ready, _, _ = zmq.select([self.iopub, self.requests], [], [], timeout)
        if not ready:
            if not _done(self.client.is_alive()):
                self.died = True
                raise DeadKernelError("Kernel died")
            return None
        if self.requests in ready:
            frames = self.requests.recv_multipart()
            self.received += sum(len(frame) for frame in frames)
            if self.received > BLOCK_BYTES:
                raise KernelUnanswered(f"the notebook's kernel sent the tests more than {BLOCK_BYTES // 2**20} MiB "
                                       "in one hidden block")
            if frames[0] == ENTRY and len(frames) == 2 and self.entries is not None:  # a fake's question
                self._put(ENTRY, self.entries(frames[1].decode("utf-8", errors="replace")).encode())
                return None
            if frames[:-1] == [kind + str(self.number).encode()]:
                self.interrupted = False
                return (frames[-1].decode("utf-8", errors="replace"),)
            if not self.interrupted:  # the bridge only ever answers: anything else came from the notebook
                raise KernelUnanswered("the notebook's kernel sent the tests a message they did not ask for")
            return None  # a late reply to an interrupted request
        return self._iopub_message()

    def _iopub_message(self) -> tuple[None] | None:
        """(None,) when the serve request has ended; any other message is dropped."""
        _, frames = self.session.feed_identities(self.iopub.recv_multipart())
        message = self.session.deserialize(frames, content=False)  # the content only of what is wanted
        if (self.serving is not None and message["parent_header"].get("msg_id") == self.serving
                and message["msg_type"] == "status"
                and self.session.unpack(message["content"]).get("execution_state") == "idle"):
            self.serving = None
            return (None,)
        return None

    def close(self) -> None:
        """Close the socket (the kernel is gone, or about to be)."""
        self.requests.close(linger=0)

    def _interrupt(self) -> None:
        """Interrupt the kernel and wait (a little) for the serving to end."""
        self.interrupted = True
        _done(self.manager.interrupt_kernel())
        until = time.monotonic() + AFTER_INTERRUPT
        while self.serving is not None and (left := until - time.monotonic()) > 0:
            self._next(min(left, POLL))
        self.serving = None
