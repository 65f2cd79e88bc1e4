"""Attention as a soft database lookup (chapters 3-4).

A query is compared with every key; the scores become weights with a softmax; the output is
the weighted average of the values. Two ways of scoring are built here:

* additive attention, ``score = w_v^T tanh(W_q q + W_k k)`` (Bahdanau et al. 2015, section 3.1);
* scaled dot-product attention, ``softmax(Q K^T / sqrt(d_k)) V`` (Vaswani et al. 2017, section 3.2.1).

Masks are boolean and ``True`` means "may attend". A mask broadcasts to the scores, whose shape
is ``(B, h, T, S)`` for multi-head attention (or any leading dimensions followed by ``(T, S)``).
A query whose keys are all masked gets all-zero weights (and a zero output), never NaN. The
padding mask of a batch is :func:`transformer_lib.tokens.lengths_to_mask`; index it as
``mask[:, None, None, :]`` to hide padded keys from scores ``(B, h, T, S)``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = [
    "masked_softmax",
    "scaled_dot_product_attention",
    "causal_mask",
    "AdditiveAttention",
]


def check_mask(mask: Tensor, scores_shape: torch.Size) -> None:
    """Raise unless ``mask`` is boolean and broadcasts to ``scores_shape`` without growing it."""
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}")
    try:
        fits = torch.broadcast_shapes(mask.shape, scores_shape) == scores_shape
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} cannot broadcast to attention scores "
            f"of shape {tuple(scores_shape)}"
        )


def masked_softmax(scores: Tensor, mask: Tensor | None = None, dim: int = -1) -> Tensor:
    """Softmax over ``dim`` that gives zero weight where ``mask`` is False.

    Args:
        scores: attention scores, e.g. ``(B, h, T, S)``.
        mask: boolean, True = may attend, broadcastable to ``scores``.
        dim: the dimension that sums to one (the keys).

    Returns:
        Weights of the shape of ``scores``. A row whose entries are all masked is all zeros.
    """
    if mask is None:
        return torch.softmax(scores, dim=dim)
    check_mask(mask, scores.shape)
    # -inf gives exactly zero weight; a fully masked row becomes NaN (0/0) in the softmax,
    # and the second masked_fill turns it into zeros (its gradient is zero as well).
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=dim)
    return weights.masked_fill(~mask, 0.0)


def _check_qkv(query: Tensor, key: Tensor, value: Tensor) -> None:
    if not (query.dim() == key.dim() == value.dim()) or query.dim() < 2:
        raise ValueError(
            "query, key and value must have the same number of dimensions (..., length, features), "
            f"got shapes {tuple(query.shape)}, {tuple(key.shape)} and {tuple(value.shape)}"
        )
    if key.size(-2) != value.size(-2):
        raise ValueError(
            f"key and value must have the same length S: key has {key.size(-2)}, value has {value.size(-2)}"
        )
    if query.size(-1) != key.size(-1):
        raise ValueError(
            f"query and key must have the same feature size d_k: query has {query.size(-1)}, "
            f"key has {key.size(-1)}"
        )


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
    need_weights: bool = True,
    *,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """``softmax(Q K^T / sqrt(d_k)) V`` (Vaswani et al. 2017, section 3.2.1, equation 1).

    Args:
        query: ``(..., T, d_k)``, e.g. ``(B, h, T, d_k)``.
        key: ``(..., S, d_k)``.
        value: ``(..., S, d_v)``.
        mask: boolean, True = may attend, broadcastable to the scores ``(..., T, S)``.
        dropout_p: dropout on the attention weights (pass 0.0 in evaluation).
        need_weights: True takes the explicit path (matmul, scale, masked softmax, matmul) and
            returns the weights; False takes PyTorch's fused kernel and returns ``None`` for them.
        is_causal: query ``t`` may attend keys ``0..t`` only (the mask for that is never built
            on the fused path). Combined with ``mask`` if both are given.

    Returns:
        ``(output, weights)``: output ``(..., T, d_v)``; weights ``(..., T, S)`` or ``None``.
    """
    _check_qkv(query, key, value)
    T, S = query.size(-2), key.size(-2)
    batch_shape = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    if mask is not None:
        check_mask(mask, torch.Size((*batch_shape, T, S)))
    if is_causal and (need_weights or mask is not None):
        causal = causal_mask(S, device=query.device)[:T]  # top-left aligned, as in PyTorch
        mask, is_causal = (causal if mask is None else mask & causal), False

    if not need_weights:
        output = F.scaled_dot_product_attention(
            query, key, value, attn_mask=mask, dropout_p=dropout_p, is_causal=is_causal
        )
        return output, None

    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))  # (..., T, S)
    weights = masked_softmax(scores, mask)
    output = F.dropout(weights, p=dropout_p) @ value
    return output, weights


def causal_mask(size: int, device: torch.device | str | None = None) -> Tensor:
    """``(size, size)`` boolean mask, True on and below the diagonal: position t sees 0..t."""
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()


class AdditiveAttention(nn.Module):
    """Additive (Bahdanau) attention: ``score(q, k) = w_v^T tanh(W_q q + W_k k)``.

    Bahdanau, Cho and Bengio 2015, "Neural Machine Translation by Jointly Learning to Align and
    Translate", section 3.1 and appendix A.1.2.
    """

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.query_proj = nn.Linear(query_dim, hidden_dim, bias=False)  # W_q
        self.key_proj = nn.Linear(key_dim, hidden_dim, bias=False)  # W_k
        self.score_proj = nn.Linear(hidden_dim, 1, bias=False)  # w_v

    def forward(
        self, query: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None,
        *, projected_keys: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        """Attend from each query to the keys and average the values.

        Args:
            query: ``(B, query_dim)`` for one query per row (a decoder state), or ``(B, T, query_dim)``.
            keys: ``(B, S, key_dim)``.
            values: ``(B, S, d_v)``.
            mask: boolean, True = may attend, broadcastable to the scores: ``(B, S)`` for a
                2-D query, ``(B, T, S)`` for a 3-D one.
            projected_keys: ``self.key_proj(keys)``, ``(B, S, hidden_dim)``, when the caller has it.
                ``W_k k`` does not depend on the query, so a decoder that asks one query per
                step computes it once per source, not once per step (Bahdanau et al. 2015,
                appendix A.1.2, make the same remark).

        Returns:
            ``(context, weights)``: ``(B, d_v)`` and ``(B, S)`` for a 2-D query,
            ``(B, T, d_v)`` and ``(B, T, S)`` for a 3-D one.
        """
        if query.dim() == 2:
            if mask is not None:
                check_mask(mask, torch.Size((query.size(0), keys.size(1))))
                mask = mask.unsqueeze(-2)
            context, weights = self(query.unsqueeze(1), keys, values, mask, projected_keys=projected_keys)
            return context.squeeze(1), weights.squeeze(1)
        if query.dim() != 3 or keys.dim() != 3 or values.dim() != 3:
            raise ValueError(
                "expected query (B, T, query_dim), keys (B, S, key_dim), values (B, S, d_v), got shapes "
                f"{tuple(query.shape)}, {tuple(keys.shape)}, {tuple(values.shape)}"
            )
        if keys.size(1) != values.size(1):
            raise ValueError(
                f"keys and values must have the same length S: keys has {keys.size(1)}, values has {values.size(1)}"
            )
        if projected_keys is None:
            projected_keys = self.key_proj(keys)
        elif projected_keys.shape[:-1] != keys.shape[:-1]:
            raise ValueError(f"projected_keys must be (B, S, hidden_dim) for keys {tuple(keys.shape)}, "
                             f"got {tuple(projected_keys.shape)}")
        # (B, T, 1, hidden) + (B, 1, S, hidden) -> (B, T, S, hidden) -> scores (B, T, S)
        features = torch.tanh(self.query_proj(query).unsqueeze(2) + projected_keys.unsqueeze(1))
        scores = self.score_proj(features).squeeze(-1)
        weights = masked_softmax(scores, mask)
        return weights @ values, weights
