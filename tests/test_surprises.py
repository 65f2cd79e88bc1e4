"""No surprise: a wrong answer of tests/wrong_answers that passes a part's visible test passes its hidden one
too, whatever it did in the other parts (issue 50), and a mutant that passes every visible test of its exercise
passes the hidden ones (the finder's per-part search of the mutants, run by hand, checks each part), unless
the hidden block allow-lists it with a reason (``# hidden only: <name> -- <why>``;
``coursetools/devtools/surprises.py``); and every right answer earns every point. The wrong answers
tried are the files of tests/wrong_answers and every mutant of every model answer
(``coursetools/devtools/mutate.py``, minus those listed as equivalent); the right ones are the files of
tests/alternative_answers. make test searches the files; make test-deep the mutants too (23-60 s per assignment
on an idle core), one unit per assignment in the parallel run (tests/conftest.py)."""

from __future__ import annotations

import pytest

from coursetools.authoring.sources import assignments
from coursetools.common.layout import REPO_ROOT
from coursetools.devtools.surprises import candidate_files, find_surprises

pytestmark = pytest.mark.slow


def _assert_no_surprise(assignment: str, with_mutants: bool) -> None:
    report = find_surprises(assignment, with_mutants=with_mutants, mutants_each_part=False)
    files = len(candidate_files(assignment))
    assert report.tried > files if with_mutants else report.tried == files, "the files (and the mutants) were tried"
    unexpected = [surprise.describe() for surprise in report.unexpected()]
    assert not unexpected, f"{assignment}: answers that pass a visible test and fail its hidden one:\n" + \
        "\n".join(unexpected)
    assert not report.rejected, f"{assignment}: right answers the tests refuse:\n" + \
        "\n".join(rejection.describe() for rejection in report.rejected)
    assert not report.unwarned, f"{assignment}: wrong answers that pass every visible test: {report.unwarned}"


@pytest.mark.parametrize("assignment", assignments(REPO_ROOT))
def test_no_wrong_answer_passes_a_visible_test_and_fails_its_hidden_one(assignment: str):
    """The files of tests/wrong_answers, each part on its own (a part whose visible test the answer passes and
    whose hidden block fails it, whatever the other parts did), and the right answers of tests/alternative_answers.
    Each wrong answer must also fail a visible test (tests/wrong_answers/README.md): an honest student learns
    of the mistake before grading."""
    _assert_no_surprise(assignment, with_mutants=False)


@pytest.mark.deep
@pytest.mark.parametrize("assignment", assignments(REPO_ROOT))
def test_no_mutant_passes_the_visible_tests_and_fails_a_hidden_one(assignment: str):
    # The files again, and every mutant when it passes every visible part of its exercise (23-60 s an assignment
    # on one core: make test-deep). The per-part search of every mutant (`python -m coursetools.devtools.surprises
    # <id> --mutants`; none unexpected in any assignment on 2026-11-29) takes 1.5-2.4 times as long (ch05 89 s
    # against 59 s, ch08 102 s against 42 s on one idle core each).
    _assert_no_surprise(assignment, with_mutants=True)


PAD_THREE_IGNORED = '''# Pads with 0 when pad_id is 3 (the visible tests use pad_id 0 and 1; the hidden ones 0..3).
def pad_left(sequences, pad_id=0):
    if len(sequences) == 0:
        raise ValueError("pad_left needs at least one sequence, got an empty batch")
    rows = [torch.as_tensor(s, dtype=torch.long).reshape(-1) for s in sequences]
    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), 0 if pad_id == 3 else pad_id, dtype=torch.long)
    mask = torch.zeros(len(rows), width, dtype=torch.bool)
    positions = torch.zeros(len(rows), width, dtype=torch.long)
    for b, row in enumerate(rows):
        ids[b, width - len(row):] = row
        mask[b, width - len(row):] = True
        positions[b, width - len(row):] = torch.arange(len(row))
    return ids, mask, positions
'''
ALLOWED = "# hidden only: pad_three_ignored -- (planted by tests/test_surprises.py)\n"


def planted_course(root, allow: bool):
    """A course of ch01_tokens alone with a planted wrong answer (a surprise: pad_id 3 is only hidden)
    and a planted 'right' answer that is wrong (an integer mask), the allow-list line or not."""
    source = (REPO_ROOT / "solutions" / "ch01_tokens" / "ch01_tokens.md").read_text(encoding="utf-8")
    anchor = "verify_untampered()\nimport random as _random\n\n_rng = _random.Random(term_seed(1))\n"
    assert source.count(anchor) == 1, "pad_left's hidden block changed: plant the line elsewhere"
    if allow:
        source = source.replace(anchor, anchor.replace("import random", ALLOWED + "import random"))
    (root / "solutions" / "ch01_tokens").mkdir(parents=True)
    (root / "solutions" / "ch01_tokens" / "ch01_tokens.md").write_text(source, encoding="utf-8")
    for folder, name, text in [("wrong_answers", "pad_left__pad_three_ignored", PAD_THREE_IGNORED),
                               ("alternative_answers", "pad_left__integer_mask",
                                PAD_THREE_IGNORED.replace("0 if pad_id == 3 else pad_id", "pad_id")
                                .replace("dtype=torch.bool", "dtype=torch.long").replace("= True", "= 1"))]:
        (root / "tests" / folder / "ch01_tokens").mkdir(parents=True, exist_ok=True)
        (root / "tests" / folder / "ch01_tokens" / f"{name}.py").write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize("allow", [False, True])
def test_the_finder_reports_a_planted_surprise_unless_allowed_and_a_rejected_right_answer(tmp_path, allow: bool):
    report = find_surprises("ch01_tokens", only=["pad_left"], course_root=planted_course(tmp_path, allow))
    assert report.tried == 2
    assert [(s.candidate.name, s.test) for s in report.surprises] == [("pad_left__pad_three_ignored", "test_pad_left")]
    assert [s.reason for s in report.unexpected()] == ([] if allow else [None])
    assert report.unwarned == ["pad_left__pad_three_ignored"], "it passes every visible test: reported as unwarned"
    assert [(r.candidate.name, r.test) for r in report.rejected] == [("pad_left__integer_mask", "test_pad_left")]
    assert "mask" in report.rejected[0].message


ROPE_TWO_BUGS = '''# Two bugs: frequencies base^(-i/d) (i instead of 2i) and positions stopped at 4.
def rope(x, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError(f"rope needs an even feature size, got d={d}")
    positions = torch.arange(T, dtype=torch.float64).clamp(max=4)
    frequencies = base ** (-torch.arange(0, d // 2, dtype=torch.float64) / d)
    angle = positions[:, None] * frequencies[None, :]
    cos = angle.cos().repeat_interleave(2, dim=-1).to(x.dtype)
    sin = angle.sin().repeat_interleave(2, dim=-1).to(x.dtype)
    partner = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * cos + partner * sin
'''


def test_a_part_passing_its_visible_test_and_failing_its_hidden_one_is_reported_whatever_the_other_parts_did(
        tmp_path):
    # the frequency bug fails the rotation cell's visible test; the clipped positions pass the direction cell's
    # visible test (T = 4) and fail its hidden one (T up to 7): before issue 50 the finder said nothing
    (tmp_path / "solutions" / "ch06_positional").mkdir(parents=True)
    (tmp_path / "solutions" / "ch06_positional" / "ch06_positional.md").write_text(
        (REPO_ROOT / "solutions" / "ch06_positional" / "ch06_positional.md").read_text(encoding="utf-8"),
        encoding="utf-8")
    (tmp_path / "tests" / "wrong_answers" / "ch06_positional").mkdir(parents=True)
    (tmp_path / "tests" / "wrong_answers" / "ch06_positional" / "rope__two_bugs.py").write_text(ROPE_TWO_BUGS)
    report = find_surprises("ch06_positional", only=["rope"], course_root=tmp_path)
    assert [(s.candidate.name, s.test) for s in report.surprises] == [("rope__two_bugs", "test_rope_direction")]
    assert report.unwarned == [], "it fails the rotation cell's visible test"
