"""Time limits that a busy machine does not change: CPU seconds of a process tree, with a wall-clock guard.

A cell given 30 s of wall-clock time on an idle machine gets a fifth of that on a machine where
four other processes share each core: a student whose cell printed two million lines was `cell
timed out` beside eight busy loops and `output cut` with every point alone. So grading counts a
cell's time (and a notebook's) in the CPU seconds of the kernel's process tree (user and system
time of the kernel, its threads and every process it started, the ended ones included once they
were waited for), which the other work on the machine does not change. A kernel that waits without
computing (``time.sleep``) uses no CPU: a wall-clock limit, :data:`WALL_FACTOR` times longer (and
longer still on a loaded machine, :class:`Clock`), stays as the last guard.

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
_CORES = os.cpu_count() or 1


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
    and ``wall_limit`` wall-clock seconds, counted from its making; whichever passes first.

    The wall-clock limit grows with the load the clock saw while it ran (the highest 1-minute load
    average per core, when above 1): at a load of 20 on 2 cores a kernel computing without pause got a
    tenth of a core, and an honest cell's hidden tests ran past a wall-clock limit 10 times its CPU time.
    """

    def __init__(self, cpu_limit: float | None, wall_limit: float, pid: int | None = None) -> None:
        self.cpu_limit, self.wall_limit, self.pid = cpu_limit, wall_limit, pid
        self._start = time.monotonic()
        self._load = 1.0  # the highest load per core seen, at least 1
        self._cpu_start = self._cpu = self._read()
        self._read_at = self._start

    @property
    def _counts_cpu(self) -> bool:
        return self.cpu_limit is not None and self.pid is not None

    def _read(self) -> float:
        """The tree's CPU seconds now, noting the machine's load."""
        self._load = max(self._load, os.getloadavg()[0] / _CORES)
        return tree_cpu_seconds(self.pid) if self._counts_cpu else 0.0

    def _refresh(self) -> None:
        if time.monotonic() - self._read_at >= REFRESH:
            self._cpu, self._read_at = self._read(), time.monotonic()

    def cpu_used(self) -> float:
        """CPU seconds the tree has used since the clock was made (read at most every :data:`REFRESH` s)."""
        self._refresh()
        return self._cpu - self._cpu_start

    def wall_used(self) -> float:
        return time.monotonic() - self._start

    def wall_allowed(self) -> float:
        """The wall-clock limit, grown with the load seen so far."""
        self._refresh()
        return self.wall_limit * self._load

    def passed(self) -> str | None:
        """:data:`CPU` or :data:`WALL` once that limit has passed; None before."""
        if self._counts_cpu and self.cpu_used() >= self.cpu_limit:
            return CPU
        return WALL if self.wall_used() >= self.wall_allowed() else None

    def left(self) -> float:
        """Seconds to wait, at most, before looking again: 0 once a limit has passed."""
        if self.passed():
            return 0.0
        wall_left = self.wall_allowed() - self.wall_used()
        return min(wall_left, self.cpu_limit - self.cpu_used()) if self._counts_cpu else wall_left

    def limit_text(self, which: str) -> str:
        """The limit ``which`` in words: "30 s of CPU time", "300 s of wall-clock time"."""
        if which == CPU:
            return f"{self.cpu_limit:g} s of CPU time"
        return f"{self.wall_allowed():.0f} s of wall-clock time"


def wall_clock(seconds: float) -> Clock:
    """A clock with a wall-clock limit only."""
    return Clock(None, seconds)
