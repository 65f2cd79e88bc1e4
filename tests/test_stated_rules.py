"""A rule stated is a rule enforced (issue 50, item 2), in seconds and without a kernel.

* The lint reads every rule sentence of an exercise's instructions and names the check that
  enforces it; a rule no check enforces is a problem (before this lint, nothing noticed one).
* The checks' own rules stop the attacks that earned points before: ``no_autograd`` (the one rule
  of every "by hand" exercise) refuses each way torch differentiates, ``torch.func.jacfwd`` and
  gradients switched back on included, where ch03 refused only ``grad``, ``vjp`` and ``jacrev``; a
  refused torch function is refused as a Tensor method too (``rows.multinomial``); ``size_limit``
  refuses a tensor larger than the exercise allows, and not a view of an argument.

The same attacks graded through the checker are ``tests/copy_submissions/`` (ch03, ch06, ch12).
"""

from __future__ import annotations

import nbformat
import pytest
import torch
import torch.autograd.forward_ad as forward_ad
import torch.func

from coursetools.authoring.stated_rules import rule_sentences, stated_rules, unenforced_rules
from coursetools.checks import no_autograd, refuse, size_limit

from course_helpers import one_exercise_source

INSTRUCTIONS = ("## Exercise 1: a sampler (2 points)\n\nWrite `sample(weights, generator)`, one draw per row. "
                "You may not use `torch.multinomial`: the tests refuse it while your function runs. "
                "Do not fit the rows to a table. Return a one-hot.")
ANSWER = "def sample(weights, generator):\n    ### BEGIN SOLUTION\n    return weights\n    ### END SOLUTION\n"
REFUSING = "with refuse(torch, 'multinomial', 'no'):\n    sample(torch.ones(2, 3) / 3, torch.Generator())\n"
PLAIN = "sample(torch.ones(2, 3) / 3, torch.Generator())\n"
HIDDEN = "# checks: value\n# Instructor notes: rows.\n_ = 1\n"


def source(visible: str, instructions: str = INSTRUCTIONS) -> nbformat.NotebookNode:
    """A source with one exercise: its instructions, an answer cell and one test cell."""
    return one_exercise_source(instructions, ANSWER, "sample", visible, HIDDEN)


def test_the_lint_reads_the_rule_sentences():
    assert rule_sentences([INSTRUCTIONS]) == [
        "You may not use `torch.multinomial`: the tests refuse it while your function runs.",
        "Do not fit the rows to a table."]


def test_the_lint_catches_an_unenforced_rule():
    problems = unenforced_rules(source(PLAIN))
    assert len(problems) == 2 and "You may not use `torch.multinomial`" in problems[0] and "Do not fit" in problems[1]


def test_a_refusal_of_what_the_sentence_names_enforces_it():
    rules = stated_rules(source(REFUSING))
    assert [rule.enforced_by for rule in rules] == ["the visible test test_sample (refuses torch.multinomial)", None]


def test_a_marked_check_enforces_the_sentence_it_quotes():
    marked = "# enforces: do not fit the rows\nassert sample(torch.eye(3), torch.Generator()).shape == (3, 3)\n"
    assert unenforced_rules(source(REFUSING + marked)) == []
    assert len(unenforced_rules(source(REFUSING + "# enforces: something the text does not say\n"))) == 1


def test_no_autograd_enforces_a_sentence_on_autograd():
    text = "## Exercise 1: a gradient (2 points)\n\nWrite it **without autograd** (no `torch.func`)."
    assert unenforced_rules(source(PLAIN, text))
    assert not unenforced_rules(source("with no_autograd():\n    " + PLAIN, text))


def _forward_mode(x: torch.Tensor) -> torch.Tensor:
    """The derivative of sin along x by forward-mode dual numbers."""
    with forward_ad.dual_level():
        return forward_ad.unpack_dual(forward_ad.make_dual(x, torch.ones_like(x)).sin()).tangent


def _grad_switched_on(x: torch.Tensor) -> torch.Tensor:
    """The softmax's gradient by walking the graph by hand, gradients switched back on (no autograd call)."""
    was_on = torch.is_grad_enabled()
    torch._C._set_grad_enabled(True)
    try:
        leaf = x.clone().requires_grad_(True)
        return torch.softmax(leaf, -1).grad_fn(torch.ones_like(x))
    finally:
        torch._C._set_grad_enabled(was_on)


AUTOGRAD_ROUTES = {
    "torch.autograd.grad": lambda x: torch.autograd.grad((leaf := x.clone().requires_grad_(True)).sin().sum(), leaf),
    "Tensor.backward": lambda x: x.clone().requires_grad_(True).sin().sum().backward(),
    "torch.func.jacfwd": lambda x: torch.func.jacfwd(torch.sin)(x),
    "torch.func.jacrev": lambda x: torch.func.jacrev(torch.sin)(x),
    "torch.func.grad_and_value": lambda x: torch.func.grad_and_value(lambda y: y.sin().sum())(x),
    "torch.func.hessian": lambda x: torch.func.hessian(lambda y: y.sin().sum())(x),
    "torch.autograd.functional.jacobian": lambda x: torch.autograd.functional.jacobian(torch.sin, x),
    "forward-mode dual numbers": lambda x: _forward_mode(x),
    "torch.enable_grad": lambda x: torch.enable_grad().__enter__(),
    "gradients switched back on": _grad_switched_on,
}


@pytest.mark.parametrize("route", sorted(AUTOGRAD_ROUTES))
def test_no_autograd_refuses_every_route(route: str):
    x = torch.randn(3, dtype=torch.float64)
    AUTOGRAD_ROUTES[route](x)  # the attack works outside the rule
    with no_autograd("by hand, please"), pytest.raises(RuntimeError, match="by hand, please"):
        AUTOGRAD_ROUTES[route](x)
    assert torch.is_grad_enabled()
    AUTOGRAD_ROUTES[route](x)  # every function the rule swapped is back


def test_no_autograd_lets_the_arithmetic_run():
    x = torch.randn(4, 5, dtype=torch.float64)
    with no_autograd():
        with torch.no_grad():
            weights = torch.softmax(x, -1)
        assert torch.equal(weights * (x - (weights * x).sum(-1, keepdim=True)),
                           torch.softmax(x, -1) * (x - (torch.softmax(x, -1) * x).sum(-1, keepdim=True)))


def test_a_refused_torch_function_is_refused_as_a_tensor_method():
    rows = torch.tensor([[0.5, 0.5], [0.1, 0.9]])
    rows.multinomial(1)
    with refuse(torch, "multinomial", "repair the sampler"):
        for draw in (lambda: torch.multinomial(rows, 1), lambda: rows.multinomial(1),
                     lambda: torch.Tensor.multinomial(rows, 1)):
            with pytest.raises(RuntimeError, match="repair the sampler"):
                draw()
    rows.multinomial(1)


def test_size_limit_refuses_a_large_new_tensor_and_not_a_view():
    weight = torch.randn(192, 64)
    with size_limit(4095, "no (d, d_in) matrix"):
        assert (torch.randn(2, 64) @ weight.T).shape == (2, 192)  # weight.T is a view: no new memory
        assert weight[:64].shape == (64, 64)
        for make in (lambda: torch.arange(10**4), lambda: weight + 1, lambda: weight[:64] @ weight[:64].T):
            with pytest.raises(RuntimeError, match="no \\(d, d_in\\) matrix"):
                make()
    torch.arange(10**4)
