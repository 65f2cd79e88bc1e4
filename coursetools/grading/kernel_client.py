"""The kernel client nbclient grades with (``ConfinedKernelManager.client_factory`` in ``nbgrader_config.py``).

jupyter_client's asynchronous client with two channels of the course's:

* IOPub: :class:`~coursetools.grading.output_cap.CappedIOPubChannel`, which drops a cell's output
  past ``CapOutputBytes.max_bytes`` as it arrives (the second wall behind the kernel's own cap);
* shell: :class:`ClockedShellChannel`, which stops waiting for a cell's reply once the cell's
  :class:`~coursetools.checker.clock.Clock` has passed its limit (CPU seconds of the grading
  process and the kernel's, or the wall-clock guard). nbclient counts a cell's time in wall-clock seconds
  only: it waits for the reply up to its ``timeout`` and, when nothing came, interrupts the kernel
  and records the cell as stopped (nbgrader's ``CellTimeoutError``). The channel ends that wait
  as soon as the clock passes, so nbclient stops the cell exactly as at its own timeout, and a busy
  machine, which slows the kernel's clock as much as the cell, changes nothing.
  :class:`~coursetools.grading.checked_execute.CheckedExecute` sets the clock for each cell.
"""

from __future__ import annotations

import time
from queue import Empty
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from traitlets import Type

from coursetools.checker.clock import REFRESH, Clock
from coursetools.grading.output_cap import DEFAULT_MAX_BYTES, CappedIOPubChannel


class ClockedShellChannel(AsyncZMQSocketChannel):
    """The shell channel, whose wait for a message also ends (``Empty``) once :attr:`clock` has passed."""

    clock: Clock | None = None

    async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:
        if self.clock is None:
            return await super().get_msg(timeout=timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = REFRESH if deadline is None else min(REFRESH, max(0.0, deadline - time.monotonic()))
            try:
                return await super().get_msg(timeout=wait)
            except Empty:
                if self.clock.passed() or (deadline is not None and time.monotonic() >= deadline):
                    raise


class GradingKernelClient(AsyncKernelClient):
    """nbclient's kernel client with the capped IOPub channel (at ``CapOutputBytes.max_bytes``) and
    the clocked shell channel."""

    iopub_channel_class = Type(CappedIOPubChannel)  # type: ignore[assignment]
    shell_channel_class = Type(ClockedShellChannel)  # type: ignore[assignment]

    @property
    def iopub_channel(self) -> Any:
        if self._iopub_channel is None:
            channel = super().iopub_channel
            channel.max_bytes = self.config.CapOutputBytes.get("max_bytes", DEFAULT_MAX_BYTES)
        return self._iopub_channel
