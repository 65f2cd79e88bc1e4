"""The checker that runs hidden tests outside the student's kernel, and the plain data it reads.

The format (:mod:`coursetools.checks.wire`) and the name analysis are tested without a kernel; the
checker itself against a real ``python3`` kernel (:class:`~coursetools.devtools.session.KernelSession`,
the path the wrong-answer tests and the mutants use; grading goes through nbgrader's ``Execute``
with the same :class:`~coursetools.checker.Checker`).
"""

from __future__ import annotations

import base64
import io
import pickle
import time

import pytest
import torch

from coursetools.checker.scopes import scope_names
from coursetools.checks import wire
from coursetools.common.hidden import split_hidden_block
from coursetools.common.layout import REPO_ROOT


def test_plain_data_crosses_both_ways():
    value = {"x": torch.arange(3.0), "n": [1, 2.5, True, None, "s"], "t": (torch.float64, torch.Size([2, 3]))}
    back = wire.from_text(wire.to_text(value))
    assert torch.equal(back["x"], value["x"]) and back["n"] == value["n"] and back["t"] == value["t"]


@pytest.mark.parametrize("value, named", [
    (torch.nn.Parameter(torch.zeros(2)), "Parameter"),
    (torch.zeros(2).as_subclass(type("Liar", (torch.Tensor,), {})), "Liar"),
    ({"a": object()}, "object"),
    ((i for i in range(3)), "generator"),
])
def test_anything_else_is_refused_by_name(value, named):
    with pytest.raises(wire.NotPlainData, match=named):
        wire.to_text(value)


class Payload:
    def __reduce__(self):
        return (print, ("this ran",))


def test_a_pickle_or_an_archive_is_refused_unread(capsys):
    """The wire is JSON only: what ``torch.load`` or ``pickle`` would read never reaches them."""
    buffer = io.BytesIO()
    torch.save({"a": torch.zeros(2)}, buffer)
    for data in (pickle.dumps(Payload()), buffer.getvalue()):
        for prefix in ("torch:", "pickle:", ""):
            with pytest.raises(wire.NotPlainData, match="JSON only"):
                wire.from_text(prefix + base64.b64encode(data).decode())
    assert "this ran" not in capsys.readouterr().out


def test_json_with_too_many_items_is_refused():
    with pytest.raises(wire.NotPlainData, match="items"):
        wire.from_text(wire.JSON + "[" + "0," * (wire.MAX_ITEMS + 1) + "0]")
    assert wire.from_text(wire.JSON + "[0,0]") == [0, 0]
    assert wire.from_text(wire.to_text(["a,b,[c]" * 2**20])) == ["a,b,[c]" * 2**20]  # a string's commas are one item


@pytest.mark.parametrize("form, why", [
    ('["float32",[4],"!!!!!!!!",false]', "not plain data"),  # not base64
    ('["float32",[2],"AAAAAA==",false]', "carries"),  # 8 bytes claimed, 4 carried
    ('["float32",[134217728],"AAAAAA==",false]', "536,870,912 bytes"),  # an expand of a 1-element tensor, forged
    ('["qint8",[1],"AA==",false]', "not plain data"),
    ('["int64",[1],"AAAAAAAAAAA=",true]', "not plain data"),  # an integer tensor cannot require grad
    ('["float32",[-1],"",false]', "not plain data"),
])
def test_a_tensor_must_carry_the_bytes_it_claims(form, why):
    with pytest.raises(wire.NotPlainData, match=why):
        wire.from_text(wire.JSON + '{"x":' + form + "}")


def test_tensors_cross_exactly():
    value = [torch.randn(2, 3), torch.tensor([True, False]), torch.zeros(0, 3), torch.tensor(5),
             torch.randn(2, dtype=torch.complex64).conj(), torch.ones(3, dtype=torch.bfloat16),
             torch.arange(6.0).reshape(2, 3).t(), torch.ones(2, requires_grad=True)]
    back = wire.from_text(wire.to_text(value))
    for sent, got in zip(value, back):
        assert torch.equal(sent.detach().resolve_conj(), got) and (sent.dtype, sent.requires_grad) == (
            got.dtype, got.requires_grad)


def test_a_tensor_is_measured_by_the_bytes_it_claims_before_any_copy():
    with pytest.raises(wire.NotPlainData, match="536,870,912 bytes"):
        wire.to_text(torch.zeros(1).expand(2**27))


def test_values_without_tensors_cross_as_json_exactly():
    value = {"a": (1, 2.0, -0.0, float("inf"), "\u00e9", None, False), ("k", 1): [[], ()], 3: {}, None: [(True,)],
             "s": torch.Size([2, 3]), "d": torch.float16}
    text = wire.to_text(value)
    assert text.startswith(wire.JSON) and repr(wire.from_text(text)) == repr(value)


@pytest.mark.parametrize("body, why", [
    ('{"x": 1}', "not plain data"), ('{"t": 1}', "not plain data"), ('{"t": [], "d": []}', "not plain data"),
    ('{"d": [[1]]}', "not plain data"), ('{"d": [[[1], 2]]}', "not plain data"),
    ("[" * 40 + "]" * 40, "not plain data"), ("[" * 100_000, "levels deep"), ("[1,", "not plain data"),
    ("[1] [2]", "not plain data"), ('{"dtype": "not_a_dtype"}', "not plain data")])
def test_json_that_the_checker_never_writes_is_refused(body, why):
    with pytest.raises(wire.NotPlainData, match=why):
        wire.from_text(wire.JSON + body)


def test_free_names_include_the_functions_bodies():
    bound, free = scope_names("import math\n_x = f(1)\ndef _g():\n    return h(_x) + math.pi\nclass _C:\n    y = k\n")
    assert bound == {"math", "_x", "_g", "_C"}
    assert free == {"f", "h", "k"}


def test_split_hidden_block():
    visible, hidden = split_hidden_block("a = 1\n### BEGIN HIDDEN TESTS\n  b = 2\n  c = 3\n### END HIDDEN TESTS\nd = 4")
    assert visible == "a = 1\nd = 4" and hidden == "b = 2\nc = 3"


# --- against a kernel ---------------------------------------------------------------------------

SETUP = """
import torch
from coursetools.checks import assert_close, assert_equal, expect_raises, verify_untampered
LIMIT = 3


def helper(x):
    return x * 2


class Box:
    def __init__(self, items):
        self.items = list(items)
"""

STUDENT = """
import torch


def double(x):
    print("printed by the student")
    return x * 2


def fails(kind):
    raise {"value": ValueError, "index": IndexError, "custom": type("Custom", (Exception,), {})}[kind]("no")


def evil():
    class Always:
        def __eq__(self, other):
            return True
    return Always()


def count(box):
    return len(box.items)


def calls(f, x):
    return f(x) + f(x)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.linear(x)


def uses_autograd(x):
    x = x.clone().requires_grad_(True)
    (g,) = torch.autograd.grad((x ** 2).sum(), x)
    return g


def zero_first(x, others):
    x[0] = 0.0  # in place: the caller's tensor changes, as do those of the list
    for other in others:
        other.mul_(2)
    return x.sum()


def grow(x):
    x.unsqueeze_(0)  # a new shape, in place
    return x.sum()
"""

HIDDEN = r"""
from coursetools.checker import Fake
from coursetools.checks import assert_close, assert_equal, expect_raises, refuse
assert_close(double(torch.ones(2)), torch.full((2,), 2.0))
assert_equal(helper(3), 6)  # the locked cell's helper, run here
assert_equal(LIMIT, 3)
with expect_raises(ValueError, "fails('value')"):
    fails("value")
with expect_raises(IndexError, "fails('index')"):
    fails("index")
with expect_raises(Exception, "fails('custom')"):
    fails("custom")
_failed = False
try:
    evil()
except AssertionError as error:
    _failed = "Always" in str(error)
assert _failed, "an object with its own __eq__ must be refused by name"
assert_equal(count(Box([1, 2, 3])), 3)  # a locked class's instance, passed by value
_net = Net()
_x = torch.randn(4, 3, requires_grad=True)
_out = _net(_x)
(_grad,) = torch.autograd.grad(_out.sum(), _x)
_w = _net.linear.weight
assert_close(_grad, _w.sum(0).expand(4, 3))
assert isinstance(_net.state_dict()["linear.weight"], torch.Tensor)
_fake = Fake(("x",), wraps=double)
assert_close(calls(_fake, torch.ones(1)), torch.full((1,), 4.0))
assert len(_fake.calls) == 2
with refuse(torch.autograd, "grad", "refused here"), expect_raises(RuntimeError, "autograd refused"):
    uses_autograd(torch.ones(2))
assert_close(uses_autograd(torch.ones(2)), torch.full((2,), 2.0))
# a tensor changed in place by the notebook is changed here too (a hidden "inputs unchanged" test could
# never fail when only a copy changed); an unchanged one is left alone
_x, _y, _z = torch.ones(3), torch.ones(2), torch.arange(4)
zero_first(_x, [_y])
assert_equal(_x, torch.tensor([0.0, 1.0, 1.0]), name="a tensor the notebook changed in place")
assert_equal(_y, torch.full((2,), 2.0), name="a tensor in a list the notebook changed in place")
assert_equal(double(_z), torch.arange(0, 8, 2))
assert_equal(_z, torch.arange(4), name="a tensor the notebook did not change")
_resized = False
try:
    grow(torch.ones(2))
except AssertionError as error:
    _resized = "changed in place a tensor it was given" in str(error)
assert _resized, "a tensor given a new shape in place fails the test"
SECRET_MARK_12345 = 1
"""


@pytest.fixture(scope="module")
def kernel():
    from coursetools.devtools.session import KernelSession

    with KernelSession(REPO_ROOT, timeout=60) as session:
        assert session.run(SETUP, locked=True).passed
        assert session.run(STUDENT).passed
        yield session


@pytest.mark.slow
def test_a_hidden_block_runs_in_the_checker(kernel):
    test = "assert_equal(double(2), 4)\n### BEGIN HIDDEN TESTS\n" + HIDDEN + "### END HIDDEN TESTS\n"
    outcome = kernel.run(test, locked=True)
    assert outcome.passed, outcome.reason
    history = kernel.run("assert 'SECRET_MARK_' + '12345' not in str(In) + str(globals()), 'hidden line in kernel'")
    assert history.passed, history.reason


@pytest.mark.slow
def test_a_failed_hidden_check_fails_the_cell_with_its_message(kernel):
    outcome = kernel.run("### BEGIN HIDDEN TESTS\nassert_equal(double(2), 5, name='double(2)')\n### END HIDDEN TESTS",
                         locked=True)
    assert not outcome.passed and "double(2) should be 5, got 4" in outcome.reason


@pytest.mark.slow
def test_a_visible_failure_skips_the_hidden_block(kernel):
    outcome = kernel.run("assert False, 'visible'\n### BEGIN HIDDEN TESTS\nraise SystemError('hidden ran')\n"
                         "### END HIDDEN TESTS", locked=True)
    assert not outcome.passed and "visible" in outcome.reason


@pytest.mark.slow
def test_a_replaced_bridge_gives_no_points(kernel):
    assert kernel.run("import coursetools.checks.bridge as b\nb.answer = lambda text: None").passed
    try:
        outcome = kernel.run("### BEGIN HIDDEN TESTS\nassert_equal(double(2), 4)\n### END HIDDEN TESTS", locked=True)
        assert not outcome.passed and "did not answer" in outcome.reason
    finally:
        kernel.run("import importlib\nimportlib.reload(b)")


@pytest.mark.slow
def test_a_bridge_that_leaves_after_saying_it_serves_gives_no_points(kernel):
    assert kernel.run("import coursetools.checks.bridge as b, zmq\n\n"
                      "def half(data):\n"
                      "    s = zmq.Context.instance().socket(zmq.PAIR)\n"
                      "    s.connect(data['serve'])\n"
                      "    s.send_multipart([b.READY + str(data['number']).encode(), b''])\n"
                      "    s.close(linger=0)\n\n"
                      "saved = b._serve\n"
                      "vars(b)['_serve'] = half").passed  # the bridge is guarded: its dict, not its attribute
    try:
        start = time.monotonic()
        outcome = kernel.run("### BEGIN HIDDEN TESTS\nassert_equal(double(2), 4)\n### END HIDDEN TESTS", locked=True)
        assert not outcome.passed and "did not answer" in outcome.reason, outcome.reason
        assert time.monotonic() - start < 10, "the checker waited for a bridge that had left"
    finally:
        kernel.run("vars(b)['_serve'] = saved")


SNOOPS = """
import gc


NEEDLE = "-".join(["SECRET", "TWO"])  # built at run time: a constant would be found in the code itself


def snoops(f, x):
    answer = f(x)
    found = sum(1 for o in gc.get_objects() if isinstance(o, (dict, list, tuple))
                for v in (o.values() if isinstance(o, dict) else o)
                if isinstance(v, str) and NEEDLE in v and v is not NEEDLE)
    return answer, found
"""


@pytest.mark.slow
def test_a_fake_sends_the_kernel_only_the_entries_asked_for():
    """Issue 40: a fake's whole table used to go to the kernel (ch05: 65 layers, most never asked for).
    A kernel of its own: in the shared one, after the test of a bridge that leaves, it was not answered."""
    from coursetools.devtools.session import KernelSession

    with KernelSession(REPO_ROOT, timeout=60) as kernel:
        assert kernel.run(SETUP, locked=True).passed and kernel.run(STUDENT).passed
        assert kernel.run(SNOOPS).passed
        outcome = kernel.run("### BEGIN HIDDEN TESTS\nfrom coursetools.checker import Fake\n"
                             "_fake = Fake((\"k\",), answers={(1,): \"one\", (2,): \"SECRET-TWO\"}, key=(\"k\",))\n"
                             "assert_equal(snoops(_fake, 1), (\"one\", 0))\n"
                             "assert_equal(calls(_fake, 1), \"oneone\")\n"
                             "assert_equal([c[\"k\"] for c in _fake.calls], [1, 1, 1])\n"
                             "with expect_raises(KeyError, \"a key the table lacks\"):\n"
                             "    snoops(_fake, 3)\n### END HIDDEN TESTS", locked=True)
    assert outcome.passed, outcome.reason


UNDER_RULE = """### BEGIN HIDDEN TESTS
from coursetools.checks import assert_close, refuse
with refuse(torch.autograd, "grad", "write the gradient yourself"):
    assert_close(uses_autograd(torch.ones(2)), torch.full((2,), 2.0))
### END HIDDEN TESTS"""
# Issue 40's way round the rules: the bridge reached through IPython's comm targets (no name the scan
# knew then), the rules' machinery in its module replaced by a no-op.
RULES_OFF = """import IPython, contextlib
_opened = getattr(IPython, "get_" + "ipython")().kernel.comm_manager.targets["%s"]
_calls = getattr(_opened, "__glob" + "als__")["calls"]
vars(_calls)["_rule"] = lambda rule: contextlib.nullcontext()
"""


@pytest.mark.slow
def test_rules_switched_off_in_the_bridges_module_end_in_tampering():
    from coursetools.checks.names import COMM_TARGET
    from coursetools.devtools.session import KernelSession

    with KernelSession(REPO_ROOT, timeout=60) as session:
        assert session.run(SETUP, locked=True).passed
        assert session.run(STUDENT).passed
        honest = session.run(UNDER_RULE, locked=True)
        assert not honest.passed and "write the gradient yourself" in honest.reason, honest.reason
        assert session.run(RULES_OFF % COMM_TARGET).passed
        attacked = session.run(UNDER_RULE, locked=True)
        assert not attacked.passed and "TamperingError" in attacked.reason and "_rule" in attacked.reason, \
            attacked.reason


@pytest.mark.slow
def test_a_call_that_never_returns_is_stopped_at_the_limit_and_a_dead_kernel_is_dead():
    from coursetools.devtools.session import KernelSession

    with KernelSession(REPO_ROOT, timeout=60) as session:
        assert session.run(SETUP, locked=True).passed
        assert session.run("import os, signal\n\ndef spin():\n    while True:\n        pass\n\n"
                           "def die():\n    os.kill(os.getpid(), signal.SIGKILL)\n\ndef one():\n    return 1").passed
        session.timeout = 4  # the set-up above may take longer on a busy machine; the limit tested is this one
        start = time.monotonic()
        outcome = session.run("### BEGIN HIDDEN TESTS\nspin()\n### END HIDDEN TESTS", locked=True)
        assert not outcome.passed and "timed out after 4 s" in outcome.reason, outcome.reason
        assert time.monotonic() - start < 4 + 8, "the call was not stopped at the cell's limit"
        outcome = session.run("### BEGIN HIDDEN TESTS\nassert_equal(one(), 1)\n### END HIDDEN TESTS", locked=True)
        assert outcome.passed, f"the kernel did not answer after the interrupt: {outcome.reason}"
        outcome = session.run("### BEGIN HIDDEN TESTS\ntry:\n    die()\nexcept Exception:\n    pass\n"
                              "### END HIDDEN TESTS", locked=True)
        assert not outcome.passed and "Kernel died" in outcome.reason, outcome.reason
