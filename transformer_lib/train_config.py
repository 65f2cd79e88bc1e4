"""Every knob of a training run, declared once: :class:`TrainConfig`, and the schedules it names.

Each field carries its help text in its metadata; the command line (:mod:`transformer_lib.train`)
builds its flags from these fields, so a default is written in one place. The defaults train the
command line's reverse task to 100 % held-out exact match in about a minute on two CPU cores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from transformer_lib.runtime import PRECISIONS

__all__ = ["SCHEDULES", "TARGET_DIRECTIONS", "TrainConfig", "lr_factor"]

SCHEDULES = ("inverse_sqrt", "cosine", "constant")
#: How a target metric improves: "min" (losses, error rates) or "max" (accuracies, BLEU).
TARGET_DIRECTIONS = ("min", "max")


def knob(default: Any, help: str, **cli: Any) -> Any:
    """A field with its help text (and any extra ``argparse`` options, like ``choices``) as metadata."""
    return field(default=default, metadata={"help": help, **cli})


@dataclass
class TrainConfig:
    """Every knob of a training run. Checked when created: a bad value raises ``ValueError``.

    ``lr`` is the peak learning rate, reached after ``warmup_steps``. ``max_steps`` counts
    optimiser steps; each consumes ``accumulation_steps`` batches. ``eval_every=0`` evaluates
    only at the end. Training stops early once ``target_metric`` reaches ``target_value``: at most
    it when ``target_direction`` is ``"min"``, at least it when ``"max"`` (the three go together).
    """

    max_steps: int = knob(1000, "optimiser steps")
    lr: float = knob(3e-3, "peak learning rate, reached at the end of the warm-up")
    schedule: str = knob("cosine", "learning-rate schedule after the warm-up", choices=SCHEDULES)
    warmup_steps: int = knob(100, "steps of linear warm-up")
    weight_decay: float = knob(0.0, "AdamW weight decay of weight matrices (not biases, norms, embeddings)")
    betas: tuple[float, float] = knob((0.9, 0.98), "AdamW's two moment decay rates")
    grad_clip: float | None = knob(1.0, "clip the gradient norm to this (none: no clipping)")
    accumulation_steps: int = knob(1, "batches per optimiser step")
    device: str = knob("auto", "auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:1, mps")
    precision: str = knob("auto", "auto: bf16/fp16 on CUDA, fp32 elsewhere", choices=PRECISIONS)
    compile: bool = knob(False, "compile the model with torch.compile")
    seed: int = knob(0, "seed of dropout and data order (plus the process rank)")
    eval_every: int = knob(250, "evaluate every N steps, if there is validation data (0: only at the end)")
    target_metric: str | None = knob(None, "stop early once this validation metric reaches target_value")
    target_value: float | None = knob(None, "the value of target_metric that stops training")
    target_direction: str | None = knob(None, "min: stop once target_metric <= target_value (a loss, an error rate); "
                                              "max: once >= (an accuracy)", choices=TARGET_DIRECTIONS)
    checkpoint_path: str | None = knob(None, "where checkpoints are written (none: nowhere)")
    checkpoint_every: int = knob(500, "write a checkpoint every N steps, if there is a path (0: only at the end)")
    progress: bool | None = knob(None, "show a progress bar (none: only when stderr is a terminal)")

    def __post_init__(self) -> None:
        def need(ok: bool, what: str, got: Any) -> None:
            if not ok:
                raise ValueError(f"TrainConfig.{what}, got {got!r}")

        need(isinstance(self.max_steps, int) and self.max_steps >= 1, "max_steps must be an integer >= 1",
             self.max_steps)
        need(self.lr > 0, "lr must be > 0", self.lr)
        need(self.schedule in SCHEDULES, f"schedule must be one of {SCHEDULES}", self.schedule)
        need(isinstance(self.warmup_steps, int) and self.warmup_steps >= (self.schedule == "inverse_sqrt"),
             "warmup_steps must be an integer >= 0 (>= 1 for inverse_sqrt)", self.warmup_steps)
        need(self.weight_decay >= 0, "weight_decay must be >= 0", self.weight_decay)
        need(len(self.betas) == 2 and all(0 <= b < 1 for b in self.betas), "betas must be two numbers in [0, 1)",
             self.betas)
        need(self.grad_clip is None or self.grad_clip > 0, "grad_clip must be > 0 or None", self.grad_clip)
        need(isinstance(self.accumulation_steps, int) and self.accumulation_steps >= 1,
             "accumulation_steps must be an integer >= 1", self.accumulation_steps)
        need(self.precision in PRECISIONS, f"precision must be one of {PRECISIONS}", self.precision)
        need(self.eval_every >= 0 and self.checkpoint_every >= 0, "eval_every and checkpoint_every must be >= 0",
             (self.eval_every, self.checkpoint_every))
        target = (self.target_metric, self.target_value, self.target_direction)
        need(len({value is None for value in target}) == 1,
             "target_metric, target_value and target_direction must be given together", target)
        need(self.target_direction in (None, *TARGET_DIRECTIONS),
             f"target_direction must be one of {TARGET_DIRECTIONS}", self.target_direction)
        if self.device != "auto":
            try:
                torch.device(self.device)
            except RuntimeError:
                need(False, "device must be 'auto' or a torch device such as 'cpu', 'cuda', 'cuda:1', 'mps'",
                     self.device)


def lr_factor(step: int, config: TrainConfig) -> float:
    """The multiplier of ``config.lr`` at optimiser step ``step`` (1-based).

    * ``inverse_sqrt``: linear warm-up, then decay as ``1 / sqrt(step)`` - the schedule of
      Vaswani et al. 2017 (section 5.3), ``d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)``,
      rescaled so that its peak, at ``step = warmup``, is 1;
    * ``cosine``: linear warm-up, then half a cosine down to 0 at ``max_steps``;
    * ``constant``: linear warm-up, then 1.
    """
    step = max(step, 1)
    warmup = config.warmup_steps
    if step < warmup:
        return step / warmup
    if config.schedule == "inverse_sqrt":
        return math.sqrt(warmup / step)
    if config.schedule == "cosine":
        progress = (step - warmup) / max(1, config.max_steps - warmup)
        return 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))
    return 1.0
