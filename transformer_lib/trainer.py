"""The training loop: :class:`Trainer` trains any model for any :class:`Objective`; :func:`fit` in one call.

As in Karpathy's minGPT, nothing here knows what is being learned. An *objective* turns a batch
into a loss and a loader into metrics (:mod:`transformer_lib.objectives` has one for each kind of
model of the course; a bare ``loss_fn(model, batch) -> loss`` works too). The loop adds the rest:
gradient accumulation and clipping, the learning-rate schedule, weight-decay groups, evaluation
every N steps with early stopping at a target, a progress bar, checkpoints that resume exactly,
and, through :mod:`transformer_lib.runtime`, the device, mixed precision and data parallelism
under ``torchrun``. Every knob is a field of :class:`~transformer_lib.train_config.TrainConfig`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from tqdm import tqdm

from transformer_lib.run_state import Batch, History, RunPosition
from transformer_lib.runtime import (
    autocast_dtype,
    load_checkpoint,
    save_checkpoint,
    select_device,
    setup_distributed,
    to_device,
)
from transformer_lib.train_config import TrainConfig, lr_factor

__all__ = ["Objective", "MeanLossEvaluation", "LossOnlyObjective", "Trainer", "fit", "weight_decay_groups"]

LossFn = Callable[[nn.Module, Batch], torch.Tensor]


class Objective(Protocol):
    """What a model is trained for: turns a batch into a loss, and a loader into metrics."""

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor: ...

    def evaluate(self, model: nn.Module, loader: DataLoader, device: torch.device) -> dict[str, float]: ...


class MeanLossEvaluation:
    """Evaluation that reports the mean of ``self.loss`` over the loader's batches."""

    def evaluate(self, model: nn.Module, loader: DataLoader, device: torch.device) -> dict[str, float]:
        losses = [self.loss(model, to_device(batch, device)).item() for batch in loader]
        return {"valid_loss": sum(losses) / len(losses)}


@dataclass
class LossOnlyObjective(MeanLossEvaluation):
    """Wraps a plain ``loss_fn(model, batch) -> loss``."""

    loss_fn: LossFn

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        return self.loss_fn(model, batch)


def _as_objective(objective: Objective | LossFn) -> Objective:
    if hasattr(objective, "loss") and hasattr(objective, "evaluate"):
        return objective
    if callable(objective):
        return LossOnlyObjective(objective)
    raise TypeError("objective must have loss and evaluate methods, or be a loss function, "
                    f"got {type(objective).__name__}")


def weight_decay_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Two optimiser groups: matrices of linear layers decay; biases, norms and embeddings do not.

    Decaying an embedding pulls rare tokens towards zero and decaying a norm's gain fights
    its purpose, so only weights that mix features (``p.dim() >= 2``, not embeddings) decay.
    """
    embeddings = {id(p) for m in model.modules() if isinstance(m, nn.Embedding) for p in m.parameters()}
    decay, no_decay = [], []
    for p in model.parameters():
        if p.requires_grad:
            (decay if p.dim() >= 2 and id(p) not in embeddings else no_decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


class Trainer:
    """Trains ``model`` for ``objective`` on ``train_loader`` as ``config`` says; :meth:`fit` returns a
    :class:`History`.

    Args:
        model: any ``nn.Module``; the objective decides how it is called.
        objective: an :class:`Objective` (``loss`` and ``evaluate`` methods, such as
            :class:`~transformer_lib.objectives.Seq2SeqObjective`) or a bare ``loss_fn(model, batch) -> loss``.
        config: a :class:`~transformer_lib.train_config.TrainConfig`.
        train_loader: a ``DataLoader`` (or any sized iterable) of dict batches; for exact
            resumption its sampler should have ``set_epoch`` (as
            :class:`~transformer_lib.data.BucketBatchSampler` and ``DistributedSampler`` do),
            which the trainer calls at each epoch.
        valid_loader: evaluated every ``config.eval_every`` steps and at the end.

    ``trainer.model`` is the model itself (saved, evaluated, decoded); ``trainer.wrapped_model`` is
    what the training step calls: the same model, wrapped for data parallelism and compiled when
    the run asks for it.

    Creating a trainer seeds the global generators with ``config.seed`` (plus the process
    rank), so dropout and data order are the same on every run (:class:`RunPosition` says why it
    must); seed before building the model (:func:`~transformer_lib.runtime.seed_everything`) to make
    its initial weights reproducible too.
    """

    def __init__(self, model: nn.Module, objective: Objective | LossFn, config: TrainConfig, train_loader: DataLoader,
                 valid_loader: DataLoader | None = None) -> None:
        if not isinstance(config, TrainConfig):
            raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
        if len(train_loader) == 0:
            raise ValueError("train_loader yields no batches (is batch_size larger than the data with drop_last?)")
        if config.target_metric is not None and valid_loader is None:
            raise ValueError(f"target_metric={config.target_metric!r} needs a valid_loader to evaluate on")
        self.config = config
        self.objective = _as_objective(objective)
        self.rank, self.world_size = setup_distributed()
        self.device = select_device(config.device)
        self.train_loader, self.valid_loader = train_loader, valid_loader
        self.position = RunPosition(train_loader, self.device, config.seed, self.rank, self.world_size)
        self.model = model.to(self.device)
        # The fused kernel updates every parameter in one pass: PyTorch's fastest AdamW on CPUs and GPUs.
        self.optimizer = torch.optim.AdamW(weight_decay_groups(model, config.weight_decay), lr=config.lr,
                                           betas=config.betas, eps=1e-9, fused=self.device.type in ("cpu", "cuda"))
        self.scheduler = self._schedule(done_steps=0)
        self.dtype = autocast_dtype(self.device, config.precision)
        scaled = self.dtype == torch.float16 and self.device.type == "cuda"
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=scaled)
        self.wrapped_model = self._wrap(model)
        self.step = 0
        self.history = History()

    def _schedule(self, done_steps: int) -> torch.optim.lr_scheduler.LambdaLR:
        """The learning rate of ``config``'s schedule, continuing after ``done_steps`` optimiser steps."""
        return torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda i: lr_factor(i + 1, self.config),
                                                 last_epoch=done_steps - 1)

    def _wrap(self, model: nn.Module) -> nn.Module:
        if self.world_size > 1:
            device_ids = [self.device.index] if self.device.type == "cuda" else None
            model = DistributedDataParallel(model, device_ids=device_ids)
        return torch.compile(model) if self.config.compile else model

    @property
    def is_main(self) -> bool:
        """True on the process that prints and writes files (rank 0)."""
        return self.rank == 0

    # one step

    def _autocast(self) -> contextlib.AbstractContextManager:
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.dtype)

    def train_step(self) -> float:
        """One optimiser step over ``accumulation_steps`` batches; returns the mean loss."""
        self.wrapped_model.train()
        self.optimizer.zero_grad(set_to_none=True)
        accumulate = self.config.accumulation_steps
        total = 0.0
        for micro in range(accumulate):
            last = micro == accumulate - 1
            sync = contextlib.nullcontext() if last or self.world_size == 1 else self.wrapped_model.no_sync()
            with sync:
                with self._autocast():
                    loss = self.objective.loss(self.wrapped_model, self.position.next_batch()) / accumulate
                self.scaler.scale(loss).backward()
            total += loss.item()
        if self.config.grad_clip is not None:
            self.scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        self.step += 1
        return self._mean_over_ranks(total)

    def _mean_over_ranks(self, value: float) -> float:
        if self.world_size == 1:
            return value
        tensor = torch.tensor([value], device=self.device)
        dist.all_reduce(tensor)
        return tensor.item() / self.world_size

    @torch.no_grad()
    def evaluate(self) -> dict[str, float]:
        """The objective's metrics on ``valid_loader`` (without touching the training RNG).

        Under data parallelism each process evaluates its shard and the metrics are averaged,
        so that every process takes the same early-stopping decision.
        """
        if self.valid_loader is None:
            return {}
        devices = [self.device] if self.device.type == "cuda" else []
        self.model.eval()
        with torch.random.fork_rng(devices=devices), self._autocast():
            metrics = self.objective.evaluate(self.model, self.valid_loader, self.device)
        self.model.train()
        return {name: self._mean_over_ranks(value) for name, value in metrics.items()}

    def _reached_target(self, metrics: dict[str, float]) -> bool:
        name, goal = self.config.target_metric, self.config.target_value
        if name is None:
            return False
        if name not in metrics:
            raise ValueError(f"target_metric {name!r} is not among the evaluated metrics {sorted(metrics)}")
        return metrics[name] <= goal if self.config.target_direction == "min" else metrics[name] >= goal

    # the loop

    def fit(self, stop_at: int | None = None,
            on_eval: Callable[[int, dict[str, float]], None] | None = None) -> History:
        """Train until ``config.max_steps`` (or until step ``stop_at``, to pause), evaluating and
        checkpointing as configured; return the history (also kept in ``self.history``).

        ``on_eval(step, metrics)`` is called after each evaluation (on every rank).
        """
        config = self.config
        stop = config.max_steps if stop_at is None else min(stop_at, config.max_steps)
        interactive = sys.stderr.isatty() if config.progress is None else config.progress
        bar = tqdm(total=config.max_steps, initial=self.step, disable=not (interactive and self.is_main),
                   desc="training", dynamic_ncols=True)
        start = time.perf_counter()
        while self.step < stop:
            lr = self.scheduler.get_last_lr()[0]
            loss = self.train_step()
            self.history.log_step(self.step, loss, lr)
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.4f}", lr=f"{lr:.2e}")
            at_end = self.step == config.max_steps
            if self.valid_loader is not None and (at_end or (config.eval_every and self.step % config.eval_every == 0)):
                metrics = self.evaluate()
                self.history.log_eval(self.step, metrics)
                if on_eval is not None:
                    on_eval(self.step, metrics)
                if self._reached_target(metrics):
                    self.history.stopped_early = not at_end
                    break
            if config.checkpoint_every and self.step % config.checkpoint_every == 0:
                self.save()
        bar.close()
        self.history.wall_time += time.perf_counter() - start
        self.save()
        return self.history

    # checkpoints

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly: weights, optimiser, scaler, position and RNG (:class:`RunPosition`);
        the schedule follows from the step."""
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scaler": self.scaler.state_dict(),
            **self.position.state_dict(),
            "step": self.step,
            "history": self.history.to_dict(),
            "config": asdict(self.config),
        }

    def save(self, path: str | os.PathLike | None = None) -> None:
        """Write a checkpoint to ``path`` (default ``config.checkpoint_path``; nothing if neither)."""
        path = path or self.config.checkpoint_path
        if path is None:
            return
        state = self.state_dict()  # every rank takes part in gathering the RNG states
        if self.is_main:
            save_checkpoint(state, path)

    def resume(self, path: str | os.PathLike) -> None:
        """Load a checkpoint written by :meth:`save`; the next :meth:`fit` continues from it."""
        state = load_checkpoint(path)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scaler.load_state_dict(state["scaler"])
        self.step = state["step"]
        self.position.load_state_dict(state)
        # The schedule is a function of the step and this run's config (which may train longer).
        self.scheduler = self._schedule(done_steps=self.step)
        self.history = History(**state["history"])


def fit(model: nn.Module, objective: Objective | LossFn, train_loader: DataLoader,
        valid_loader: DataLoader | None = None, config: TrainConfig | None = None,
        resume_from: str | os.PathLike | None = None, **config_fields: Any) -> History:
    """Train in one call: ``fit(model, Seq2SeqObjective(), train, valid, max_steps=500, lr=1e-3)``.

    Keyword arguments override fields of ``config`` (or of the default :class:`TrainConfig`).
    """
    base = asdict(config) if config is not None else {}
    trainer = Trainer(model, objective, TrainConfig(**{**base, **config_fields}), train_loader, valid_loader)
    if resume_from is not None:
        trainer.resume(resume_from)
    return trainer.fit()
