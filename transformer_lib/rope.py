"""Rotary position embedding, RoPE (chapter 11; Su et al. 2021, "RoFormer", section 3.4).

Chapter 6 showed that the sinusoidal encoding of position ``p + k`` is a rotation of the encoding
of ``p``. RoPE puts that rotation into attention itself: split the ``d_head`` features of a query
or key into ``d_head / 2`` pairs and turn pair ``i`` of the vector at position ``p`` by the angle
``p * theta_i``, with ``theta_i = base ** (-2i / d_head)``. The dot product of a rotated query
(position ``t``) and a rotated key (position ``s``) then depends on the positions only through
``t - s``: a rotation by ``t * theta`` followed by the inverse of one by ``s * theta`` is a
rotation by ``(t - s) * theta``. Nothing is added to the token vectors and there is no table of
positions, so the model accepts sequences longer than any it was trained on; that does not make it
predict well there: offsets beyond the training length give angles the model never met (chapter 11
measures the rise; Press et al. 2022 and Chen et al. 2023 measure and work around it).

Pair ``i`` is features ``(i, i + d_head / 2)``, the "rotate half" layout of GPT-NeoX and of
Hugging Face's Llama, whose converter reorders the rows of ``W_Q`` and ``W_K`` of Meta's weights
per head (``weights.rope_rows_from_interleaved``). The paper and Meta's reference code pair
neighbours ``(2i, 2i + 1)``. Both are the same rotation with the features listed in another
order, but weights trained with one layout must be reordered to run with the other.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["rotary_cos_sin", "apply_rotary", "RotaryEmbedding"]


def rotary_cos_sin(positions: Tensor, d_head: int, base: float = 10000.0) -> tuple[Tensor, Tensor]:
    """Cosines and sines of the angles ``p * theta_i`` for the ``(T,)`` integer ``positions``.

    Returns:
        ``(cos, sin)``, each ``(T, d_head)`` float64: the ``d_head / 2`` angles of each position,
        written twice (once for each feature of a pair).
    """
    if d_head % 2 != 0:
        raise ValueError(f"RoPE rotates pairs of features: d_head must be even, got {d_head}")
    if positions.dim() != 1:
        raise ValueError(f"positions must have shape (T,), got {tuple(positions.shape)}")
    theta = base ** (-torch.arange(0, d_head, 2, dtype=torch.float64, device=positions.device) / d_head)
    angle = positions.to(torch.float64)[:, None] * theta  # (T, d_head / 2)
    angle = torch.cat([angle, angle], dim=-1)  # (T, d_head)
    return angle.cos(), angle.sin()


def apply_rotary(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate every pair ``(x_i, x_{i + d/2})`` of ``x`` ``(..., T, d_head)`` by its angle.

    ``(x_i, x_j) -> (x_i cos - x_j sin, x_j cos + x_i sin)``: a 2-D rotation per pair, which
    keeps the length of every pair and so of ``x``. ``cos`` and ``sin`` are ``(T, d_head)``.
    """
    if x.shape[-2:] != cos.shape or cos.shape != sin.shape:
        raise ValueError(
            f"x must end in (T, d_head) = cos.shape = {tuple(cos.shape)}, got x {tuple(x.shape)} "
            f"and sin {tuple(sin.shape)}"
        )
    first, second = x.chunk(2, dim=-1)
    rotated_half = torch.cat([-second, first], dim=-1)  # the partner of each feature, signed
    return x * cos.to(x.dtype) + rotated_half * sin.to(x.dtype)


class RotaryEmbedding(nn.Module):
    """Rotates queries and keys ``(B, h, T, d_head)`` by their positions ``start .. start + T - 1``.

    It has no parameters: the same module serves every layer, and any length.
    """

    def __init__(self, d_head: int, base: float = 10000.0) -> None:
        super().__init__()
        if d_head % 2 != 0:
            raise ValueError(f"RoPE rotates pairs of features: d_head must be even, got {d_head}")
        self.d_head, self.base = d_head, base

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        """``(..., T, d_head) -> (..., T, d_head)``, position ``start + t`` for row ``t``."""
        if x.dim() < 2 or x.size(-1) != self.d_head:
            raise ValueError(f"expected (..., T, d_head={self.d_head}), got {tuple(x.shape)}")
        positions = torch.arange(start, start + x.size(-2), device=x.device)
        return apply_rotary(x, *rotary_cos_sin(positions, self.d_head, self.base))

    def extra_repr(self) -> str:
        return f"d_head={self.d_head}, base={self.base:g}"
