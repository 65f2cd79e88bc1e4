"""Where a committed result came from, and whether a rerun on this machine agrees with it.

Long training runs are committed as results (``benchmarks/results/*.json``) that record the
machine, its CPU and the versions that produced them; a book page reads the file and trains a
small part of it again as it builds, to check the file against the code.

Float32 training is reproducible on one kind of machine, not across kinds: PyTorch picks its
CPU kernels by the instruction set it finds (AVX2, AVX-512...) and the vendor's libraries, and
a different order of additions rounds differently; over hundreds of optimiser steps those
last-bit differences grow into visible ones (a difference of 0.018 nats per character after
200 steps, between an AMD EPYC and an Intel Xeon, was seen on this course's scaling grid).
So a rerun check has two cases (:func:`check_rerun`):

* **the same kind of machine** (the same CPU name, the same CPU capability as PyTorch reports
  it, the same Python and PyTorch): the rerun must reproduce the file exactly, so any change of
  the code shows;
* **another kind**: the rerun must agree within a tolerance, set for training by the file's own
  spread over seeds (a rerun differs from the file by rounding only, far less than a new seed, which
  changes the initialisation and the order of the batches), and for a mere evaluation of committed
  weights by a tiny constant.

Either way the difference is printed.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .runtime import save_checkpoint

__all__ = ["cpu_name", "machine_record", "code_commit", "same_machine_kind", "RerunCheck", "check_rerun"]


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or what :mod:`platform` knows where there is none."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_record() -> dict[str, str]:
    """What a results file records of the machine and versions that produced it (JSON-ready)."""
    return {
        "machine": f"{cpu_name()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "python": sys.version,
        "torch": str(torch.__version__),  # a plain str: TorchVersion cannot be read back with weights_only
    }


def code_commit(repository: Path) -> str:
    """The git commit of ``repository``, ``+changes`` when tracked files differ from it (``unknown`` outside git)."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], capture_output=True, text=True, cwd=repository).stdout.strip()
        except OSError:
            return ""
    head = git("rev-parse", "HEAD") or "unknown"
    return head + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def _kind(record: Mapping[str, str]) -> tuple[str, str | None, str, str]:
    cpu = record["machine"].split(",", 1)[0].strip()  # "AMD EPYC, 2 cores, Linux ..." -> "AMD EPYC"
    return cpu, record.get("cpu_capability"), record["python"].split()[0], record["torch"]


def same_machine_kind(record: Mapping[str, str], here: Mapping[str, str] | None = None) -> bool:
    """Whether ``here`` (default: this machine) is the kind of machine ``record`` was made on.

    The same CPU name, Python and PyTorch versions, and CPU capability (compared only when the
    record holds one).
    """
    ours, theirs = _kind(here or machine_record()), _kind(record)
    capability_differs = theirs[1] is not None and ours[1] != theirs[1]
    return (ours[0], ours[2], ours[3]) == (theirs[0], theirs[2], theirs[3]) and not capability_differs


@dataclass(frozen=True)
class RerunCheck:
    """The outcome of :func:`check_rerun`."""

    gap: float  #: the largest absolute difference between the rerun and the file
    tolerance: float  #: the largest allowed (0.0: exact)
    same_kind: bool  #: whether this machine is the kind the file was made on
    why: str  #: where the tolerance on another kind comes from

    @property
    def passed(self) -> bool:
        return self.gap <= self.tolerance

    def __str__(self) -> str:
        if self.same_kind:
            rule = "the machine kind and versions the file records, so the rerun must reproduce it exactly"
        else:
            rule = (f"another machine kind or versions than the file records, so the rerun must agree within "
                    f"{self.tolerance:.1e}, {self.why}")
        verdict = "agrees" if self.passed else "DOES NOT agree"
        return f"largest difference from the file {self.gap:.1e} on {rule}: it {verdict}"


def check_rerun(rerun: Sequence[float], recorded: Sequence[float], record: Mapping[str, str], *,
                tolerance: float, why: str, here: Mapping[str, str] | None = None) -> RerunCheck:
    """Compare numbers computed again here (losses, say) with the same numbers in a results file.

    Args:
        rerun: the values this machine got, one per run.
        recorded: the file's values for the same runs (same settings, same seed), in the same order.
        record: the file's machine record (``machine``, ``python``, ``torch``, optionally
            ``cpu_capability``; see :func:`machine_record`).
        tolerance: the largest difference allowed on another kind of machine: for training, a
            fraction of the file's spread over seeds (a rerun differs by rounding only, far less
            than a new seed); for a mere evaluation of the same weights, a tiny constant.
        why: where ``tolerance`` comes from, in words (printed with the outcome).
        here: this machine's record (default :func:`machine_record`).
    """
    if len(rerun) != len(recorded) or not rerun:
        raise ValueError(f"need as many rerun values as recorded ones (at least one), got {len(rerun)} and "
                         f"{len(recorded)}")
    if not math.isfinite(tolerance) or tolerance <= 0:
        raise ValueError(f"tolerance must be a positive number, got {tolerance!r}")
    gap = max(abs(a - b) if math.isfinite(a) else math.inf for a, b in zip(rerun, recorded))
    same = same_machine_kind(record, here)
    return RerunCheck(gap=gap, tolerance=0.0 if same else tolerance, same_kind=same, why=why)


def save_results(path: Path, record: Any) -> None:
    """Write a results file atomically (a crash never leaves half a file): JSON for ``.json``, else ``torch.save``
    through :func:`~transformer_lib.runtime.save_checkpoint`."""
    if path.suffix != ".json":
        save_checkpoint(record, path)
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
