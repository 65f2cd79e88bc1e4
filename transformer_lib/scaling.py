"""Scaling experiments: a GPT of a given size trained for a given step budget, and the laws fitted to the losses.

Each run of :func:`train_budget` has a schedule of its own (linear warm-up over a tenth of the
budget, then a cosine down to zero at the last step), so its final loss is what that many steps
can give, not a mid-run checkpoint of a longer run (Hoffmann et al. 2022, section 3.1 and
appendix B, figure A1). Losses are exact means over every predicted character of the split's
non-overlapping windows (:func:`windows_loss`), the protocol :func:`ngram_windows_loss` applies to
a counted n-gram, so that the two are compared on the same predictions.

Two laws are fitted, both by least squares on ``log L``:

* :func:`fit_power_law`: ``L = a x^-alpha``, a straight line on log axes;
* :func:`fit_saturating_power_law`: ``L = E + A x^-alpha``, with an irreducible term ``E`` (the
  form of each term of Hoffmann et al.'s eq. 2), which bends on log axes towards ``E``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np
import torch
from torch.nn import functional as F

from transformer_lib.models import GPT
from transformer_lib.ngram import NGramLM
from transformer_lib.objectives import LMObjective
from transformer_lib.runtime import seed_everything
from transformer_lib.tasks import TextTask
from transformer_lib.train_config import TrainConfig
from transformer_lib.trainer import Trainer

__all__ = ["HEAD_DIM", "SIZES", "scale_gpt", "non_embedding_parameters", "flops_per_token", "windows_loss",
           "ngram_windows_loss", "train_budget", "fit_power_law", "fit_saturating_power_law"]

#: Dimensions per attention head. On one CPU core PyTorch's fused attention costs about as much
#: for 16 dimensions as for 8, per head, so heads of 16 train the same widths about a fifth faster.
HEAD_DIM = 16
#: The sizes of the scaling experiment: ``(d_model, blocks)``, with ``d_ff = 4 d_model``.
SIZES = ((16, 1), (24, 2), (32, 2), (48, 3), (64, 3), (96, 3))


def scale_gpt(vocab_size: int, d_model: int, layers: int, context: int) -> GPT:
    """The experiment's GPT: heads of :data:`HEAD_DIM` dimensions (one head below 32), ``d_ff = 4 d_model``."""
    if d_model >= 2 * HEAD_DIM and d_model % HEAD_DIM:
        raise ValueError(f"d_model must be a multiple of {HEAD_DIM} from {2 * HEAD_DIM} on, got {d_model}")
    return GPT(vocab_size, d_model, max(1, d_model // HEAD_DIM), layers, 4 * d_model, context)


def non_embedding_parameters(gpt: GPT) -> int:
    """``N`` as Kaplan et al. count it: the parameters of the blocks, without the (tied) embedding table."""
    return sum(p.numel() for p in gpt.blocks.parameters())


def flops_per_token(gpt: GPT) -> int:
    """Training FLOPs per token: ``6 (N + n_layer n_ctx d_model + d_model n_vocab)``.

    Per token, 2 per weight forward and 4 backward (Kaplan et al. 2020, table 1), plus the
    attention scores and the output layer, which are not negligible at these sizes.
    """
    d_model, n_vocab = gpt.lm_head.in_features, gpt.lm_head.out_features
    layers = len(gpt.blocks.layers)
    return 6 * (non_embedding_parameters(gpt) + layers * gpt.max_len * d_model + d_model * n_vocab)


def _windows(ids: torch.Tensor, block_size: int) -> torch.Tensor:
    """``(n, block_size + 1)``: the non-overlapping windows of a 1-D stream, as the task's loaders cut them."""
    n = (len(ids) - 1) // block_size
    if n == 0:
        raise ValueError(f"a stream of {len(ids)} ids holds no window of {block_size + 1}")
    return ids.unfold(0, block_size + 1, block_size)[:n]


@torch.no_grad()
def windows_loss(model: GPT, ids: torch.Tensor, block_size: int, batch_size: int = 128) -> float:
    """Mean loss (nats per symbol) of ``model`` over every prediction of the windows of ``ids`` (1-D).

    Each window of ``block_size + 1`` ids predicts its last ``block_size`` from those before them
    in the window, exactly as in training; every prediction counts once (no mean of batch means).
    """
    windows = _windows(ids, block_size)
    model.eval()
    total = 0.0
    for batch in windows.split(batch_size):
        logits = model(batch[:, :-1])  # (B, T, V)
        total += F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten(), reduction="sum").item()
    model.train()
    return total / windows[:, 1:].numel()


def ngram_windows_loss(ngram: NGramLM, ids: torch.Tensor, block_size: int) -> float:
    """:func:`windows_loss` for a counted n-gram: the same predictions, each from its window's own past."""
    nll = [value for window in _windows(ids, block_size).tolist() for value in ngram.nll(window)[1:]]
    return sum(nll) / len(nll)


def train_budget(task: TextTask, d_model: int, layers: int, steps: int, lr: float, batch_size: int = 16,
                 seed: int = 0, curve_every: int = 0) -> dict:
    """Train :func:`scale_gpt` on ``task`` for ``steps`` steps with a schedule of its own; return its losses.

    The schedule warms up over ``steps // 10`` and decays by a cosine to zero at ``steps``. The
    result (JSON-ready): the run's settings; ``n`` (non-embedding parameters); ``flops_per_token``;
    ``tokens`` trained on; ``valid`` and ``test``, the final :func:`windows_loss` of those
    splits; ``curve``, ``[step, valid loss]`` every ``curve_every`` steps (0: none); ``seconds`` of
    CPU time (``time.process_time``) spent training.
    """
    if steps < 10 or lr <= 0 or (curve_every and steps % curve_every):
        raise ValueError(f"need steps >= 10, lr > 0 and steps a multiple of curve_every, got steps={steps}, "
                         f"lr={lr}, curve_every={curve_every}")
    seed_everything(seed)
    gpt = scale_gpt(len(task.vocab), d_model, layers, task.block_size)
    config = TrainConfig(max_steps=steps, lr=lr, schedule="cosine", warmup_steps=steps // 10, eval_every=0,
                         device="cpu", progress=False, seed=seed)
    trainer = Trainer(gpt, LMObjective(), config, task.loader("train", batch_size, seed=seed))
    curve, start = [], time.process_time()
    for stop in range(curve_every or steps, steps + 1, curve_every or steps):
        trainer.fit(stop_at=stop)
        if curve_every:
            curve.append([stop, windows_loss(gpt, task.valid, task.block_size)])
    seconds = time.process_time() - start
    valid = curve[-1][1] if curve else windows_loss(gpt, task.valid, task.block_size)
    return {"d_model": d_model, "layers": layers, "steps": steps, "lr": lr, "seed": seed, "batch_size": batch_size,
            "n": non_embedding_parameters(gpt), "flops_per_token": flops_per_token(gpt),
            "tokens": steps * batch_size * task.block_size, "valid": valid,
            "test": windows_loss(gpt, task.test, task.block_size), "curve": curve, "seconds": seconds}


def _check_xy(x: Sequence[float], y: Sequence[float], least: int) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(x) < least:
        raise ValueError(f"need two 1-D arrays of the same length >= {least}, got shapes {x.shape} and {y.shape}")
    if (x <= 0).any() or (y <= 0).any():
        raise ValueError("a power law needs positive x and y")
    return x, y


def fit_power_law(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least squares on log axes for ``y = a x^-alpha``; returns ``(alpha, a)``."""
    x, y = _check_xy(x, y, 2)
    slope, intercept = np.polyfit(np.log(x), np.log(y), 1)
    return float(-slope), math.exp(intercept)


def fit_saturating_power_law(x: Sequence[float], y: Sequence[float], grid: int = 4000) -> tuple[float, float, float]:
    """Least squares on ``log y`` for ``y = E + A x^-alpha`` (``0 <= E < min y``); returns ``(E, A, alpha)``.

    For each ``E`` of a fine grid, ``log(y - E) = log A - alpha log x`` is a straight line, fitted
    exactly; the ``E`` whose law is closest to ``log y`` wins. ``E = 0`` is the plain power law.
    """
    x, y = _check_xy(x, y, 3)
    best = (math.inf, 0.0, 0.0, 0.0)
    for e in np.linspace(0.0, y.min(), grid, endpoint=False):
        slope, intercept = np.polyfit(np.log(x), np.log(y - e), 1)
        error = float(np.sum((np.log(y) - np.log(e + math.exp(intercept) * x ** slope)) ** 2))
        if error < best[0]:
            best = (error, float(e), math.exp(intercept), float(-slope))
    return best[1], best[2], best[3]
