"""The runtime around training: where it runs, in which precision, with which seeds, on how many
processes, and how its state is written to disk.

Nothing here knows about models, tasks or the training loop; :mod:`transformer_lib.trainer` uses all
of it, and a notebook can use any piece alone (``select_device()`` to place a model, say).
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

__all__ = [
    "select_device",
    "autocast_dtype",
    "seed_everything",
    "setup_distributed",
    "save_checkpoint",
    "load_checkpoint",
    "to_device",
]

PRECISIONS = ("auto", "fp32", "bf16", "fp16")


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


def to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    """The batch's tensors moved to ``device`` (asynchronously from pinned memory)."""
    return {name: tensor.to(device, non_blocking=True) for name, tensor in batch.items()}


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
