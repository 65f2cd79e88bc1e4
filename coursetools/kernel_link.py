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
One function serves nbclient's asynchronous client (grading, :mod:`coursetools.checked_execute`)
and jupyter_client's blocking one (:mod:`coursetools.session`).
"""

from __future__ import annotations

import time
import uuid
from queue import Empty
from typing import Any

from jupyter_core.utils import ensure_async, run_sync
from nbclient.exceptions import DeadKernelError

from coursetools.checker import CheckTimeout
from coursetools.checker_names import COMM_TARGET

POLL = 1.0  # seconds between checks that the kernel is alive while a request waits
AFTER_INTERRUPT = 5.0  # seconds an interrupted request is given to end before the checker moves on


class KernelLink:
    """One comm to the bridge of a kernel reached by ``client`` (and interrupted through ``manager``)."""

    def __init__(self, client: Any, manager: Any) -> None:
        self.client, self.manager = client, manager
        self.comm_id = uuid.uuid4().hex
        self.died = False  # set when a request found the kernel dead
        self._send("comm_open", {"comm_id": self.comm_id, "target_name": COMM_TARGET, "data": {}})

    def _send(self, kind: str, content: dict) -> str:
        message = self.client.session.msg(kind, content)
        self.client.shell_channel.send(message)
        return message["header"]["msg_id"]

    def ask(self, text: str, deadline: float) -> str | None:
        """The bridge's reply to the request ``text``, or None when the kernel handled the request
        without replying (its bridge replaced or broken). ``deadline``: ``time.monotonic()`` seconds."""
        return run_sync(self._ask)(text, deadline)

    async def _ask(self, text: str, deadline: float) -> str | None:
        request = self._send("comm_msg", {"comm_id": self.comm_id, "data": {"request": text}})
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                await self._interrupt(request)
                raise CheckTimeout("the hidden tests ran past the cell's time limit (the call was interrupted)")
            found = await self._next(request, min(left, POLL))
            if found is not None:
                return found[0]

    async def _next(self, request: str, timeout: float) -> tuple[str | None] | None:
        """(the reply,) or (None,) when the request ended without one; None when nothing came in time."""
        try:
            message = await ensure_async(self.client.iopub_channel.get_msg(timeout=timeout))
        except Empty:
            if not await ensure_async(self.client.is_alive()):
                self.died = True
                raise DeadKernelError("Kernel died") from None
            return None
        if message["parent_header"].get("msg_id") != request:
            return None
        kind, content = message["msg_type"], message["content"]
        if kind == "comm_msg" and content.get("comm_id") == self.comm_id:
            reply = content.get("data", {}).get("reply") if type(content.get("data")) is dict else None
            return (reply if type(reply) is str else None,)
        if kind == "status" and content.get("execution_state") == "idle":
            return (None,)
        return None

    async def _interrupt(self, request: str) -> None:
        """Interrupt the kernel and wait (a little) for the request to end."""
        await ensure_async(self.manager.interrupt_kernel())
        until = time.monotonic() + AFTER_INTERRUPT
        while (left := until - time.monotonic()) > 0:
            found = await self._next(request, min(left, POLL))
            if found is not None and found[0] is None:
                return
