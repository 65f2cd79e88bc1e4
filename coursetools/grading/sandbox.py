"""Each student's kernel runs in a box of its own: bubblewrap (``bwrap``), Linux only.

nbgrader runs a submission in a Jupyter kernel and takes its grades from what that kernel
answers, so the kernel is where a hostile notebook acts. :class:`ConfinedKernelManager` (set as
nbclient's ``kernel_manager_class`` in ``nbgrader_config.py``) starts every kernel inside
``bwrap``, where it sees:

* read-only: the Python environment (the virtual environment and the Python it was made from),
  the course's importable packages (:data:`COURSE_PACKAGES`), the system's ``/usr`` and
  ``/etc/ld.so.cache``;
* read-write: a scratch folder outside the course holding a copy of the student's folder (its
  working files, not its notebooks: nbgrader runs the kernel in the folder of the autograded
  notebook, whose test cells hold the hidden tests) and the kernel's sockets, an empty ``/tmp`` and ``/dev/shm`` of
  :attr:`Limits.tmp_bytes` each; a minimal ``/dev``; its own ``/proc``;
* nothing else: no ``solutions/``, ``grading/``, other students, ``.git``, home folders,
  no environment variable of the grader's (``bwrap`` itself starts with :func:`box_environment`),
  no network (its own empty network namespace), no other process (its own PID namespace; it
  dies with the grader: ``--die-with-parent``).

Inside the box the kernel is an unprivileged user with no capabilities, under the
:class:`Limits` (address space, processes and threads, size of any file it writes, bytes in its
scratch folder: a watchdog kills the box past them). nbclient talks to it over Unix sockets
(``transport="ipc"``) in the scratch folder, the one path both sides see; ``JPY_PARENT_PID`` is
not passed in (ipykernel would see PID 1 in the new namespace and exit). Interrupts go as a
message on the control channel (a signal would reach ``bwrap``, not the kernel). The scratch
folder is deleted with the kernel; what the grader keeps (scores, the autograded notebook) it
writes itself, outside the box.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import psutil
from jupyter_client.manager import AsyncKernelManager
from traitlets import Int, Unicode

BWRAP = "bwrap"
COURSE_PACKAGES = ("transformer_lib", "coursetools")  # what the notebooks import from the course
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `sudo apt install bubblewrap`; Fedora: "
                "`sudo dnf install bubblewrap`); on macOS or Windows grade inside a Linux container or VM")
GiB, MiB = 1 << 30, 1 << 20
STDERR_KEPT = 64 * 1024  # bytes of a kernel's own stderr kept in the grader's log
# Run inside the box before the kernel: set the limits (in the box's own user namespace, so the
# process count is the box's own), then become the kernel.
_SET_LIMITS = (
    "import os, resource, sys\n"
    "for name, value in zip(('RLIMIT_AS', 'RLIMIT_NPROC', 'RLIMIT_FSIZE', 'RLIMIT_CORE'), sys.argv[1:5]):\n"
    "    resource.setrlimit(getattr(resource, name), (int(value), int(value)))\n"
    "os.execv(sys.argv[5], sys.argv[5:])\n"
)


class SandboxUnavailable(RuntimeError):
    """``bwrap`` is missing or cannot make a box on this machine."""


@dataclass(frozen=True)
class Limits:
    """What one kernel may use (bytes and counts)."""

    memory_bytes: int = 4 * GiB  # address space of each process (RLIMIT_AS)
    processes: int = 512  # processes and threads in the box (RLIMIT_NPROC)
    file_bytes: int = 256 * MiB  # the largest file it may write (RLIMIT_FSIZE)
    scratch_bytes: int = 512 * MiB  # all it writes into its scratch folder (watched)
    tmp_bytes: int = 256 * MiB  # size of its /tmp and of its /dev/shm


def _read_only_roots() -> list[Path]:
    """The folders the kernel needs to read: the Python environment, the course's packages and
    the system libraries (``/usr``; ``/bin``, ``/lib*`` are symlinks into it or bound too)."""
    roots = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent.parent, Path("/usr")]
    for package in COURSE_PACKAGES:
        spec = find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            roots.extend(Path(p) for p in spec.submodule_search_locations)
    unique: list[Path] = []
    for root in sorted({r.resolve() for r in roots}, key=lambda p: len(p.parts)):
        if not any(root.is_relative_to(kept) for kept in unique):
            unique.append(root)
    return unique


def box_command(command: list[str], scratch: Path, workdir: Path, limits: Limits) -> list[str]:
    """``command`` (its first item a Python interpreter of this environment) run in a box whose
    only writable places are ``scratch`` (seen at the same path inside) and the box's own tmpfs."""
    args = [shutil.which(BWRAP) or BWRAP, "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
            "--disable-userns", "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev",
            "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
            "--size", str(limits.tmp_bytes), "--tmpfs", "/dev/shm"]
    for root in _read_only_roots():
        args += ["--ro-bind", str(root), str(root)]
    for top in ("bin", "lib", "lib64", "lib32", "sbin"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for shared in ("/etc/ld.so.cache", "/etc/fonts"):  # the dynamic linker's cache; matplotlib's fonts
        if Path(shared).exists():
            args += ["--ro-bind", shared, shared]
    args += ["--bind", str(scratch), str(scratch), "--chdir", str(workdir), "--remount-ro", "/", "--"]
    limit_values = [limits.memory_bytes, limits.processes, limits.file_bytes, 0]
    return args + [command[0], "-I", "-S", "-c", _SET_LIMITS, *map(str, limit_values), *command]


def box_environment() -> dict[str, str]:
    """The whole environment of ``bwrap`` and so of the box (the box's PID 1 is ``bwrap``, whose
    ``/proc/1/environ`` the kernel can read: nothing of the grader's may be in it)."""
    return {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
            "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0"), "MPLBACKEND": "Agg",
            "MALLOC_ARENA_MAX": "2",  # glibc reserves 64 MiB of address space per thread otherwise
            # one thread for torch and numpy, as the notebooks' own setup says: a cell's time limit counts
            # the CPU seconds of every thread (coursetools/checker/clock.py), the same on any machine
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def check_binary() -> None:
    """Raise :class:`SandboxUnavailable` when ``bwrap`` is not on PATH (the cheap part of :func:`check`)."""
    if shutil.which(BWRAP) is None:
        raise SandboxUnavailable(f"`{BWRAP}` was not found on PATH: {INSTALL_HINT}")


def check(limits: Limits = Limits()) -> None:
    """Raise :class:`SandboxUnavailable` (saying how to fix it) unless a box runs Python here."""
    if sys.platform != "linux":
        raise SandboxUnavailable(f"grading needs Linux to confine student code (this is {sys.platform}): "
                                 f"{INSTALL_HINT}")
    check_binary()
    with tempfile.TemporaryDirectory(prefix="course-box-") as folder:
        command = box_command([sys.executable, "-c", "print('boxed')"], Path(folder), Path(folder), limits)
        result = subprocess.run(command, capture_output=True, text=True, timeout=60, env=box_environment())
    if result.returncode != 0 or result.stdout.strip() != "boxed":
        raise SandboxUnavailable(f"`{BWRAP}` could not start a box here (exit {result.returncode}: "
                                 f"{result.stderr.strip()[:300]}); unprivileged user namespaces may be "
                                 "disabled (sysctl kernel.unprivileged_userns_clone=1)")


def folder_bytes(folder: Path) -> int:
    """Bytes in the files under ``folder`` (links are not followed)."""
    total = 0
    for directory, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(directory, name)).st_size
            except OSError:
                pass
    return total


class ConfinedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel runs in a bubblewrap box (see the module's docstring)."""

    memory_bytes = Int(Limits.memory_bytes, help="address space of each process in the box").tag(config=True)
    processes = Int(Limits.processes, help="processes and threads in the box").tag(config=True)
    file_bytes = Int(Limits.file_bytes, help="largest file the kernel may write").tag(config=True)
    scratch_bytes = Int(Limits.scratch_bytes, help="bytes the kernel may leave in its scratch folder").tag(config=True)
    tmp_bytes = Int(Limits.tmp_bytes, help="size of the box's /tmp and /dev/shm").tag(config=True)
    scratch_root = Unicode("", help="folder for the scratch folders (default: the system's temp)").tag(config=True)
    watch_seconds = 0.25

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.scratch = Path(tempfile.mkdtemp(prefix="box-", dir=self.scratch_root or None))
        self.transport = "ipc"
        self.ip = str(self.scratch / "kernel")
        self.connection_file = str(self.scratch / "kernel.json")
        self._workdir = self.scratch / "work"  # the kernel's working directory
        self._stop_watch = threading.Event()

    @property
    def limits(self) -> Limits:
        return Limits(self.memory_bytes, self.processes, self.file_bytes, self.scratch_bytes, self.tmp_bytes)

    async def _async_pre_start_kernel(self, **kw):
        check_binary()
        self.kernel_spec.interrupt_mode = "message"
        source = kw.get("cwd")  # the student's folder, where nbclient would start the kernel
        if source and Path(source).is_dir():  # without notebooks: the one graded holds the hidden tests
            shutil.copytree(source, self._workdir, symlinks=True, ignore=shutil.ignore_patterns("*.ipynb"))
        else:
            self._workdir.mkdir()
        return await super()._async_pre_start_kernel(**kw)

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        command = super().format_kernel_cmd(extra_arguments)
        return box_command(command, self.scratch, self._workdir, self.limits)

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        kw["env"] = box_environment()  # replaces jupyter_client's
        kw["independent"] = True  # no JPY_PARENT_PID: in the box the kernel's parent is PID 1
        # ipykernel echoes whatever reaches the kernel's file descriptors 1 and 2 (os.write, C code) to its
        # own stdout and stderr, which were the grader's log: 300 MB written to fd 1 made a 256 MiB log. What
        # the notebook shows of it is capped (coursetools/checks/output_cap.py); the log keeps the start of
        # the kernel's stderr (why a kernel failed to start), nothing of its stdout.
        kw["stdout"], kw["stderr"] = subprocess.DEVNULL, subprocess.PIPE
        await super()._async_launch_kernel(kernel_cmd, **kw)
        threading.Thread(target=_keep_head, args=(self.provisioner.process.stderr, sys.stderr, STDERR_KEPT),
                         daemon=True).start()
        self._stop_watch.clear()
        threading.Thread(target=self._watch_scratch, daemon=True).start()

    def _watch_scratch(self) -> None:
        """Kill the box once its scratch folder holds more than ``scratch_bytes``, or it runs more
        than ``processes`` processes (RLIMIT_NPROC does not bind a grader running as root: the
        kernel exempts the host's root user, whom the box's user is mapped to)."""
        process = getattr(self.provisioner, "process", None)
        while process is not None and not self._stop_watch.wait(self.watch_seconds):
            broken = None
            if folder_bytes(self.scratch) > self.scratch_bytes:
                broken = f"wrote more than {self.scratch_bytes} bytes into its folder"
            elif _descendants(process.pid) > self.processes:
                broken = f"ran more than {self.processes} processes"
            if broken:
                self.log.error("Kernel died: the notebook %s; its box was killed", broken)
                process.kill()
                return

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        self._stop_watch.set()
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self.scratch, ignore_errors=True)


def _keep_head(source, target, size: int) -> None:
    """Copy the first ``size`` bytes read from ``source`` to ``target``, then read the rest and drop it."""
    kept = 0
    try:
        for chunk in iter(lambda: source.read1(65536), b""):
            if kept < size:
                target.write(chunk[:size - kept].decode("utf-8", errors="replace"))
                target.flush()
            kept += len(chunk)
    except (OSError, ValueError):  # closed when the kernel was cleaned up
        pass
    if kept > size:
        target.write(f"\n[course] the kernel wrote {kept - size:,} more bytes to its stderr: not kept\n")
        target.flush()


def _descendants(pid: int) -> int:
    """How many processes descend from ``pid`` (0 once it is gone)."""
    try:
        return len(psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        return 0
