"""Metrics: padding is ignored, widths may differ, BLEU comes from sacrebleu."""

import pytest
import sacrebleu
import torch

from transformer_lib.metrics import corpus_bleu, exact_match, token_accuracy


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
