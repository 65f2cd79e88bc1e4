"""Batching: padding, length-bucketed batches, loaders of pairs and of language-model windows.

Examples are lists of token ids. A translation-style example is a pair ``(src, tgt)``
of id lists without special tokens; :func:`collate_pairs` pads the sources and
wraps each target as ``<bos> tgt <eos>``, so a batch is::

    {"src": (B, S) ids, "tgt": (B, T + 1) ids}   # tgt[:, :-1] is fed in, tgt[:, 1:] predicted

A language-modelling example is a window of a long id stream; its batch is
``{"idx": (B, T), "targets": (B, T)}`` with ``targets`` shifted by one.

Special ids are fixed across the library: ``<pad>`` = 0, ``<bos>`` = 1, ``<eos>`` = 2,
``<unk>`` = 3.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from functools import partial

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, Sampler

from transformer_lib.tokens import BOS, EOS, PAD, SPECIAL_TOKENS, UNK, pad_batch

__all__ = [
    "PAD_ID",
    "BOS_ID",
    "EOS_ID",
    "UNK_ID",
    "collate_pairs",
    "collate_lm",
    "BucketBatchSampler",
    "pair_loader",
    "LMWindows",
    "RandomOffsetBatchSampler",
    "lm_loader",
]

Pair = tuple[list[int], list[int]]

#: The fixed special ids of :class:`~transformer_lib.tokens.Vocab` (pad 0, bos 1, eos 2, unk 3).
PAD_ID, BOS_ID, EOS_ID, UNK_ID = (SPECIAL_TOKENS.index(t) for t in (PAD, BOS, EOS, UNK))


def collate_pairs(pairs: Sequence[Pair], pad_id: int = PAD_ID) -> dict[str, torch.Tensor]:
    """Pad a list of ``(src, tgt)`` pairs into ``{"src": (B, S), "tgt": (B, T + 1)}``.

    ``tgt`` rows are ``<bos> tokens <eos>`` followed by padding.
    """
    src, _ = pad_batch([p[0] for p in pairs], pad_id)
    tgt, _ = pad_batch([[BOS_ID, *p[1], EOS_ID] for p in pairs], pad_id)
    return {"src": src, "tgt": tgt}


def collate_lm(windows: Sequence[torch.Tensor]) -> dict[str, torch.Tensor]:
    """Stack windows of ``T + 1`` ids into ``{"idx": (B, T), "targets": (B, T)}``."""
    block = torch.stack(list(windows))
    return {"idx": block[:, :-1], "targets": block[:, 1:]}


def _world() -> tuple[int, int]:
    """``(num_replicas, rank)`` of the running process group, ``(1, 0)`` without one."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


class BucketBatchSampler(Sampler[list[int]]):
    """Yields batches of indices whose examples have similar lengths (less padding).

    Each epoch the indices are shuffled with ``seed + epoch``, cut into pools of
    ``pool_batches`` batches, each pool is sorted by length and cut into batches,
    and the batch order is shuffled again. Call :meth:`set_epoch` before each epoch
    (the trainer does), which makes the order reproducible and resumable.

    Under data parallelism each of ``num_replicas`` processes takes every
    ``num_replicas``-th batch, and all take the same number of batches.
    """

    def __init__(
        self,
        lengths: Sequence[int],
        batch_size: int,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
        pool_batches: int = 50,
        num_replicas: int | None = None,
        rank: int | None = None,
    ) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
        if batch_size > len(lengths):
            raise ValueError(
                f"batch_size ({batch_size}) is larger than the data ({len(lengths)} examples)"
            )
        self.num_replicas, self.rank = num_replicas, rank  # None: the process group's, when iterating
        self.lengths = list(lengths)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.pool_batches = pool_batches
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Choose the epoch whose order the next iteration yields."""
        self.epoch = epoch

    def _all_batches(self) -> list[list[int]]:
        order = list(range(len(self.lengths)))
        rng = random.Random(self.seed + self.epoch)
        if self.shuffle:
            rng.shuffle(order)
        pool = self.batch_size * self.pool_batches
        batches = []
        for start in range(0, len(order), pool):
            chunk = sorted(order[start : start + pool], key=self.lengths.__getitem__)
            batches += [chunk[i : i + self.batch_size] for i in range(0, len(chunk), self.batch_size)]
        if self.drop_last:
            batches = [b for b in batches if len(b) == self.batch_size]
        if self.shuffle:
            rng.shuffle(batches)
        return batches

    def _replicas(self) -> tuple[int, int]:
        world, rank = _world()
        return world if self.num_replicas is None else self.num_replicas, rank if self.rank is None else self.rank

    def __iter__(self) -> Iterator[list[int]]:
        batches = self._all_batches()
        world, rank = self._replicas()
        return iter(batches[rank::world][: len(batches) // world])

    def __len__(self) -> int:
        return len(self._all_batches()) // self._replicas()[0]


def _make_loader(dataset: Sequence, lengths: Sequence[int], batch_size: int, collate: Callable,
                 shuffle: bool, seed: int) -> DataLoader:
    sampler = BucketBatchSampler(lengths, batch_size, shuffle=shuffle, seed=seed)
    return DataLoader(dataset, batch_sampler=sampler, collate_fn=collate)


def pair_loader(
    pairs: Sequence[Pair], batch_size: int, shuffle: bool = True, seed: int = 0, pad_id: int = PAD_ID
) -> DataLoader:
    """A loader of padded ``{"src", "tgt"}`` batches, bucketed by source length."""
    lengths = [len(src) + len(tgt) for src, tgt in pairs]
    return _make_loader(list(pairs), lengths, batch_size, partial(collate_pairs, pad_id=pad_id), shuffle, seed)


class LMWindows(Dataset):
    """Windows of ``block_size + 1`` ids cut from a 1-D id stream.

    Index ``i`` is the ``i``-th non-overlapping window (it starts at ``i * block_size``), so a
    plain loader covers every prediction of the stream exactly once, as evaluation needs;
    :meth:`at` cuts a window at any offset, as :class:`RandomOffsetBatchSampler` asks for.
    """

    def __init__(self, ids: torch.Tensor, block_size: int) -> None:
        if ids.dim() != 1:
            raise ValueError(f"ids must be a 1-D stream of token ids, got shape {tuple(ids.shape)}")
        if block_size <= 0 or len(ids) < block_size + 1:
            raise ValueError(
                f"block_size must be in [1, {len(ids) - 1}] for a stream of {len(ids)} ids, got {block_size}"
            )
        self.ids = ids
        self.block_size = block_size

    def __len__(self) -> int:
        return (len(self.ids) - 1) // self.block_size

    def __getitem__(self, i: int) -> torch.Tensor:
        return self.at(i * self.block_size)

    @property
    def offsets(self) -> int:
        """How many windows of ``block_size + 1`` the stream holds at all offsets."""
        return len(self.ids) - self.block_size

    def at(self, offset: int) -> torch.Tensor:
        """The window ``ids[offset : offset + block_size + 1]``."""
        return self.ids[offset : offset + self.block_size + 1]


class _WindowsAt(Dataset):
    """:class:`LMWindows` indexed by offset: what a loader with :class:`RandomOffsetBatchSampler` reads."""

    def __init__(self, windows: LMWindows) -> None:
        self.windows = windows

    def __len__(self) -> int:
        return self.windows.offsets

    def __getitem__(self, offset: int) -> torch.Tensor:
        return self.windows.at(offset)


class RandomOffsetBatchSampler(Sampler[list[int]]):
    """Batches of window offsets drawn uniformly at random from ``0 .. offsets - 1``, with replacement.

    Training on non-overlapping windows shows the model each character at one position of its
    window only, the same one in every epoch; windows that start anywhere show it at every position
    (as nanoGPT's ``get_batch`` does). An epoch is ``len(self)`` batches: as many windows as the
    stream holds without overlap, dropping the last partial batch. Its offsets come from a
    generator seeded with ``seed + epoch``, so :meth:`set_epoch` (which the trainer calls) makes
    the order reproducible and resumable. Under data parallelism each process draws from its own
    ``seed + epoch + rank * 10007``, so the replicas see different windows.
    """

    def __init__(self, offsets: int, windows_per_epoch: int, batch_size: int, seed: int = 0,
                 rank: int | None = None) -> None:
        if batch_size <= 0 or windows_per_epoch < batch_size or offsets <= 0:
            raise ValueError(f"need offsets > 0 and 0 < batch_size <= windows_per_epoch, got offsets={offsets}, "
                             f"batch_size={batch_size}, windows_per_epoch={windows_per_epoch}")
        self.offsets, self.batch_size, self.seed, self.rank = offsets, batch_size, seed, rank
        self.batches = windows_per_epoch // batch_size
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Choose the epoch whose offsets the next iteration yields."""
        self.epoch = epoch

    def __iter__(self) -> Iterator[list[int]]:
        rank = _world()[1] if self.rank is None else self.rank
        generator = torch.Generator().manual_seed(self.seed + self.epoch + rank * 10007)
        drawn = torch.randint(self.offsets, (self.batches, self.batch_size), generator=generator)
        return iter(drawn.tolist())

    def __len__(self) -> int:
        return self.batches


def lm_loader(ids: torch.Tensor, block_size: int, batch_size: int, shuffle: bool = True, seed: int = 0,
              random_offsets: bool = False) -> DataLoader:
    """A loader of ``{"idx": (B, T), "targets": (B, T)}`` windows of a 1-D id stream.

    By default the non-overlapping windows (shuffled or in order); with ``random_offsets=True``
    windows that start anywhere in the stream (:class:`RandomOffsetBatchSampler`, for training).
    """
    windows = LMWindows(ids, block_size)
    if random_offsets:
        sampler = RandomOffsetBatchSampler(windows.offsets, len(windows), batch_size, seed)
        return DataLoader(_WindowsAt(windows), batch_sampler=sampler, collate_fn=collate_lm)
    return _make_loader(windows, [block_size] * len(windows), batch_size, collate_lm, shuffle, seed)
