"""Nothing unwatched between the kernel and the checker (issue 49, item 4).

The kernel's side of the checker used to call, while it served a hidden block, modules of the
notebook's that a student can replace: ``contextlib`` (the rules were entered through its
``ExitStack``) and pyzmq's Python layer (the requests were read through ``zmq.Socket.recv_multipart``).
Each attack below won against that code (``contextlib.ExitStack`` replaced: a refused function passed
a hidden check; ``recv_multipart`` replaced: every request of a hidden block recorded and printed);
the kernel's side now holds its own references, taken before any student code runs, and guards them.
Each test grades through a real kernel and checker.
"""

from __future__ import annotations

import pytest

from coursetools.common.layout import REPO_ROOT

pytestmark = pytest.mark.slow

SETUP = "import torch\nfrom coursetools.checks import assert_equal, refuse\n"
REFUSED_SUM = """
import torch


def total(x):
    return torch.cumsum(x, 0)[-1]  # what the hidden block refuses
"""
UNDER_RULE = """### BEGIN HIDDEN TESTS
with refuse(torch, "cumsum", "write the sum yourself"):
    assert_equal(float(total(torch.ones(3))), 3.0)
### END HIDDEN TESTS"""
NO_STACK = (REPO_ROOT / "tests" / "hostile" / "any_exitstack_replaced.py").read_text(encoding="utf-8")  # one source
RECORDER = """
import zmq
_SEEN = []
_recv_multipart = zmq.Socket.recv_multipart


def _recording(self, *args, **kwargs):
    frames = _recv_multipart(self, *args, **kwargs)
    for frame in frames:
        data = frame if isinstance(frame, bytes) else frame.bytes  # ipykernel's own messages: zmq.Frame
        if b'["op",' in data:  # a request: {"d": [["op", "call"], ...]}
            _SEEN.append(data.decode("utf-8", "replace"))
    return frames


zmq.Socket.recv_multipart = _recording


def double(x):
    return x * 2
"""


def _session():
    from coursetools.devtools.session import KernelSession

    return KernelSession(REPO_ROOT, timeout=60)


def test_a_replaced_exit_stack_switches_no_rule_off():
    with _session() as session:
        assert session.run(SETUP, locked=True).passed
        assert session.run(REFUSED_SUM).passed
        honest = session.run(UNDER_RULE, locked=True)
        assert not honest.passed and "write the sum yourself" in honest.reason, honest.reason
        assert session.run(NO_STACK).passed
        attacked = session.run(UNDER_RULE, locked=True)
        assert not attacked.passed and "write the sum yourself" in attacked.reason, attacked.reason


def test_a_recorder_on_zmq_sees_none_of_the_checkers_requests():
    secret = 1234567  # a hidden input
    with _session() as session:
        assert session.run(SETUP, locked=True).passed
        assert session.run(RECORDER).passed
        graded = session.run(f"### BEGIN HIDDEN TESTS\nassert_equal(double({secret}), {2 * secret})\n"
                             "### END HIDDEN TESTS", locked=True)
        assert graded.passed, graded.reason
        printed = session.run("assert not _SEEN, 'recorded: ' + ' | '.join(_SEEN)")
        assert printed.passed, printed.reason


LOCKED_CONTEXT = """
import contextlib


@contextlib.contextmanager
def no_cumsum():
    with refuse(torch, "cumsum", "write the sum yourself"):
        yield


@contextlib.contextmanager
def helper_is_given():
    global helper
    students = helper
    helper = lambda x: x.sum()
    try:
        yield
    finally:
        helper = students
"""
STUDENT_WITH_HELPER = REFUSED_SUM + """

def helper(x):
    return x.sum() + 1  # wrong: the given helper stands in while the next part is graded


def uses_helper(x):
    return helper(x) * 2
"""
REBINDS = """
import contextlib
no_cumsum = contextlib.nullcontext  # the locked cell's rule, rebound in the notebook
"""


def test_a_locked_context_manager_is_the_instructors_whatever_the_notebook_rebinds():
    """Entered in the kernel as the locked cell wrote it (defined afresh, without the notebook's
    ``contextlib``), its ``global`` rebinding reaching the notebook's names."""
    with _session() as session:
        assert session.run(SETUP, locked=True).passed
        assert session.run(LOCKED_CONTEXT, locked=True).passed
        assert session.run(STUDENT_WITH_HELPER).passed
        under_rule = "### BEGIN HIDDEN TESTS\nwith no_cumsum():\n    assert_equal(float(total(torch.ones(3))), 3.0)\n" \
                     "### END HIDDEN TESTS"
        honest = session.run(under_rule, locked=True)
        assert not honest.passed and "write the sum yourself" in honest.reason, honest.reason
        given = session.run("### BEGIN HIDDEN TESTS\nwith helper_is_given():\n"
                            "    assert_equal(float(uses_helper(torch.ones(3))), 6.0)\n### END HIDDEN TESTS",
                            locked=True)
        assert given.passed, given.reason
        assert session.run(REBINDS).passed
        attacked = session.run(under_rule, locked=True)
        assert not attacked.passed and "write the sum yourself" in attacked.reason, attacked.reason
