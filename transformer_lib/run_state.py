"""What a run produced (:class:`History`) and where it stands in its data and random streams
(:class:`RunPosition`): the two pieces of a training run that a checkpoint saves besides the
weights and the optimizer, kept apart from the loop in :mod:`transformer_lib.trainer`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader

from transformer_lib.runtime import seed_everything, to_device

__all__ = ["Batch", "History", "RunPosition"]

Batch = dict[str, torch.Tensor]


@dataclass
class History:
    """What a run produced: the loss and learning rate of every step, and every evaluation."""

    steps: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    eval_steps: list[int] = field(default_factory=list)
    metrics: dict[str, list[float]] = field(default_factory=dict)
    stopped_early: bool = False
    wall_time: float = 0.0

    def log_step(self, step: int, loss: float, lr: float) -> None:
        self.steps.append(step)
        self.loss.append(loss)
        self.lr.append(lr)

    def log_eval(self, step: int, metrics: dict[str, float]) -> None:
        self.eval_steps.append(step)
        for name, value in metrics.items():
            self.metrics.setdefault(name, []).append(value)

    def last(self, name: str) -> float:
        """The latest value of an evaluation metric."""
        if name not in self.metrics:
            raise KeyError(f"no metric {name!r} in the history; it has {sorted(self.metrics)}")
        return self.metrics[name][-1]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class RunPosition:
    """Where a run stands in its data and its random streams: what a checkpoint needs to continue exactly.

    It hands out the training batches (epoch after epoch, calling the sampler's ``set_epoch``) and
    counts them, and it owns the generators' states. Dropout, ``DataLoader`` shuffling and
    iterators draw from PyTorch's and Python's *global* generators (PyTorch has no generator per
    module), so a run that is to be reproducible and resumable has to set them: it starts them at
    ``seed`` (plus the process rank, so that data-parallel processes draw different dropout
    masks) and :meth:`load_state_dict` puts back the states a checkpoint saved.
    """

    def __init__(self, loader: DataLoader, device: torch.device, seed: int, rank: int = 0, world_size: int = 1) -> None:
        self.loader, self.device, self.rank, self.world_size = loader, device, rank, world_size
        self.epoch, self.batch_in_epoch = 0, 0
        self._batches: Iterator | None = None
        seed_everything(seed + rank)

    def _start_epoch(self) -> Iterator:
        for name in ("batch_sampler", "sampler"):
            holder = getattr(self.loader, name, None)
            if hasattr(holder, "set_epoch"):
                holder.set_epoch(self.epoch)
        # Creating a DataLoader iterator draws a seed from the global generator; fork it so
        # that a resumed run, which creates one more iterator, draws the same dropout masks.
        with torch.random.fork_rng(devices=[]):
            batches = iter(self.loader)
            for _ in range(self.batch_in_epoch):
                next(batches)
        return batches

    def next_batch(self) -> Batch:
        """The next training batch, on the device (a new epoch starts when the loader runs out)."""
        if self._batches is None:
            self._batches = self._start_epoch()
        batch = next(self._batches, None)
        if batch is None:
            self.epoch, self.batch_in_epoch = self.epoch + 1, 0
            self._batches = self._start_epoch()
            batch = next(self._batches)
        self.batch_in_epoch += 1
        return to_device(batch, self.device)

    def _rng_state(self) -> dict[str, Any]:
        state = {"python": random.getstate(), "torch": torch.get_rng_state()}
        if self.device.type == "cuda":
            state["cuda"] = torch.cuda.get_rng_state(self.device)
        if self.world_size == 1:
            return {"ranks": [state]}
        every = [None] * self.world_size
        dist.all_gather_object(every, state)
        return {"ranks": every}

    def state_dict(self) -> dict[str, Any]:
        """``epoch``, ``batch_in_epoch`` and ``rng`` (every rank's generator states)."""
        return {"rng": self._rng_state(), "epoch": self.epoch, "batch_in_epoch": self.batch_in_epoch}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state`` (:meth:`state_dict`'s keys; a checkpoint's other keys are ignored)."""
        self.epoch, self.batch_in_epoch = state["epoch"], state["batch_in_epoch"]
        ranks = state["rng"]["ranks"]
        rng = ranks[self.rank] if self.rank < len(ranks) else ranks[0]
        random.setstate(rng["python"])
        torch.set_rng_state(rng["torch"])
        if "cuda" in rng and self.device.type == "cuda":
            torch.cuda.set_rng_state(rng["cuda"], self.device)
        self._batches = None
