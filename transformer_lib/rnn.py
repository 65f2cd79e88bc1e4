"""Recurrent encoder-decoders (chapters 2-3): the bottleneck, and attention as its cure.

* ``Seq2SeqRNN``: a GRU reads the source; its last state, one fixed-size context vector, is all the
  decoder ever sees of the source (Cho et al. 2014; Sutskever et al. 2014).
* ``AttentionSeq2SeqRNN``: at every step the decoder attends over all encoder states with additive
  attention and gets a fresh context vector (Bahdanau et al. 2015), and returns the alignment.

Both decoders run one step at a time: the step computes the context from the decoder state, feeds
``[embedding of the previous token; context]`` to a GRU cell, and predicts from ``[state; context]``.
The two models differ only in where the context comes from. Sequences are right-padded with ``pad_id``.
Both keep the encoder-decoder protocol (``encode``, ``decode``), so :mod:`transformer_lib.decoding`
decodes them greedily, by sampling or with beam search. A recurrent decoder needs only its last
state to go on: ``decode`` remembers where the previous call stopped (in the ``EncodedSource``), so a
call that extends the same prefixes by one token costs one step, not a rerun over the prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .attention import AdditiveAttention
from .tokens import check_token_ids

__all__ = ["EncodedSource", "Seq2SeqRNN", "AttentionSeq2SeqRNN"]


@dataclass
class DecoderProgress:
    """Where the last ``decode`` call on a source stopped: its input ids ``(B, t)``, the decoder
    state after them ``(B, hidden_dim)`` and their logits ``(B, t, vocab_size)``."""

    tokens: Tensor | None = None
    hidden: Tensor | None = None
    logits: Tensor | None = None

    def continues(self, tgt: Tensor) -> bool:
        """Whether ``tgt`` is the last call's ids with one more token on each row."""
        return (self.tokens is not None and tgt.shape == (self.tokens.shape[0], self.tokens.shape[1] + 1)
                and torch.equal(tgt[:, :-1], self.tokens))


class EncodedSource(NamedTuple):
    """What the encoder gives the decoder."""

    states: Tensor  # (B, S, hidden_dim): the GRU state after each source token (zero at padding)
    final: Tensor  # (B, hidden_dim): the state after the last real token, the context vector
    mask: Tensor  # (B, S): True at real tokens
    keys: Tensor | None = None  # (B, S, hidden_dim): the states projected once for attention, or None
    progress: DecoderProgress | None = None  # where step-by-step decoding of this source has got to

    def repeat_interleave(self, repeats: int, dim: int = 0) -> EncodedSource:
        """Each row ``repeats`` times in a row, as ``Tensor.repeat_interleave`` (beam search copies the memory so)."""
        tensors = (None if part is None else part.repeat_interleave(repeats, dim=dim) for part in self[:-1])
        return EncodedSource(*tensors, progress=DecoderProgress())


class Seq2SeqRNN(nn.Module):
    """GRU encoder-decoder whose decoder sees the source only through the final encoder state."""

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, embed_dim: int, hidden_dim: int,
                 pad_id: int = 0) -> None:
        super().__init__()
        self.pad_id, self.src_vocab_size, self.tgt_vocab_size = pad_id, src_vocab_size, tgt_vocab_size
        self.src_embedding = nn.Embedding(src_vocab_size, embed_dim, padding_idx=pad_id)
        self.encoder = nn.GRU(embed_dim, hidden_dim, batch_first=True)
        self.tgt_embedding = nn.Embedding(tgt_vocab_size, embed_dim, padding_idx=pad_id)
        self.decoder_cell = nn.GRUCell(embed_dim + hidden_dim, hidden_dim)
        self.output_proj = nn.Linear(2 * hidden_dim, tgt_vocab_size)

    def encode(self, src: Tensor) -> EncodedSource:
        """``(B, S)`` source ids -> the encoder states, the context vector and the source mask."""
        check_token_ids(src, self.src_vocab_size, name="src")
        mask = src != self.pad_id
        # Packing skips the padding, so the final state is the one after the last real token.
        # A fully padded row is read as one pad token (GRU needs length >= 1).
        lengths = mask.sum(1).clamp(min=1).cpu()
        packed = pack_padded_sequence(self.src_embedding(src), lengths, batch_first=True, enforce_sorted=False)
        states, final = self.encoder(packed)
        states, _ = pad_packed_sequence(states, batch_first=True, total_length=src.size(1))
        return EncodedSource(states, final[0], mask, progress=DecoderProgress())

    def context(self, hidden: Tensor, source: EncodedSource) -> tuple[Tensor, Tensor | None]:
        """The context vector ``(B, hidden_dim)`` for decoder state ``hidden``: always the final encoder state."""
        return source.final, None

    def decode_step(
        self, token: Tensor, hidden: Tensor, source: EncodedSource
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """One decoder step: ``(B,)`` previous tokens, ``(B, hidden_dim)`` state -> logits ``(B, vocab_size)``,
        new state, weights ``(B, S)`` or None."""
        context, weights = self.context(hidden, source)
        hidden = self.decoder_cell(torch.cat([self.tgt_embedding(token), context], dim=-1), hidden)
        logits = self.output_proj(torch.cat([hidden, context], dim=-1))
        return logits, hidden, weights

    def run_decoder(self, tgt_in: Tensor, source: EncodedSource) -> tuple[Tensor, list[Tensor | None]]:
        """Logits ``(B, T, vocab_size)`` for every step fed the given previous token, and each step's weights."""
        logits, weights, _ = self._unroll(tgt_in, source.final, source)
        return logits, weights

    def _unroll(self, tgt_in: Tensor, hidden: Tensor,
                source: EncodedSource) -> tuple[Tensor, list[Tensor | None], Tensor]:
        """Run the decoder from state ``hidden`` over ``tgt_in``: logits, each step's weights, the last state."""
        check_token_ids(tgt_in, self.tgt_vocab_size, name="tgt_in")
        all_logits, all_weights = [], []
        for t in range(tgt_in.size(1)):
            logits, hidden, weights = self.decode_step(tgt_in[:, t], hidden, source)
            all_logits.append(logits)
            all_weights.append(weights)
        return torch.stack(all_logits, dim=1), all_weights, hidden

    def decode(self, tgt: Tensor, memory: EncodedSource, src: Tensor | None = None) -> Tensor:
        """``(B, T)`` target ids (starting with BOS) and the encoded source -> logits ``(B, T, vocab_size)``.

        The encoder-decoder protocol of :mod:`transformer_lib.decoding`, whose greedy, sampling and
        beam-search decoders therefore work on this model too (``src`` is not needed: ``memory``
        holds its mask). When ``tgt`` extends the previous call's ids by one token on every row (greedy
        decoding, sampling), only the new step runs; otherwise (beam search reorders its rows) the
        decoder runs over the whole prefix. Both give the same logits.
        """
        progress = memory.progress
        if progress is not None and progress.continues(tgt):
            new_logits, _, hidden = self._unroll(tgt[:, -1:], progress.hidden, memory)
            logits = torch.cat([progress.logits, new_logits], dim=1)
        else:
            logits, _, hidden = self._unroll(tgt, memory.final, memory)
        if progress is not None:
            progress.tokens, progress.hidden, progress.logits = tgt, hidden, logits
        return logits

    def forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        """``(B, S)`` source, ``(B, T)`` decoder input (BOS + target without its last token)
        -> ``(B, T, vocab_size)``."""
        return self.decode(tgt_in, self.encode(src))


class AttentionSeq2SeqRNN(Seq2SeqRNN):
    """The same encoder-decoder, but each step attends over all encoder states (Bahdanau et al. 2015)."""

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, embed_dim: int, hidden_dim: int,
                 pad_id: int = 0) -> None:
        super().__init__(src_vocab_size, tgt_vocab_size, embed_dim, hidden_dim, pad_id)
        self.attention = AdditiveAttention(hidden_dim, hidden_dim, hidden_dim)

    def encode(self, src: Tensor) -> EncodedSource:
        """As ``Seq2SeqRNN.encode``, with the states' key projection computed once for all decoder steps."""
        source = super().encode(src)
        return source._replace(keys=self.attention.key_proj(source.states))

    def context(self, hidden: Tensor, source: EncodedSource) -> tuple[Tensor, Tensor]:
        """Attend from the decoder state to the encoder states: context ``(B, hidden_dim)``, weights ``(B, S)``."""
        return self.attention(hidden, source.states, source.states, source.mask, projected_keys=source.keys)

    def forward(self, src: Tensor, tgt_in: Tensor, return_attention: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """As ``Seq2SeqRNN.forward``; ``return_attention`` also gives the alignment ``(B, T, S)``."""
        logits, weights = self.run_decoder(tgt_in, self.encode(src))
        if return_attention:
            return logits, torch.stack(weights, dim=1)
        return logits
