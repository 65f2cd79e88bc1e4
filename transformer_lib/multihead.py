"""Multi-head attention (chapter 5; Vaswani et al. 2017, section 3.2.2).

Each of the ``h`` heads projects the queries, keys and values to ``d_k = d_model / h`` features,
attends on its own, and the ``h`` outputs are concatenated and projected back to ``d_model``.
The projections of all heads are one ``d_model x d_model`` matrix each (``W_Q, W_K, W_V``),
stacked into ``in_proj`` so that self-attention costs a single matrix product, exactly as
``torch.nn.MultiheadAttention`` stores them (which lets ``from_torch`` copy its weights).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import scaled_dot_product_attention

__all__ = ["KVCache", "MultiHeadAttention"]


class KVCache:
    """The keys and values of the tokens already seen, ``(B, h, S, d_k)``, for one attention layer.

    During generation each new token only needs its own query; its keys and values are appended
    here so the earlier ones are never recomputed (chapter 10).
    """

    def __init__(self) -> None:
        self.key: Tensor | None = None
        self.value: Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.key is None else self.key.size(-2)

    def extend(self, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        """Append ``(B, h, T, d_k)`` new keys and values; return all of them so far."""
        if self.key is not None:
            key, value = torch.cat([self.key, key], dim=-2), torch.cat([self.value, value], dim=-2)
        self.key, self.value = key, value
        return key, value


class MultiHeadAttention(nn.Module):
    """``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O``, ``head_i = Attention(Q W_Q_i, K W_K_i, V W_V_i)``."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True) -> None:
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(
                f"d_model must be divisible by num_heads: d_model={d_model}, num_heads={num_heads} "
                f"(expected d_model = num_heads * d_k)"
            )
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.dropout = dropout
        self.in_proj = nn.Linear(d_model, 3 * d_model, bias=bias)  # rows: W_Q, W_K, W_V
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)  # W_O

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        need_weights: bool = True,
        *,
        is_causal: bool = False,
        cache: KVCache | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key``/``value``, in ``h`` heads.

        Args:
            query: ``(B, T, d_model)``.
            key, value: ``(B, S, d_model)`` (the same tensor as ``query`` for self-attention).
            mask: boolean, True = may attend, broadcastable to ``(B, h, T, S)``; a padding mask
                is ``(B, 1, 1, S)``, a causal one ``(T, S)``.
            need_weights: return the per-head weights (explicit path) or ``None`` (fused path).
            is_causal: apply the causal mask without building it.
            cache: keys and values of earlier tokens; this call's are appended to it.

        Returns:
            ``(output, weights)``: ``(B, T, d_model)`` and ``(B, h, T, S)`` or ``None``.
        """
        self._check_shapes(query, key, value)
        q, k, v = (self._split_heads(x) for x in self._project(query, key, value))
        if cache is not None:
            k, v = cache.extend(k, v)
        dropout_p = self.dropout if self.training else 0.0
        output, weights = scaled_dot_product_attention(
            q, k, v, mask, dropout_p=dropout_p, need_weights=need_weights, is_causal=is_causal
        )
        return self.out_proj(self._merge_heads(output)), weights

    def _project(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """``Q W_Q, K W_K, V W_V``, each ``(B, length, d_model)``."""
        if query is key and key is value:  # self-attention: one matrix product for all three
            return self.in_proj(query).chunk(3, dim=-1)
        weights = self.in_proj.weight.chunk(3)
        biases = self.in_proj.bias.chunk(3) if self.in_proj.bias is not None else (None, None, None)
        return tuple(F.linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))

    def _split_heads(self, x: Tensor) -> Tensor:
        """``(B, T, d_model) -> (B, h, T, d_k)``."""
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)

    def _merge_heads(self, x: Tensor) -> Tensor:
        """``(B, h, T, d_k) -> (B, T, d_model)``: the concatenation of the heads."""
        B, _, T, _ = x.shape
        return x.transpose(1, 2).reshape(B, T, self.d_model)

    def _check_shapes(self, query: Tensor, key: Tensor, value: Tensor) -> None:
        for name, x in (("query", query), ("key", key), ("value", value)):
            if x.dim() != 3 or x.size(-1) != self.d_model:
                raise ValueError(
                    f"{name} must have shape (B, length, d_model={self.d_model}), got {tuple(x.shape)}"
                )
        if key.size(1) != value.size(1):
            raise ValueError(
                f"key and value must have the same length S: key has {key.size(1)}, value has {value.size(1)}"
            )
        if not query.size(0) == key.size(0) == value.size(0):
            raise ValueError(
                f"query, key and value must have the same batch size B, got shapes "
                f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
            )

    @classmethod
    def from_torch(cls, m: nn.MultiheadAttention) -> MultiHeadAttention:
        """A copy of a batch-first ``torch.nn.MultiheadAttention`` (same weights, dtype, device)."""
        if not m.batch_first or not m._qkv_same_embed_dim or m.bias_k is not None or m.add_zero_attn:
            raise ValueError(
                "from_torch expects nn.MultiheadAttention(batch_first=True) with kdim = vdim = embed_dim, "
                "no add_bias_kv and no add_zero_attn"
            )
        ours = cls(m.embed_dim, m.num_heads, dropout=m.dropout, bias=m.in_proj_bias is not None)
        ours.to(device=m.in_proj_weight.device, dtype=m.in_proj_weight.dtype)
        in_proj = {"weight": m.in_proj_weight, "bias": m.in_proj_bias}
        ours.in_proj.load_state_dict({name: p for name, p in in_proj.items() if p is not None})
        ours.out_proj.load_state_dict(m.out_proj.state_dict())
        return ours

