"""Induction heads: the repeated-segment task, the attention-only model and the head scores."""

import math

import pytest
import torch

from transformer_lib.induction import (
    AttentionOnlyLM,
    RepeatTask,
    induction_scores,
    position_losses,
    previous_token_scores,
    repeat_task,
    train_on_repeats,
)


def test_sequences_repeat_their_first_half_and_follow_the_chain():
    task = repeat_task(vocab_size=8, half=5, concentration=0.2, seed=1)
    seqs = task.sample(300, torch.Generator().manual_seed(0))
    assert seqs.shape == (300, 10) and seqs.dtype == torch.long
    assert torch.equal(seqs[:, :5], seqs[:, 5:])
    assert torch.allclose(task.transitions.sum(1), torch.ones(8))
    # Every transition inside the segment has positive probability under the chain.
    assert (task.transitions[seqs[:, :4], seqs[:, 1:5]] > 0).all()


def test_entropy_rate_of_a_deterministic_and_of_a_uniform_chain():
    cycle = torch.roll(torch.eye(4), 1, dims=1)  # a -> b -> c -> d -> a
    assert RepeatTask(cycle, 3).entropy_rate() == pytest.approx(0.0, abs=1e-9)
    assert RepeatTask(torch.full((5, 5), 0.2), 3).entropy_rate() == pytest.approx(math.log(5), rel=1e-5)


def test_head_scores_read_the_right_cells():
    half, T = 3, 5  # a model reads 2 * half - 1 = 5 tokens
    w = torch.zeros(1, 2, T, T)
    for t in range(half, T):
        w[0, 0, t, t - half + 1] = 1.0  # head 0: the induction pattern
    for t in range(1, T):
        w[0, 1, t, t - 1] = 1.0  # head 1: the previous token
    assert induction_scores(w, half).tolist() == [1.0, 0.0]
    assert previous_token_scores(w).tolist() == [0.0, 1.0]  # half >= 2: t - half + 1 is never t - 1


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
    before = position_losses(model, evals)
    assert before.shape == (64, 7)
    history = train_on_repeats(model, task, steps=60, batch_size=16, lr=1e-2, eval_every=20, eval_sequences=evals)
    assert history["step"] == [0, 20, 40, 60]
    assert len(history["first"]) == len(history["repeat"]) == len(history["induction"]) == 4
    assert history["first"][-1] < history["first"][0] - 0.3  # it learns the chain, at least
    assert 0 <= min(history["induction"]) and max(history["induction"]) <= 1
