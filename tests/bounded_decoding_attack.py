"""Replies that grow in the grader, sent by a real kernel to a real checker, in a process of their own.

``python tests/bounded_decoding_attack.py [nests] [expands]`` runs a notebook of graded cells (those named,
or all) through
:class:`~coursetools.devtools.session.KernelSession` (the checker in this process, the student's kernel
beside it) and prints, as JSON, each cell's outcome and seconds and this process's peak resident
memory (MiB): the checker's, since the kernel is another process.

* ``nests``: the kernel's bridge is made to answer with twelve million nested lists (24 MB of text,
  within the message limit), once, then put back;
* ``expands``: the answer returns ``torch.zeros(1).expand(2**27)``, one float of storage that claims
  512 MiB, and the hidden block calls ``.tolist()`` on it;
* ``honest``: an ordinary answer, graded after both.

``tests/test_bounded_decoding.py`` runs it; so can anyone, to measure.
"""

from __future__ import annotations

import json
import resource
import sys
import time

from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.session import KernelSession

SETUP = "import torch\nfrom coursetools.checks import assert_equal\n"
DEPTH = 12_000_000
STUDENT = f'''
import torch
import coursetools.checks.bridge as _bridge
_answer = _bridge.answer


def expands():
    return torch.zeros(1).expand(2**27)


def nests():
    return []


def honest():
    return [1, 2, 3]


def _forged(text):
    """The reply to the call of nests(): {DEPTH:,} nested lists; every other reply the bridge's own."""
    if '"nests"' not in text or '"call"' not in text:
        return _answer(text)
    vars(_bridge)["answer"] = _answer  # put back: the next hidden blocks find nothing changed
    return "json:" + "[" * {DEPTH} + "]" * {DEPTH}
'''
FORGES = 'vars(_bridge)["answer"] = _forged  # the bridge is guarded: its dict, not its attribute\n'
CELLS = {  # nests first: its forger is in place from the student's cell on, until it has forged
    "nests": "assert_equal(nests(), [])",
    "expands": "assert_equal(len(expands().tolist()), 3)",
    "honest": "assert_equal(honest(), [1, 2, 3])",
}


def main(chosen: list[str]) -> None:
    """Grade the cells named in ``chosen`` (all when none is), then ``honest``."""
    cells = [name for name in CELLS if name in chosen or not chosen or name == "honest"]
    outcomes = {}
    with KernelSession(REPO_ROOT, timeout=300) as session:
        assert session.run(SETUP, locked=True).passed
        assert session.run(STUDENT + (FORGES if "nests" in cells else "")).passed
        for name in cells:
            check = CELLS[name]
            start = time.monotonic()
            outcome = session.run(f"### BEGIN HIDDEN TESTS\n{check}\n### END HIDDEN TESTS", locked=True)
            outcomes[name] = {"passed": outcome.passed, "reason": outcome.reason[:400],
                              "seconds": round(time.monotonic() - start, 2)}
    json.dump({"cells": outcomes, "peak_mib": peak_mib()}, sys.stdout)


def peak_mib() -> int:
    """This process's peak resident memory in MiB: /proc's VmHWM, which starts afresh at exec (getrusage's
    ru_maxrss does not on Linux: it carries the parent's peak, so a test run from a grown pytest worker read 1078)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) // 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


if __name__ == "__main__":
    main(sys.argv[1:])
