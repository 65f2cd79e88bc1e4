"""Whole models built from the layers (chapters 7-10): the three families.

* ``TransformerClassifier``: encoder-only, pools the encoder's output into class scores (chapter 7).
* ``GPT``: decoder-only language model, a stack of causal self-attention blocks (chapters 8, 10;
  Radford et al. 2018/2019; the layout follows Karpathy's nanoGPT).
* ``Transformer``: the encoder-decoder of Vaswani et al. 2017 (chapter 9).

Every model takes token ids ``(B, length)``, checks them (vocabulary, ``max_len``) and builds its own
masks. ``return_attention=True`` also returns the per-layer, per-head attention weights.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .attention import causal_mask
from .decoding import sample_next_token
from .layers import Decoder, Encoder, SelfAttentionStack
from .modern import ModernConfig, ModernDecoder
from .multihead import KVCache
from .positional import make_positional
from .tokens import check_token_ids

__all__ = ["GPT2_INIT_STD", "RESIDUAL_PROJECTIONS", "init_gpt2_", "InputEmbedding", "TransformerClassifier", "GPT",
           "Transformer"]


#: The standard deviation of GPT-2's initial weights.
GPT2_INIT_STD = 0.02
#: The last parameter names of the projections that write into the residual stream, in each block:
#: attention's W_O, and the feed-forward's output layer (``linear2`` in GPT-2's layout, ``down`` in SwiGLU).
RESIDUAL_PROJECTIONS = ("out_proj.weight", "linear2.weight", "down.weight")


def init_gpt2_(model: nn.Module, num_layers: int) -> None:
    """GPT-2's initialisation, in place (Radford et al. 2019, section 2.3; OpenAI's ``gpt-2`` and nanoGPT's code).

    Every linear weight and embedding table (tokens, learned positions) of ``model`` is drawn from
    N(0, 0.02) and every bias starts at 0 (norms keep their start, the identity). The projections
    that add into the residual stream (:data:`RESIDUAL_PROJECTIONS`) are drawn from
    N(0, 0.02 / sqrt(2 L)) for ``L = num_layers`` blocks: the stream is a sum of up to ``2 L`` such
    contributions, so its variance then stays about the same at any depth. With PyTorch's defaults
    instead, a tied embedding is N(0, 1): a fresh model's logits then have a standard deviation of
    about ``sqrt(d_model)``, and its first loss is tens of nats above ``ln(vocab_size)``; with these,
    it starts within a few hundredths of a nat of the uniform guess.
    """
    for module in model.modules():
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=GPT2_INIT_STD)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)
    residual_std = GPT2_INIT_STD / math.sqrt(2 * num_layers)
    for name, parameter in model.named_parameters():
        if name.endswith(RESIDUAL_PROJECTIONS):
            nn.init.normal_(parameter, mean=0.0, std=residual_std)


class InputEmbedding(nn.Module):
    """Token ids ``(B, T)`` -> vectors ``(B, T, d_model)``: embedding, plus positions, then dropout.

    ``scale=True`` multiplies the embedding by ``sqrt(d_model)`` (Vaswani et al. 2017, section 3.4);
    the table then starts with standard deviation ``d_model ** -0.5``, so that scaled token vectors
    have unit variance per feature, like the positional encoding they are added to. (PyTorch's
    default N(0, 1) start times ``sqrt(d_model)`` would drown the positions: at d_model = 64 the
    tokens would be 8 times larger.)
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        max_len: int,
        positional: str | None = "sinusoidal",
        dropout: float = 0.0,
        scale: bool = False,
    ) -> None:
        super().__init__()
        self.vocab_size, self.max_len = vocab_size, max_len
        self.token = nn.Embedding(vocab_size, d_model)
        self.position = make_positional(positional, max_len, d_model)
        self.dropout = nn.Dropout(dropout)
        self.scale = math.sqrt(d_model) if scale else 1.0
        if scale:
            nn.init.normal_(self.token.weight, std=d_model**-0.5)

    def forward(self, tokens: Tensor, start: int = 0) -> Tensor:
        """``(B, T)`` ids at positions ``start .. start + T - 1`` -> ``(B, T, d_model)``."""
        check_token_ids(tokens, self.vocab_size, self.max_len)
        x = self.token(tokens) * self.scale
        if self.position is not None:
            x = self.position(x, start)
        return self.dropout(x)


class TransformerClassifier(nn.Module):
    """Encoder-only classifier: embed, encode (padding masked), pool, project to class scores.

    ``pooling="mean"`` averages over the real (non-pad) tokens only; ``"first"`` takes position 0
    (a BERT-style [CLS] token). ``positional=None`` removes all position information, which
    makes the model blind to word order (chapter 6).
    """

    def __init__(
        self,
        vocab_size: int,
        num_classes: int,
        d_model: int,
        num_heads: int,
        num_layers: int,
        d_ff: int,
        max_len: int,
        pad_id: int = 0,
        pooling: str = "mean",
        dropout: float = 0.0,
        positional: str | None = "sinusoidal",
        norm_first: bool = False,
    ) -> None:
        super().__init__()
        if pooling not in ("mean", "first"):
            raise ValueError(f'pooling must be "mean" or "first", got {pooling!r}')
        self.pad_id, self.pooling = pad_id, pooling
        self.embedding = InputEmbedding(vocab_size, d_model, max_len, positional, dropout)
        self.encoder = Encoder(num_layers, d_model, num_heads, d_ff, dropout, norm_first=norm_first)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, tokens: Tensor, return_attention: bool = False) -> Tensor | tuple[Tensor, list[Tensor]]:
        """``(B, S)`` ids -> ``(B, num_classes)`` logits (and the ``(B, h, S, S)`` weights of each layer)."""
        real = tokens != self.pad_id  # (B, S)
        x = self.encoder(self.embedding(tokens), real[:, None, None, :], need_weights=return_attention)
        if self.pooling == "mean":
            pooled = (x * real[..., None]).sum(1) / real.sum(1, keepdim=True).clamp(min=1)
        else:
            pooled = x[:, 0]
        logits = self.head(pooled)
        if return_attention:
            return logits, [layer.self_attention_weights for layer in self.encoder.layers]
        return logits


class GPT(nn.Module):
    """Decoder-only language model: learned positions, pre-LN causal blocks, tied output layer.

    Its blocks are a ``SelfAttentionStack`` of ``EncoderLayer`` run with a causal mask (no cross-attention:
    there is no encoder).
    The output layer shares its weights with the token embedding (Press and Wolf 2017).
    Its weights start as GPT-2's do (:func:`init_gpt2_`), so that a fresh model guesses
    almost uniformly: its loss on any text starts near ``ln(vocab_size)``.
    ``config=ModernConfig(...)`` builds the blocks from ``modern.ModernBlock`` instead, with the
    switches of chapter 11 (RoPE, RMSNorm, SwiGLU, grouped-query attention, untied output layer).
    ``activation`` is the GPT-2 layout's feed-forward activation: ``"gelu"`` (exact) or
    ``"gelu_tanh"`` (the tanh approximation that released GPT-2 checkpoints were trained with).
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        num_heads: int,
        num_layers: int,
        d_ff: int,
        max_len: int,
        dropout: float = 0.0,
        config: ModernConfig | None = None,
        activation: str = "gelu",
    ) -> None:
        super().__init__()
        if config is not None and activation != "gelu":
            raise ValueError(f"activation={activation!r} applies to the GPT-2 layout (config=None); "
                             f"a ModernConfig sets its own feed_forward ({config.feed_forward!r})")
        self.max_len = max_len
        positional = "learned" if config is None or config.positional == "learned" else None
        self.embedding = InputEmbedding(vocab_size, d_model, max_len, positional, dropout)
        if config is None:
            self.blocks = SelfAttentionStack(num_layers, d_model, num_heads, d_ff, dropout, activation,
                                             norm_first=True)
        else:
            self.blocks = ModernDecoder(num_layers, d_model, num_heads, d_ff, dropout, config)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if config is None or config.tie_embeddings:
            self.lm_head.weight = self.embedding.token.weight
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every weight again as GPT-2 did (:func:`init_gpt2_`)."""
        init_gpt2_(self, len(self.blocks.layers))

    def forward(self, idx: Tensor, return_attention: bool = False) -> Tensor | tuple[Tensor, list[Tensor]]:
        """``(B, T)`` ids -> ``(B, T, vocab_size)`` next-token logits (and each layer's ``(B, h, T, T)`` weights)."""
        logits = self._logits(idx, need_weights=return_attention)
        if return_attention:
            return logits, [layer.self_attention_weights for layer in self.blocks.layers]
        return logits

    def hidden(self, idx: Tensor, caches: list[KVCache] | None = None, need_weights: bool = False) -> Tensor:
        """``(B, T)`` ids -> ``(B, T, d_model)``: the last block's output (after the final norm), before ``lm_head``.

        Position t has seen tokens 0..t only (causal), so the last real token's vector sums up the whole
        sequence: what a classification head on a pretrained GPT reads (chapter 12, ``finetune.py``).
        With ``caches``, ``idx`` are the tokens that follow the ``len(caches[0])`` already in the caches.
        """
        start = len(caches[0]) if caches else 0
        x = self.embedding(idx, start)
        # With nothing cached the mask is the plain causal one, which the fused kernel applies
        # itself; new tokens after cached ones see all of those and the causal part of their own.
        mask = None if start == 0 else causal_mask(start + idx.size(1), device=idx.device)[start:]
        return self.blocks(x, mask, is_causal=start == 0, need_weights=need_weights, caches=caches)

    def _logits(self, idx: Tensor, caches: list[KVCache] | None = None, need_weights: bool = False) -> Tensor:
        """Logits for ``idx``, the tokens that follow the ``len(caches[0])`` already in the caches."""
        return self.lm_head(self.hidden(idx, caches, need_weights))

    @torch.no_grad()
    def generate(
        self,
        idx: Tensor,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        use_cache: bool = True,
        generator: torch.Generator | None = None,
        top_p: float | None = None,
    ) -> Tensor:
        """Extend ``idx`` ``(B, T)`` by ``max_new_tokens`` tokens -> ``(B, T + max_new_tokens)``.

        Each step samples from ``softmax(logits / temperature)`` restricted to the ``top_k`` most
        likely tokens and to the nucleus of probability ``top_p``; ``temperature=0`` picks the
        most likely token (greedy). With ``use_cache`` only the new token goes through the model,
        its keys and values joining a per-layer ``KVCache``; the tokens are the same as without
        the cache. Once the context is longer than ``max_len`` both ways see only its last
        ``max_len`` tokens (without a cache).
        Call ``model.eval()`` first to switch dropout off.
        """
        caches = [KVCache() for _ in self.blocks.layers] if use_cache else None
        for _ in range(max_new_tokens):
            if caches is not None and idx.size(1) <= self.max_len:
                logits = self._logits(idx[:, len(caches[0]) :], caches)
            else:
                logits = self._logits(idx[:, -self.max_len :])
            next_token = sample_next_token(logits[:, -1], temperature, top_k, generator, top_p=top_p)
            idx = torch.cat([idx, next_token], dim=1)
        return idx


class Transformer(nn.Module):
    """The encoder-decoder Transformer (Vaswani et al. 2017, figure 1), with sinusoidal positions.

    ``forward(src, tgt)`` is teacher forcing: ``tgt`` is the target shifted right (starting with BOS)
    and the logits at position t predict target token t + 1. Decoding code uses ``encode`` once and
    ``decode`` at every step; both build the masks from ``pad_id``.
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        d_model: int = 128,
        num_heads: int = 4,
        num_encoder_layers: int = 2,
        num_decoder_layers: int = 2,
        d_ff: int = 512,
        dropout: float = 0.1,
        max_len: int = 512,
        norm_first: bool = False,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        self.pad_id = pad_id
        self.src_embedding = InputEmbedding(src_vocab_size, d_model, max_len, "sinusoidal", dropout, scale=True)
        self.tgt_embedding = InputEmbedding(tgt_vocab_size, d_model, max_len, "sinusoidal", dropout, scale=True)
        self.encoder = Encoder(num_encoder_layers, d_model, num_heads, d_ff, dropout, norm_first=norm_first)
        self.decoder = Decoder(num_decoder_layers, d_model, num_heads, d_ff, dropout, norm_first=norm_first)
        self.output_proj = nn.Linear(d_model, tgt_vocab_size)

    def _key_padding_mask(self, tokens: Tensor) -> Tensor:
        """``(B, S)`` ids -> ``(B, 1, 1, S)``, True at real tokens, broadcastable to ``(B, h, T, S)``."""
        return (tokens != self.pad_id)[:, None, None, :]

    def encode(self, src: Tensor, *, need_weights: bool = False) -> Tensor:
        """``(B, S)`` source ids -> memory ``(B, S, d_model)``."""
        return self.encoder(self.src_embedding(src), self._key_padding_mask(src), need_weights=need_weights)

    def decode(self, tgt: Tensor, memory: Tensor, src: Tensor, *, need_weights: bool = False) -> Tensor:
        """``(B, T)`` target ids, memory ``(B, S, d_model)``, ``(B, S)`` source ids -> logits ``(B, T, vocab_size)``.

        ``src`` only gives the padding mask of the memory.
        """
        if memory.shape[:2] != src.shape:
            raise ValueError(
                f"memory must have shape (B, S, d_model) with (B, S) = src.shape = {tuple(src.shape)}, "
                f"got {tuple(memory.shape)}"
            )
        x = self.decoder(
            self.tgt_embedding(tgt),
            memory,
            self_mask=self._key_padding_mask(tgt),
            memory_mask=self._key_padding_mask(src),
            is_causal=True,
            need_weights=need_weights,
        )
        return self.output_proj(x)

    def forward(
        self, src: Tensor, tgt: Tensor, return_attention: bool = False
    ) -> Tensor | tuple[Tensor, dict[str, list[Tensor]]]:
        """``(B, S)`` source and ``(B, T)`` target ids -> ``(B, T, vocab_size)`` logits.

        With ``return_attention`` also a dict of per-layer weights: ``"encoder"`` ``(B, h, S, S)``,
        ``"decoder_self"`` ``(B, h, T, T)`` and ``"decoder_cross"`` ``(B, h, T, S)``.
        """
        memory = self.encode(src, need_weights=return_attention)
        logits = self.decode(tgt, memory, src, need_weights=return_attention)
        if not return_attention:
            return logits
        return logits, {
            "encoder": [layer.self_attention_weights for layer in self.encoder.layers],
            "decoder_self": [layer.self_attention_weights for layer in self.decoder.layers],
            "decoder_cross": [layer.cross_attention_weights for layer in self.decoder.layers],
        }
