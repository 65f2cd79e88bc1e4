"""Unit tests of coursetools.checks and its tamper guard, coursetools.checks.tamper: each attack a hostile
notebook could make, in-process.

Every test undoes its tampering (pytest's ``monkeypatch``), so the module's snapshot stays valid
for the next test.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy
import pytest
import torch
import torch.nn.functional as F

import coursetools.checks as checks
import coursetools.checks.refusals as refusals
import coursetools.checks.tamper as tamper
import transformer_lib
import transformer_lib.tokens as tokens
from coursetools.checks import (
    TamperingError,
    assert_close,
    assert_equal,
    assert_shape,
    expect_raises,
    forbid,
    refuse,
    verify_untampered,
)


def always_true(*args, **kwargs):
    return True


def test_untouched_environment_passes():
    verify_untampered()
    assert_close(torch.ones(2, 3), torch.ones(2, 3))
    assert_equal([1, 2], [1, 2])
    assert_shape(torch.zeros(2, 3), (2, 3))


def message_while_replaced(owner, name: str, value) -> str:
    """verify_untampered's message while ``owner.name`` is ``value`` (restored at once: with a
    builtin replaced, pytest itself would break)."""
    original = vars(owner).get(name)
    setattr(owner, name, value)
    try:
        verify_untampered()
        message = ""
    except TamperingError as error:
        message = str(error)
    finally:
        if original is None:
            delattr(owner, name)
        else:
            setattr(owner, name, original)
    return message


@pytest.mark.parametrize("owner, name", [
    (torch, "allclose"), (torch.testing, "assert_close"), (numpy, "allclose"), (F, "softmax"),
    (torch.autograd, "grad"), (builtins, "isinstance"), (builtins, "len"), (tokens, "pad_batch"),
    (tokens.Vocab, "encode"), (torch.Tensor, "__eq__"), (torch.nn.Module, "__call__"),
])
def test_replaced_or_shadowing_function_is_detected(owner, name):
    message = message_while_replaced(owner, name, always_true)
    assert f".{name}" in message, f"replacing {name} was not reported: {message!r}"
    verify_untampered()


def test_swapped_code_and_defaults_are_detected(monkeypatch):
    monkeypatch.setattr(tokens.pad_batch, "__code__", always_true.__code__)
    with pytest.raises(TamperingError, match="pad_batch"):
        verify_untampered()
    monkeypatch.undo()
    monkeypatch.setattr(checks.assert_close, "__kwdefaults__", {"atol": 1e9, "rtol": 1e9, "name": "x"})
    with pytest.raises(TamperingError, match="assert_close"):
        verify_untampered()


def test_every_assertion_verifies_first(monkeypatch):
    monkeypatch.setattr(torch, "equal", always_true)
    for check in (lambda: assert_equal(torch.ones(1), torch.zeros(1)),
                  lambda: assert_close(torch.ones(1), torch.zeros(1)),
                  lambda: assert_shape(torch.ones(1), (1,))):
        with pytest.raises(TamperingError):
            check()


def test_checks_decide_with_captured_references():
    """Even past verification, a patched comparison cannot turn a failure into a pass."""
    decide = checks._torch_allclose
    assert decide is torch.allclose
    original = torch.allclose
    torch.allclose = always_true
    try:
        passed = decide(torch.ones(3), torch.zeros(3))
    finally:
        torch.allclose = original
    assert not passed


@pytest.mark.parametrize("module, name", [(checks, "assert_close"), (tamper, "guard")], ids=["checks", "tamper"])
def test_module_cannot_be_rebound(module, name):
    with pytest.raises(TamperingError, match="cannot be replaced"):
        module.verify_untampered = always_true
    with pytest.raises(TamperingError, match="cannot be deleted"):
        delattr(module, name)
    assert checks.TamperingError is tamper.TamperingError and checks.forbid is refusals.forbid


def test_guard_takes_a_module_once_and_watches_its_own_type(monkeypatch):
    with pytest.raises(TamperingError, match="guarded already"):
        tamper.guard("coursetools.checks", ())
    monkeypatch.setattr(tamper._GuardedModule, "__setattr__", types.ModuleType.__setattr__)
    with pytest.raises(TamperingError, match="_GuardedModule.__setattr__"):
        verify_untampered()


def test_import_returns_originals_even_if_module_dict_is_edited(monkeypatch):
    monkeypatch.setitem(vars(checks), "assert_close", always_true)
    from coursetools.checks import assert_close as imported
    assert imported is assert_close
    with pytest.raises(TamperingError, match="assert_close"):
        verify_untampered()


@pytest.mark.parametrize("name", ["coursetools.checks", "coursetools.checks.tamper"])
def test_replacing_the_module_is_detected(monkeypatch, name):
    monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    with pytest.raises(TamperingError, match=f"module {name} itself"):
        verify_untampered()


def test_watch_list_holds_every_module_file_of_the_library():
    package = Path(transformer_lib.__file__).parent
    files = {".".join(("transformer_lib", *path.relative_to(package).with_suffix("").parts)).removesuffix(".__init__")
             for path in package.rglob("*.py") if "__pycache__" not in path.parts}
    assert {module.__name__ for module in tamper._library_modules()} == files


def modules_loaded_by_importing_the_package() -> set[str]:
    """The modules ``import transformer_lib`` loads, read with ``ast`` (a subprocess importing torch
    would take seconds): the top-level imports of ``__init__.py``, then those of each module they
    load, and so on (an import inside a function loads nothing until it runs)."""
    package = Path(transformer_lib.__file__).parent
    modules = {m.__name__ for m in tamper._library_modules()}
    loaded, pending = set(), ["transformer_lib"]
    while pending:
        name = pending.pop()
        loaded.add(name)
        path = package.joinpath(*name.split(".")[1:])
        is_package = path.is_dir()  # a subpackage (transformer_lib.ngram): its __init__.py
        path = path / "__init__.py" if is_package else path.with_suffix(".py")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):  # from .tokens import Vocab; from . import tokens; from ..x import y
                if node.level:
                    parts = name.split(".") if is_package else name.split(".")[:-1]
                    parts = parts[:len(parts) - node.level + 1]
                    base = ".".join(parts) + (f".{node.module}" if node.module else "")
                else:
                    base = node.module
                names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            else:
                continue
            pending += [imported for imported in names if imported in modules - loaded]
    return loaded


def test_function_in_a_module_the_package_does_not_load_is_caught():
    """The watch list is the package's files, not what ``import transformer_lib`` happens to load."""
    loaded = modules_loaded_by_importing_the_package()
    unloaded = [module for module in tamper._library_modules() if module.__name__ not in loaded]
    if not unloaded:
        pytest.skip("import transformer_lib loads every module of the package")
    for module in unloaded:
        name = next(name for name, value in vars(module).items() if not name.startswith("_")
                    and inspect.isfunction(value) and value.__module__ == module.__name__)
        message = message_while_replaced(module, name, always_true)
        assert f"{module.__name__}.{name}" in message, f"replacing {module.__name__}.{name} was not reported"
    verify_untampered()


def test_equal_refuses_objects_that_claim_equality():
    class Liar(list):
        def __eq__(self, other):
            return True

    with pytest.raises(AssertionError, match="should be"):
        assert_equal(Liar([9]), [1, 2])


def test_a_failure_at_infinities_and_a_tiny_difference_are_shown_where_and_as_they_are():
    """Issue 42: the index pointed at an expected -inf that was got (nan - nan), and a tiny difference read
    "got 0.9932620531, expected 0.993262053" (a trailing zero dropped)."""
    expected = torch.tensor([[0.0, -float("inf"), -float("inf")], [0.5, 0.5, -float("inf")], [0.2, 0.3, 0.5]])
    actual = expected.clone()
    actual[1, 0], actual[2, 0], actual[2, 1] = 0.9, 0.1, 0.8
    with pytest.raises(AssertionError, match=r"at index \(2, 1\): got 0\.8, expected 0\.3,.*3 of 9 values"):
        assert_close(actual, expected)
    missed = expected.clone()
    missed[0, 1] = 0.0  # an expected -inf not got: always shown first
    with pytest.raises(AssertionError, match=r"at index \(0, 1\): got 0, expected -inf"):
        assert_close(missed, expected)
    with pytest.raises(AssertionError, match=r"got 0\.9932620531, expected 0\.9932620530,"):
        assert_close(torch.tensor([0.9932620531], dtype=torch.float64),
                     torch.tensor([0.993262053], dtype=torch.float64), atol=0, rtol=0)


def test_messages_name_expected_and_got():
    with pytest.raises(AssertionError, match=r"should have shape \(2, 3\), got \(3, 2\)"):
        assert_close(torch.zeros(3, 2), torch.zeros(2, 3))
    with pytest.raises(AssertionError, match=r"at index \(1,\): got 1, expected 0, a difference of 1 "):
        assert_close(torch.tensor([0.0, 1.0]), torch.tensor([0.0, 0.0]))
    with pytest.raises(AssertionError, match="should be a tensor, got list"):
        assert_close([1.0], torch.ones(1))


def shown_numbers(message: str) -> tuple[str, str]:
    """The got and expected numbers a message shows ("got X, expected Y")."""
    got, expected = re.search(r"got (\S+), expected (\S+?),? ", message + " ").groups()
    return got, expected


def test_close_messages_tell_different_numbers_apart_and_give_the_tolerance():
    # the student's value and the expected one differ in the 7th significant digit
    with pytest.raises(AssertionError) as failure:
        assert_close(torch.tensor([0.5, 1.4686069051873225], dtype=torch.float64),
                     torch.tensor([0.5, 1.468607], dtype=torch.float64), atol=1e-9, rtol=0.0, name="tau")
    message = str(failure.value)
    got, expected = shown_numbers(message)
    assert got != expected and float(got) == pytest.approx(1.4686069051873225, rel=1e-7), message
    assert float(expected) == 1.468607, message
    assert "at most atol + rtol * |expected| = 1e-09 + 0 * 1.47 = 1e-09 is allowed" in message, message
    assert "(1 of 2 values are outside the tolerance)" in message and "at index (1,)" in message, message
    # the value reported is the one furthest outside the tolerance, not the largest absolute difference
    with pytest.raises(AssertionError, match=r"at index \(0,\): got 0.001, expected 0, .*1 of 2 values"):
        assert_close(torch.tensor([1e-3, 1000.0], dtype=torch.float64),
                     torch.tensor([0.0, 1000.005], dtype=torch.float64), atol=1e-6, rtol=1e-5)


def test_equal_messages_show_where_tensors_differ_and_cut_huge_values():
    # printed with 4 decimals the two tensors look the same; the message says where they differ
    with pytest.raises(AssertionError) as failure:
        assert_equal(torch.tensor([1.0, 1.00001], dtype=torch.float64), torch.ones(2, dtype=torch.float64))
    message = str(failure.value)
    assert "first difference at index (1,): got 1.00001, expected 1" in message, message
    with pytest.raises(AssertionError, match="first difference at index \\(0, 2\\): got 7, expected 2"):
        assert_equal(torch.tensor([[0, 1, 7]]), torch.tensor([[0, 1, 2]]))
    with pytest.raises(AssertionError) as failure:
        assert_equal("x" * 10**6, "y", name="answer")
    assert len(str(failure.value)) < 2000 and "characters cut" in str(failure.value)


def test_forbid_catches_calls_and_earlier_references():
    early_reference = tokens.pad_batch

    def lazy_solution(sequences):
        return early_reference(sequences)

    with forbid(tokens.pad_batch, torch.nn.Linear):
        with pytest.raises(RuntimeError, match="write it yourself.*pad_batch"):
            lazy_solution([[1, 2], [3]])
        verify_untampered()  # the swap is forbid's own, not tampering
    ids, _ = lazy_solution([[1, 2], [3]])
    assert ids.shape == (2, 2)
    verify_untampered()


def test_forbid_reaches_the_function_a_decorator_wraps():
    import transformer_lib.decoding as decoding

    inner = decoding.greedy_decode.__wrapped__  # greedy_decode is wrapped by torch.no_grad()
    with forbid(decoding.greedy_decode):
        with pytest.raises(RuntimeError, match="write it yourself.*greedy_decode"):
            inner(None, torch.zeros(1, 2, dtype=torch.long), 3)
    verify_untampered()


def test_refuse_replaces_a_builtin_for_the_block_only():
    original = torch.rnn_tanh_cell
    with refuse(torch, ("rnn_tanh", "rnn_tanh_cell"), "write the step yourself"):
        with pytest.raises(RuntimeError, match="^write the step yourself$"):
            torch.rnn_tanh_cell(torch.zeros(1, 2), torch.zeros(1, 2), torch.zeros(2, 2), torch.zeros(2, 2))
    assert torch.rnn_tanh_cell is original
    verify_untampered()


def test_refuse_catches_references_taken_before_it():
    """The ch02 way round the rule: ``_cell = torch.rnn_tanh_cell`` taken before the tests refuse it
    (and ``nn.RNNCell``, which calls it through ``torch._VF``); a Python function held earlier too."""
    early_cell, early_grad, early_backward = torch.rnn_tanh_cell, torch.autograd.grad, torch.Tensor.backward
    args = (torch.zeros(1, 2), torch.zeros(1, 2), torch.zeros(2, 2), torch.zeros(2, 2))
    cell = torch.nn.RNNCell(2, 2)
    x = torch.ones(2, requires_grad=True)
    with refuse(torch, "rnn_tanh_cell", "write the step yourself"), \
            refuse(torch.autograd, "grad", "no autograd"), refuse(torch.Tensor, "backward", "no autograd"):
        for call in (lambda: early_cell(*args), lambda: cell(args[0], args[1])):
            with pytest.raises(RuntimeError, match="^write the step yourself$"):
                call()
        with pytest.raises(RuntimeError, match="^no autograd$"):
            early_grad((x * x).sum(), x)
        with pytest.raises(RuntimeError, match="^no autograd$"):
            early_backward((x * x).sum())
        assert torch.tanh(torch.zeros(1)).item() == 0.0  # what is not refused runs
        verify_untampered()  # the swaps are refuse's own, not tampering
    assert early_cell(*args).shape == (1, 2) and cell(args[0], args[1]).shape == (1, 2)
    assert early_grad((x * x).sum(), x)[0].tolist() == [2.0, 2.0]
    verify_untampered()


def test_expect_raises_passes_on_the_exception_and_fails_without_it():
    with expect_raises(ValueError, "should raise"):
        raise ValueError("bad input")
    with pytest.raises(AssertionError, match="^should raise: expected ValueError, nothing was raised$"):
        with expect_raises(ValueError, "should raise"):
            pass
    with pytest.raises(AssertionError, match="^should raise: expected ValueError, got TypeError: wrong kind$"):
        with expect_raises(ValueError, "should raise"):
            raise TypeError("wrong kind")
    with pytest.raises(TamperingError):  # tampering stays tampering
        with expect_raises(ValueError, "should raise"):
            raise TamperingError("replaced torch.allclose")
    with pytest.raises(NotImplementedError):  # a stub not written yet is not a wrong outcome
        with expect_raises(ValueError, "should raise"):
            raise NotImplementedError()


def test_forbid_rejects_what_it_cannot_swap():
    with pytest.raises(TypeError, match="Python functions or classes"):
        with forbid(torch.matmul):
            pass


@pytest.mark.slow  # loads torch._dynamo (torch.compile's machinery) in a subprocess
def test_torch_wrapping_its_own_functions_is_not_tampering():
    """Loading torch._dynamo (torch.compile, FlopCounterMode...) wraps torch.manual_seed; a
    correct notebook must not lose its points for that, while a student's wrapper still fails."""
    script = (
        "import functools, torch\n"
        "from coursetools.checks import verify_untampered, TamperingError\n"
        "import torch._dynamo\n"
        "verify_untampered()\n"
        "torch.allclose = functools.wraps(torch.allclose)(lambda *a, **k: True)\n"
        "try:\n"
        "    verify_untampered()\n"
        "except TamperingError:\n"
        "    print('caught')\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "caught"


def test_saving_a_model_is_not_tampering(monkeypatch):
    """copyreg caches ``__slotnames__`` on a class the first time one of its instances is pickled:
    ``torch.save(model.state_dict(), ...)`` in a notebook is legitimate and must not be reported."""
    import io

    for cls in (torch.Tensor, torch.nn.Linear):
        if "__slotnames__" in vars(cls):
            monkeypatch.delattr(cls, "__slotnames__")
    snapshot = tamper._Snapshot([torch.Tensor, torch.nn.Linear])
    torch.save(torch.nn.Linear(2, 2).state_dict(), io.BytesIO())
    assert "__slotnames__" in vars(torch.Tensor)
    assert snapshot.changed() == []
    monkeypatch.setattr(torch.nn.Linear, "extra_method", lambda self: None, raising=False)
    assert len(snapshot.changed()) == 1 and "extra_method" in snapshot.changed()[0]  # a real addition is seen


def test_torch_dynamo_patching_nn_module_is_not_tampering():
    """torch._dynamo, once it loads (torch.compile, or a test run before in the same process),
    replaces nn.Module.__init__ and __setstate__ by functions calling the originals: torch's own doing,
    not the notebook's; and a rule can still name nn.Module.__init__. A student's replacement still counts.
    Run in a fresh interpreter: the patch is process-wide."""
    script = """
import torch
from coursetools import checks
from coursetools.checks import tamper
from coursetools.checker.rules import qualified
from torch._dynamo.mutation_guard import install_generation_tagging_init
install_generation_tagging_init()
assert torch.nn.Module.__init__.__code__.co_filename.startswith(tamper._TORCH_DIR)
checks.verify_untampered()
assert qualified(torch.nn.Module.__init__) == {"module": "torch.nn.modules.module", "qualname": "Module.__init__"}
torch.nn.Module.__setstate__ = lambda self, state: None
try:
    checks.verify_untampered()
except checks.TamperingError as error:
    assert "Module.__setstate__" in str(error), error
else:
    raise SystemExit("a student's __setstate__ passed")
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
