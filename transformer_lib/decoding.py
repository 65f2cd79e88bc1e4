"""Decoding an encoder-decoder model: greedy, beam search, sampling. All batched.

The functions work with any model that keeps the *encoder-decoder protocol*:

* ``model.encode(src)`` with ``src`` ``(B, S)`` returns ``memory`` (anything batch-first with a
  ``repeat_interleave``: a tensor, or the recurrent models' ``EncodedSource``);
* ``model.decode(tgt, memory, src)`` with ``tgt`` ``(B, T)`` returns logits ``(B, T, vocab_size)``.

The Transformer and both recurrent encoder-decoders keep it. :func:`sample_next_token` draws one
token from a row of logits; GPT's ``generate`` uses it too.

Every function returns the generated ids ``(B, L)``, ``L <= max_len``, *without* the leading
``<bos>``: each row ends with ``<eos>`` (unless it ran out of ``max_len``) followed by
``<pad>``. Decoding stops as soon as every row has produced ``<eos>``.

Call ``model.eval()`` first: decoding with dropout on gives noisy results.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from transformer_lib.data import BOS_ID, EOS_ID, PAD_ID

__all__ = ["greedy_decode", "sample_decode", "beam_search", "filter_logits", "sample_next_token", "length_penalty",
           "sequence_log_prob"]

StepFn = Callable[[torch.Tensor], torch.Tensor]  # prefix (N, t) -> next-token logits (N, vocab_size)


def _check_protocol(model: nn.Module, src: torch.Tensor) -> None:
    """Refuse a model without ``encode``/``decode`` and a ``src`` that is not ``(B, S)``."""
    if not (hasattr(model, "encode") and hasattr(model, "decode")):
        raise TypeError(
            "decoding needs a model with encode(src) and decode(tgt, memory, src) "
            f"(the encoder-decoder protocol); got {type(model).__name__}"
        )
    if not isinstance(src, torch.Tensor) or src.dim() != 2:
        shape = tuple(src.shape) if isinstance(src, torch.Tensor) else type(src).__name__
        raise ValueError(f"src must be a (B, S) tensor of ids, got {shape}")


def _step_fn(model: nn.Module, src: torch.Tensor, copies: int = 1) -> StepFn:
    """Encode ``src`` once; return a function giving next-token logits for ``copies`` prefixes per row."""
    _check_protocol(model, src)
    memory = model.encode(src)
    if copies > 1:
        memory = memory.repeat_interleave(copies, dim=0)
        src = src.repeat_interleave(copies, dim=0)
    return lambda prefix: model.decode(prefix, memory, src)[:, -1]


def _check_max_len(max_len: int) -> None:
    if not isinstance(max_len, int) or max_len < 1:
        raise ValueError(f"max_len must be a positive integer, got {max_len!r}")


def _decode_loop(step: StepFn, batch_size: int, device: torch.device, max_len: int,
                 choose: Callable[[torch.Tensor], torch.Tensor], bos_id: int, eos_id: int,
                 pad_id: int) -> torch.Tensor:
    """Extend ``<bos>`` one token at a time with ``choose(logits (B, vocab_size)) -> ids (B,)``."""
    _check_max_len(max_len)
    ys = torch.full((batch_size, 1), bos_id, dtype=torch.long, device=device)
    finished = torch.zeros(batch_size, dtype=torch.bool, device=device)
    for _ in range(max_len):
        token = choose(step(ys)).masked_fill(finished, pad_id)
        ys = torch.cat([ys, token[:, None]], dim=1)
        finished |= token == eos_id
        if finished.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def greedy_decode(model: nn.Module, src: torch.Tensor, max_len: int, bos_id: int = BOS_ID,
                  eos_id: int = EOS_ID, pad_id: int = PAD_ID) -> torch.Tensor:
    """Pick the most likely next token at every step. Returns ids ``(B, L)``."""
    return _decode_loop(_step_fn(model, src), src.shape[0], src.device, max_len,
                        lambda logits: logits.argmax(dim=-1), bos_id, eos_id, pad_id)


def filter_logits(logits: torch.Tensor, top_k: int | None = None, top_p: float | None = None) -> torch.Tensor:
    """Set to ``-inf`` the logits ``(N, n_vocab)`` outside the top-k and outside the nucleus.

    ``top_k`` keeps the ``k`` largest logits of each row and every logit tied with the k-th.
    ``top_p`` keeps the smallest set of most likely tokens whose probabilities add up to at
    least ``top_p`` (nucleus sampling, Holtzman et al. 2020, "The Curious Case of Neural Text
    Degeneration"): a token is kept while the mass of the tokens more likely than it is below
    ``top_p``, so the most likely token is always kept. The mass is accumulated in float64 (in
    float32 it reaches 1 before a large vocabulary's tail), and ``top_p = 1`` keeps every token.
    Ties at the boundary are all kept: a token whose logit equals that of the least likely token
    of the nucleus is kept too, so the set does not depend on the order in which ties are sorted.
    """
    if top_k is not None:
        if not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"top_k must be a positive integer, got {top_k!r}")
        kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if top_p is not None:
        if not 0 < top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {top_p}")
        if top_p < 1:
            sorted_logits = logits.sort(dim=-1, descending=True).values
            probs = sorted_logits.double().softmax(dim=-1)
            mass_before = F.pad(probs.cumsum(dim=-1)[..., :-1], (1, 0))  # of the tokens likelier than each
            in_nucleus = (mass_before < top_p).sum(dim=-1, keepdim=True)  # >= 1: the first has 0 before it
            last = sorted_logits.gather(-1, in_nucleus - 1)  # the least likely logit of the nucleus
            logits = logits.masked_fill(logits < last, float("-inf"))
    return logits


def sample_next_token(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                      generator: torch.Generator | None = None, *, top_p: float | None = None) -> torch.Tensor:
    """``(B, n_vocab)`` logits -> ``(B, 1)`` ids drawn from ``softmax(logits / temperature)``.

    Only the tokens that :func:`filter_logits` keeps can be drawn; ``temperature=0`` is greedy (argmax).
    """
    if temperature == 0:
        return logits.argmax(dim=-1, keepdim=True)
    probs = filter_logits(logits.float() / temperature, top_k, top_p).softmax(dim=-1)
    return torch.multinomial(probs, 1, generator=generator)


@torch.no_grad()
def sample_decode(model: nn.Module, src: torch.Tensor, max_len: int, temperature: float = 1.0,
                  top_k: int | None = None, top_p: float | None = None,
                  generator: torch.Generator | None = None, bos_id: int = BOS_ID, eos_id: int = EOS_ID,
                  pad_id: int = PAD_ID) -> torch.Tensor:
    """Sample each next token from ``softmax(logits / temperature)``, optionally top-k/top-p filtered.

    Returns ids ``(B, L)``. Pass a seeded ``generator`` for reproducible samples.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")

    def choose(logits: torch.Tensor) -> torch.Tensor:
        return sample_next_token(logits, temperature, top_k, generator, top_p=top_p).squeeze(1)

    return _decode_loop(_step_fn(model, src), src.shape[0], src.device, max_len, choose, bos_id, eos_id, pad_id)


def length_penalty(length: torch.Tensor, alpha: float) -> torch.Tensor:
    """``((5 + length) / 6) ** alpha``, the length normalisation of Wu et al. 2016 (GNMT).

    A hypothesis is scored by ``log p(y | x) / length_penalty(|y|, alpha)``; ``alpha = 0``
    ranks by raw log-probability, which favours short outputs.
    """
    return ((5.0 + length) / 6.0) ** alpha


@torch.no_grad()
def beam_search(model: nn.Module, src: torch.Tensor, max_len: int, beam_size: int = 4, alpha: float = 0.6,
                bos_id: int = BOS_ID, eos_id: int = EOS_ID, pad_id: int = PAD_ID) -> torch.Tensor:
    """Keep the ``beam_size`` best prefixes of every row; return the best finished one, ``(B, L)``.

    Prefixes are ranked by log-probability divided by :func:`length_penalty` (Wu et al. 2016).
    A finished hypothesis stays in the beam, extended with ``<pad>`` at no cost, until every
    hypothesis of the batch has finished or ``max_len`` is reached. ``beam_size=1`` is greedy.
    """
    _check_max_len(max_len)
    if not isinstance(beam_size, int) or beam_size < 1:
        raise ValueError(f"beam_size must be a positive integer, got {beam_size!r}")
    # Shapes: B rows, K = beam_size hypotheses each, V = vocab_size, t = tokens so far (with <bos>).
    # The model sees the B * K hypotheses as one batch (row b's hypotheses are rows b*K .. b*K + K-1).
    B, K = src.shape[0], beam_size
    step = _step_fn(model, src, copies=K)
    ys = torch.full((B * K, 1), bos_id, dtype=torch.long, device=src.device)  # (B*K, t) prefixes
    scores = torch.full((B, K), -math.inf, device=src.device)  # (B, K) log p of each prefix
    scores[:, 0] = 0.0  # all beams start equal: keep one, or the top-K would be K copies
    lengths = torch.zeros(B, K, device=src.device)  # (B, K) tokens counted by the length penalty
    finished = torch.zeros(B, K, dtype=torch.bool, device=src.device)  # (B, K) has produced <eos>
    for _ in range(max_len):
        logp = F.log_softmax(step(ys).float(), dim=-1).view(B, K, -1)  # (B, K, V) next-token log p
        V = logp.shape[-1]
        pad_only = torch.full_like(logp[0, 0], -math.inf).index_fill(0, torch.tensor([pad_id], device=src.device), 0.0)
        logp = torch.where(finished[..., None], pad_only, logp)  # (B, K, V): a finished one only pads, free
        cand_scores = (scores[..., None] + logp).view(B, K * V)  # (B, K*V) every one-token extension
        cand_lengths = (lengths + (~finished).float())[..., None].expand(B, K, V).reshape(B, K * V)  # (B, K*V)
        best = (cand_scores / length_penalty(cand_lengths, alpha)).topk(K, dim=-1).indices  # (B, K) in [0, K*V)
        beam, token = best // V, best % V  # (B, K) each: the prefix extended, and by which token
        scores, lengths = cand_scores.gather(1, best), cand_lengths.gather(1, best)  # (B, K)
        finished = finished.gather(1, beam) | (token == eos_id)  # (B, K)
        prefixes = ys.view(B, K, -1).gather(1, beam[..., None].expand(B, K, ys.shape[1]))  # (B, K, t)
        ys = torch.cat([prefixes, token[..., None]], dim=-1).view(B * K, -1)  # (B*K, t + 1)
        if finished.all():
            break
    winner = (scores / length_penalty(lengths, alpha)).argmax(dim=-1)  # (B,) best hypothesis of each row
    out = ys.view(B, K, -1)[torch.arange(B, device=src.device), winner, 1:]  # (B, t - 1) without <bos>
    used = (out != pad_id).any(dim=0).nonzero()  # losing beams may have run longer: trim
    return out[:, : int(used.max()) + 1 if len(used) else 0]


@torch.no_grad()
def sequence_log_prob(model: nn.Module, src: torch.Tensor, ys: torch.Tensor, bos_id: int = BOS_ID,
                      pad_id: int = PAD_ID) -> torch.Tensor:
    """``log p(y | x)`` of each row of decoded ids under ``model``: the score beam search ranks by at ``alpha = 0``.

    Args:
        model: an encoder-decoder keeping the protocol of this module.
        src: source ids ``(B, S)``.
        ys: outputs ``(B, L)`` as the decoders here return them: no ``<bos>``, ``<eos>`` then ``<pad>``.

    Returns:
        ``(B,)``: the sum of the log-probabilities of each row's tokens, ``<eos>`` included and
        ``<pad>`` excluded, each predicted from ``<bos>`` and the tokens before it (one teacher-forced pass).
    """
    _check_protocol(model, src)
    if not isinstance(ys, torch.Tensor) or ys.dim() != 2 or ys.shape[0] != src.shape[0]:
        shape = tuple(ys.shape) if isinstance(ys, torch.Tensor) else type(ys).__name__
        raise ValueError(f"ys must be ({src.shape[0]}, L) ids, one row per source, got {shape}")
    tgt_in = torch.cat([torch.full_like(ys[:, :1], bos_id), ys[:, :-1]], dim=1)  # (B, L): <bos> y_1 .. y_{L-1}
    logp = F.log_softmax(model.decode(tgt_in, model.encode(src), src).float(), dim=-1)  # (B, L, V)
    return (logp.gather(-1, ys[..., None]).squeeze(-1) * (ys != pad_id)).sum(dim=-1)
