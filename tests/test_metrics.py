"""Metrics: padding is ignored, widths may differ, BLEU comes from sacrebleu."""

import pytest
import sacrebleu
import torch

from transformer_lib.metrics import (
    corpus_bleu,
    edit_distance,
    exact_match,
    mcnemar_exact,
    phoneme_error_rate,
    token_accuracy,
    word_error_rate,
)


def test_token_accuracy_ignores_padding():
    target = torch.tensor([[5, 6, 2, 0], [7, 2, 0, 0]])
    pred = torch.tensor([[5, 9, 2, 4], [7, 2, 8, 8]])  # one wrong token; junk under padding
    assert token_accuracy(pred, target) == pytest.approx(4 / 5)


def test_exact_match_pads_to_the_wider_batch():
    target = torch.tensor([[5, 6, 2], [7, 2, 0]])
    assert exact_match(torch.tensor([[5, 6, 2, 0, 0], [7, 2, 0, 0, 0]]), target) == 1.0
    assert exact_match(torch.tensor([[5, 6], [7, 2]]), target) == 0.5  # first row lost its <eos>
    assert exact_match(torch.tensor([[5, 6, 2, 4], [7, 2, 0, 0]]), target) == 0.5  # ran past <eos>


def test_metrics_reject_bad_shapes():
    with pytest.raises(ValueError, match=r"\(B, T\)"):
        token_accuracy(torch.zeros(3, dtype=torch.long), torch.zeros(1, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="batch size"):
        exact_match(torch.zeros(2, 3, dtype=torch.long), torch.zeros(1, 3, dtype=torch.long))
    with pytest.raises(TypeError, match="torch.Tensor"):
        exact_match([[1]], torch.zeros(1, 1, dtype=torch.long))


def test_corpus_bleu_is_sacrebleu():
    hyps = ["the cat sat on the mat", "a dog ran"]
    refs = ["the cat sat on a mat", "a dog ran away"]
    assert corpus_bleu(hyps, refs) == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)
    assert corpus_bleu(refs, refs) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="one reference per hypothesis"):
        corpus_bleu(hyps, refs[:1])


def test_edit_distance_counts_insertions_deletions_and_substitutions():
    assert edit_distance([], []) == 0
    assert edit_distance(["K", "AE", "T"], ["K", "AE", "T"]) == 0
    assert edit_distance(["K", "AA", "T"], ["K", "AE", "T"]) == 1  # one substitution
    assert edit_distance(["K", "AE", "T", "S"], ["K", "AE", "T"]) == 1  # one insertion
    assert edit_distance(["K", "T"], ["K", "AE", "T"]) == 1  # one deletion
    assert edit_distance([], ["K", "AE", "T"]) == 3 and edit_distance(["K", "AE", "T"], []) == 3
    assert edit_distance(list("kitten"), list("sitting")) == 3  # the textbook example
    assert edit_distance(["AE", "K"], ["K", "AE"]) == 2  # a swap is two edits


def test_error_rates_of_a_worked_example():
    # cat: right; phoenix: one phoneme wrong (IH -> AH) of 6; dog: one phoneme missing of 3.
    hypotheses = [["K", "AE", "T"], ["F", "IY", "N", "AH", "K", "S"], ["D", "AO"]]
    references = [[["K", "AE", "T"]], [["F", "IY", "N", "IH", "K", "S"]], [["D", "AO", "G"]]]
    assert word_error_rate(hypotheses, references) == pytest.approx(2 / 3)
    assert phoneme_error_rate(hypotheses, references) == pytest.approx((0 + 1 + 1) / (3 + 6 + 3))


def test_a_match_with_any_reference_counts():
    tomato = [["T", "AH", "M", "EY", "T", "OW"], ["T", "AH", "M", "AA", "T", "OW"]]
    assert word_error_rate([tomato[1]], [tomato]) == 0.0
    assert phoneme_error_rate([tomato[1]], [tomato]) == 0.0
    # "either": closest reference wins, and its length is the denominator.
    either = [["IY", "DH", "ER"], ["AY", "DH", "ER"]]
    assert phoneme_error_rate([["AY", "DH", "AH"]], [either]) == pytest.approx(1 / 3)
    # Equally close references: the first listed is chosen (here the short one, so 1 edit over 1 phoneme).
    assert phoneme_error_rate([["A", "B"]], [[["A"], ["A", "B", "C"]]]) == pytest.approx(1 / 1)
    assert phoneme_error_rate([["A", "B", "C", "D"]], [[["A"]]]) == pytest.approx(3.0)  # can exceed 1


def test_error_rates_refuse_bad_references():
    with pytest.raises(ValueError, match="one list of references per hypothesis, got 2 hypotheses and 1"):
        word_error_rate([["A"], ["B"]], [[["A"]]])
    with pytest.raises(ValueError, match="at least one word, got 0"):
        phoneme_error_rate([], [])
    with pytest.raises(ValueError, match=r"references\[0\] must be a non-empty list of non-empty token lists"):
        word_error_rate([["A"]], [["A"]])  # a list of strings, not of pronunciations
    with pytest.raises(ValueError, match=r"references\[0\] must be"):
        phoneme_error_rate([["A"]], [[]])


def test_mcnemar_exact_is_the_two_sided_binomial_tail():
    # 0 against 5: both tails of binomial(5, 1/2) at the extremes, 2 / 32
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    # 9 against 1: 2 * P(X <= 1) for X ~ binomial(10, 1/2) = 2 * (1 + 10) / 1024
    assert mcnemar_exact(9, 1) == pytest.approx(22 / 1024)
    assert mcnemar_exact(1, 9) == mcnemar_exact(9, 1)  # the test does not care which system is first
    assert mcnemar_exact(7, 7) == 1.0 and mcnemar_exact(0, 0) == 1.0  # an even split (or none) proves nothing
    assert mcnemar_exact(3, 4) == 1.0  # never above 1, though both tails overlap at the middle
    # a lopsided split over many items is very unlikely under equal systems
    assert mcnemar_exact(43, 21) < mcnemar_exact(33, 31)
    assert 0.005 < mcnemar_exact(43, 21) < 0.01


@pytest.mark.parametrize("bad", [-1, 2.0, True, None])
def test_mcnemar_exact_refuses_what_is_not_a_count(bad):
    with pytest.raises(ValueError, match="only_first must be a count"):
        mcnemar_exact(bad, 3)
