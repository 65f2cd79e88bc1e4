"""Chapter 11's experiment: every variant at the GPT-2 layout's parameter count, trained by chapter 8's loop."""

import math

import pytest

from transformer_lib.ablation import AblationSetup, train_variant, variants
from transformer_lib.tasks import text_task

TEXT = "def f(x):\n    return x + 1\n\nclass A:\n    pass\n" * 40
SETUP = AblationSetup(d_model=16, heads=2, layers=1, d_ff=64, context=8, longest=16, steps=12, batch_size=4)


def test_every_variant_is_matched_to_the_gpt2_layouts_parameters():
    vocab = 30
    budget = SETUP.budget(vocab)
    for name, config in variants(SETUP.heads).items():
        d_ff = SETUP.matched_d_ff(vocab, config)
        counts = [SETUP.trained_parameters(SETUP.build(vocab, config, width)) for width in (d_ff - 1, d_ff, d_ff + 1)]
        assert abs(counts[1] - budget) <= min(abs(c - budget) for c in counts), name  # the closest width
    gpt2 = SETUP.build(vocab, variants(SETUP.heads)["GPT-2 layout"], SETUP.d_ff)
    unused_rows = (SETUP.longest - SETUP.context) * SETUP.d_model  # position rows training never reaches
    assert SETUP.trained_parameters(gpt2) == sum(p.numel() for p in gpt2.parameters()) - unused_rows


def test_train_variant_reports_its_losses_and_refuses_other_windows():
    task = text_task(block_size=SETUP.context, text=TEXT)
    run = train_variant(SETUP, task, variants(SETUP.heads)["RoPE"], lr=1e-2, seed=0)
    assert set(run) == {"model", "d_ff", "params", "valid", "test", "cpu_seconds"}
    assert run["test"] < math.log(len(task.vocab)) and not run["model"].training
    again = train_variant(SETUP, task, variants(SETUP.heads)["RoPE"], lr=1e-2, seed=0)
    assert again["test"] == run["test"]  # seeded: the same weights and batches
    with pytest.raises(ValueError, match="the setup's context, 8, got 4"):
        train_variant(SETUP, text_task(block_size=4, text=TEXT), variants(SETUP.heads)["RoPE"], lr=1e-2)
    assert SETUP.as_dict()["steps"] == 12
