"""Encoder and decoder layers and their stacks (chapters 7-8; Vaswani et al. 2017, section 3.1).

An encoder layer is self-attention then a position-wise feed-forward network; a decoder layer
puts cross-attention to the encoder's output (the "memory") between the two. Each sublayer sits
inside a residual connection with layer normalisation, either after the sum (post-LN, as in the
paper) or before the sublayer (pre-LN, Xiong et al. 2020, which trains without warm-up and needs a
final normalisation after the last layer).

By default the layers run the fused attention kernel and keep no attention weights. Pass
``need_weights=True`` to a layer (or a stack) to have each layer store its per-head weights,
``(B, h, T, S)``, in ``self_attention_weights`` (and ``cross_attention_weights`` for a decoder layer).
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch.nn.functional as F
from torch import Tensor, nn

from .multihead import KVCache, MultiHeadAttention

__all__ = ["PositionwiseFeedForward", "Residual", "EncoderLayer", "DecoderLayer", "SelfAttentionStack", "Encoder",
           "Decoder"]

# "gelu_tanh" is GELU's tanh approximation, the activation released GPT-2 checkpoints were trained with.
ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": F.relu,
    "gelu": F.gelu,
    "gelu_tanh": partial(F.gelu, approximate="tanh"),
}


class PositionwiseFeedForward(nn.Module):
    """``FFN(x) = W_2 act(W_1 x + b_1) + b_2`` applied to every position alone (section 3.3)."""

    def __init__(
        self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu", bias: bool = True
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        self.linear1 = nn.Linear(d_model, d_ff, bias=bias)
        self.linear2 = nn.Linear(d_ff, d_model, bias=bias)
        self.activation = ACTIVATIONS[activation]
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        """``(B, T, d_model) -> (B, T, d_model)`` through a hidden width ``d_ff``."""
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class Residual(nn.Module):
    """A sublayer inside a residual connection with layer norm.

    post-LN: ``norm(x + dropout(sublayer(x)))``; pre-LN: ``x + dropout(sublayer(norm(x)))``.
    (The "sublayer connection" of the Annotated Transformer, Rush 2018.)
    """

    def __init__(self, d_model: int, dropout: float = 0.0, norm_first: bool = False) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        if self.norm_first:
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))


# PyTorch's parameter names -> ours (prefixes of the state-dict keys), for ``from_torch``.
_TORCH_ENCODER_NAMES = {
    "self_attn.in_proj_": "self_attention.in_proj.",
    "self_attn.out_proj.": "self_attention.out_proj.",
    "linear1.": "feed_forward.linear1.",
    "linear2.": "feed_forward.linear2.",
    "norm1.": "self_attention_residual.norm.",
    "norm2.": "feed_forward_residual.norm.",
}
_TORCH_DECODER_NAMES = {
    **_TORCH_ENCODER_NAMES,
    "multihead_attn.in_proj_": "cross_attention.in_proj.",
    "multihead_attn.out_proj.": "cross_attention.out_proj.",
    "norm2.": "cross_attention_residual.norm.",
    "norm3.": "feed_forward_residual.norm.",
}


class EncoderLayer(nn.Module):
    """Self-attention and feed-forward, each in a residual block. Also the block of a GPT."""

    _torch_names = _TORCH_ENCODER_NAMES

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        activation: str = "relu",
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        self.d_model, self.norm_first = d_model, norm_first
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout)
        self.self_attention_residual = Residual(d_model, dropout, norm_first)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout, activation)
        self.feed_forward_residual = Residual(d_model, dropout, norm_first)
        self.self_attention_weights: Tensor | None = None

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None = None,
        *,
        is_causal: bool = False,
        need_weights: bool = False,
        cache: KVCache | None = None,
    ) -> Tensor:
        """``(B, T, d_model) -> (B, T, d_model)``.

        Args:
            x: the token vectors.
            mask: boolean, True = may attend, broadcastable to ``(B, h, T, T)``.
            is_causal: add the causal mask (decoder-only models) without building it.
            need_weights: store the ``(B, h, T, T)`` weights in ``self_attention_weights``.
            cache: keys and values of earlier tokens, for generation one token at a time.
        """

        def attend(h: Tensor) -> Tensor:
            out, self.self_attention_weights = self.self_attention(
                h, h, h, mask, need_weights, is_causal=is_causal, cache=cache
            )
            return out

        x = self.self_attention_residual(x, attend)
        return self.feed_forward_residual(x, self.feed_forward)

    @classmethod
    def from_torch(cls, layer: nn.TransformerEncoderLayer | nn.TransformerDecoderLayer) -> EncoderLayer:
        """A copy of PyTorch's twin, built with ``batch_first=True`` (same weights, dtype, device)."""
        attention = layer.self_attn
        if not attention.batch_first:
            raise ValueError("from_torch expects a layer built with batch_first=True")
        activation = {F.relu: "relu", F.gelu: "gelu"}.get(layer.activation)
        if activation is None or layer.norm1.eps != 1e-5:
            raise ValueError(
                f"from_torch supports activation relu or gelu and layer_norm_eps=1e-5, "
                f"got {layer.activation} and {layer.norm1.eps}"
            )
        ours = cls(
            attention.embed_dim,
            attention.num_heads,
            layer.linear1.out_features,
            dropout=layer.dropout.p,
            activation=activation,
            norm_first=layer.norm_first,
        ).to(device=layer.linear1.weight.device, dtype=layer.linear1.weight.dtype)
        state = {}
        for name, tensor in layer.state_dict().items():
            prefix = next(p for p in cls._torch_names if name.startswith(p))
            state[cls._torch_names[prefix] + name.removeprefix(prefix)] = tensor
        ours.load_state_dict(state)
        return ours


class DecoderLayer(EncoderLayer):
    """An encoder layer with cross-attention to the memory between its two sublayers.

    Masked self-attention, cross-attention, feed-forward; each in a residual block.
    """

    _torch_names = _TORCH_DECODER_NAMES

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        activation: str = "relu",
        norm_first: bool = False,
    ) -> None:
        """The sizes of :class:`EncoderLayer`; the cross-attention has the self-attention's heads and dropout."""
        super().__init__(d_model, num_heads, d_ff, dropout, activation, norm_first)
        self.cross_attention = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attention_residual = Residual(d_model, dropout, norm_first)
        self.cross_attention_weights: Tensor | None = None

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        self_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        *,
        is_causal: bool = False,
        need_weights: bool = False,
    ) -> Tensor:
        """``(B, T, d_model), (B, S, d_model) -> (B, T, d_model)``.

        Args:
            x: the target token vectors.
            memory: the encoder's output.
            self_mask: boolean, broadcastable to ``(B, h, T, T)``, usually causal & target padding.
            memory_mask: boolean, broadcastable to ``(B, h, T, S)``, usually the source padding ``(B, 1, 1, S)``.
            is_causal: add the causal mask to the self-attention without building it.
            need_weights: store the weights in ``self_attention_weights`` ``(B, h, T, T)`` and
                ``cross_attention_weights`` ``(B, h, T, S)``.
        """

        def attend_to_self(h: Tensor) -> Tensor:
            out, self.self_attention_weights = self.self_attention(h, h, h, self_mask, need_weights,
                                                                   is_causal=is_causal)
            return out

        def attend_to_memory(h: Tensor) -> Tensor:
            out, self.cross_attention_weights = self.cross_attention(h, memory, memory, memory_mask, need_weights)
            return out

        x = self.self_attention_residual(x, attend_to_self)
        x = self.cross_attention_residual(x, attend_to_memory)
        return self.feed_forward_residual(x, self.feed_forward)


class _LayerStack(nn.Module):
    """``num_layers`` copies of ``layer_class``, and a final layer norm when they are pre-LN."""

    layer_class: type[EncoderLayer]

    def __init__(
        self,
        num_layers: int,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float = 0.0,
        activation: str = "relu",
        norm_first: bool = False,
    ) -> None:
        """``num_layers`` layers, each ``layer_class(d_model, num_heads, d_ff, dropout, activation, norm_first)``."""
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"num_layers must be >= 1, got {num_layers}")
        self.layers = nn.ModuleList(self.layer_class(d_model, num_heads, d_ff, dropout, activation, norm_first)
                                    for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()


class SelfAttentionStack(_LayerStack):
    """A stack of ``EncoderLayer``: ``SelfAttentionStack(num_layers, d_model, num_heads, d_ff, dropout, activation,
    norm_first)``. The Transformer's :class:`Encoder` is one; so are a GPT's blocks, run with ``is_causal=True``."""

    layer_class = EncoderLayer

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None = None,
        *,
        is_causal: bool = False,
        need_weights: bool = False,
        caches: list[KVCache] | None = None,
    ) -> Tensor:
        """``(B, T, d_model) -> (B, T, d_model)``; arguments as in ``EncoderLayer``, one cache per layer."""
        caches = caches or [None] * len(self.layers)
        for layer, cache in zip(self.layers, caches):
            x = layer(x, mask, is_causal=is_causal, need_weights=need_weights, cache=cache)
        return self.norm(x)


class Encoder(SelfAttentionStack):
    """The Transformer's encoder: ``Encoder(num_layers, d_model, num_heads, d_ff, dropout, activation, norm_first)``."""


class Decoder(_LayerStack):
    """A stack of ``DecoderLayer``:
    ``Decoder(num_layers, d_model, num_heads, d_ff, dropout, activation, norm_first)``."""

    layer_class = DecoderLayer

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        self_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        *,
        is_causal: bool = False,
        need_weights: bool = False,
    ) -> Tensor:
        """``(B, T, d_model), (B, S, d_model) -> (B, T, d_model)``; arguments as in ``DecoderLayer``."""
        for layer in self.layers:
            x = layer(x, memory, self_mask, memory_mask, is_causal=is_causal, need_weights=need_weights)
        return self.norm(x)
