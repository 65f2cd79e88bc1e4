"""The lint of what hidden blocks do in the checker (coursetools/authoring/hidden_rules.py), on small notebooks
shaped like the mistakes issue 40 found (ch02's ``globals()`` swap and ch05's borrowed expected values), the one
issue 49 found (ch07's literal cases, the same every term) and issue 50's (ch06's ``_generator``, which a later
hidden block read from an earlier one's checks)."""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_notebook

from coursetools.authoring.hidden_rules import borrowed_expectations, borrowed_hidden_names, fixed_inputs, hidden_writes


def _cell(source: str, grade_id: str, *, solution: bool = False, test: bool = False):
    cell = new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": test, "solution": solution, "locked": test, "grade_id": grade_id,
                                 "schema_version": 3, **({"points": 1} if test else {})}
    return cell


def _locked(source: str, grade_id: str):
    cell = _cell(source, grade_id)
    cell.metadata["nbgrader"]["locked"] = True
    return cell


def _notebook(hidden_of_second_test: str):
    """Two exercises: ``measure`` (tested first), then ``sweep``, whose test's hidden block is given."""
    return new_notebook(cells=[
        _cell("def measure(a, b):\n    return abs(a - b)", "measure", solution=True),
        _cell("assert measure(1, 3) == 2\n### BEGIN HIDDEN TESTS\nassert measure(2, 5) == 3\n### END HIDDEN TESTS",
              "test_measure", test=True),
        _cell("def sweep(xs):\n    return [measure(x, 0) for x in xs]", "sweep", solution=True),
        _cell(f"assert sweep([1]) == [1]\n### BEGIN HIDDEN TESTS\n{hidden_of_second_test}\n### END HIDDEN TESTS",
              "test_sweep", test=True),
    ])


def test_a_globals_swap_or_an_answer_rebound_in_a_hidden_block_is_refused():
    for hidden in ('globals()["measure"] = lambda a, b: abs(a - b)', "globals().update(measure=abs)",
                   "measure = lambda a, b: abs(a - b)", "def measure(a, b):\n    return 0"):
        problems = hidden_writes(_notebook(hidden + "\nassert sweep([2]) == [2]"))
        assert problems and "substitute" in problems[0], hidden
    assert hidden_writes(_notebook('with substitute("measure", _reference):\n    assert sweep([2]) == [2]')) == []
    assert hidden_writes(_notebook("_reference = globals().get('x')\nassert sweep([2]) == [2]")) == []


def test_an_expected_value_from_another_exercises_answer_is_refused():
    for hidden in ("_want = [measure(2, 0)]\nassert_equal(sweep([2]), _want)",
                   "_got = sweep([2])\nassert abs(_got[0] - measure(2, 0)) < 1e-6",
                   "for _x in [1, 2]:\n    _want = measure(_x, 0)\n    assert sweep([_x]) == [_want]"):
        problems = borrowed_expectations(_notebook(hidden))
        assert problems and "measure, another exercise's answer" in problems[0], hidden
    for hidden in ("assert_equal(sweep([2]), [2])",  # the instructor's value
                   "assert_equal(sweep([2, 3]), sweep([2]) + sweep([3]))",  # a property of the answer under test
                   "_want = [abs(2 - 0)]\nassert_equal(sweep([2]), _want)"):
        assert borrowed_expectations(_notebook(hidden)) == [], hidden


def _two_tests(first_hidden: str, second_hidden: str):
    """One answer, ``measure``, graded by two test cells whose hidden blocks are given."""
    return new_notebook(cells=[
        _locked("from coursetools.checks import assert_close", "setup"),
        _cell("def measure(a, b):\n    return abs(a - b)", "measure", solution=True),
        _cell(f"assert measure(1, 3) == 2\n### BEGIN HIDDEN TESTS\n{first_hidden}\n### END HIDDEN TESTS",
              "test_first", test=True),
        _cell(f"assert measure(3, 1) == 2\n### BEGIN HIDDEN TESTS\n{second_hidden}\n### END HIDDEN TESTS",
              "test_second", test=True),
    ])


def test_a_hidden_block_reading_what_another_blocks_checks_define_is_refused():
    # ch06 before issue 50: the generator of the first cell's checks, read by the second cell
    problems = borrowed_hidden_names(_two_tests("_generator = 3\nassert measure(_generator, 0) == 3",
                                                "assert measure(_generator, 1) == 2"))
    assert len(problems) == 1 and problems[0].startswith("test_second: the hidden block reads '_generator'")
    # a helper in a later block's setup is not there yet
    problems = borrowed_hidden_names(_two_tests("assert _twice(1) == 2",
                                                "def _twice(x):\n    return 2 * x\n# END HIDDEN SETUP\nassert 1"))
    assert len(problems) == 1 and "setup, which runs later" in problems[0]
    # a setup's helper whose global another block rebinds
    problems = borrowed_hidden_names(_two_tests("_n = 2\ndef _twice(x):\n    return _n * x\n# END HIDDEN SETUP",
                                                "_n = 3\nassert measure(_twice(1), 0) == 2"))
    assert any("reads '_n', which the hidden block of test_second binds again" in p for p in problems), problems


def test_an_earlier_setup_a_locked_import_and_a_blocks_own_names_are_fine():
    shared = "def _twice(x):\n    return 2 * x\n# END HIDDEN SETUP\n_x = 1\nassert measure(_twice(_x), 0) == 2"
    assert borrowed_hidden_names(_two_tests(shared, "_x = 2\nassert measure(_twice(_x), 0) == 4")) == []
    assert borrowed_hidden_names(_two_tests("assert_close(1, 1)", "assert_close(2, 2)")) == []
    loop = "for _n in (1, 2):\n    pass\n# END HIDDEN SETUP"  # a setup's loop variable, no helper reads it
    assert borrowed_hidden_names(_two_tests(loop, "_n = 3\nassert measure(_n, 0) == 3")) == []


def _fixed(hidden: str) -> list[str]:
    """What :func:`fixed_inputs` says of the second test (the first one's hidden block is literal on purpose)."""
    return [problem for problem in fixed_inputs(_notebook(hidden)) if problem.startswith("test_sweep:")]


def test_a_hidden_block_with_only_literal_inputs_is_refused():
    assert [p.split(":")[0] for p in fixed_inputs(_notebook("assert sweep([3]) == [3]"))] == ["test_measure",
                                                                                              "test_sweep"]
    for hidden in ("assert sweep([1, 2]) == [1, 2]",
                   "for _xs in [[1], [2, 3]]:\n    assert sweep(_xs) == _xs",
                   # term_seed drawn, but only for the reference's data (ch04's chunk_causal_mask, before)
                   "_g = torch.Generator().manual_seed(term_seed(1))\n_noise = torch.randn(3, generator=_g)\n"
                   "assert sweep([1, 2]) == [1, 2]",
                   # the global generator seeded through the term, the arguments literal (ch08's leak_experiment)
                   "torch.manual_seed(term_seed(98))\nassert sweep([4]) == [4]",
                   "assert results[0] > 1",  # nothing of the notebook called
                   "# fixed inputs:\nassert sweep([1]) == [1]"):  # an exemption needs its reason
        problems = _fixed(hidden)
        assert problems and "term_seed(n)" in problems[0] and "# fixed inputs: <why>" in problems[0], hidden


def test_a_hidden_block_drawing_its_inputs_through_the_term_seed_passes():
    for hidden in ("import random as _random\n_rng = _random.Random(term_seed(3))\n"
                   "_xs = [_rng.randint(0, 9) for _ in range(5)]\nassert sweep(_xs) == _xs",
                   "_g = torch.Generator().manual_seed(term_seed(1))\n"
                   "for _n in (1, 4):\n    _x = torch.randint(0, 9, (_n,), generator=_g).tolist()\n"
                   "    assert sweep([3]) == [3] and sweep(_x) == _x",
                   "torch.manual_seed(term_seed(98))\n_x = torch.randint(0, 9, (4,)).tolist()\nassert sweep(_x) == _x",
                   "_cases = []\n_cases.append(term_seed(5) % 7)\nassert sweep(_cases) == _cases",
                   "def _check(n):\n    assert sweep([n]) == [n]\n\n\n_check(term_seed(2) % 9)",
                   "# fixed inputs: a trend measured on these seeds only\nassert sweep([1]) == [1]"):
        assert _fixed(hidden) == [], hidden
