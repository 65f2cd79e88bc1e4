"""The scaling experiment's pieces: the GPT sizes, exact window losses (GPT and n-gram), a budget run, the fits."""

import math

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from transformer_lib.lm_training import gpt_flops_per_token, train_lm, windows_loss
from transformer_lib.ngram import NGramLM
from transformer_lib.scaling import (
    fit_power_law,
    fit_saturating_power_law,
    ngram_windows_loss,
    non_embedding_parameters,
    scale_gpt,
    train_budget,
)
from transformer_lib.tasks import text_task

TEXT = "def f(x):\n    return x + 1\n\n" * 60


def test_scale_gpt_heads_and_counts():
    assert scale_gpt(50, 16, 1, 8).blocks.layers[0].self_attention.num_heads == 1
    assert scale_gpt(50, 24, 1, 8).blocks.layers[0].self_attention.num_heads == 1
    assert scale_gpt(50, 96, 1, 8).blocks.layers[0].self_attention.num_heads == 6
    with pytest.raises(ValueError, match="multiple of 16"):
        scale_gpt(50, 40, 1, 8)
    gpt = scale_gpt(50, 32, 2, 8)
    n = non_embedding_parameters(gpt)
    assert n == sum(p.numel() for p in gpt.parameters()) - 50 * 32 - 8 * 32  # less token and position tables
    assert gpt_flops_per_token(gpt) == 6 * (n + 2 * 8 * 32 + 32 * 50)


def test_windows_loss_is_the_mean_over_every_prediction():
    torch.manual_seed(0)
    gpt = scale_gpt(7, 16, 1, 4)
    ids = torch.randint(0, 7, (15,))  # windows [0:5], [4:9], [8:13]; the last two ids are left over
    by_hand = torch.cat([F.cross_entropy(gpt(ids[s : s + 4][None])[0], ids[s + 1 : s + 5], reduction="none")
                         for s in (0, 4, 8)])
    assert windows_loss(gpt, ids, 4, batch_size=2) == pytest.approx(by_hand.mean().item(), rel=1e-6)
    assert gpt.training  # left as it was found
    with pytest.raises(ValueError, match="holds no window"):
        windows_loss(gpt, ids[:4], 4)


def test_ngram_windows_loss_scores_each_window_from_its_own_past():
    lm = NGramLM(2).fit("abcabcab")
    ids = torch.tensor([0, 1, 2, 0, 1, 2, 0])  # windows [0, 1, 2, 0] and [0, 1, 2, 0]
    symbols = "abc"
    window = [symbols[i] for i in ids[:4].tolist()]
    expected = -sum(math.log(lm.prob(window[:t], window[t])) for t in range(1, 4)) / 3
    lm_ids = NGramLM(2).fit([symbols.index(c) for c in "abcabcab"])
    assert ngram_windows_loss(lm_ids, ids, 3) == pytest.approx(expected)


def test_train_budget_runs_its_own_schedule_and_is_reproducible():
    task = text_task(block_size=16, text=TEXT)
    first = train_budget(task, 16, 1, steps=12, lr=2e-2, batch_size=4, curve_every=6)
    again = train_budget(task, 16, 1, steps=12, lr=2e-2, batch_size=4, curve_every=6)
    assert first["valid"] == again["valid"] and first["test"] == again["test"]
    assert [s for s, _ in first["curve"]] == [6, 12] and first["curve"][-1][1] == first["valid"]
    assert first["tokens"] == 12 * 4 * 16
    assert first["n"] == non_embedding_parameters(scale_gpt(len(task.vocab), 16, 1, 16))
    assert first["test"] < math.log(len(task.vocab))  # it learned something from uniform
    with pytest.raises(ValueError, match="multiple of curve_every"):
        train_budget(task, 16, 1, steps=12, lr=1e-2, curve_every=5)


def test_train_lm_keeps_its_best_weights_and_reruns_the_start_of_a_run_exactly():
    task = text_task(block_size=16, text=TEXT)
    torch.manual_seed(0)
    gpt = scale_gpt(len(task.vocab), 16, 1, 16)
    run = train_lm(gpt, task, steps=20, lr=2e-2, batch_size=4, eval_every=10, eval_at=[3])
    assert [p["step"] for p in run["curve"]] == [3, 10, 20] and run["steps_run"] == 20
    assert [p["characters"] for p in run["curve"]] == [3 * 64, 10 * 64, 20 * 64]
    assert run["valid"] == min(p["valid"] for p in run["curve"]) == run["best"]["valid"]
    assert windows_loss(gpt, task.valid, 16) == pytest.approx(run["valid"])  # the model holds the best weights
    torch.manual_seed(0)
    start = train_lm(scale_gpt(len(task.vocab), 16, 1, 16), task, steps=20, lr=2e-2, batch_size=4, stop_at=3)
    assert start["curve"][-1]["valid"] == run["curve"][0]["valid"]  # the first 3 steps of the same schedule
    with pytest.raises(ValueError, match="eval_at must lie within"):
        train_lm(gpt, task, steps=20, lr=2e-2, batch_size=4, stop_at=3, eval_at=[5])
    with pytest.raises(ValueError, match="stop_at <= steps"):
        train_lm(gpt, task, steps=20, lr=2e-2, batch_size=4, stop_at=30)


def test_power_law_fits_recover_known_laws():
    x = np.geomspace(1e3, 1e6, 8)
    alpha, a = fit_power_law(x, 5.0 * x ** -0.2)
    assert alpha == pytest.approx(0.2) and a == pytest.approx(5.0)
    e, a, alpha = fit_saturating_power_law(x, 1.5 + 40.0 * x ** -0.4)
    assert e == pytest.approx(1.5, abs=2e-3) and alpha == pytest.approx(0.4, rel=0.02)
    e, _, alpha = fit_saturating_power_law(x, 5.0 * x ** -0.2)  # no irreducible term: E comes out near 0
    assert e < 0.05 and alpha == pytest.approx(0.2, rel=0.05)
    with pytest.raises(ValueError, match="positive"):
        fit_power_law([1.0, 2.0], [1.0, -1.0])
    with pytest.raises(ValueError, match="length >= 3"):
        fit_saturating_power_law([1.0, 2.0], [1.0, 0.5])
