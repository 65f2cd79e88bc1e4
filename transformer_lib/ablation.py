"""Chapter 11's experiment: each change to the GPT-2 layout, trained alone, at equal parameters and equal steps.

A variant is a :class:`~transformer_lib.modern.ModernConfig` (RoPE, RMSNorm, SwiGLU, grouped-query
attention, or all of them). Changes that remove parameters (RoPE has no position table, grouped-query
attention has smaller key and value projections) or add some (SwiGLU's third matrix) would be
compared at unequal size, so each variant gets the feed-forward width ``d_ff`` whose parameter count
is closest to the GPT-2 layout's (:meth:`AblationSetup.matched_d_ff`). Every variant is trained by
chapter 8's loop (:func:`~transformer_lib.lm_training.train_lm`) with the same steps, batches and seeds;
its peak learning rate is its own, chosen on validation (``benchmarks/bench_small_runs.py``).

The models accept ``longest`` positions, more than the training windows (``context``), so that
chapter 11 can test them on longer sequences; the rows of a learned position table beyond
``context`` never receive a gradient, so they are not counted as parameters.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from transformer_lib.lm_training import train_lm, windows_loss
from transformer_lib.models import GPT
from transformer_lib.modern import ModernConfig
from transformer_lib.runtime import seed_everything
from transformer_lib.tasks import TextTask

__all__ = ["AblationSetup", "variants", "train_variant"]


@dataclass(frozen=True)
class AblationSetup:
    """The size and training of every variant: ``(B, context)`` windows, ``steps`` optimiser steps."""

    d_model: int = 64
    heads: int = 4
    layers: int = 2
    d_ff: int = 256  #: the GPT-2 layout's feed-forward width; the others are matched to its parameters
    context: int = 32  #: training windows
    longest: int = 128  #: the longest sequence a model accepts
    steps: int = 400
    batch_size: int = 24

    def as_dict(self) -> dict[str, int]:
        """JSON-ready: what a results file records, so that a page can check it uses the same setup."""
        return asdict(self)

    def build(self, vocab_size: int, config: ModernConfig, d_ff: int, seed: int = 0) -> GPT:
        """A fresh variant, its weights drawn from ``seed``."""
        seed_everything(seed)
        return GPT(vocab_size, self.d_model, self.heads, self.layers, d_ff, self.longest, config=config)

    def trained_parameters(self, model: GPT) -> int:
        """Parameters, less the rows of a position table that training windows never reach."""
        count = sum(p.numel() for p in model.parameters())
        unused_rows = (self.longest - self.context) * self.d_model if model.embedding.position is not None else 0
        return count - unused_rows

    def budget(self, vocab_size: int) -> int:
        """The GPT-2 layout's trained parameters: the count every variant is matched to."""
        return self.trained_parameters(self.build(vocab_size, ModernConfig(), self.d_ff))

    def matched_d_ff(self, vocab_size: int, config: ModernConfig) -> int:
        """The feed-forward width whose parameter count is closest to :meth:`budget`.

        The count grows by the same amount for each unit of ``d_ff``, so two models give the line.
        """
        at_64, at_65 = (self.trained_parameters(self.build(vocab_size, config, d_ff)) for d_ff in (64, 65))
        return 64 + round((self.budget(vocab_size) - at_64) / (at_65 - at_64))


def variants(heads: int) -> dict[str, ModernConfig]:
    """The six layouts chapter 11 compares, by name: the GPT-2 layout, each change alone, and all of them."""
    return {
        "GPT-2 layout": ModernConfig(),
        "RoPE": ModernConfig(positional="rope"),
        "RMSNorm": ModernConfig(norm="rms"),
        "SwiGLU": ModernConfig(feed_forward="swiglu"),
        f"GQA, h_kv = {heads // 2}": ModernConfig(num_kv_heads=heads // 2),
        "all (Llama layout)": ModernConfig.llama(heads // 2),
    }


def train_variant(setup: AblationSetup, task: TextTask, config: ModernConfig, lr: float, seed: int = 0) -> dict:
    """Train one variant at its matched width; return the model and its losses.

    Returns ``{"model", "d_ff", "params", "valid", "test", "cpu_seconds"}``: the trained model (in eval
    mode), its width and trained parameters, its final validation and test losses
    (:func:`~transformer_lib.lm_training.windows_loss` over windows of ``setup.context``) and the CPU
    seconds its training took.
    """
    if task.block_size != setup.context:
        raise ValueError(f"the task's windows must be the setup's context, {setup.context}, got {task.block_size}")
    d_ff = setup.matched_d_ff(len(task.vocab), config)
    model = setup.build(len(task.vocab), config, d_ff, seed)
    run = train_lm(model, task, setup.steps, lr, setup.batch_size, seed=seed)
    return {"model": model.eval(), "d_ff": d_ff, "params": setup.trained_parameters(model), "valid": run["valid"],
            "test": windows_loss(model, task.test, task.block_size), "cpu_seconds": run["curve"][-1]["cpu_seconds"]}
