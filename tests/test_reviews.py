"""transformer_lib.reviews: chapter 12's language, its splits and its pretraining."""

import math
import random

import torch

from transformer_lib.reviews import (
    END,
    PAD,
    WORD_ID,
    WORDS,
    lm_batches,
    lm_rows,
    pretrain,
    review,
    review_gpt,
    review_splits,
)
from transformer_lib.sft import IGNORE_INDEX


def test_the_clause_after_but_decides_the_label():
    rng = random.Random(0)
    for _ in range(200):
        words, label, verdicts = review(rng)
        assert label == (verdicts[-1] == "good")
        assert len(verdicts) == 1 + words.count("but")


def test_validation_and_test_hold_only_new_sentences():
    splits = review_splits()
    assert (len(splits.unlabelled), len(splits.pool), len(splits.valid), len(splits.test)) == (20000, 4000, 1000, 1000)
    seen = {tuple(r[0]) for r in splits.unlabelled + splits.pool}
    valid, test = ({tuple(r[0]) for r in part} for part in (splits.valid, splits.test))
    assert not (valid & seen) and not (test & seen) and not (valid & test)


def test_closing_words_follow_the_label_in_the_share_asked():
    data = review_splits().unlabelled[:2000]
    rows = lm_rows(data, closing_share=0.5)
    closed = [(row, label) for row, (_, label, _) in zip(rows, data) if row[-1] != END]
    assert 0.45 < len(closed) / len(rows) < 0.55
    assert all(row[-1] == WORD_ID["recommended" if label else "avoid"] for row, label in closed)
    assert all(row[-1] == END for row in lm_rows(data, closing_share=0.0))


def test_padding_carries_no_loss():
    batch = lm_batches(review_splits().unlabelled[:64], 0.5)[0]
    idx, targets = batch["idx"], batch["targets"]  # (64, T) each
    real = targets != IGNORE_INDEX
    assert idx.shape == targets.shape and (targets[real] != PAD).all()
    # each target is the next input where that input is a word, and no loss where it is padding
    assert (targets[:, :-1][real[:, :-1]] == idx[:, 1:][real[:, :-1]]).all()
    assert not (real[:, :-1] & (idx[:, 1:] == PAD)).any()
    assert real.sum() == sum(len(row) - 1 for row in lm_rows(review_splits().unlabelled[:64], 0.5))


def test_a_fresh_model_starts_near_the_uniform_guess_and_pretraining_lowers_its_loss():
    splits = review_splits()
    model, history = pretrain(splits, 0.5, lr=1e-2, steps=30, eval_every=10)
    fresh = review_gpt(0)
    batch = lm_batches(splits.valid[:500], 0.5, batch_size=500)[0]
    logits = fresh(batch["idx"])
    first = torch.nn.functional.cross_entropy(logits.transpose(1, 2), batch["targets"], ignore_index=IGNORE_INDEX)
    assert abs(first.item() - math.log(len(WORDS))) < 0.1
    assert history.metrics["valid_loss"][-1] < first.item() - 0.5
