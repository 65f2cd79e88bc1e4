"""Training a GPT on text, measured: one loop for chapter 8's long and short runs and chapter 10's grid.

:func:`train_lm` trains a :class:`~transformer_lib.models.GPT` on a
:class:`~transformer_lib.tasks.TextTask` with the library's :class:`~transformer_lib.trainer.Trainer`
(AdamW, a linear warm-up then a cosine decay to zero at the last step, gradient clipping; the
device and mixed precision picked as the trainer picks them, so the same call trains on a GPU),
stopping every ``eval_every`` steps to score the whole validation split exactly
(:func:`windows_loss`). It returns a JSON-ready record of the run: the validation curve against
optimiser steps, training characters and CPU seconds, and the best point, whose weights the model
holds at the end (early stopping on validation: a run that starts to overfit keeps its best).

Losses are exact means over every predicted character of a split's non-overlapping windows, each
character predicted from those before it *in its window*, the protocol by which
:mod:`transformer_lib.ngram` scores a counted model, so that the two are compared on the same
predictions.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from transformer_lib.models import GPT
from transformer_lib.objectives import LMObjective
from transformer_lib.runtime import seed_everything
from transformer_lib.tasks import TextTask
from transformer_lib.train_config import TrainConfig
from transformer_lib.trainer import Trainer

__all__ = ["windows", "sequence_losses", "position_losses", "windows_loss", "gpt_flops_per_token", "train_lm"]


def windows(ids: torch.Tensor, block_size: int) -> torch.Tensor:
    """``(n, block_size + 1)``: the non-overlapping windows of a 1-D stream, as a task's evaluation loader cuts them."""
    n = (len(ids) - 1) // block_size
    if n == 0:
        raise ValueError(f"a stream of {len(ids)} ids holds no window of block_size + 1 = {block_size + 1}")
    return ids.unfold(0, block_size + 1, block_size)[:n]


@torch.no_grad()
def sequence_losses(model: nn.Module, sequences: torch.Tensor, batch_size: int | None = None) -> torch.Tensor:
    """``(n, T - 1)``: the loss (nats) of each prediction of each sequence ``(n, T)`` from its own past, on the CPU.

    ``model`` maps ids ``(B, T - 1)`` to logits ``(B, T - 1, V)``; it is run in eval mode (and put
    back as it was) on ``batch_size`` sequences at a time (``None``: all at once), on its own device.
    """
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    rows = []
    for batch in sequences.split(batch_size or len(sequences)):
        batch = batch.to(device)
        logits = model(batch[:, :-1]).float()  # (B, T - 1, V)
        rows.append(F.cross_entropy(logits.transpose(1, 2), batch[:, 1:], reduction="none").cpu())
    model.train(was_training)
    return torch.cat(rows)


def position_losses(model: nn.Module, ids: torch.Tensor, block_size: int, batch_size: int = 64) -> torch.Tensor:
    """``(n_windows, block_size)``: the loss (nats) of every prediction of the windows of ``ids`` (1-D).

    Window ``w`` predicts its last ``block_size`` ids, each from those before it in the window.
    """
    return sequence_losses(model, windows(ids, block_size), batch_size)


def windows_loss(model: nn.Module, ids: torch.Tensor, block_size: int, batch_size: int = 64) -> float:
    """Mean loss (nats per symbol) over every prediction of the windows of ``ids``: each counts once."""
    return position_losses(model, ids, block_size, batch_size).double().mean().item()


def gpt_flops_per_token(gpt: GPT) -> int:
    """Training FLOPs per token: ``6 (N + n_layer n_ctx d_model + d_model n_vocab)``, ``N`` the blocks' parameters.

    Per token, 2 per weight forward and 4 backward (Kaplan et al. 2020, table 1), plus the
    attention scores over a full context and the output layer, which are not negligible at these sizes.
    """
    d_model, n_vocab = gpt.lm_head.in_features, gpt.lm_head.out_features
    blocks = sum(p.numel() for p in gpt.blocks.parameters())
    return 6 * (blocks + len(gpt.blocks.layers) * gpt.max_len * d_model + d_model * n_vocab)


def train_lm(gpt: GPT, task: TextTask, steps: int, lr: float, batch_size: int, *, seed: int = 0,
             warmup_steps: int | None = None, weight_decay: float = 0.1, eval_every: int = 0,
             eval_at: Sequence[int] = (), stop_at: int | None = None, patience: int | None = None,
             device: str = "cpu", compile: bool = False, progress: bool = False) -> dict:
    """Train ``gpt`` on ``task`` for up to ``steps`` optimiser steps; it ends holding its best weights on validation.

    Args:
        gpt: the model (seed before building it for reproducible weights).
        task: the text; training batches are windows at random offsets, drawn from ``seed``.
        steps: the schedule's length: warm-up over ``warmup_steps`` (default a tenth), cosine to 0 at ``steps``.
        lr: the peak learning rate. AdamW with betas (0.9, 0.95) and ``weight_decay`` on weight matrices.
        batch_size: windows of ``task.block_size`` characters per step.
        eval_every: score the validation split every so many steps (0: only at the end).
        eval_at: more steps to score it at (say, an early one that a shorter rerun can check).
        stop_at: stop there, the schedule still that of ``steps`` (default ``steps``): the first
            ``stop_at`` steps of the run, exactly (a page reruns the start of a committed long run this way).
        patience: stop once that many evaluations in a row are not below the best (``None``: never).
        device, compile: as :class:`~transformer_lib.train_config.TrainConfig`'s (``"auto"`` picks a GPU).

    Returns a JSON-ready dict: the settings; ``curve``, one ``{"step", "characters", "cpu_seconds",
    "wall_seconds", "valid"}`` per evaluation (seconds spent training, evaluation excluded; CPU seconds
    of this process, which on a GPU mostly wait); ``best``, the point of the curve where the validation
    loss was lowest (the weights ``gpt`` now holds); ``valid``, its loss; ``steps_run``.
    """
    stop_at = steps if stop_at is None else stop_at
    if steps < 10 or lr <= 0 or batch_size < 1 or not 0 < stop_at <= steps or eval_every < 0:
        raise ValueError(f"need steps >= 10, lr > 0, batch_size >= 1, 0 < stop_at <= steps and eval_every >= 0, got "
                         f"steps={steps}, lr={lr}, batch_size={batch_size}, stop_at={stop_at}, eval_every={eval_every}")
    evaluations = sorted({*range(eval_every, stop_at + 1, eval_every or stop_at), *eval_at, stop_at} - {0})
    if evaluations[-1] > stop_at:
        raise ValueError(f"eval_at must lie within the run's {stop_at} steps, got {sorted(eval_at)}")
    seed_everything(seed)
    config = TrainConfig(max_steps=steps, lr=lr, schedule="cosine", warmup_steps=steps // 10 if warmup_steps is None
                         else warmup_steps, weight_decay=weight_decay, betas=(0.9, 0.95), eval_every=0,
                         device=device, compile=compile, progress=progress, seed=seed)
    trainer = Trainer(gpt, LMObjective(), config, task.loader("train", batch_size, seed=seed))
    characters_per_step = batch_size * task.block_size
    curve, best, best_state, cpu, wall, stale = [], None, None, 0.0, 0.0, 0
    for stop in evaluations:
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        trainer.fit(stop_at=stop)
        if trainer.device.type == "cuda":
            torch.cuda.synchronize()
        cpu, wall = cpu + time.process_time() - start_cpu, wall + time.perf_counter() - start_wall
        valid = windows_loss(gpt, task.valid, task.block_size)
        curve.append({"step": stop, "characters": stop * characters_per_step, "cpu_seconds": cpu,
                      "wall_seconds": wall, "valid": valid})
        if best is None or valid < best["valid"]:
            best, best_state, stale = curve[-1], copy.deepcopy(gpt.state_dict()), 0
        else:
            stale += 1
        if not math.isfinite(valid) or (patience is not None and stale >= patience):
            break
    gpt.load_state_dict(best_state)
    return {"steps": steps, "lr": lr, "batch_size": batch_size, "seed": seed, "block_size": task.block_size,
            "weight_decay": weight_decay, "warmup_steps": config.warmup_steps, "device": str(trainer.device),
            "flops_per_token": gpt_flops_per_token(gpt), "curve": curve, "best": best, "valid": best["valid"],
            "steps_run": curve[-1]["step"]}
