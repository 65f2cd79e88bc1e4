"""From GPT-2 to a modern decoder block (chapter 11): RMSNorm, SwiGLU, grouped-query attention, RoPE.

A ``ModernConfig`` lists the switches; ``GPT(..., config=ModernConfig(...))`` builds its blocks
from ``ModernBlock`` instead of chapter 8's ``EncoderLayer``. The defaults are the GPT-2 layout
(learned positions, LayerNorm, GELU feed-forward, one key/value head per query head, biases), so
each change can be switched on alone and measured; the Llama layout is ``ModernConfig.llama()``:
LLaMA (Touvron et al. 2023a, section 2.2) brought pre-norm RMSNorm, SwiGLU and RoPE; grouped-query
attention came with Llama 2 (Touvron et al. 2023b), for its 34B and 70B models.

* ``RMSNorm`` (Zhang and Sennrich 2019): scale by the root mean square, no mean, no bias.
* ``SwiGLUFeedForward`` (Shazeer 2020, after the gated linear units of Dauphin et al. 2017): a
  feed-forward whose hidden units are gated,
  ``W_2 (SiLU(W_1 x) * (W_3 x))``.
* ``GroupedQueryAttention`` (Ainslie et al. 2023): ``h`` query heads share ``h_kv`` key/value
  heads, ``h_kv = 1`` being multi-query attention (Shazeer 2019); the KV cache shrinks by ``h / h_kv``.
* RoPE (``transformer_lib.rope``) rotates queries and keys instead of adding positions to the input.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import scaled_dot_product_attention
from .layers import PositionwiseFeedForward
from .multihead import KVCache
from .rope import RotaryEmbedding

__all__ = ["RMSNorm", "SwiGLUFeedForward", "GroupedQueryAttention", "ModernConfig", "ModernBlock", "ModernDecoder"]


class RMSNorm(nn.Module):
    """``RMSNorm(x) = g * x / sqrt(mean(x^2) + eps)`` over the last dimension (Zhang and Sennrich 2019).

    LayerNorm without its two centring steps (no mean subtracted, no bias added): the same
    function as ``torch.nn.RMSNorm(d_model, eps)``.
    """

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.d_model, self.eps = d_model, eps
        self.weight = nn.Parameter(torch.ones(d_model))  # g

    def forward(self, x: Tensor) -> Tensor:
        """``(..., d_model) -> (..., d_model)``."""
        if x.size(-1) != self.d_model:
            raise ValueError(f"expected input of shape (..., d_model={self.d_model}), got {tuple(x.shape)}")
        return self.weight * x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)

    def extra_repr(self) -> str:
        return f"{self.d_model}, eps={self.eps}"


class SwiGLUFeedForward(nn.Module):
    """``FFN(x) = W_2 (SiLU(W_1 x) * W_3 x)``: the hidden units are gated by a second projection.

    Three ``d_model x d_ff`` matrices instead of two, so ``d_ff`` is usually taken 2/3 as wide as a
    GELU feed-forward's to keep the parameter count (Shazeer 2020, "GLU variants improve Transformer").
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, bias: bool = False) -> None:
        super().__init__()
        self.gate = nn.Linear(d_model, d_ff, bias=bias)  # W_1
        self.up = nn.Linear(d_model, d_ff, bias=bias)  # W_3
        self.down = nn.Linear(d_ff, d_model, bias=bias)  # W_2
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        """``(B, T, d_model) -> (B, T, d_model)`` through a gated hidden width ``d_ff``."""
        return self.down(self.dropout(F.silu(self.gate(x)) * self.up(x)))


class GroupedQueryAttention(nn.Module):
    """Causal self-attention with ``num_heads`` query heads and ``num_kv_heads`` key/value heads.

    Query heads ``g * h / h_kv .. (g + 1) * h / h_kv - 1`` all read key/value head ``g``. With
    ``num_kv_heads == num_heads`` this is chapter 5's multi-head attention (``in_proj`` then has
    ``MultiHeadAttention``'s layout); with ``num_kv_heads == 1`` it is multi-query attention.
    The ``KVCache`` keeps only the ``h_kv`` heads: ``h / h_kv`` times fewer bytes per token.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        num_kv_heads: int | None = None,
        dropout: float = 0.0,
        bias: bool = True,
        rotary: RotaryEmbedding | None = None,
    ) -> None:
        super().__init__()
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        if d_model % num_heads != 0 or num_kv_heads < 1 or num_heads % num_kv_heads != 0:
            raise ValueError(
                f"need d_model divisible by num_heads and num_heads divisible by num_kv_heads, got "
                f"d_model={d_model}, num_heads={num_heads}, num_kv_heads={num_kv_heads}"
            )
        self.d_model, self.num_heads, self.num_kv_heads = d_model, num_heads, num_kv_heads
        self.d_head = d_model // num_heads
        self.dropout = dropout
        self.rotary = rotary
        kv_width = num_kv_heads * self.d_head
        self.in_proj = nn.Linear(d_model, d_model + 2 * kv_width, bias=bias)  # rows: W_Q, W_K, W_V
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)  # W_O

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None = None,
        need_weights: bool = False,
        *,
        is_causal: bool = False,
        cache: KVCache | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Self-attention of ``x`` ``(B, T, d_model)``, after the ``len(cache)`` tokens in ``cache``.

        Args:
            x: the token vectors; with a cache, the new tokens only.
            mask: boolean, True = may attend, broadcastable to ``(B, h, T, S)``, S = cached + T.
            need_weights: return the ``(B, h, T, S)`` weights (explicit path) or ``None`` (fused).
            is_causal: apply the causal mask without building it.
            cache: keys and values ``(B, h_kv, S, d_head)`` of earlier tokens; this call's are appended.

        Returns:
            ``(output, weights)``: ``(B, T, d_model)`` and ``(B, h, T, S)`` or ``None``.
        """
        if x.dim() != 3 or x.size(-1) != self.d_model:
            raise ValueError(f"x must have shape (B, T, d_model={self.d_model}), got {tuple(x.shape)}")
        B, T, _ = x.shape
        kv_width = self.num_kv_heads * self.d_head
        q, k, v = self.in_proj(x).split([self.d_model, kv_width, kv_width], dim=-1)
        q = q.view(B, T, self.num_heads, self.d_head).transpose(1, 2)  # (B, h, T, d_head)
        k, v = (t.view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2) for t in (k, v))  # (B, h_kv, T, d_head)
        if self.rotary is not None:
            start = len(cache) if cache is not None else 0
            q, k = self.rotary(q, start), self.rotary(k, start)
        if cache is not None:
            k, v = cache.extend(k, v)
        group = self.num_heads // self.num_kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)  # (B, h, S, d_head)
        dropout_p = self.dropout if self.training else 0.0
        output, weights = scaled_dot_product_attention(
            q, k, v, mask, dropout_p=dropout_p, need_weights=need_weights, is_causal=is_causal
        )
        return self.out_proj(output.transpose(1, 2).reshape(B, T, self.d_model)), weights


@dataclass(frozen=True)
class ModernConfig:
    """The switches from the GPT-2 block to a modern one; the defaults are the GPT-2 layout.

    Attributes:
        positional: ``"learned"`` (a table added to the input, GPT-2) or ``"rope"`` (rotary).
        norm: ``"layer"`` (LayerNorm) or ``"rms"`` (RMSNorm).
        feed_forward: ``"gelu"`` (two matrices, GPT-2) or ``"swiglu"`` (three, gated).
        num_kv_heads: key/value heads; ``None`` means one per query head.
        bias: biases in the attention and feed-forward projections (LayerNorm keeps its own).
        tie_embeddings: the output layer shares the token embedding's weights.
        norm_eps: the ``eps`` of every norm.
        rope_base: the ``base`` of the RoPE angles.
    """

    positional: str = "learned"
    norm: str = "layer"
    feed_forward: str = "gelu"
    num_kv_heads: int | None = None
    bias: bool = True
    tie_embeddings: bool = True
    norm_eps: float = 1e-5
    rope_base: float = 10000.0

    def __post_init__(self) -> None:
        for name, allowed in (("positional", ("learned", "rope")), ("norm", ("layer", "rms")),
                              ("feed_forward", ("gelu", "swiglu"))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")

    @classmethod
    def llama(cls, num_kv_heads: int | None = None, **changes) -> ModernConfig:
        """RoPE, RMSNorm, SwiGLU, no biases (LLaMA, Touvron et al. 2023a), grouped-query attention (Llama 2, 2023b).

        The output layer stays tied to the token embedding unless ``tie_embeddings=False`` is passed
        (Llama's is untied).
        """
        return cls(**{"positional": "rope", "norm": "rms", "feed_forward": "swiglu", "bias": False,
                      "num_kv_heads": num_kv_heads, **changes})

    def make_norm(self, d_model: int) -> nn.Module:
        return RMSNorm(d_model, self.norm_eps) if self.norm == "rms" else nn.LayerNorm(d_model, self.norm_eps)


class ModernBlock(nn.Module):
    """A pre-norm decoder block: ``x + Attention(Norm(x))``, then ``x + FFN(Norm(x))``.

    Its parts follow ``config``; with the default config it is the block of chapter 8's ``GPT``.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0,
                 config: ModernConfig = ModernConfig()) -> None:
        super().__init__()
        d_head = d_model // num_heads
        rotary = RotaryEmbedding(d_head, config.rope_base) if config.positional == "rope" else None
        self.attention_norm = config.make_norm(d_model)
        self.attention = GroupedQueryAttention(d_model, num_heads, config.num_kv_heads, dropout, config.bias, rotary)
        self.feed_forward_norm = config.make_norm(d_model)
        if config.feed_forward == "swiglu":
            self.feed_forward = SwiGLUFeedForward(d_model, d_ff, dropout, config.bias)
        else:
            self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout, "gelu", bias=config.bias)
        self.dropout = nn.Dropout(dropout)
        self.self_attention_weights: Tensor | None = None

    def forward(self, x: Tensor, mask: Tensor | None = None, *, is_causal: bool = False,
                need_weights: bool = False, cache: KVCache | None = None) -> Tensor:
        """``(B, T, d_model) -> (B, T, d_model)``; arguments as in ``GroupedQueryAttention``.

        With ``need_weights`` the ``(B, h, T, S)`` weights are kept in ``self_attention_weights``.
        """
        attended, self.self_attention_weights = self.attention(
            self.attention_norm(x), mask, need_weights, is_causal=is_causal, cache=cache
        )
        x = x + self.dropout(attended)
        return x + self.dropout(self.feed_forward(self.feed_forward_norm(x)))


class ModernDecoder(nn.Module):
    """``num_layers`` ``ModernBlock`` and a final norm: the blocks of ``GPT(..., config=...)``."""

    def __init__(self, num_layers: int, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0,
                 config: ModernConfig = ModernConfig()) -> None:
        super().__init__()
        self.layers = nn.ModuleList(ModernBlock(d_model, num_heads, d_ff, dropout, config) for _ in range(num_layers))
        self.norm = config.make_norm(d_model)

    def forward(self, x: Tensor, mask: Tensor | None = None, *, is_causal: bool = False,
                need_weights: bool = False, caches: list[KVCache] | None = None) -> Tensor:
        """``(B, T, d_model) -> (B, T, d_model)``; one cache per layer (as ``Encoder.forward``)."""
        caches = caches or [None] * len(self.layers)
        for layer, cache in zip(self.layers, caches):
            x = layer(x, mask, is_causal=is_causal, need_weights=need_weights, cache=cache)
        return self.norm(x)
