"""Time limits a busy machine does not change (issue 51): a cell's time is the CPU time of the kernel's
process tree, with a wall-clock guard for a kernel that waits. Real processes, no kernel: each test
runs for about a second of CPU time at most.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from queue import Empty

import pytest

from coursetools.checker import clock as clock_module
from coursetools.checker.clock import CPU, WALL, Clock, tree_cpu_seconds
from coursetools.grading.kernel_client import ClockedShellChannel

# A process that starts a child which starts a grandchild spinning for ``seconds`` of CPU, and waits.
SPIN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass\n"
NESTED = ("import subprocess, sys\n"
          "subprocess.run([sys.executable, '-c', 'import subprocess, sys; "
          "subprocess.run([sys.executable, \"-c\", sys.argv[1]])', sys.argv[1]])\n")


def started(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *args])


def test_a_grandchilds_cpu_time_counts():
    spinning = started(NESTED, SPIN.format(seconds=60))
    try:
        clock = Clock(0.3, 60, spinning.pid)
        while not clock.passed():
            time.sleep(0.05)
        assert clock.passed() == CPU and clock.cpu_used() >= 0.3
        assert clock.left() == 0.0 and clock.limit_text(CPU) == "0.3 s of CPU time"
    finally:
        spinning.kill()
        spinning.wait()


def test_the_cpu_time_of_children_that_ended_stays_counted():
    parent = started("import subprocess, sys, time\n"
                     "subprocess.run([sys.executable, '-c', sys.argv[1]])\ntime.sleep(60)\n", SPIN.format(seconds=0.3))
    try:
        deadline = time.monotonic() + 60
        while tree_cpu_seconds(parent.pid) < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tree_cpu_seconds(parent.pid) >= 0.3, "the child was waited for: its time is its parent's"
    finally:
        parent.kill()
        parent.wait()


def test_a_process_that_sleeps_is_stopped_by_the_wall_clock_guard():
    sleeping = started("import time\ntime.sleep(60)\n")
    try:
        clock = Clock(30, 0.3, sleeping.pid)
        deadline = time.monotonic() + 60
        while not clock.passed() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert clock.passed() == WALL and clock.wall_used() >= 0.3 and clock.cpu_used() < 1
        assert clock.limit_text(WALL).endswith(" s of wall-clock time")
    finally:
        sleeping.kill()
        sleeping.wait()


def test_the_wall_clock_guard_grows_with_the_load_per_core_it_saw(monkeypatch):
    """Issue 51: at a load of 20 on 2 cores an honest cell's hidden tests ran past a guard of 10 times the
    CPU limit; the guard is the load per core times longer then (never shorter)."""
    monkeypatch.setattr(clock_module, "_CORES", 2)
    monkeypatch.setattr(clock_module.os, "getloadavg", lambda: (8.0, 1.0, 1.0))
    assert Clock(30, 300).wall_allowed() == 4 * 300
    monkeypatch.setattr(clock_module.os, "getloadavg", lambda: (0.5, 1.0, 1.0))
    assert Clock(30, 300).wall_allowed() == 300


class NoReply(ClockedShellChannel):
    """The clocked shell channel on a socket that never delivers a message."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

        class Socket:
            async def poll(self, timeout=None) -> int:
                await asyncio.sleep((timeout or 0) / 1000)
                return 0

        self.socket = Socket()


@pytest.mark.parametrize("limit", ["cpu", "none"])
def test_the_shell_channel_stops_waiting_for_a_reply_once_the_clock_has_passed(limit):
    """nbclient waits for a cell's reply up to its wall-clock timeout; the clock ends the wait (Empty),
    and nbclient then stops the cell as at its own timeout."""
    spinning = started(SPIN.format(seconds=60))
    try:
        clock = Clock(0.3 if limit == "cpu" else 600, 600, spinning.pid)
        start = time.monotonic()
        with pytest.raises(Empty):
            asyncio.run(NoReply(clock).get_msg(timeout=300 if limit == "cpu" else 0.3))
        if limit == "cpu":
            assert clock.passed() == CPU
        else:
            assert clock.passed() is None and time.monotonic() - start < 5, "nbclient's own timeout still holds"
    finally:
        spinning.kill()
        spinning.wait()
