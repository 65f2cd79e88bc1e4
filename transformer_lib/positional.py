"""Positional information (chapter 6).

Self-attention treats its input as a set: permute the tokens and the outputs are permuted the
same way. To let a model use word order, a vector that depends on the position is added to each
token embedding, either a fixed sinusoid (Vaswani et al. 2017, section 3.5) or a learned table
(as in GPT and BERT). Both modules here take ``(B, T, d_model)`` and return it plus the vectors of
positions ``start .. start + T - 1`` (``start`` > 0 when earlier tokens sit in a KV cache).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

__all__ = ["sinusoidal_positional_encoding", "PositionalEncoding", "LearnedPositionalEmbedding", "make_positional"]


def sinusoidal_positional_encoding(max_len: int, d_model: int) -> Tensor:
    """``PE[p, 2i] = sin(p / 10000^(2i/d_model))``, ``PE[p, 2i+1] = cos(p / 10000^(2i/d_model))``.

    Returns:
        ``(max_len, d_model)`` float32 table. For every offset k, ``PE[p + k]`` is a fixed linear
        map (a rotation in each (sin, cos) pair) of ``PE[p]``.
    """
    position = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    frequency = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angle = position * frequency  # (max_len, ceil(d_model / 2))
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe.float()


def _check_length(x: Tensor, start: int, max_len: int, d_model: int) -> None:
    if x.dim() != 3 or x.size(-1) != d_model:
        raise ValueError(f"expected input of shape (B, T, d_model={d_model}), got {tuple(x.shape)}")
    if start + x.size(1) > max_len:
        raise ValueError(
            f"sequence too long: positions up to max_len={max_len} are available, got "
            f"T={x.size(1)} starting at position {start} (input shape {tuple(x.shape)})"
        )


class PositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal encoding, then dropout (Vaswani et al. 2017, section 3.5)."""

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0) -> None:
        super().__init__()
        self.max_len, self.d_model = max_len, d_model
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        """``(B, T, d_model) -> (B, T, d_model)``: ``x + PE[start : start + T]``."""
        _check_length(x, start, self.max_len, self.d_model)
        return self.dropout(x + self.pe[start : start + x.size(1)].to(x.dtype))


class LearnedPositionalEmbedding(nn.Module):
    """Adds a trained vector per position, one row of a ``(max_len, d_model)`` table (GPT, BERT)."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len, self.d_model = max_len, d_model
        self.embedding = nn.Embedding(max_len, d_model)

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        """``(B, T, d_model) -> (B, T, d_model)``: ``x + P[start : start + T]``."""
        _check_length(x, start, self.max_len, self.d_model)
        positions = torch.arange(start, start + x.size(1), device=x.device)
        return x + self.embedding(positions)


def make_positional(kind: str | None, max_len: int, d_model: int) -> nn.Module | None:
    """``"sinusoidal"``, ``"learned"`` or ``None`` (no positional information at all)."""
    if kind is None:
        return None
    if kind == "sinusoidal":
        return PositionalEncoding(d_model, max_len)
    if kind == "learned":
        return LearnedPositionalEmbedding(max_len, d_model)
    raise ValueError(f'positional must be "sinusoidal", "learned" or None, got {kind!r}')
