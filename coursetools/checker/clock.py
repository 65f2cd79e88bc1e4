"""Time limits that a busy machine does not change: CPU seconds of a process tree, with a wall-clock guard.

A cell given 30 s of wall-clock time on an idle machine gets a fifth of that on a machine where
four other processes share each core: a student whose cell printed two million lines was `cell
timed out` beside eight busy loops and `output cut` with every point alone. So grading counts a
cell's time (and a notebook's) in the CPU seconds of the kernel's process tree (user and system
time of the kernel, its threads and every process it started, the ended ones included once they
were waited for), which the other work on the machine does not change. A kernel that waits without
computing (``time.sleep``) uses no CPU: a wall-clock limit, :data:`WALL_FACTOR` times longer, stays
as the last guard.

The tree is read from ``/proc`` (each task's ``children`` file, then each process's ``stat``): a
fraction of a millisecond for a kernel and its few processes, where walking every process of a
busy machine took 9 ms. A :class:`Clock` reads it at most every :data:`REFRESH` seconds.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import psutil

WALL_FACTOR = 10  # a limit in CPU seconds allows this many times as many wall-clock seconds
REFRESH = 0.25  # seconds between two readings of a tree's CPU time
CPU, WALL = "CPU", "wall-clock"  # the two limits a clock can pass
_TICKS = os.sysconf("SC_CLK_TCK")


def _family(pid: int) -> list[int]:
    """``pid`` and every process under it (the children files of each of their threads)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                todo += [int(child) for child in Path(f"/proc/{current}/task/{task}/children").read_text().split()]
            except OSError:
                continue
    return found


def _cpu_seconds(pid: int) -> float:
    """User and system seconds of ``pid`` and of its children it has waited for (0 once it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2:].split()  # after the command name, which may hold spaces
    return sum(int(value) for value in fields[11:15]) / _TICKS  # utime, stime, cutime, cstime


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds used so far by ``pid`` and every process under it."""
    if not Path(f"/proc/{pid}/task/{pid}/children").exists():  # a kernel built without them: walk every process
        try:
            process = psutil.Process(pid)
            return sum(_cpu_seconds(p.pid) for p in [process, *process.children(recursive=True)])
        except psutil.Error:
            return 0.0
    return sum(_cpu_seconds(member) for member in _family(pid))


class Clock:
    """A limit of ``cpu_limit`` CPU seconds of the process tree of ``pid`` (none when either is None)
    and ``wall_limit`` wall-clock seconds, counted from its making; whichever passes first."""

    def __init__(self, cpu_limit: float | None, wall_limit: float, pid: int | None = None) -> None:
        self.cpu_limit, self.wall_limit, self.pid = cpu_limit, wall_limit, pid
        self._start = time.monotonic()
        self._cpu_start = self._cpu = self._read() if self._counts_cpu else 0.0
        self._read_at = self._start

    @property
    def _counts_cpu(self) -> bool:
        return self.cpu_limit is not None and self.pid is not None

    def _read(self) -> float:
        return tree_cpu_seconds(self.pid) if self.pid is not None else 0.0

    def cpu_used(self) -> float:
        """CPU seconds the tree has used since the clock was made (read at most every :data:`REFRESH` s)."""
        if self._counts_cpu and time.monotonic() - self._read_at >= REFRESH:
            self._cpu, self._read_at = self._read(), time.monotonic()
        return self._cpu - self._cpu_start

    def wall_used(self) -> float:
        return time.monotonic() - self._start

    def passed(self) -> str | None:
        """:data:`CPU` or :data:`WALL` once that limit has passed; None before."""
        if self.wall_used() >= self.wall_limit:
            return WALL
        if self._counts_cpu and self.cpu_used() >= self.cpu_limit:
            return CPU
        return None

    def left(self) -> float:
        """Seconds to wait, at most, before looking again: 0 once a limit has passed."""
        if self.passed():
            return 0.0
        wall_left = self.wall_limit - self.wall_used()
        return min(wall_left, self.cpu_limit - self.cpu_used()) if self._counts_cpu else wall_left

    def limit_text(self, which: str) -> str:
        """The limit ``which`` in words: "30 s of CPU time", "300 s of wall-clock time"."""
        return f"{self.cpu_limit:g} s of CPU time" if which == CPU else f"{self.wall_limit:g} s of wall-clock time"


def wall_clock(seconds: float) -> Clock:
    """A clock with a wall-clock limit only."""
    return Clock(None, seconds)
