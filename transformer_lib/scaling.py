"""Scaling experiments: a GPT of a given size trained for a given step budget, and the laws fitted to the losses.

Each run of :func:`train_budget` has a schedule of its own (linear warm-up over a tenth of the
budget, then a cosine down to zero at the last step), so its final loss is what that many steps
can give, not a mid-run checkpoint of a longer run (Hoffmann et al. 2022, section 3.1 and
appendix B, figure A1). Each run is chapter 8's training loop (:mod:`transformer_lib.lm_training`).
Losses are exact means over every predicted character of the split's non-overlapping windows
(:func:`~transformer_lib.lm_training.windows_loss`), the protocol :func:`ngram_windows_loss` applies
to a counted n-gram, so that the two are compared on the same predictions.

Two laws are fitted, both by least squares on ``log L``:

* :func:`fit_power_law`: ``L = a x^-alpha``, a straight line on log axes;
* :func:`fit_saturating_power_law`: ``L = E + A x^-alpha``, with an irreducible term ``E`` (the
  form of each term of Hoffmann et al.'s eq. 2), which bends on log axes towards ``E``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from transformer_lib.lm_training import train_lm, windows_loss
from transformer_lib.models import GPT
from transformer_lib.ngram import NGramLM, windows_nll
from transformer_lib.runtime import seed_everything
from transformer_lib.tasks import TextTask

__all__ = ["HEAD_DIM", "SIZES", "scale_gpt", "non_embedding_parameters", "ngram_windows_loss", "train_budget",
           "fit_power_law", "fit_saturating_power_law"]

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


def ngram_windows_loss(ngram: NGramLM, ids: torch.Tensor, block_size: int) -> float:
    """:func:`~transformer_lib.lm_training.windows_loss` for a counted n-gram: the same predictions, each from its
    window's own past (:func:`~transformer_lib.ngram.windows_nll`)."""
    return float(windows_nll(ngram, ids.tolist(), block_size).mean())


def train_budget(task: TextTask, d_model: int, layers: int, steps: int, lr: float, batch_size: int = 16,
                 seed: int = 0, curve_every: int = 0) -> dict:
    """Train :func:`scale_gpt` on ``task`` for ``steps`` steps with a schedule of its own; return its losses.

    The run is :func:`~transformer_lib.lm_training.train_lm` (chapter 8's loop): a warm-up over
    ``steps // 10``, a cosine to zero at ``steps``, windows at random offsets. The result
    (JSON-ready): the run's settings; ``n`` (non-embedding parameters); ``flops_per_token``;
    ``tokens`` trained on; ``valid`` and ``test``, the :func:`~transformer_lib.lm_training.windows_loss`
    of those splits with the weights kept (the last evaluation's, unless validation rose before
    the end); ``curve``, ``[step, valid loss]`` every ``curve_every`` steps (0: only the end);
    ``seconds`` of CPU time (``time.process_time``) spent training.
    """
    if steps < 10 or lr <= 0 or (curve_every and steps % curve_every):
        raise ValueError(f"need steps >= 10, lr > 0 and steps a multiple of curve_every, got steps={steps}, "
                         f"lr={lr}, curve_every={curve_every}")
    seed_everything(seed)
    gpt = scale_gpt(len(task.vocab), d_model, layers, task.block_size)
    run = train_lm(gpt, task, steps, lr, batch_size, seed=seed, eval_every=curve_every)
    return {"d_model": d_model, "layers": layers, "steps": steps, "lr": lr, "seed": seed, "batch_size": batch_size,
            "n": non_embedding_parameters(gpt), "flops_per_token": run["flops_per_token"],
            "tokens": steps * batch_size * task.block_size, "valid": run["valid"],
            "test": windows_loss(gpt, task.test, task.block_size),
            "curve": [[point["step"], point["valid"]] for point in run["curve"]] if curve_every else [],
            "seconds": run["curve"][-1]["cpu_seconds"]}


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
