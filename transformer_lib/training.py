"""Training: one :class:`Trainer` for every model of the course, configured by :class:`TrainConfig`.

Model, data and training stay apart (as in Karpathy's minGPT): the trainer gets a model,
data loaders and a *task adapter* that knows how to turn a batch into a loss and how to
evaluate. Three adapters come with the library:

* :class:`Seq2SeqAdapter` - batches ``{"src" (B, S), "tgt" (B, T + 1)}``; teacher forcing
  (``tgt[:, :-1]`` in, ``tgt[:, 1:]`` predicted); evaluation decodes greedily and reports
  token accuracy and exact match;
* :class:`LMAdapter` - batches ``{"idx" (B, T), "targets" (B, T)}``; next-token loss;
* :class:`ClassifierAdapter` - batches ``{"src" (B, S), "label" (B,)}``; accuracy.

What the trainer does for you: device choice (CUDA, then Apple MPS, then CPU), mixed
precision, gradient accumulation and clipping, warm-up schedules, weight-decay groups,
evaluation every N steps with early stopping at a target, a progress bar, atomic
checkpoints that resume exactly, and data parallelism under ``torchrun``.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from tqdm import tqdm

from transformer_lib.data import BOS_ID, EOS_ID, PAD_ID
from transformer_lib.decoding import beam_search, greedy_decode
from transformer_lib.metrics import corpus_bleu, exact_match, token_accuracy
from transformer_lib.tasks import Seq2SeqTask

__all__ = [
    "TrainConfig",
    "History",
    "Trainer",
    "fit",
    "Seq2SeqAdapter",
    "LMAdapter",
    "ClassifierAdapter",
    "translation_scores",
    "select_device",
    "autocast_dtype",
    "lr_factor",
    "weight_decay_groups",
    "seed_everything",
    "setup_distributed",
    "save_checkpoint",
    "load_checkpoint",
]

SCHEDULES = ("inverse_sqrt", "cosine", "constant")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")


# --- configuration ------------------------------------------------------------------------------

@dataclass
class TrainConfig:
    """Every knob of a training run. Checked when created: a bad value raises ``ValueError``.

    ``lr`` is the peak learning rate, reached after ``warmup_steps``. ``max_steps`` counts
    optimiser steps; each consumes ``accumulation_steps`` batches. ``eval_every=0`` evaluates
    only at the end. Training stops early once ``target_metric`` reaches ``target_value``
    (at most it for metrics whose name contains ``"loss"``, at least it otherwise).
    """

    max_steps: int = 1000
    lr: float = 1e-3
    schedule: str = "inverse_sqrt"
    warmup_steps: int = 100
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.98)
    grad_clip: float | None = 1.0
    accumulation_steps: int = 1
    label_smoothing: float = 0.0
    device: str = "auto"
    precision: str = "auto"
    compile: bool = False
    seed: int = 0
    eval_every: int = 0
    target_metric: str | None = None
    target_value: float | None = None
    checkpoint_path: str | None = None
    checkpoint_every: int = 0
    progress: bool | None = None  # None: a bar only when stderr is a terminal

    def __post_init__(self) -> None:
        def need(ok: bool, what: str, got: Any) -> None:
            if not ok:
                raise ValueError(f"TrainConfig.{what}, got {got!r}")

        need(isinstance(self.max_steps, int) and self.max_steps >= 1, "max_steps must be an integer >= 1", self.max_steps)
        need(self.lr > 0, "lr must be > 0", self.lr)
        need(self.schedule in SCHEDULES, f"schedule must be one of {SCHEDULES}", self.schedule)
        need(isinstance(self.warmup_steps, int) and self.warmup_steps >= (self.schedule == "inverse_sqrt"),
             "warmup_steps must be an integer >= 0 (>= 1 for inverse_sqrt)", self.warmup_steps)
        need(self.weight_decay >= 0, "weight_decay must be >= 0", self.weight_decay)
        need(len(self.betas) == 2 and all(0 <= b < 1 for b in self.betas), "betas must be two numbers in [0, 1)", self.betas)
        need(self.grad_clip is None or self.grad_clip > 0, "grad_clip must be > 0 or None", self.grad_clip)
        need(isinstance(self.accumulation_steps, int) and self.accumulation_steps >= 1,
             "accumulation_steps must be an integer >= 1", self.accumulation_steps)
        need(0 <= self.label_smoothing < 1, "label_smoothing must be in [0, 1)", self.label_smoothing)
        need(self.precision in PRECISIONS, f"precision must be one of {PRECISIONS}", self.precision)
        need(self.eval_every >= 0 and self.checkpoint_every >= 0, "eval_every and checkpoint_every must be >= 0",
             (self.eval_every, self.checkpoint_every))
        need((self.target_metric is None) == (self.target_value is None),
             "target_metric and target_value must be given together", (self.target_metric, self.target_value))
        if self.device != "auto":
            try:
                torch.device(self.device)
            except RuntimeError:
                need(False, "device must be 'auto' or a torch device such as 'cpu', 'cuda', 'cuda:1', 'mps'", self.device)


# --- devices, precision, schedules, parameter groups --------------------------------------------

def select_device(requested: str = "auto") -> torch.device:
    """``"auto"``: CUDA if available, then Apple MPS, then CPU. Otherwise the named device, if present.

    Under ``torchrun`` with CUDA, each process takes ``cuda:LOCAL_RANK``.
    """
    if requested == "auto":
        if torch.cuda.is_available():
            requested = "cuda"
        elif torch.backends.mps.is_available():
            requested = "mps"
        else:
            requested = "cpu"
    device = torch.device(requested)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device {requested!r} was asked for, but CUDA is not available")
        if device.index is None:
            device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device {requested!r} was asked for, but Apple MPS is not available")
    return device


def autocast_dtype(device: torch.device, precision: str = "auto") -> torch.dtype | None:
    """The autocast dtype for ``precision`` on ``device``, or ``None`` for full fp32.

    ``"auto"`` is bf16 on CUDA where the GPU supports it, else fp16 (trained with a gradient
    scaler), and fp32 elsewhere. ``"bf16"`` also runs on the CPU (slowly on most CPUs).
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if precision == "auto":
        if device.type != "cuda":
            return None
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]


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


def seed_everything(seed: int) -> None:
    """Seed Python's and PyTorch's generators (CPU and every GPU)."""
    random.seed(seed)
    torch.manual_seed(seed)


def setup_distributed() -> tuple[int, int]:
    """Join the process group ``torchrun`` prepared, if any; return ``(rank, world_size)``.

    Uses NCCL on GPUs and gloo on CPUs. Without ``torchrun`` (no ``WORLD_SIZE`` > 1 in the
    environment) it does nothing and returns ``(0, 1)``.
    """
    if int(os.environ.get("WORLD_SIZE", 1)) <= 1:
        return 0, 1
    if not dist.is_initialized():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        if backend == "nccl":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
        dist.init_process_group(backend)
    return dist.get_rank(), dist.get_world_size()


# --- checkpoints --------------------------------------------------------------------------------

def save_checkpoint(state: dict[str, Any], path: str | os.PathLike) -> None:
    """Write ``state`` with ``torch.save`` atomically: to a temporary file, then rename.

    ``os.replace`` is atomic, so a reader (or a crash half-way) sees the old complete file or
    the new complete file, never a torn one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint` (tensors land on the CPU)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {str(path)!r}")
    return torch.load(path, map_location="cpu", weights_only=True)


# --- task adapters ------------------------------------------------------------------------------

class TaskAdapter(Protocol):
    """Turns a batch into a loss, and a loader into metrics."""

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor: ...

    def evaluate(self, model: nn.Module, loader: DataLoader, device: torch.device) -> dict[str, float]: ...


def _to(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def _cross_entropy(logits: torch.Tensor, targets: torch.Tensor, label_smoothing: float, ignore_index: int) -> torch.Tensor:
    """Mean token cross-entropy of logits ``(B, T, n_vocab)`` against ids ``(B, T)``.

    Label smoothing (Vaswani et al. 2017, section 5.4, after Szegedy et al. 2016) spreads
    ``label_smoothing`` of the target's probability over the whole vocabulary.
    """
    return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(), ignore_index=ignore_index,
                           label_smoothing=label_smoothing)


class MeanLossEvaluation:
    """Evaluation that reports the mean of ``self.loss`` over the loader's batches."""

    def evaluate(self, model: nn.Module, loader: DataLoader, device: torch.device) -> dict[str, float]:
        losses = [self.loss(model, _to(batch, device)).item() for batch in loader]
        return {"valid_loss": sum(losses) / len(losses)}


@dataclass
class LossOnlyAdapter(MeanLossEvaluation):
    """Wraps a plain ``loss_fn(model, batch) -> loss``."""

    loss_fn: Callable[[nn.Module, dict[str, torch.Tensor]], torch.Tensor]

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.loss_fn(model, batch)


@dataclass
class Seq2SeqAdapter:
    """Encoder-decoder training with teacher forcing; evaluation by greedy decoding.

    ``model(src (B, S), tgt_in (B, T)) -> logits (B, T, n_vocab)``. For evaluation the model
    either keeps the encoder-decoder protocol (``encode``/``decode``, see
    :mod:`transformer_lib.decoding`) or has ``generate(src, max_len, bos_id, eos_id)``.
    """

    label_smoothing: float = 0.0
    pad_id: int = PAD_ID

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        tgt = batch["tgt"]
        logits = model(batch["src"], tgt[:, :-1])
        return _cross_entropy(logits, tgt[:, 1:], self.label_smoothing, self.pad_id)

    def decode(self, model: nn.Module, src: torch.Tensor, max_len: int) -> torch.Tensor:
        """Greedy outputs ``(B, L)`` (without ``<bos>``) of either kind of model."""
        if hasattr(model, "decode"):
            return greedy_decode(model, src, max_len)
        return model.generate(src, max_len=max_len, bos_id=BOS_ID, eos_id=EOS_ID)

    def evaluate(self, model: nn.Module, loader: DataLoader, device: torch.device) -> dict[str, float]:
        total = {"valid_loss": 0.0, "token_accuracy": 0.0, "exact_match": 0.0}
        n = 0
        for batch in loader:
            batch = _to(batch, device)
            reference = batch["tgt"][:, 1:]
            predicted = self.decode(model, batch["src"], max_len=reference.shape[1] + 2)
            rows = len(reference)
            total["valid_loss"] += rows * self.loss(model, batch).item()
            total["token_accuracy"] += rows * token_accuracy(predicted, reference, self.pad_id)
            total["exact_match"] += rows * exact_match(predicted, reference, self.pad_id)
            n += rows
        return {name: value / n for name, value in total.items()}


@dataclass
class LMAdapter(MeanLossEvaluation):
    """Next-token prediction: ``model(idx (B, T)) -> logits (B, T, n_vocab)``."""

    label_smoothing: float = 0.0

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return _cross_entropy(model(batch["idx"]), batch["targets"], self.label_smoothing, -100)


@dataclass
class ClassifierAdapter:
    """Sequence classification: ``model(src (B, S)) -> logits (B, n_classes)``; reports accuracy."""

    label_smoothing: float = 0.0

    def loss(self, model: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return F.cross_entropy(model(batch["src"]).float(), batch["label"], label_smoothing=self.label_smoothing)

    def evaluate(self, model: nn.Module, loader: DataLoader, device: torch.device) -> dict[str, float]:
        correct = loss = n = 0
        for batch in loader:
            batch = _to(batch, device)
            logits = model(batch["src"])
            loss += F.cross_entropy(logits.float(), batch["label"], reduction="sum").item()
            correct += (logits.argmax(-1) == batch["label"]).sum().item()
            n += len(batch["label"])
        return {"valid_loss": loss / n, "accuracy": correct / n}


@torch.no_grad()
def translation_scores(model: nn.Module, task: Seq2SeqTask, split: str = "test", device: torch.device | None = None,
                       batch_size: int = 250, beam_size: int = 1, alpha: float = 0.6) -> dict[str, float]:
    """Exact match, token accuracy and corpus BLEU of decoded outputs on one split of ``task``.

    Greedy decoding (``beam_size=1``) works for both kinds of model of
    :class:`Seq2SeqAdapter`; beam search (``beam_size > 1``, length penalty ``alpha`` as in
    :func:`~transformer_lib.decoding.beam_search`) needs the encoder-decoder protocol. BLEU is computed
    on tokens separated by spaces, so it is a character BLEU for the character-level tasks.
    """
    device = device or next(model.parameters()).device
    model.eval()
    loader = task.loader(split, min(batch_size, len(task.split(split))), shuffle=False)
    hypotheses, references = [], []
    scores = {"exact_match": 0.0, "token_accuracy": 0.0}
    for batch in loader:
        src, reference = batch["src"].to(device), batch["tgt"][:, 1:].to(device)
        max_len = reference.shape[1] + 2
        if beam_size == 1:
            predicted = Seq2SeqAdapter().decode(model, src, max_len)
        else:
            predicted = beam_search(model, src, max_len, beam_size=beam_size, alpha=alpha)
        scores["exact_match"] += len(src) * exact_match(predicted, reference)
        scores["token_accuracy"] += len(src) * token_accuracy(predicted, reference)
        hypotheses += [" ".join(task.tokens(row)) for row in predicted.cpu()]
        references += [" ".join(task.tokens(row)) for row in reference.cpu()]
    result = {name: total / len(hypotheses) for name, total in scores.items()}
    return {**result, "bleu": corpus_bleu(hypotheses, references)}


ADAPTERS: dict[str, type] = {"seq2seq": Seq2SeqAdapter, "lm": LMAdapter, "classify": ClassifierAdapter}


def _adapter(task: str | TaskAdapter | Callable, config: TrainConfig) -> TaskAdapter:
    if isinstance(task, str):
        if task not in ADAPTERS:
            raise ValueError(f"unknown task type {task!r}; expected one of {sorted(ADAPTERS)}, an adapter or a loss function")
        return ADAPTERS[task](label_smoothing=config.label_smoothing)
    if hasattr(task, "loss") and hasattr(task, "evaluate"):
        return task
    if callable(task):
        return LossOnlyAdapter(task)
    raise TypeError(f"task must be a task type name, an adapter or a loss function, got {type(task).__name__}")


# --- history ------------------------------------------------------------------------------------

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


# --- the trainer --------------------------------------------------------------------------------

class Trainer:
    """Trains ``model`` on ``train_loader`` as ``config`` says; :meth:`fit` returns a :class:`History`.

    Args:
        model: any ``nn.Module``; the adapter decides how it is called.
        config: a :class:`TrainConfig`.
        train_loader: a ``DataLoader`` (or any sized iterable) of dict batches; for exact
            resumption its sampler should have ``set_epoch`` (as
            :class:`~transformer_lib.data.BucketBatchSampler` and ``DistributedSampler`` do),
            which the trainer calls at each epoch.
        valid_loader: evaluated every ``config.eval_every`` steps and at the end.
        task: ``"seq2seq"``, ``"lm"``, ``"classify"``, an adapter (``loss`` and ``evaluate``
            methods) or a bare ``loss_fn(model, batch) -> loss``.

    Creating a trainer seeds the global generators with ``config.seed`` (plus the process
    rank), so dropout and data order are the same on every run; seed before building the
    model (:func:`seed_everything`) to make its initial weights reproducible too.
    """

    def __init__(self, model: nn.Module, config: TrainConfig, train_loader: DataLoader,
                 valid_loader: DataLoader | None = None, task: str | TaskAdapter | Callable = "seq2seq") -> None:
        if not isinstance(config, TrainConfig):
            raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
        if len(train_loader) == 0:
            raise ValueError("train_loader yields no batches (is batch_size larger than the data with drop_last?)")
        if config.target_metric is not None and valid_loader is None:
            raise ValueError(f"target_metric={config.target_metric!r} needs a valid_loader to evaluate on")
        self.config = config
        self.rank, self.world_size = setup_distributed()
        self.device = select_device(config.device)
        self.adapter = _adapter(task, config)
        self.train_loader, self.valid_loader = train_loader, valid_loader
        seed_everything(config.seed + self.rank)
        self.module = model.to(self.device)  # the bare model: saved, evaluated, decoded
        self.optimizer = torch.optim.AdamW(weight_decay_groups(model, config.weight_decay), lr=config.lr,
                                           betas=config.betas, eps=1e-9)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda i: lr_factor(i + 1, config))
        self.dtype = autocast_dtype(self.device, config.precision)
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=self.dtype == torch.float16 and self.device.type == "cuda")
        self.model = self._wrap(model)  # what the training step calls
        self.step, self.epoch, self.batch_in_epoch = 0, 0, 0
        self.history = History()
        self._batches: Iterator | None = None

    def _wrap(self, model: nn.Module) -> nn.Module:
        if self.world_size > 1:
            model = DistributedDataParallel(model, device_ids=[self.device.index] if self.device.type == "cuda" else None)
        return torch.compile(model) if self.config.compile else model

    @property
    def is_main(self) -> bool:
        """True on the process that prints and writes files (rank 0)."""
        return self.rank == 0

    # data order, resumable

    def _start_epoch(self) -> Iterator:
        for name in ("batch_sampler", "sampler"):
            holder = getattr(self.train_loader, name, None)
            if hasattr(holder, "set_epoch"):
                holder.set_epoch(self.epoch)
        # Creating a DataLoader iterator draws a seed from the global generator; fork it so
        # that a resumed run, which creates one more iterator, draws the same dropout masks.
        with torch.random.fork_rng(devices=[]):
            batches = iter(self.train_loader)
            for _ in range(self.batch_in_epoch):
                next(batches)
        return batches

    def _next_batch(self) -> dict[str, torch.Tensor]:
        if self._batches is None:
            self._batches = self._start_epoch()
        batch = next(self._batches, None)
        if batch is None:
            self.epoch, self.batch_in_epoch = self.epoch + 1, 0
            self._batches = self._start_epoch()
            batch = next(self._batches)
        self.batch_in_epoch += 1
        return _to(batch, self.device)

    # one step

    def _autocast(self) -> contextlib.AbstractContextManager:
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.dtype)

    def train_step(self) -> float:
        """One optimiser step over ``accumulation_steps`` batches; returns the mean loss."""
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        accumulate = self.config.accumulation_steps
        total = 0.0
        for micro in range(accumulate):
            last = micro == accumulate - 1
            sync = contextlib.nullcontext() if last or self.world_size == 1 else self.model.no_sync()
            with sync:
                with self._autocast():
                    loss = self.adapter.loss(self.model, self._next_batch()) / accumulate
                self.scaler.scale(loss).backward()
            total += loss.item()
        if self.config.grad_clip is not None:
            self.scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.module.parameters(), self.config.grad_clip)
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
        """The adapter's metrics on ``valid_loader`` (without touching the training RNG).

        Under data parallelism each process evaluates its shard and the metrics are averaged,
        so that every process takes the same early-stopping decision.
        """
        if self.valid_loader is None:
            return {}
        devices = [self.device] if self.device.type == "cuda" else []
        self.module.eval()
        with torch.random.fork_rng(devices=devices), self._autocast():
            metrics = self.adapter.evaluate(self.module, self.valid_loader, self.device)
        self.module.train()
        return {name: self._mean_over_ranks(value) for name, value in metrics.items()}

    def _reached_target(self, metrics: dict[str, float]) -> bool:
        name, goal = self.config.target_metric, self.config.target_value
        if name is None:
            return False
        if name not in metrics:
            raise ValueError(f"target_metric {name!r} is not among the evaluated metrics {sorted(metrics)}")
        return metrics[name] <= goal if "loss" in name else metrics[name] >= goal

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
        """Everything needed to continue exactly: weights, optimiser, schedule, scaler, RNG, position."""
        return {
            "model": self.module.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "rng": self._rng_state(),
            "step": self.step,
            "epoch": self.epoch,
            "batch_in_epoch": self.batch_in_epoch,
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
        self.module.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.scaler.load_state_dict(state["scaler"])
        self.step, self.epoch, self.batch_in_epoch = state["step"], state["epoch"], state["batch_in_epoch"]
        self.history = History(**state["history"])
        ranks = state["rng"]["ranks"]
        rng = ranks[self.rank] if self.rank < len(ranks) else ranks[0]
        random.setstate(rng["python"])
        torch.set_rng_state(rng["torch"])
        if "cuda" in rng and self.device.type == "cuda":
            torch.cuda.set_rng_state(rng["cuda"], self.device)
        self._batches = None


def fit(model: nn.Module, train_loader: DataLoader, valid_loader: DataLoader | None = None,
        task: str | TaskAdapter | Callable = "seq2seq", config: TrainConfig | None = None,
        resume_from: str | os.PathLike | None = None, **config_fields: Any) -> History:
    """Train in one call: ``fit(model, train, valid, "seq2seq", max_steps=500, lr=1e-3)``.

    Keyword arguments override fields of ``config`` (or of the default :class:`TrainConfig`).
    """
    base = asdict(config) if config is not None else {}
    trainer = Trainer(model, TrainConfig(**{**base, **config_fields}), train_loader, valid_loader, task)
    if resume_from is not None:
        trainer.resume(resume_from)
    return trainer.fit()
