"""Induction heads: the repeated-segment task, the attention-only model and the head scores."""

import math

import pytest
import torch

from transformer_lib.induction import (
    AttentionOnlyLM,
    RepeatTask,
    induction_scores,
    parts,
    previous_token_scores,
    repeat_task,
    train_on_repeats,
)
from transformer_lib.lm_training import sequence_losses


def test_sequences_repeat_a_segment_of_varying_length_then_go_on_with_the_chain():
    task = repeat_task(vocab_size=8, half=6, concentration=0.2, seed=1)
    seqs, lengths = task.sample(300, torch.Generator().manual_seed(0))
    assert seqs.shape == (300, 12) and seqs.dtype == torch.long and lengths.shape == (300,)
    assert lengths.min() == 3 and lengths.max() == 6  # half // 2 .. half, both reached in 300 draws
    for row, L in zip(seqs, lengths.tolist()):
        assert torch.equal(row[:L], row[L:2 * L])
        chain = torch.cat([row[:L], row[2 * L:]])  # the segment and what follows the repeat: one chain
        assert (task.transitions[chain[:-1], chain[1:]] > 0).all()
    assert torch.allclose(task.transitions.sum(1), torch.ones(8))


def test_parts_split_the_predictions():
    masks = parts(torch.tensor([3]), 8)  # segment 0-2, repeat 3-5, rest 6-7; predictions of tokens 1..7
    assert masks["segment"][0].tolist() == [True, True, False, False, False, False, False]
    assert masks["repeat"][0].tolist() == [False, False, False, True, True, False, False]
    assert masks["rest"][0].tolist() == [False, False, True, False, False, True, True]


def test_entropy_rate_of_a_deterministic_and_of_a_uniform_chain():
    cycle = torch.roll(torch.eye(4), 1, dims=1)  # a -> b -> c -> d -> a
    assert RepeatTask(cycle, 3).entropy_rate() == pytest.approx(0.0, abs=1e-9)
    assert RepeatTask(torch.full((5, 5), 0.2), 3).entropy_rate() == pytest.approx(math.log(5), rel=1e-5)


def test_head_scores_read_the_right_cells():
    lengths = torch.tensor([3, 2])
    T = 5  # a model reads 6 - 1 tokens
    w = torch.zeros(2, 2, T, T)
    for i, L in enumerate(lengths.tolist()):
        for t in range(L, 2 * L - 1):
            w[i, 0, t, t - L + 1] = 1.0  # head 0: the induction pattern of each sequence
    for t in range(1, T):
        w[:, 1, t, t - 1] = 1.0  # head 1: the previous token
    assert induction_scores(w, lengths).tolist() == [1.0, pytest.approx(1 / 3)]  # L = 2: key t - 1 is both
    assert previous_token_scores(w).tolist() == [pytest.approx(1 / 8), 1.0]
    w[1, 0, 2, 1] = 0.0  # one of the three (query, key) pairs loses its attention
    assert induction_scores(w, lengths)[0] == pytest.approx(2 / 3)


def test_attention_only_model_is_causal_and_keeps_its_weights():
    torch.manual_seed(0)
    model = AttentionOnlyLM(vocab_size=7, d_model=16, num_heads=2, num_layers=2, max_len=9)
    ids = torch.randint(7, (3, 9))
    logits = model(ids)
    assert logits.shape == (3, 9, 7)
    assert [w.shape for w in model.weights] == [(3, 2, 9, 9)] * 2
    assert torch.triu(model.weights[0], diagonal=1).abs().max() == 0  # nothing after the query
    changed = ids.clone()
    changed[:, 5] = (changed[:, 5] + 1) % 7
    assert torch.allclose(model(changed)[:, :5], logits[:, :5])  # the future does not leak
    assert not any(p.grad is not None for p in model.parameters())
    assert not any(w.requires_grad for w in model.weights)
    assert not torch.allclose(model(changed)[:, 5], logits[:, 5])  # position 5 sees its own token
    with pytest.raises(ValueError, match=r"expected ids of shape \(batch, seq <= 9\), got \(3, 10\)"):
        model(torch.zeros(3, 10, dtype=torch.long))


def test_a_few_steps_learn_the_chain_and_record_the_history():
    task = repeat_task(vocab_size=6, half=4, concentration=0.1, seed=0)
    torch.manual_seed(0)
    model = AttentionOnlyLM(6, 16, 2, 2, 2 * task.half)
    evals = task.sample(64, torch.Generator().manual_seed(9))
    before = sequence_losses(model, evals[0])
    assert before.shape == (64, 7)
    history = train_on_repeats(model, task, steps=60, batch_size=16, lr=1e-2, eval_every=20, eval_sequences=evals)
    assert history["step"] == [0, 20, 40, 60]
    assert len(history["segment"]) == len(history["repeat"]) == len(history["induction"]) == 4
    assert history["segment"][-1] < history["segment"][0] - 0.3  # it learns the chain, at least
    assert 0 <= min(history["induction"]) and max(history["induction"]) <= 1
