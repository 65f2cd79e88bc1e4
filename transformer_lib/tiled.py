"""Exact attention in tiles, with the online softmax (chapter 11; the idea of FlashAttention).

``softmax(Q K^T / sqrt(d_k)) V`` written the obvious way builds the ``T x S`` score matrix: its
memory grows with the square of the length. Milakov and Gimelshein (2018) showed that a softmax
can be computed in one pass over its inputs, keeping only a running maximum ``m`` and a running
sum ``l`` of ``exp(score - m)``, rescaling both whenever the maximum grows. Dao et al. (2022,
FlashAttention) apply the same rescaling to the weighted sum of the values: a block of queries
visits the keys one block at a time and never holds more than one ``block x block`` tile of
scores. The result is the same attention, exactly (up to rounding), with memory that no longer
grows with ``T x S``. FlashAttention's speed comes from doing this inside one GPU kernel, in fast
on-chip memory; this plain PyTorch version shows the algorithm and its memory, not that speed.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from .attention import _check_qkv

__all__ = ["tiled_attention"]


def tiled_attention(
    query: Tensor, key: Tensor, value: Tensor, *, is_causal: bool = False, block_size: int = 64
) -> tuple[Tensor, None]:
    """``softmax(Q K^T / sqrt(d_k)) V`` one ``block_size x block_size`` tile of scores at a time.

    Args:
        query: ``(..., T, d_k)``, e.g. ``(B, h, T, d_k)``.
        key: ``(..., S, d_k)``.
        value: ``(..., S, d_v)``.
        is_causal: query ``t`` attends keys ``0..t`` only (top-left aligned, as in PyTorch);
            tiles entirely above the diagonal are skipped, never computed.
        block_size: queries and keys per tile.

    Returns:
        ``(output, None)``: output ``(..., T, d_v)``; the weights are never formed.
        Besides the output, each block of queries holds ``O(block_size * (block_size + d_v))``
        numbers, whatever ``T`` and ``S``.
    """
    _check_qkv(query, key, value)
    if not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    T, S = query.size(-2), key.size(-2)
    if is_causal and S < T:
        raise ValueError(f"a causal tiled attention needs S >= T so that every query sees a key, got T={T}, S={S}")
    scale = 1.0 / math.sqrt(query.size(-1))
    outputs = []
    for q_start in range(0, T, block_size):
        q = query[..., q_start : q_start + block_size, :] * scale  # (..., b, d_k)
        rows = q.size(-2)
        running_max = q.new_full((*q.shape[:-1], 1), float("-inf"))  # m: (..., b, 1)
        running_sum = q.new_zeros((*q.shape[:-1], 1))  # l = sum of exp(score - m)
        acc = q.new_zeros((*q.shape[:-1], value.size(-1)))  # sum of exp(score - m) * v: (..., b, d_v)
        k_stop = min(S, q_start + rows) if is_causal else S
        for k_start in range(0, k_stop, block_size):
            k = key[..., k_start : k_start + block_size, :]
            scores = q @ k.transpose(-2, -1)  # (..., b, b_k): the only tile of scores alive
            if is_causal and k_start + k.size(-2) > q_start + 1:  # the tile crosses the diagonal
                query_pos = torch.arange(q_start, q_start + rows, device=q.device)[:, None]
                key_pos = torch.arange(k_start, k_start + k.size(-2), device=q.device)
                scores = scores.masked_fill(key_pos > query_pos, float("-inf"))
            new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))
            rescale = torch.exp(running_max - new_max)  # shrink what was summed with the old maximum
            p = torch.exp(scores - new_max)
            running_sum = running_sum * rescale + p.sum(dim=-1, keepdim=True)
            acc = acc * rescale + p @ value[..., k_start : k_start + block_size, :]
            running_max = new_max
        outputs.append(acc / running_sum)
    return torch.cat(outputs, dim=-2), None
