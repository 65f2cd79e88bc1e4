"""The fairness lint reads what a hidden block does, not only its ``# checks:`` line.

Each test builds a one-exercise source whose hidden block breaks a rule on purpose, in a way the
declaration does not show: the lint before issue 42 trusted the declaration and found nothing in
any of them (each test failed on it); now each break is named. The clean source has no problem.
"""

from __future__ import annotations

import nbformat
import pytest

from coursetools.authoring.fairness import check_fairness, hidden_only_reasons
from coursetools.authoring.hidden_reads import expected_exceptions, input_shapes, patched_targets

from course_helpers import one_exercise_source

INSTRUCTIONS = ("## Exercise 1: clipped rows (2 points)\n\nWrite `clip_rows(x)` for a 2-D tensor `x`: each row "
                "clipped below at 0 (the rows of the values keep their order). Raise a `ValueError` for a negative "
                "count. It must run under a second.")
ANSWER = "def clip_rows(x, count=1):\n    ### BEGIN SOLUTION\n    return x.clamp(min=0)\n    ### END SOLUTION\n"
VISIBLE = ("x = torch.randn(2, 3)\nassert_close(clip_rows(x), x.clamp(min=0), name='clip_rows(x)')\n"
           "with expect_raises(ValueError, 'clip_rows(x, -1) should raise a ValueError (a negative count)'):\n"
           "    clip_rows(x, -1)\n")
HIDDEN = "# checks: value\n# Instructor notes: rows clipped.\n_x = torch.randn(4, 5)\n" \
         "assert_close(clip_rows(_x), _x.clamp(min=0), name='rows')\n"


def source(hidden: str = HIDDEN, visible: str = VISIBLE, instructions: str = INSTRUCTIONS) -> nbformat.NotebookNode:
    """A source with one exercise: its instructions, an answer cell and one test cell."""
    return one_exercise_source(instructions, ANSWER, "clip_rows", visible, hidden)


def problems_with(hidden: str, **changes) -> list[str]:
    return check_fairness(source(hidden, **changes))


def test_the_clean_exercise_has_no_problem():
    assert check_fairness(source()) == []


def test_an_undeclared_edge_case_in_the_hidden_code():
    found = problems_with(HIDDEN + "assert_equal(tuple(clip_rows(torch.zeros(0, 5)).shape), (0, 5), name='empty')\n")
    assert any("passes an empty input" in p for p in found), found


def test_a_new_input_rank_under_checks_value():
    found = problems_with(HIDDEN + "_v = torch.randn(5)\nassert_close(clip_rows(_v), _v.clamp(min=0), name='1-D')\n")
    assert any("passes clip_rows a 1-D tensor" in p for p in found), found
    declared = HIDDEN.replace("# checks: value", "# checks: value; edge a 2-D tensor")
    assert problems_with(declared + "_v = torch.randn(5)\nclip_rows(_v)\n") == [], "a shown edge covers it"
    assert input_shapes("y = torch.softmax(torch.randn(2, 3, 5), -1)\nf(y.clone())\nf(torch.tensor([[1.0]]))",
                        {"f"}) == ({3, 2}, False)


@pytest.mark.parametrize("detail", ["the", "of the values", "lip"])
def test_a_detail_of_common_words_or_inside_another_word_shows_nothing(detail: str):
    found = problems_with(HIDDEN.replace("# checks: value", f"# checks: value; edge {detail}"))
    assert any(f"'{detail}'" in p for p in found), found  # "lip" is only written inside "clipped"
    assert problems_with(HIDDEN.replace("# checks: value", "# checks: value; edge negative count")) == []


@pytest.mark.parametrize("alias", ["r = refuse\nwith r(torch, 'sort', 'no sorting'):\n",
                                   "from coursetools.checks import refuse as no\nwith no(torch, 'sort', 'no'):\n"])
def test_a_refusal_through_an_alias(alias: str):
    found = problems_with(HIDDEN + alias + "    clip_rows(_x)\n")
    assert any("refuses torch.sort" in p for p in found), found


@pytest.mark.parametrize("patch", ["torch.clamp = lambda *a, **k: None\n",
                                   "import torch.nn.functional as F\nF.relu = None\n",
                                   "setattr(torch, 'clamp', None)\n",
                                   "from unittest import mock\nwith mock.patch('torch.clamp'):\n    clip_rows(_x)\n"])
def test_a_hidden_block_that_patches_torch_directly(patch: str):
    found = problems_with(HIDDEN + patch)
    assert any("patches torch." in p and "directly" in p for p in found), found
    assert patched_targets("import torch.nn.functional as F\nF.relu = None") == {"torch.nn.functional.relu"}


def test_a_value_error_for_another_reason():
    hidden = HIDDEN + "with expect_raises(ValueError, 'clip_rows(_x, 0) should raise a ValueError (a zero count)'):\n" \
                      "    clip_rows(_x, 0)\n"
    found = problems_with(hidden)
    assert any("expects ValueError for 'a zero count'" in p for p in found), found
    same = HIDDEN + "with expect_raises(ValueError, f'clip_rows(_x, {-3}) should raise a ValueError (a negative " \
                    "count)'):\n    clip_rows(_x, -3)\n"
    assert problems_with(same) == []
    assert expected_exceptions("with pytest.raises(KeyError, match='no such id'):\n    f()\ntry:\n    g()\n"
                               "except (IndexError, Exception):\n    pass") == {("KeyError", "no such id"),
                                                                              ("IndexError", "")}


def test_a_dtype_rule_declared_as_value():
    hidden = HIDDEN + "assert_equal(clip_rows(_x.double()).dtype, torch.float64, name='the dtype')\n"
    found = problems_with(hidden)
    assert any("checks a dtype" in p for p in found), found
    shown = VISIBLE + "assert clip_rows(x.double()).dtype == torch.float64, 'float64 in, float64 out'\n"
    assert problems_with(hidden, visible=shown) == []


def test_each_dtype_a_hidden_check_names_is_shown():
    # ch09 before issue 50: float64 shown, float32 checked only in the hidden block
    shown = VISIBLE + "assert clip_rows(x.double()).dtype == torch.float64, 'float64 in, float64 out'\n"
    hidden = HIDDEN + "assert_equal(clip_rows(_x.double()).dtype, torch.float64, name='the dtype')\n" \
                      "assert_equal(clip_rows(_x.float()).dtype, torch.float32, name='the dtype')\n"
    found = problems_with(hidden, visible=shown)
    assert len(found) == 1 and "torch.float32" in found[0], found
    both = shown + "assert clip_rows(x.float()).dtype == torch.float32, 'float32 in, float32 out'\n"
    assert problems_with(hidden, visible=both) == []


def test_an_error_for_a_negative_argument_is_shown():
    # ch11 before issue 50: num_heads = 0 shown, -2 checked only in the hidden block (here in a loop's list)
    zero = VISIBLE.replace("clip_rows(x, -1)", "clip_rows(x, 0)").replace("-1)", "0)")
    hidden = HIDDEN + "for _count in [0, -2]:\n    with expect_raises(ValueError, f'clip_rows(x, {_count}) should " \
                      "raise a ValueError (a negative count)'):\n        clip_rows(_x, _count)\n"
    found = problems_with(hidden, visible=zero)
    assert any("negative argument" in p for p in found), found
    assert not any("negative argument" in p for p in problems_with(hidden))  # VISIBLE tries -1


def test_a_time_bound_needs_a_visible_timing_test():
    timing = "import time\n_start = time.perf_counter()\nclip_rows(torch.randn(1000, 1000))\n" \
             "assert time.perf_counter() - _start < 1.0, 'under a second'\n"
    hidden = HIDDEN.replace("# checks: value", "# checks: value; bound under a second") + timing
    assert problems_with(hidden, visible=VISIBLE + timing.replace("_start", "start")) == []
    found = problems_with(hidden)  # the visible timing test deleted: the instructions' words remain
    assert any("measures time" in p for p in found), found
    undeclared = problems_with(HIDDEN + timing, visible=VISIBLE + timing.replace("_start", "start"))
    assert any("does not declare a bound" in p for p in undeclared), undeclared


def test_hidden_only_lines_are_listed_with_their_reason_and_need_one():
    hidden = HIDDEN + "# hidden only: clip_rows__in_place -- the instructions say it must not change x\n" \
                      "# hidden only: clip_rows__rounded\n"
    nb = source(hidden)
    assert hidden_only_reasons(nb) == [
        "exercise 'Exercise 1: clipped rows (2 points)', test_clip_rows: hidden only: clip_rows__in_place -- the "
        "instructions say it must not change x",
        "exercise 'Exercise 1: clipped rows (2 points)', test_clip_rows: hidden only: clip_rows__rounded -- "
        "(no reason given)"]
    assert [p for p in check_fairness(nb) if "gives no reason" in p] == [
        "exercise 'Exercise 1: clipped rows (2 points)', test_clip_rows: '# hidden only: clip_rows__rounded' gives "
        "no reason (write ' -- <why>' after it)"]
